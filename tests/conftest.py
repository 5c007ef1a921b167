"""Shared fixtures. The fake provider runs on a real loopback socket, one per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fakeserver import FakeProvider, FakeServer
from tests.faults import home_env


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
