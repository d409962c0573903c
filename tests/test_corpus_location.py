"""Where the corpus tests find the public-benchmark corpus."""

from __future__ import annotations

from pathlib import Path

from benchmark_corpus import SHARED_BENCHMARKS, benchmarks_dir


def test_the_corpus_folder_comes_from_a_variable_or_beside_the_repository(
    tmp_path: Path,
) -> None:
    assert benchmarks_dir({}) == (SHARED_BENCHMARKS, False)
    assert benchmarks_dir({"SQLBENCH_BENCHMARKS_DIR": str(tmp_path)}) == (tmp_path, True)
    assert benchmarks_dir({"SQLBENCH_BENCHMARKS_DIR": ""}) == (SHARED_BENCHMARKS, False)
