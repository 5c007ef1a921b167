"""The benches that ask the bundled model run as the e2e tests do: one worker for all of them
(one llama server at a time on the two cores), skipped with the reason without the `local`
extra. The whole suite gets this from tests/e2e/conftest.py too; this is for tests/bench alone."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import local_extra_missing


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if "e2e" in item.keywords and "bench" in item.path.parts]
    for item in ours:
        item.add_marker(pytest.mark.xdist_group("llama_server"))
    if ours and local_extra_missing():
        skip = pytest.mark.skip(reason="needs the local extra (llama-cpp-python): install with "
                                       "pip install -e '.[dev,local]', as README's test command "
                                       "does")
        for item in ours:
            item.add_marker(skip)
