"""bench/fidelity/fidelity_work.py's figures for one window: aggregates only, so that a held-out
set's facts and questions are never printed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

CHECKPOINTS = (1, 3, 5)
KIND_ORDER = ("path", "url", "number", "port", "time", "command", "error", "name", "decision",
              "phone", "code")
SOURCES = ("summary", "ledger", "recall", "window", "tool", "missing")


# Here, not in fidelity_work.py: the report reads it and fidelity_work.py imports the report.
@dataclass
class Outcome:
    """What the sessions of one window, config and set gave."""

    # (checkpoint, "same"/"other" question language, statement language, kind) -> probes
    answered: dict[tuple[int, str, str, str], list[bool]] = field(
        default_factory=lambda: defaultdict(list))
    source: dict[tuple[int, str], int] = field(default_factory=lambda: defaultdict(int))
    reached: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    sizes: list[tuple[int, int, int, int]] = field(default_factory=list)
    # per compaction: (summary tokens, its budget, ledger tokens, its budget)
    ledger_per_request: list[int] = field(default_factory=list)
    ledger_budget: int = 0
    ledger_lines: list[tuple[int, int]] = field(default_factory=list)  # (from facts, other)
    while_said: list[int] = field(default_factory=list)  # compactions before the last fact
    turns: int = 0
    failed: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    summaries: int = 0
    seconds: float = 0.0


def share(values: list[bool]) -> str:
    return f"{sum(values)}/{len(values)}" if values else "-"


def pct(values: list[bool]) -> str:
    return f"{100 * sum(values) / len(values):.0f}%" if values else "-"


def kinds_of(facts: list[dict]) -> list[str]:
    present = {f["kind"] for f in facts}
    return [k for k in KIND_ORDER if k in present] + sorted(present - set(KIND_ORDER))


def report(window: int, results: dict[tuple[str, str], Outcome], sets: dict[str, list[dict]],
           languages: tuple[str, ...], sessions: int, seconds: float) -> None:
    print(f"\n==== window {window:,} tokens: {sessions} session(s) per language "
          f"({', '.join(languages)}), {seconds:.0f} s")
    for (config, name), out in results.items():
        reached = {p: out.reached.get(p, []) for p in CHECKPOINTS}
        missing = [p for p in CHECKPOINTS if len(reached[p]) < sessions * len(languages)]
        print(f"{config} / {name}: {out.turns} turns, {out.failed} failed, {out.summaries} "
              f"summary requests, {out.tool_calls} tool calls ({out.tool_errors} errors), "
              f"compactions while the facts were said {out.while_said}, after the last "
              f"fact at the checkpoints {dict(reached)}"
              + (f", checkpoints NOT reached: {missing}" if missing else "")
              + f", {out.seconds:.0f} s")
    print("\nshare of probes whose value reached the request (question in the statement's "
          "language or the other)")
    print(f"{'config':15}{'set':8}{'question':10}{'stated':8}"
          + "".join(f"{f'after {p}':>12}" for p in CHECKPOINTS))
    for (config, name), out in results.items():
        for rel in ("same", "other"):
            for language in languages:
                cells = [[v for (p, r, lang, _), vs in out.answered.items()
                          if p == point and r == rel and lang == language for v in vs]
                         for point in CHECKPOINTS]
                print(f"{config:15}{name:8}{rel:10}{language:8}"
                      + "".join(f"{share(c) + ' ' + pct(c):>12}" for c in cells))
    for name, facts in sets.items():
        kinds = kinds_of(facts)
        print(f"\nafter 5 compactions, per kind ({name}, both question languages)")
        print(f"{'config':15}" + "".join(f"{k:>10}" for k in kinds))
        for config in dict.fromkeys(c for c, _ in results):
            out = results.get((config, name))
            if out is None:
                continue
            row = [[v for (p, _, _, k), vs in out.answered.items() if p == 5 and k == kind
                    for v in vs] for kind in kinds]
            print(f"{config:15}" + "".join(f"{share(r):>10}" for r in row))
    print("\nwhere the probes found the value (after 1 / 3 / 5 compactions)")
    for (config, name), out in results.items():
        print(f"  {config} / {name}: " + ", ".join(
            f"{src} " + "/".join(str(out.source.get((p, src), 0)) for p in CHECKPOINTS)
            for src in SOURCES))
    print("\nledger and summary sizes (engine's token counts)")
    for (config, name), out in results.items():
        per = out.ledger_per_request
        over_summary = sum(s > sb for s, sb, _, _ in out.sizes)
        over_ledger = sum(led > lb for _, _, led, lb in out.sizes)
        lines = [f"{a} from facts / {b} other" for a, b in out.ledger_lines]
        print(f"  {config} / {name}: ledger per request mean "
              f"{sum(per) / len(per) if per else 0:.0f}, max {max(per, default=0)} of budget "
              f"{out.ledger_budget} ({len(per)} requests with a summary, "
              f"{sum(t > out.ledger_budget for t in per)} over it); over budget in "
              f"{over_summary} (summary) and {over_ledger} (ledger) of {len(out.sizes)} "
              f"compactions; ledger lines at the end: {', '.join(lines) or 'none'}")
