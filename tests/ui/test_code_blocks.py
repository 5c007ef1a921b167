"""The fence parser behind copy_code: which blocks a message has, as the screen draws them."""

from __future__ import annotations

from jarvis_tui.ui.code_blocks import CodeBlock, code_blocks


def test_backtick_and_tilde_fences_with_their_info_strings():
    text = ("Two ways:\n\n```python title=demo.py\nprint(1)\nprint(2)\n```\n\nor\n\n"
            "~~~bash\nls -l\n~~~\n\nand a plain one\n\n```\nraw\n```\n")
    assert code_blocks(text) == [CodeBlock("python", "print(1)\nprint(2)"),
                                 CodeBlock("bash", "ls -l"), CodeBlock("", "raw")]
    assert [b.lines for b in code_blocks(text)] == [2, 1, 1]


def test_a_backtick_fence_inside_a_tilde_fence_is_its_text():
    text = "~~~markdown\n```js\nx()\n```\n~~~\n"
    assert code_blocks(text) == [CodeBlock("markdown", "```js\nx()\n```")]


def test_fences_in_lists_and_quotes_lose_their_indent_and_marks():
    text = "- step one:\n\n  ```sh\n  make\n  ```\n\n> ```go\n> fmt.Println()\n> ```\n"
    assert code_blocks(text) == [CodeBlock("sh", "make"), CodeBlock("go", "fmt.Println()")]


def test_cjk_content_and_preview():
    text = "示例：\n\n```python\n\n# 打印问候\nprint('你好，世界')\n```\n"
    [block] = code_blocks(text)
    assert block.text == "\n# 打印问候\nprint('你好，世界')" and block.lines == 3
    assert block.preview() == "# 打印问候"  # the first line with something on it
    assert CodeBlock("", "x" * 100).preview(10) == "x" * 9 + "…"


def test_an_unclosed_fence_at_the_end_of_a_streamed_reply_holds_what_came():
    text = "Start:\n\n```rust\nfn main() {\n    println!(\"hi\");\n"
    assert code_blocks(text) == [CodeBlock("rust", 'fn main() {\n    println!("hi");')]


def test_no_fences_inline_code_and_empty_fences_are_no_blocks():
    assert code_blocks("Use `ls` and\n\n    indented code\n") == []
    assert code_blocks("```\n```\n\n```py\n  \n```\n") == []
