"""Fault-matrix rows for memory (issue 25, item 19): the full-screen app holding a 10 MB reply,
streamed from the hostile server and opened from a stored session.

One such reply held 2.5 GB, and 1.2 GB after Ctrl+N. The rows hold what the user sees: the reply
shown cut with a line saying so, a bounded number of widgets, the whole text stored and read in
the full-text view (V). The memory figures are printed beside, not asserted
(bench/faults/huge_reply.py compares them with the app showing the reply whole).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.faults import Proc, ProcCase, ProcOutcome, Trial, one_line
from tests.faults.huge_reply_tui import REPLY, run_app, store_huge_session

# Structural, generous: the label, the head's Markdown blocks, the cut line and the end. A reply
# shown whole as one Markdown document mounted a widget per block.
MAX_WIDGETS = 60


def huge_reply(mode: str, name: str) -> Callable[[Path], ProcOutcome]:
    def run(tmp: Path) -> ProcOutcome:
        t = Trial(19, name, tmp, issue=25)
        if mode == "load":
            store_huge_session(t.db)
        done, got = run_app(mode, t.env, timeout=240)
        t.add(Proc(["huge_reply_tui", mode], done.returncode, done.stdout, done.stderr, 0.0))
        t.expect(done.returncode == 0 and got.get("exit") == 0,
                 f"exit {done.returncode}/{got.get('exit')}: {one_line(done.stderr)}")
        if not t.expect(got.get("stored_chars") == REPLY,
                        f"stored {got.get('stored_chars')} of {REPLY:,} characters"):
            t.lost += 1
        t.expect(got.get("cut_markers") == 1, "shown whole: no line saying what is not shown")
        widgets = got.get("widgets", 0)
        t.expect(isinstance(widgets, int) and widgets < MAX_WIDGETS,
                 f"{widgets} widgets mounted for one reply")
        t.expect(got.get("viewer_chars") == REPLY,
                 f"V showed {got.get('viewer_chars')} of {REPLY:,} characters")
        t.expect(got.get("viewer_at_end") is True, "End in the view did not reach the reply's end")
        return t.outcome(f"cut, {widgets} widgets; {got.get('held_mb')} MB held (peak "
                         f"{got.get('peak_mb')}), {got.get('viewer_mb')} with V open, "
                         f"{got.get('after_new_mb')} after Ctrl+N")
    return run


CASES: list[ProcCase] = [
    ProcCase(19, "a 10 MB reply streamed into the app", huge_reply("stream", "a 10 MB reply "
             "streamed into the app"), issue=25),
    ProcCase(19, "a session holding a 10 MB reply opened", huge_reply("load", "a session "
             "holding a 10 MB reply opened"), issue=25),
]
