"""Where the tests find the public-benchmark corpus (Spider, BIRD and defog examples)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SHARED_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
"""Where the public-benchmark corpus sits beside the repository, by default."""
BENCHMARKS_VARIABLE = "SQLBENCH_BENCHMARKS_DIR"
"""Names the corpus folder anywhere else (a CI cache, another checkout)."""


def benchmarks_dir(environ: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    """The corpus folder and whether a variable named it: ``$SQLBENCH_BENCHMARKS_DIR`` when
    set, else ``../shared/benchmarks`` beside the repository."""
    named = (os.environ if environ is None else environ).get(BENCHMARKS_VARIABLE)
    if named:
        return Path(named).expanduser(), True
    return SHARED_BENCHMARKS, False
