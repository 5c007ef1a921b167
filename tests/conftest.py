"""Shared fixtures. The fake provider runs on a real loopback socket, one per test."""

from __future__ import annotations

import compileall
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fakeserver import FakeProvider, FakeServer
from tests.faults import home_env

SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def pytest_configure(config: pytest.Config) -> None:
    """Compile jarvis_tui and the tests' helpers once, before the workers start. Hundreds of
    tests run `jarvis-tui` or a helper in a child process, and where PYTHONDONTWRITEBYTECODE is
    set (as on our CI machines) each child would compile every module it imports again: about
    0.08 s of CPU a process. Python reads the files compiled here whatever that variable says."""
    if hasattr(config, "workerinput"):
        return  # an xdist worker: the controller has done it
    root = SLOW_LIST.parent.parent
    for folder in ("jarvis_tui", "tests", "bench"):
        compileall.compile_dir(root / folder, quiet=2)


@pytest.hookimpl(tryfirst=True)  # before -m selects on the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` the tests tests/slow_tests.txt lists (bench/dev/test_loop.py measures them), so
    the developers' loop can leave them to README's command. Run over the whole suite, a listed
    test that no longer exists is an error: the list would otherwise rot by renames."""
    listed = {line.strip() for line in SLOW_LIST.read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")}
    found = set()
    for item in items:
        if item.nodeid in listed or item.nodeid.split("[")[0] in listed:
            item.add_marker(pytest.mark.slow)
            found |= {item.nodeid, item.nodeid.split("[")[0]}
    here = config.invocation_params.dir
    whole = [(here / a).resolve() for a in config.args] == [SLOW_LIST.parent.resolve()]
    # A test of a file left out (--ignore, --deselect) is not gone: only one of a file that was
    # collected, or of a file that is no more.
    collected = {item.nodeid.split("::")[0] for item in items}
    root = SLOW_LIST.parent.parent
    gone = sorted(n for n in listed - found if n.split("::")[0] in collected
                  or not (root / n.split("::")[0]).exists())
    if whole and gone:
        raise pytest.UsageError(
            f"tests/slow_tests.txt names {len(gone)} test(s) that no longer exist, e.g. "
            f"{gone[0]}: run `python bench/dev/test_loop.py --write` to list the slow ones again")


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The environment of a user with empty config and data dirs and no provider variables."""
    return home_env(tmp_path)


def _started(cls: type[FakeServer]) -> Iterator[Callable[..., Any]]:
    """A factory fixture body: make(**kw) starts a fake; all of them stop after the test."""
    started: list[FakeServer] = []

    def make(**kw: object) -> Any:
        fake = cls(**kw).start()  # type: ignore[arg-type]
        started.append(fake)
        return fake

    yield make
    for fake in started:
        fake.stop()


@pytest.fixture
def make_fake_server() -> Iterator[Callable[..., FakeProvider]]:
    """Factory: make_fake_server(limit=..., flavor=...) -> a started FakeProvider."""
    yield from _started(FakeProvider)


@pytest.fixture
def make_fake_anthropic() -> Iterator[Callable[..., FakeAnthropic]]:
    yield from _started(FakeAnthropic)


@pytest.fixture
def make_fake_ollama() -> Iterator[Callable[..., FakeOllama]]:
    yield from _started(FakeOllama)


@pytest.fixture
def fake_server(make_fake_server: Callable[..., FakeProvider]) -> FakeProvider:
    return make_fake_server()
