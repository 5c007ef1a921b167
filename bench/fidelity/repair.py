"""Issue 16, item 2: does one repair request (summary_repair) keep more of the details a lossy
summary drops than the details ledger alone, and what does it cost? Same run, same turns.

24 user turns in 6 blocks, English and Chinese by turns, each planting 2 details (a path, a
number, a command, a name or a decision; 48 in all, each written once). After each block a
manual compaction folds everything but the newest turn in, then a probe turn ("let's go on")
is sent and its request, as the fake server received it, is searched for every planted detail
folded in so far. The window is 4,096 tokens (response_reserve 512, system_reserve 256; the
summary's budget is 512 and the ledger's 256, the defaults). The summariser is a separate model
name, so the small summary prompt is used and its material can be read back here.

The scripted summariser is lossy as summaries were measured to be: for each new user turn one
gist line without its paths, numbers, commands and names, and every decision word for word; the
previous summary's ledger section it leaves out, as it drops details. Two of them, which differ
in what becomes of the previous summary's own lines: A copies them as they are, B drops their
details too, as a model re-compressing its summary may. Five runs:

  A ledger, B ledger    summary_repair off
  A repair, B repair    on; the model answers a repair request with its summary and one line
                        per listed detail (a capable model)
  A ignored             on; the model answers it with its summary again

    python bench/fidelity/repair.py
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jarvis_tui.core import events as ev  # noqa: E402
from jarvis_tui.core.compaction.summarizer import REPAIR_INSTRUCTION, SUMMARY_SYSTEM_PROMPT  # noqa: E402
from jarvis_tui.core.details.ledger import section, split  # noqa: E402
from jarvis_tui.core.engine.engine import Engine  # noqa: E402
from jarvis_tui.core.providers.openai import OpenAIProvider  # noqa: E402
from jarvis_tui.core.settings.config import Settings  # noqa: E402
from jarvis_tui.core.store.store import Store  # noqa: E402
from tests.fakeserver import FakeProvider  # noqa: E402

WINDOW = 4096
BLOCKS, TURNS_PER_BLOCK = 6, 4
MEASURED = (1, 3, 5)
KINDS = ("path", "number", "command", "name", "decision")
SERVICES = ["billing", "search", "auth", "media", "notify", "export", "ingest", "report",
            "gateway", "ledger", "sync", "mailer", "invoice", "upload", "audit", "metrics",
            "cache", "scheduler", "profile", "payments", "catalog", "chat", "geo", "backup"]
TECH = ["Kafka", "Redis", "PostgreSQL", "NATS", "SQLite", "RabbitMQ", "ClickHouse", "MinIO"]
PEOPLE = ["Priya Raman", "Tomas Berg", "Aiko Tanaka", "Lena Vogel", "Omar Haddad", "Sara Lind"]
ZH_PEOPLE = ["王芳", "李强", "张伟", "刘洋", "陈静", "赵磊"]
FILLER_EN = "The team wants it done before the next release, without surprises for users."
FILLER_ZH = "团队希望在下一个版本之前完成，不要给用户带来意外。"


@dataclass(frozen=True)
class Planted:
    kind: str
    text: str  # as a verbatim detail must appear in the request
    language: str


def plant(i: int) -> tuple[str, list[Planted]]:
    """Turn i: a user message with two details of two kinds, in English or Chinese."""
    svc, zh = SERVICES[i], i % 2 == 1
    kinds = (KINDS[i % 5], KINDS[(i + 2) % 5])
    parts, planted = [], []
    for kind in kinds:
        n = 1000 + 37 * i + (7 if kind == "number" else 0)
        tech, who = TECH[i % len(TECH)], (ZH_PEOPLE if zh else PEOPLE)[i % 6]
        text, sentence = {
            ("path", False): (f"/srv/{svc}/conf/{svc}-{n}.toml",
                              f"Its config lives at /srv/{svc}/conf/{svc}-{n}.toml now."),
            ("path", True): (f"/var/log/{svc}/app-{n}.log",
                             f"日志在 /var/log/{svc}/app-{n}.log 里。"),
            ("number", False): (f"{n} requests", f"The pool is capped at {n} requests a second."),
            ("number", True): (f"{n}毫秒", f"超时设为 {n}毫秒。"),
            ("command", False): (f"systemctl restart {svc}-worker@{n}",
                                 f"To restart it run `systemctl restart {svc}-worker@{n}`."),
            ("command", True): (f"kubectl rollout restart deploy/{svc}-{n}",
                                f"重启用 `kubectl rollout restart deploy/{svc}-{n}`。"),
            ("name", False): (who, f"For access, please contact {who} first."),
            ("name", True): (who, f"这件事的负责人是{who}。"),
            ("decision", False): (f"We decided to use {tech} for the {svc} queue",
                                  f"We decided to use {tech} for the {svc} queue."),
            ("decision", True): (f"我们决定用 {tech} 做 {svc} 的缓存",
                                 f"我们决定用 {tech} 做 {svc} 的缓存。"),
        }[(kind, zh)]
        parts.append(sentence)
        planted.append(Planted(kind, text, "zh" if zh else "en"))
    opening = (f"关于 {svc} 服务：" if zh else f"About the {svc} service: ")
    return opening + " ".join(parts) + " " + (FILLER_ZH if zh else FILLER_EN), planted


# -- the scripted summariser --------------------------------------------------------------------

_DETAIL = re.compile(r"\S*[\d/`@]\S*")
_DECISION = re.compile(r"(?:We decided[^.]*\.|我们决定[^。]*。)")
_NAMES = re.compile("|".join(PEOPLE + ZH_PEOPLE))


def lossy(material: str, recompress: bool) -> str:
    """Previous summary lines, then a gist line per new user turn and its decisions.
    `recompress`: the previous summary's lines lose their details too (model B)."""
    previous, _, turns = material.rpartition("New turns:\n")
    kept = []
    if previous:
        body, _ = split(previous.split("Previous summary:\n", 1)[-1].strip())
        kept = [line for line in body.splitlines() if line.startswith("- ")]
    lines = []
    for block in turns.split("\n\n"):
        if not block.startswith("User: "):
            continue
        text = block.removeprefix("User: ")
        first = re.split(r"[:：]", text, maxsplit=1)[0]
        lines.append(f"- {first}: discussed, and settled how to proceed.")
        lines += [f"- {d}" for d in _DECISION.findall(text)]
    gist = [_NAMES.sub("someone", _DETAIL.sub("", line)) if not _DECISION.search(line) else line
            for line in lines]
    if recompress:
        kept = [_NAMES.sub("someone", _DETAIL.sub("", line)) if not _DECISION.search(line)
                else line for line in kept]
    return "\n".join(kept + gist) or "- The conversation so far."


def repair_answer(content: str, obey: bool) -> str:
    summary = content.split("Summary:\n", 1)[1].split("\n\nDetails it leaves out:\n", 1)[0]
    if not obey:
        return summary
    listed = content.split("Details it leaves out:\n", 1)[1].splitlines()
    said = [m.group(1) for line in listed if (m := re.match(r"^- \w+: (.*?)(?: — .*)?$", line))]
    return summary + "\n" + "\n".join(f"- {d}" for d in said)


def is_summary(body: dict) -> bool:
    return body["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT


def is_repair(body: dict) -> bool:
    return is_summary(body) and body["messages"][-1]["content"].startswith(REPAIR_INSTRUCTION)


def replies(fake: FakeProvider, obey: bool, recompress: bool) -> None:
    def reply(body: dict) -> str:
        if is_repair(body):
            return repair_answer(body["messages"][-1]["content"], obey)
        if is_summary(body):
            return lossy(body["messages"][-1]["content"], recompress)
        zh = re.search(r"[\u4e00-\u9fff]", body["messages"][-1]["content"] or "")
        return "好的，记下了，我们继续。" if zh else "Noted, I will keep that in mind."
    fake.reply_fn = reply


# -- a run ----------------------------------------------------------------------------------------

@dataclass
class Point:
    compactions: int
    present: dict[str, tuple[int, int]]  # kind (and "en", "zh", "all"): (present, folded)
    summary_tokens: int
    ledger_tokens: int


@dataclass
class Run:
    name: str
    points: list[Point] = field(default_factory=list)
    summary_requests: int = 0
    repair_requests: int = 0
    repair_tokens: int = 0  # prompt + completion, as the server counted them
    summary_tokens_spent: int = 0


async def run(name: str, repair: bool, obey: bool, recompress: bool = False) -> Run:
    out = Run(name)
    with FakeProvider(limit=WINDOW) as fake, tempfile.TemporaryDirectory() as tmp:
        replies(fake, obey, recompress)
        settings = Settings(base_url=fake.base_url, model="fake-chat", summary_model="fake-sum",
                            context_window=WINDOW, response_reserve=512, system_reserve=256,
                            keep_recent_turns=1, summary_repair=repair)
        async with OpenAIProvider(fake.base_url) as provider:
            with Store(Path(tmp) / "s.db") as store:
                engine = Engine(settings, store, provider)
                folded: list[Planted] = []
                pending: list[Planted] = []
                compactions = 0
                for block in range(BLOCKS):
                    for t in range(TURNS_PER_BLOCK):
                        text, planted = plant(block * TURNS_PER_BLOCK + t)
                        async for event in engine.stream_reply(text):
                            compactions += isinstance(event, ev.CompactionFinished)
                        pending += planted
                    # All but the newest turn go in; its details wait for the next block.
                    events = [e async for e in engine.compact(reason="manual")]
                    assert isinstance(events[-1], ev.CompactionFinished), events[-1]
                    compactions += 1
                    folded += pending[:-2]
                    pending = pending[-2:]
                    async for event in engine.stream_reply("好的，我们继续。" if block % 2
                                                           else "Good, let's go on."):
                        compactions += isinstance(event, ev.CompactionFinished)
                    request = fake.chat_requests[-1].body["messages"]
                    assert not is_summary({"messages": request})
                    sent = "\n".join(m.get("content") or "" for m in request)
                    body, kept = split(engine.summary.content)
                    out.points.append(Point(compactions, tally(folded, sent),
                                            engine.counter.text(body),
                                            engine.counter.text(section(kept)) if kept else 0))
        for r in fake.chat_requests:
            if not is_summary(r.body):
                continue
            out.summary_requests += 1
            out.summary_tokens_spent += r.prompt_tokens + r.completion_tokens
            if is_repair(r.body):
                out.repair_requests += 1
                out.repair_tokens += r.prompt_tokens + r.completion_tokens
        assert not any(r.overflowed for r in fake.chat_requests)
    return out


def tally(folded: list[Planted], sent: str) -> dict[str, tuple[int, int]]:
    said = sent.lower()
    out: dict[str, tuple[int, int]] = {}
    for p in folded:
        hit = p.text.lower() in said
        for key in (p.kind, p.language, "all"):
            have, of = out.get(key, (0, 0))
            out[key] = (have + hit, of + 1)
    return out


def pct(pair: tuple[int, int] | None) -> str:
    if not pair or not pair[1]:
        return "-"
    return f"{100 * pair[0] / pair[1]:.0f}% ({pair[0]}/{pair[1]})"


RUNS = (("A ledger", False, False, False), ("A repair", True, True, False),
        ("A ignored", True, False, False), ("B ledger", False, False, True),
        ("B repair", True, True, True))
W = 14


async def main() -> None:
    # --quick: an obeyed repair alone, to see it runs
    runs = [await run(*spec) for spec in (RUNS[1:2] if "--quick" in sys.argv[1:] else RUNS)]
    print(f"window {WINDOW:,}, {BLOCKS * TURNS_PER_BLOCK} turns with 2 planted details each "
          f"(English and Chinese by turns), a manual compaction after every {TURNS_PER_BLOCK}; "
          "summary budget 512, ledger 256")
    print("A: the summariser copies its previous summary's lines; B: it drops their details too")
    print("ledger: summary_repair off; repair: on, the model obeys; ignored: on, it does not\n")
    for at in MEASURED:
        print(f"details folded in and present in the request after compaction {at}:")
        print(f"  {'':9}" + "".join(f"{r.name:>{W}}" for r in runs))
        for key in (*KINDS, "en", "zh", "all"):
            print(f"  {key:9}" + "".join(f"{pct(r.points[at - 1].present.get(key)):>{W}}"
                                         for r in runs))
        for label, value in (("summary", lambda p: p.summary_tokens),
                             ("ledger", lambda p: p.ledger_tokens),
                             ("both", lambda p: p.summary_tokens + p.ledger_tokens)):
            print(f"  {label:9}" + "".join(f"{value(r.points[at - 1]):>{W},}" for r in runs))
        print()
    print(f"after {BLOCKS} compactions:")
    print(f"  {'':24}" + "".join(f"{r.name:>{W}}" for r in runs))
    for label, attr in (("summary requests", "summary_requests"),
                        ("  of them repairs", "repair_requests"),
                        ("tokens (prompt + out)", "summary_tokens_spent"),
                        ("  of them for repairs", "repair_tokens")):
        print(f"  {label:24}" + "".join(f"{getattr(r, attr):>{W},}" for r in runs))
    print("\npresent = the detail's text is in the probe request's messages (system message with "
          "the summary and its ledger, and the turns kept); summary and ledger in the engine's "
          "tokens, the ledger with its header")


if __name__ == "__main__":
    asyncio.run(main())
