"""`jarvis-tui search`, `search --all` and `memory add` rank and match by meaning as the app
does (issue 40, item 4): real processes on real config and data dirs, the bundled model loaded by
the command itself; `recall_by_meaning = false` in the config file brings back the words
alone."""

from __future__ import annotations

import pytest

from jarvis_tui.core.store.store import Store
from tests.cli.test_cli import run, write_config
from tests.cli.test_memory_cli import db
from tests.core.recall.test_recall_sessions import session
from tests.core.recall.test_search_meaning import ASKED, CAR, CELLO, EVAN, OTHER_WORDS, TURNS


def blocks(output: str) -> list[str]:
    return [b for b in output.strip().split("\n\n") if b]


@pytest.mark.parametrize("by_meaning", [True, False])
def test_search_and_search_all(home, tmp_path, by_meaning):
    if not by_meaning:
        write_config(tmp_path, "recall_by_meaning = false\n")
    db(home).parent.mkdir(parents=True, exist_ok=True)
    with Store(db(home)) as store:
        session(store, "catching up", TURNS)
    asked = run(home, "search", ASKED, "--limit", "3")
    other = run(home, "search", OTHER_WORDS)
    everywhere = run(home, "search", "--all", OTHER_WORDS)
    for done in (asked, other, everywhere):
        assert done.returncode == 0 and done.stderr == "", done.stderr
    assert all(any(text in b for b in blocks(asked.stdout)) for text in EVAN[1:])
    if by_meaning:
        assert CAR in blocks(asked.stdout)[0]
        assert CELLO in blocks(other.stdout)[0]
        assert blocks(everywhere.stdout)[0].startswith("session 1 [catching up, ")
        assert CELLO in blocks(everywhere.stdout)[0]
    else:
        assert CAR not in asked.stdout  # three other turns name Evan more briefly
        assert CELLO not in other.stdout and CELLO not in everywhere.stdout


@pytest.mark.parametrize("by_meaning", [True, False])
def test_memory_add_in_other_words_is_the_same_entry(home, tmp_path, by_meaning):
    if not by_meaning:
        write_config(tmp_path, "recall_by_meaning = false\n")
    said = [run(home, "memory", "add", text).stdout.strip() for text in (
        "The user prefers dark mode", "User likes the dark theme",
        "Anna owns the billing service.", "Anna 负责计费服务。")]
    if by_meaning:
        assert said == ["remembered as entry 1", "remembered as entry 1",
                        "remembered as entry 2", "remembered as entry 2"]
    else:
        assert said == [f"remembered as entry {i}" for i in (1, 2, 3, 4)]
