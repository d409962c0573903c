"""Loading a stored run back: no garbage collection walks the records while they load."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from sqlbench.records.run import RunStatus
from sqlbench.runs.store import RunStore


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the garbage collections started while the test runs."""
    started: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield started
    finally:
        gc.callbacks.remove(note)


def test_loading_a_run_back_collects_garbage_once_at_most(
    tmp_path: Any, make_info: Any, make_trial: Any, collections: list[int]
) -> None:
    with RunStore.for_project(tmp_path, None) as store:
        info = make_info(name="big")
        store.create_run(info)
        for n in range(400):  # thousands of objects when loaded: collections would start
            store.record(info.id, make_trial(f"q{n:03d}", position=n, tags=["a", "b"]))
        store.finish(info.id, RunStatus.COMPLETED)
        assert gc.isenabled()
        gc.collect()
        collections.clear()

        run = store.load_run("big")
        exported = store.export_run("big")

    # Dozens of collections while 400 records load, each walking what was loaded so far; now
    # none while loading, and the one the allocations call for once the collector is back.
    assert len(collections) <= 2, collections
    assert gc.isenabled()
    assert len(run.questions) == 400 and len(exported["results"]) == 400
