"""Shared fixtures. The fake provider runs on a real loopback socket, one per test."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakeserver import FakeProvider


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The environment of a user with empty config and data dirs and no provider variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "JARVIS_", "ANTHROPIC_", "OLLAMA_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               PYTHONIOENCODING="utf-8")
    return env


@pytest.fixture
def make_fake_server() -> Iterator[Callable[..., FakeProvider]]:
    """Factory: make_fake_server(limit=..., flavor=...) -> a started FakeProvider."""
    started: list[FakeProvider] = []

    def make(**kw: object) -> FakeProvider:
        fake = FakeProvider(**kw).start()  # type: ignore[arg-type]
        started.append(fake)
        return fake

    yield make
    for fake in started:
        fake.stop()


@pytest.fixture
def fake_server(make_fake_server: Callable[..., FakeProvider]) -> FakeProvider:
    return make_fake_server()
