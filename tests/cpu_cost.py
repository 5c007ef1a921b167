"""A pytest plugin (`-p tests.cpu_cost`) that writes what each test cost: CPU in the test's own
process (the fake servers' threads included), CPU of the processes it started and waited for, and
wall time, one JSON line per test into $JARVIS_TEST_COST_DIR (a file per xdist worker).
bench/dev/test_loop.py reads them to say where the suite's time goes and which tests are slow."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    where = os.environ.get("JARVIS_TEST_COST_DIR")
    cpu, children, wall = time.process_time(), _children_cpu(), time.monotonic()
    yield
    if not where:
        return
    cost = {"id": item.nodeid, "cpu": time.process_time() - cpu,
            "children": _children_cpu() - children, "wall": time.monotonic() - wall}
    with open(Path(where) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(cost) + "\n")
