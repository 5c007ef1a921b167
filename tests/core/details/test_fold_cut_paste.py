"""Issue 26: a paste larger than the window is sent cut (head and tail), and folded into the
summary as it was sent, not re-read whole from the store in chunks. The summary request then
starts with the chat request before it, so a server's prompt cache serves all but the reply
and the instruction; the stored original stays whole."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from jarvis_tui.core.compaction.summarizer import PREFIX_SUMMARY_SHARE, SUMMARY_SYSTEM_PROMPT
from jarvis_tui.core.details.ledger import split
from tests.engine_helpers import (
    final,
    is_prefix_summary,
    is_summary_request,
    make_engine,
    send,
    summarising_replies,
    summary_material,
)
from tests.fakeserver import FakeProvider, count_tokens

LIMIT = 4096
ROWS = 900  # about 3x the window in cl100k
HEAD = "Here is the export, find the rows that failed:"


def paste() -> str:
    rows = "\n".join(f"row {i}: value={i * 7} status={'失败' if i % 97 == 0 else 'ok'} "
                     f"备注=第{i}行测试数据" for i in range(ROWS))
    return f"{HEAD}\n{rows}"


async def fold_the_paste(fake: FakeProvider, engine) -> tuple[str, list]:
    """The paste, then short turns until a compaction covers it; the summary requests made
    from the paste on."""
    text = paste()
    assert count_tokens(text) > 3 * LIMIT
    events = await send(engine, text)
    assert isinstance(final(events), ev.Finished)
    start = len(fake.requests)
    for i in range(4):
        events = await send(engine, f"第{i}个问题：which rows failed, and why?")
        assert isinstance(final(events), ev.Finished)
        if engine.store.messages(engine.conversation.id)[0].covered:
            break
    return text, [r for r in fake.requests[start:] if is_summary_request(r.body)]


def sent_cut(fake: FakeProvider, text: str) -> str:
    """The paste as the chat requests sent it."""
    firsts = {r.body["messages"][1]["content"] for r in fake.chat_requests
              if not is_summary_request(r.body) and r.body["messages"][1]["role"] == "user"
              and r.body["messages"][1]["content"].startswith(HEAD)}
    assert len(firsts) == 1, "every request sends the cut paste the same way"
    cut = firsts.pop()
    assert cut != text and "tokens omitted" in cut
    return cut


async def test_a_paste_3x_the_window_is_folded_at_the_chat_prefix_in_one_request(
        make_fake_server, tmp_path):
    fake = make_fake_server(limit=LIMIT)
    summarising_replies(fake, chat_words=400)  # a long answer about the paste
    chat_reply = fake.reply_fn
    # A summariser that writes past max_tokens, from a server that does not stop it.
    fake.reply_fn = lambda body: (" ".join(["Summary:", *summary_material(body).split()[:900]])
                                  if is_summary_request(body) else chat_reply(body))
    fake.ignore_max_tokens = True
    engine = make_engine(fake, tmp_path, summary_max_tokens=512, system_reserve=64)
    text, summaries = await fold_the_paste(fake, engine)
    stored = engine.store.messages(engine.conversation.id)
    assert stored[0].content == text and stored[0].covered  # folded in, and kept whole
    folding = [r for r in summaries if HEAD in summary_material(r.body)]
    assert len(folding) == 1 and folding[0].status == 200
    rec = folding[0]
    assert is_prefix_summary(rec.body)
    material = summary_material(rec.body)
    cut = sent_cut(fake, text)
    assert cut in material  # what the model saw, byte for byte
    assert "row 450: value=3150" not in material  # not the middle the request left out
    # It begins with the chat request that sent the cut paste: the server's cache served all
    # of that (but its 3 priming tokens), so it read the reply and the instruction only.
    chat = [r for r in fake.chat_requests[:fake.chat_requests.index(rec)]
            if not is_summary_request(r.body)][-1]
    assert chat.body["messages"][1]["content"] == cut
    assert rec.cached_tokens >= chat.prompt_tokens - 3
    assert rec.prompt_tokens - rec.cached_tokens < 800
    # The cut paste and the answer fill most of the window: the summary gets the room left
    # after them, less than its cap but not less than its share of it, and it is held to it.
    cap = engine.summary_max_tokens
    assert cap * PREFIX_SUMMARY_SHARE <= rec.body["max_tokens"] < cap
    assert rec.prompt_tokens + rec.body["max_tokens"] <= LIMIT
    assert count_tokens(rec.reply) > rec.body["max_tokens"]
    assert count_tokens(split(engine.summary.content)[0]) <= rec.body["max_tokens"]


async def test_another_summary_model_reads_the_paste_as_sent_in_one_request(
        make_fake_server, tmp_path):
    """Where the chat prefix cannot serve (another model summarises), the small prompt gets
    the cut paste too: one request, no chunks and no merge."""
    fake = make_fake_server(limit=LIMIT)
    summarising_replies(fake)
    engine = make_engine(fake, tmp_path, summary_model="a-small-model")
    text, summaries = await fold_the_paste(fake, engine)
    stored = engine.store.messages(engine.conversation.id)
    assert stored[0].content == text and stored[0].covered
    folding = [r for r in summaries if HEAD in summary_material(r.body)]
    assert len(folding) == 1 and folding[0].status == 200
    body = folding[0].body
    assert body["model"] == "a-small-model"
    assert body["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT
    material = summary_material(body)
    assert sent_cut(fake, text) in material
    assert "row 450: value=3150" not in material
    assert not any("summaries of consecutive parts" in summary_material(r.body)
                   for r in summaries)
