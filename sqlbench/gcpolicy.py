"""When Python's cyclic garbage collector runs (docs/performance.md, "Public
benchmarks beside the official evaluators").

A collection of the oldest generation walks every object the collector tracks, and it is
started by allocations alone. Importing a command's modules, loading the project and loading a
stored run back allocate hundreds of thousands of objects that are either kept (modules,
the project) or freed by reference counting (a run's records hold no cycles): collections
during them find nothing, and in a ``run --agent '*'`` of the Spider corpus they took about 2 s
of CPU, during which no other thread runs. So:

- ``paused()``: no collection inside the block (the block's cycles, if any, are collected
  after it);
- ``long_lived()``: the same, and in the ``sqlbench`` process itself (``own_process``, called by
  the console-script entry point, never by a library caller or a test) everything made so far
  is moved out of the collector's sight (``gc.freeze``), so that the later collections of a
  long run walk only what was made after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_own_process = False


def own_process() -> None:
    """The process is the ``sqlbench`` command: ``long_lived`` may freeze what it made."""
    global _own_process
    _own_process = True


@contextmanager
def paused() -> Iterator[None]:
    """No garbage collection inside the block (nested blocks and threads are fine: the
    collector is enabled again by the block that disabled it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def long_lived() -> Iterator[None]:
    """``paused()`` for a block that makes objects kept as long as the process (a command's
    imports, the loaded project); afterwards, in the ``sqlbench`` process, every object so
    far is frozen (never collected, never walked again)."""
    with paused():
        try:
            yield
        finally:
            if _own_process:
                gc.freeze()
