"""The product's promise in one test: 60 turns of Chinese, English and a pasted 20k-token file
against a strict 4,096-token server, with no error and nothing lost."""

from __future__ import annotations

from jarvis_tui.core import events as ev
from tests.engine_helpers import final, is_summary_request, make_engine, send, summarising_replies
from tests.fakeserver import count_tokens

ENGLISH = ("We are planning the release of version {i}. The build must pass on Linux and macOS, "
           "and the changelog should mention the new token gauge and the summary panel. ")
CHINESE = "第{i}轮：我们讨论一下上下文窗口的管理方式，以及为什么不能只发送最后二十条消息。"


def pasted_file(tokens: int) -> str:
    lines = []
    i = 0
    while count_tokens("\n".join(lines)) < tokens:
        lines += [f"def handler_{i + j}(request):\n    return respond(request, code={i + j})"
                  for j in range(200)]
        i += 200
    return "\n".join(lines)


async def test_sixty_turns_mixed_languages_and_a_huge_paste(make_fake_server, tmp_path):
    fake = make_fake_server(limit=4096)
    summarising_replies(fake)
    # Our settings believe the window is 4096, as the user configured it.
    engine = make_engine(fake, tmp_path, context_window=4096, response_reserve=512,
                         system_reserve=256)
    big = pasted_file(20_000)
    assert count_tokens(big) >= 20_000
    texts = []
    for i in range(60):
        if i == 20:
            text = "Please review this file:\n" + big
        elif i % 2:
            text = CHINESE.format(i=i) * 3
        else:
            text = ENGLISH.format(i=i) * 3
        texts.append(text)
        events = await send(engine, text)
        assert isinstance(final(events), ev.Finished), (i, final(events))

    chat = [r for r in fake.chat_requests if not is_summary_request(r.body)]
    # Every request that reached the model fit its window; layer 3 healed any that did not.
    assert all(r.prompt_tokens + 512 <= 4096 for r in chat if r.status == 200)
    assert sum(r.status == 200 for r in chat) == 60
    assert engine.store.summaries(engine.conversation.id), "compaction must have happened"

    stored = engine.store.messages(engine.conversation.id)
    assert len(stored) == 120
    assert [m.content for m in stored if m.role == "user"] == texts
    assert all(m.status == "complete" for m in stored)
    exported = engine.store.export(engine.conversation.id)
    assert [m["content"] for m in exported["messages"] if m["role"] == "user"] == texts
