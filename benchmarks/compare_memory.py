"""Memory ``compare_results`` adds on top of its inputs, for two results of a given size (issue 17).

Builds two Arrow tables in this process (``wide``: distinct 1 MB strings, the agent's reversed
and renamed; ``narrow``: rows of int, float and 64-character text, the agent's shuffled and its
columns renamed), each about ``MB`` megabytes, resets the kernel's high-water mark
(``/proc/self/clear_refs``), compares them and prints the peak resident memory over what the
inputs held. Linux only. Run each shape in a fresh process.

Usage: python benchmarks/compare_memory.py wide|narrow [MB]   (MB default 256)
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pyarrow as pa

from sqlbench.compare import compare_results


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _tables(shape: str, target: int) -> tuple[pa.Table, pa.Table]:
    if shape == "wide":
        rows = target // 1_000_000
        values = pa.array([f"{i:07d}" + "x" * 999_993 for i in range(rows)])
        reverse = pa.array(range(rows - 1, -1, -1))
        return pa.table({"v": values}), pa.table({"w": values.take(reverse)})
    rows = target // (8 + 8 + 64 + 4)
    ids = np.arange(rows)
    text = pa.array([f"{i:064d}" for i in range(rows)])
    expected = pa.table({"i": ids, "f": ids * 0.5, "s": text})
    shuffled = pa.array(np.random.default_rng(0).permutation(rows))
    return expected, expected.take(shuffled).rename_columns(["a", "b", "c"])


def main() -> None:
    shape = sys.argv[1] if len(sys.argv) > 1 else "wide"
    mb = float(sys.argv[2]) if len(sys.argv) > 2 else 256.0
    expected, actual = _tables(shape, int(mb * 2**20 * 0.97))
    inputs = (expected.nbytes + actual.nbytes) / 2**20
    before = _status_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    started = time.monotonic()
    verdict = compare_results(expected, actual).verdict.value
    added = _status_mb("VmHWM") - before
    print(
        f"{shape}, {expected.num_rows:,} rows a side: inputs {inputs:,.0f} MB, RSS with inputs "
        f"{before:,.0f} MB, added by comparing {added:,.0f} MB ({added / inputs:.2f}x), "
        f"{time.monotonic() - started:.1f} s, {verdict}"
    )


if __name__ == "__main__":
    main()
