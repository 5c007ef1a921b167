"""Which summary request the offline model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, run by
llama-cpp-python's server with the GGUF's own chat template) follows well, in English and in
Chinese, found by measurement.

Each candidate summarises the eight short sessions of bench/local/summary_local_data.py (four
English, four Chinese: facts said in prose with a log line or a bit of code, ending on an open
request). The "prefix" candidates send the chat request as the app last sent it (its system prompt,
the turns, ending on the assistant's reply) and one more user turn asking for the summary, as
Summarizer.summarize_prefix does so that the server's KV cache serves the front; before them the
chat request is sent once (not timed), as the round that triggered the compaction would have.
The "small" candidates send a summary prompt and the turns as a transcript, as Summarizer._call
does. Scored per candidate and language: the share of the sessions' facts the summary keeps, and
with the details ledger the app writes below it (what the summary leaves out, word for word, in
a 4,096-token window's room); refusals (an apology keeping at most one fact); copies of the
session; lines of the instruction echoed; replies that do the open request or reply to the last
turn instead of summarising; replies in the other language; the summary's tokens and with its
ledger (what every later request carries); mean seconds per request (the machine is shared: the
timings move with its load, the other figures do not).

    .venv/bin/python bench/local/summary_local.py --model /tmp/qwen/q.gguf
    .venv/bin/python bench/local/summary_local.py --base-url http://127.0.0.1:8821/v1 \
        [--only NAME,..]
        [--sessions NAME,..] [--seeds 7,11] [--show] [--out replies.json [--resume]]

Requests carry temperature 0.2 (what the app sends the local model) and a fixed seed per sample
(two by default), so that a rerun on the same server reads nearly the same replies: llama.cpp's
numbers still move a little with what its KV cache held before.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.local.summary_local_data import SESSIONS, Session
from jarvis_tui.core.compaction.summarizer import (
    PLAIN_PREFIX_INSTRUCTIONS,
    PLAIN_SMALL_INSTRUCTIONS,
    PLAIN_WORDS,
    PREFIX_INSTRUCTION,
    SUMMARY_SYSTEM_PROMPT,
    fit_summary,
    language_of,
    plain_small_prompt,
    render_transcript,
)
from jarvis_tui.core.details.ledger import ledger_for
from jarvis_tui.core.engine.budgeting import DETAILS_FLOOR
from jarvis_tui.core.messages import Message
from jarvis_tui.core.providers.local_server import (
    LOCAL_MODEL_NAME,
    LocalServer,
    free_port,
    local_model_path,
)
from jarvis_tui.core.window.tokens import TokenCounter

SYSTEM_PROMPT = "You are Jarvis, a helpful assistant. Answer in the user's language."  # default
TEMPERATURE = 0.2
SEEDS = "7,11"  # two samples of each: one alone moves a candidate by a few facts
MAX_TOKENS = 512  # the summary cap the app's defaults give a 4,096-token window
N_CTX = 4096
COUNTER = TokenCounter(LOCAL_MODEL_NAME)
# The ledger's room is the app's at a 4,096-token window: its floor, DETAILS_FLOOR.
REFUSAL = re.compile(r"can['’]?t (assist|help)|cannot (assist|help)|unable to (assist|help)|"
                     r"I['’]m sorry|I apologi[sz]e|"
                     r"抱歉|对不起|无法(协助|帮助|提供)|不能(协助|帮助)", re.I)

# The new wordings. Short and plain: no "pause" or "do not answer" (the model read those as a
# request to refuse); said as a request of the user, in the session's language.
PLAIN = {
    "en": ("Summarize {what} in a few short lines, so that it can go on without {them}. Keep "
           "every name, number, date, path, id, phone number and decision exactly as written, "
           "and say what is still open. {lang}Only the summary."),
    "zh": ("请用几行简短的文字总结{what}，让对话不看{them}也能继续。"
           "所有人名、数字、日期、路径、编号、电话和决定都要原样保留，并写出还没完成的事。"
           "{lang}只写总结。"),
}
LABELS = {
    "en": ("Summarize {what} in these four lines, so that it can go on without {them}:\n"
           "Goal: what the user wants\n"
           "Facts: every name, number, date, path, id and phone number, exactly as written\n"
           "Decisions: what was decided\n"
           "Open: what is still to do or to answer\n"
           "Only these four lines. {lang}"),
    "zh": ("请用下面四行总结{what}，让对话不看{them}也能继续：\n"
           "目标：用户想做什么\n"
           "事实：所有人名、数字、日期、路径、编号和电话，原样照抄\n"
           "决定：已经决定的事\n"
           "待办：还没做完或还没回答的事\n"
           "只写这四行。{lang}"),
}
BULLETS = {
    "en": ("Summarize {what} as a short list, one point per line, each line starting with \"- \", "
           "so that it can go on without {them}. Keep every name, number, date, path, id, phone "
           "number and decision exactly as written, and end with what is still open. {lang}"
           "Only the list."),
    "zh": ("请把{what}总结成一个简短的列表，每行一条，以“- ”开头，让对话不看{them}也能继续。"
           "所有人名、数字、日期、路径、编号、电话和决定都要原样保留，最后写出还没完成的事。"
           "{lang}只写列表。"),
}
# The labels named, not shown as lines to fill in: shown, the model copied the lines back.
BARE_LABELS = {
    "en": ("Summarize {what} so that it can go on without {them}. Write four lines that begin "
           "with \"Goal:\", \"Facts:\", \"Decisions:\" and \"Open:\". Under Facts, copy every "
           "name, number, date, path, id and phone number exactly as written. {lang}"),
    "zh": ("请总结{what}，让对话不看{them}也能继续。写四行，分别以“目标：”“事实：”“决定：”“待办：”"
           "开头。“事实：”里照抄所有人名、数字、日期、路径、编号和电话。{lang}"),
}
WHAT = {  # where the turns are: above (the chat), in the next message, or just above
    "turns": {"en": ("our conversation so far", "the turns above"),
              "zh": ("我们到目前为止的对话", "上面的内容")},
    "system": {"en": ("the conversation in the next message", "it"),
               "zh": ("下一条消息里的对话", "原文")},
    "after": {"en": ("the conversation above", "it"), "zh": ("上面的对话", "原文")},
}
IN_LANG = {"en": "Write in English. ", "zh": "用中文写。"}
IN_ITS_LANG = "Write in the language of the conversation. "


def instruction(template: dict[str, str], lang: str, where: str, *,
                in_lang: bool = True) -> str:
    what, them = WHAT[where][lang]
    return template[lang].format(what=what, them=them,
                                 lang=IN_LANG[lang] if in_lang else IN_ITS_LANG).strip()


def chat_wire(s: Session) -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT},
            *({"role": role, "content": text} for role, text in s.turns)]


def transcript(s: Session, lang: str | None = None) -> str:
    """The small prompt's transcript: the standard style's, or the plain style's in `lang` (the
    speakers named in it)."""
    messages = [Message(role=r, content=t) for r, t in s.turns]
    if lang is None:
        return render_transcript(messages)
    return render_transcript(messages, PLAIN_WORDS[lang]["labels"], PLAIN_WORDS[lang]["colon"])


@dataclass(frozen=True)
class Candidate:
    name: str
    prefix: bool  # asked at the end of the chat request (the KV cache serves the front)
    build: Callable[[Session], list[dict]]
    about: str


def _lang(s: Session) -> str:
    return language_of(t for r, t in s.turns if r == "user")


def _prefix(text: Callable[[str], str]) -> Callable[[Session], list[dict]]:
    return lambda s: [*chat_wire(s), {"role": "user", "content": text(_lang(s))}]


CANDIDATES: tuple[Candidate, ...] = (
    Candidate("prefix", True, _prefix(lambda lang: PREFIX_INSTRUCTION),
              "today's prefix form (PREFIX_INSTRUCTION)"),
    Candidate("small", False,
              lambda s: [{"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
                         {"role": "user", "content": f"Transcript:\n{transcript(s)}"}],
              "today's small prompt (SUMMARY_SYSTEM_PROMPT + transcript)"),
    Candidate("prefix-plain", True,
              _prefix(lambda lang: instruction(PLAIN, "en", "turns", in_lang=False)),
              "prefix, plain English wording for both languages"),
    Candidate("prefix-lang", True, _prefix(lambda lang: PLAIN_PREFIX_INSTRUCTIONS[lang]),
              "prefix, plain wording in the session's language (shipped: style plain)"),
    Candidate("prefix-labels", True, _prefix(lambda lang: instruction(LABELS, lang, "turns")),
              "prefix, Goal/Facts/Decisions/Open lines in the session's language"),
    Candidate("prefix-bullets", True, _prefix(lambda lang: instruction(BULLETS, lang, "turns")),
              "prefix, a \"- \" list in the session's language"),
    Candidate("prefix-labels-named", True,
              _prefix(lambda lang: instruction(BARE_LABELS, lang, "turns")),
              "prefix, the four labels named in a sentence, in the session's language"),
    Candidate("small-lang-sys", False,
              lambda s: [{"role": "system", "content": instruction(PLAIN, _lang(s), "system")},
                         {"role": "user", "content": transcript(s, _lang(s))}],
              "small, plain wording in the session's language in the system message"),
    Candidate("small-labels-sys", False,
              lambda s: [{"role": "system", "content": instruction(LABELS, _lang(s), "system")},
                         {"role": "user", "content": transcript(s, _lang(s))}],
              "small, labelled lines in the session's language in the system message"),
    Candidate("small-labels-user", False,
              lambda s: [{"role": "user", "content": transcript(s, _lang(s)) + "\n\n"
                          + instruction(LABELS, _lang(s), "after")}],
              "small, labelled lines in the session's language after the transcript, one user "
              "turn"),
    Candidate("small-labels-named-user", False,
              lambda s: plain_small_prompt(transcript(s, _lang(s)), _lang(s)),
              "small, the four labels named in a sentence after the transcript, one user turn "
              "(shipped: style plain's small prompt)"),
    Candidate("small-lang-user", False,
              lambda s: [{"role": "user", "content": transcript(s, _lang(s)) + "\n\n"
                          + instruction(PLAIN, _lang(s), "after")}],
              "small, plain wording in the session's language after the transcript, one user "
              "turn"),
)


@dataclass
class Reply:
    seed: int
    candidate: str
    session: str
    lang: str
    text: str
    seconds: float
    kept: list[str]  # labels of the facts the reply keeps
    facts: int
    refused: bool
    copied: bool
    echoed: bool
    answered: bool
    wrong_language: bool
    length: float  # the reply's characters over the session's
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Row:
    replies: list[Reply] = field(default_factory=list)

    def figures(self) -> tuple[float, float, int, int, int, int, int, float, float, float, int]:
        r = self.replies
        facts = max(sum(x.facts for x in r), 1)
        kept = sum(len(x.kept) for x in r) / facts
        ledger = [with_ledger(x) for x in r]
        return (kept, sum(k for k, _, _ in ledger) / facts, sum(x.refused for x in r),
                sum(x.copied for x in r), sum(x.echoed for x in r),
                sum(x.answered for x in r), sum(x.wrong_language for x in r),
                statistics.mean(t for _, t, _ in ledger),
                statistics.mean(t for _, _, t in ledger),
                statistics.mean(x.seconds for x in r), len(r))


def with_ledger(r: Reply) -> tuple[int, int, int]:
    """What the app keeps of `r`: the facts in the summary (cut to its cap) and the details
    ledger below it (core/details/ledger.py, which keeps word for word what the summary leaves out),
    the summary's tokens, and the summary's and ledger's."""
    s = next(x for x in SESSIONS if x.name == r.session)
    messages = [Message(role=role, content=text, id=i + 1)
                for i, (role, text) in enumerate(s.turns)]
    summary = fit_summary(r.text, MAX_TOKENS, COUNTER)
    full = ledger_for(summary, None, messages, messages, COUNTER, DETAILS_FLOOR)
    kept = sum(bool(re.search(pattern, full, re.I)) for _, pattern in s.facts)
    return kept, COUNTER.text(summary), COUNTER.text(full)


def copies(text: str, s: Session) -> bool:
    """Whether `text` is the session written out again rather than summarised: half its turns
    (but the shortest) in it word for word."""
    flat = " ".join(text.split())
    turns = [" ".join(t.split()) for _, t in s.turns if len(t) >= 20]
    return sum(t in flat for t in turns) * 2 >= len(turns)


def echoes(text: str, request: list[dict], s: Session) -> bool:
    """Whether `text` copies back a line of the instruction (a line of the request's last
    message that is not the session's)."""
    said = "\n".join(t for _, t in s.turns)
    lines = [line.strip() for line in request[-1]["content"].splitlines()]
    return any(len(line) >= 8 and line not in said and line in text for line in lines)


def score(seed: int, c: Candidate, s: Session, request: list[dict], text: str, seconds: float,
          usage: dict) -> Reply:
    kept = [label for label, pattern in s.facts if re.search(pattern, text, re.I)]
    refused = bool(REFUSAL.search(text)) and len(kept) <= 1
    echoed = echoes(text, request, s)
    # Doing the open request, or replying to the last turn: a reply that keeps at most one of
    # the facts, neither refusing nor copying the instruction, reads as the conversation's next
    # turn ("Use Jest.", "Do you run the tests with tox or with plain pytest?").
    answered = bool(re.search(s.answer, text, re.I)) or (len(kept) <= 1 and not refused
                                                          and not echoed)
    return Reply(seed, c.name, s.name, s.lang, text, seconds, kept, len(s.facts),
                 refused=refused, copied=copies(text, s), echoed=echoed, answered=answered,
                 wrong_language=language_of([text]) != s.lang,
                 length=len(text) / len("".join(t for _, t in s.turns)),
                 prompt_tokens=usage.get("prompt_tokens", 0),
                 completion_tokens=usage.get("completion_tokens", 0))


def check_data() -> None:
    """Each fact is in its session, no `answer` is, and the sessions' language is the one the
    app would detect: else a score would measure the data, not the model. The candidates built
    here from the same templates as the shipped texts differ from them only where meant to."""
    for lang in ("en", "zh"):
        assert instruction(PLAIN, lang, "turns") == PLAIN_PREFIX_INSTRUCTIONS[lang]
        assert instruction(BARE_LABELS, lang, "after") == PLAIN_SMALL_INSTRUCTIONS[lang]
    for s in SESSIONS:
        text = "\n".join(t for _, t in s.turns)
        missing = [label for label, pattern in s.facts if not re.search(pattern, text, re.I)]
        if missing or re.search(s.answer, text, re.I) or _lang(s) != s.lang:
            raise SystemExit(f"bad session {s.name}: facts not in it {missing}, or its answer "
                             "pattern matches it, or its language is detected otherwise")


async def ask(client: httpx.AsyncClient, messages: list[dict], seed: int,
              max_tokens: int | None = None) -> tuple[str, float, dict]:
    started = time.perf_counter()
    response = await client.post("/chat/completions", json={
        "messages": messages, "temperature": TEMPERATURE, "seed": seed,
        "max_tokens": max_tokens or MAX_TOKENS})
    response.raise_for_status()
    body = response.json()
    return ((body["choices"][0]["message"]["content"] or "").strip(),
            time.perf_counter() - started, body.get("usage") or {})


async def run(base_url: str, candidates: list[Candidate], sessions: list[Session],
              seeds: list[int], show: bool, out: Path | None,
              done: list[Reply]) -> list[Reply]:
    """Every candidate's reply for every seed and session, but those in `done` (a run cut
    short, resumed); each written to `out` as it comes, as the run takes the best part of an
    hour on a shared machine."""
    replies = list(done)
    have = {(r.seed, r.candidate, r.session) for r in done}
    async with httpx.AsyncClient(base_url=base_url, timeout=900) as client:
        for seed, s in ((seed, s) for seed in seeds for s in sessions):
            # The prefix candidates first, after the chat request the compaction follows: each
            # then finds the front in the one-slot KV cache, as in the app.
            ordered = [c for c in sorted(candidates, key=lambda c: not c.prefix)
                       if (seed, c.name, s.name) not in have]
            if any(c.prefix for c in ordered):
                await ask(client, chat_wire(s), seed, max_tokens=1)
            for c in ordered:
                request = c.build(s)
                text, seconds, usage = await ask(client, request, seed)
                reply = score(seed, c, s, request, text, seconds, usage)
                replies.append(reply)
                if out is not None:
                    out.write_text(json.dumps([r.__dict__ for r in replies], ensure_ascii=False,
                                              indent=1), encoding="utf-8")
                flags = [f for f, on in (("refused", reply.refused), ("copied", reply.copied),
                                         ("echoed", reply.echoed),
                                         ("answered", reply.answered),
                                         ("wrong language", reply.wrong_language)) if on]
                print(f"  {seed:3} {s.name:15} {c.name:23} {len(reply.kept)}/{reply.facts} facts "
                      f"{seconds:5.1f}s {' '.join(flags)}", file=sys.stderr, flush=True)
                if show:
                    print(text + "\n", file=sys.stderr, flush=True)
    return replies


def table(replies: list[Reply], candidates: list[Candidate]) -> None:
    print(f"\n{'':29}{'facts kept':^18}{'':44}{'tokens':^16}")
    print(f"{'candidate':24}{'lang':>5}{'summary':>9}{'+ledger':>9}{'refused':>8}{'copied':>8}"
          f"{'echoed':>8}{'answered':>9}{'wrong lang':>11}{'summary':>8}{'+ledger':>8}"
          f"{'mean s':>8}")
    for c in candidates:
        for lang in ("en", "zh"):
            row = Row([r for r in replies if r.candidate == c.name and r.lang == lang])
            if not row.replies:
                continue
            (kept, ledger, refused, copied, echoed, answered, wrong, tokens, with_ledger_tokens,
             seconds, n) = row.figures()
            print(f"{c.name:24}{lang:>5}{kept:>8.0%}{ledger:>9.0%} {refused:>4}/{n:<3}"
                  f"{copied:>4}/{n:<3}{echoed:>4}/{n:<3}{answered:>5}/{n:<3}{wrong:>7}/{n:<3}"
                  f"{tokens:>8.0f}{with_ledger_tokens:>8.0f}{seconds:>8.1f}")
    print()
    for c in candidates:
        print(f"{c.name:24} {c.about}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--base-url", help="a running llama-cpp-python server, …/v1")
    where.add_argument("--model", type=Path, help="a GGUF to serve for the run")
    parser.add_argument("--only", help="candidates, comma-separated")
    parser.add_argument("--sessions", help="sessions, comma-separated")
    parser.add_argument("--seeds", default=SEEDS,
                        help=f"each candidate asked once per seed (default {SEEDS})")
    parser.add_argument("--show", action="store_true", help="print each reply")
    parser.add_argument("--out", type=Path, help="write every reply and its score as JSON")
    parser.add_argument("--resume", action="store_true",
                        help="keep the replies already in --out, ask only for the others")
    parser.add_argument("--quick", action="store_true",
                        help="to see it runs: the bundled model unless --model or --base-url, "
                             "one candidate, session and seed, 24-token summaries")
    args = parser.parse_args()
    if args.quick:
        global MAX_TOKENS
        MAX_TOKENS = 24
        args.only, args.sessions, args.seeds = args.only or "small", args.sessions, "7"
        args.model = args.model or (None if args.base_url else local_model_path())
    if args.model is None and args.base_url is None:
        parser.error("one of the arguments --base-url --model is required")
    check_data()
    candidates = [c for c in CANDIDATES
                  if not args.only or c.name in args.only.split(",")]
    sessions = [s for s in SESSIONS if not args.sessions or s.name in args.sessions.split(",")]
    sessions = sessions[:1] if args.quick else sessions
    if not candidates or not sessions:
        raise SystemExit("no candidate or no session by those names")
    seeds = [int(x) for x in args.seeds.split(",")]
    print(f"{len(candidates)} candidates x {len(sessions)} sessions x seeds {seeds}; temperature "
          f"{TEMPERATURE}, max_tokens {MAX_TOKENS}", flush=True)
    done = []
    if args.resume and args.out and args.out.exists():
        done = [Reply(**r) for r in json.loads(args.out.read_text(encoding="utf-8"))]
    if args.base_url:
        replies = await run(args.base_url, candidates, sessions, seeds, args.show, args.out,
                            done)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            port = free_port()
            # No --chat_format: the chat template comes from the GGUF, as the app runs it.
            server = LocalServer([sys.executable, "-m", "llama_cpp.server", "--model",
                                  str(args.model), "--n_ctx", str(N_CTX), "--host", "127.0.0.1",
                                  "--port", str(port)], port=port,
                                 log_path=Path(tmp) / "llama.log")
            await server.start()
            try:
                replies = await run(server.base_url, candidates, sessions, seeds, args.show,
                                    args.out, done)
            finally:
                server.stop()
    table(replies, candidates)


if __name__ == "__main__":
    asyncio.run(main())
