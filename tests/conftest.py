"""Shared fixtures. The fake provider runs on a real loopback socket, one per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.fakeserver import FakeProvider


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
