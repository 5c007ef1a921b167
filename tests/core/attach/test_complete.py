"""The paths `@` offers, from a real folder: .gitignore honoured, hidden entries only when the
query asks, the likeliest first, and a query that grows narrows what it had."""

from __future__ import annotations

from jarvis_tui.core.attach.complete import PathIndex, mention_at


def tree(root, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


def test_what_at_offers_and_in_which_order(tmp_path):
    tree(tmp_path, ["README.md", "src/engine/window.py", "src/engine/engine.py",
                    "src/ui/engine_view.py", "docs/big-engine-notes.md", "build/engine.o",
                    ".env", "src/.secret/engine.key", "node_modules/x/engine.js"])
    (tmp_path / ".gitignore").write_text("build/\nnode_modules/\n", encoding="utf-8")
    index = PathIndex(tmp_path)
    index.fill()
    assert index.done and not index.truncated
    # Near ones first, folders marked, nothing ignored, nothing hidden.
    assert index.matches("")[:4] == ["README.md", "docs/", "src/", "docs/big-engine-notes.md"]
    found = index.matches("engine")
    assert found[:2] == ["src/engine/", "src/engine/engine.py"]
    assert found.index("src/ui/engine_view.py") < found.index("src/engine/window.py")
    assert not any(p.startswith(("build", "node_modules", ".")) or "/." in p for p in found)
    # Letters in order, spread out; a longer query narrows the last one.
    assert index.matches("sewin") == ["src/engine/window.py"]
    assert index.matches("sewinp") == ["src/engine/window.py"]
    assert index.matches("zzz") == []
    # Hidden only on request.
    assert index.matches(".en")[:1] == [".env"]
    assert index.matches("src/.s")[:1] == ["src/.secret/"]


def test_the_walk_can_be_stopped_and_is_capped(tmp_path):
    tree(tmp_path, [f"d{i}/f{j}.txt" for i in range(30) for j in range(40)])
    index = PathIndex(tmp_path)
    index.fill(stop=lambda: True)
    assert not index.done and index.count == 0  # stopped at its first batch
    index = PathIndex(tmp_path)
    index.fill()
    assert index.count == 30 + 1200 and index.matches("d7/f3")[0] == "d7/f3.txt"


def test_a_mention_is_an_at_sign_starting_a_word_up_to_the_cursor():
    assert mention_at("look at @src/eng", 16) == (8, "src/eng")
    assert mention_at("@", 1) == (0, "")
    assert mention_at("first line\n@doc", 15) == (11, "doc")
    assert mention_at("mail me at a@b.com", 18) is None  # inside a word: an address
    assert mention_at("look at @src/eng and", 20) is None  # the cursor moved past it
    assert mention_at("look at @src/eng and", 16) == (8, "src/eng")


def test_a_pasted_line_that_names_a_file(tmp_path):
    from jarvis_tui.core.attach.complete import pasted_path

    (tmp_path / "my notes.md").write_text("x", encoding="utf-8")
    assert pasted_path("my notes.md", tmp_path) == "my notes.md"
    assert pasted_path(f"  '{tmp_path / 'my notes.md'}'\n", tmp_path) == str(
        tmp_path / "my notes.md")
    assert pasted_path(f"file://{tmp_path}/my%20notes.md", tmp_path) == \
        f"{tmp_path}/my notes.md"
    assert pasted_path("not a file here", tmp_path) is None
    assert pasted_path("two\nlines", tmp_path) is None
