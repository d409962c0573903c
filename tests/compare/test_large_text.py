"""Large text and binary columns are coded by their values' ranks instead of a shared
dictionary (issue 17): the same verdicts, without copying the values."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

import sqlbench.compare.views as views
from sqlbench.compare import compare_results

_CASES = [
    # (expected, actual, options)
    ({"v": ["a", "b", "b", None]}, {"w": [None, "b", "a", "b"]}, {}),
    ({"v": ["a", "b", "b"]}, {"w": ["a", "b", "c"]}, {}),
    ({"v": ["a", "b", "b"]}, {"w": ["a", "b"]}, {"rows": "set"}),
    ({"v": ["a", "b", "b"]}, {"w": ["a", "b"]}, {}),
    ({"v": ["b", "a"]}, {"w": ["a", "b"]}, {"order": "strict"}),
    ({"k": ["x", "y"], "v": ["p", "q"]}, {"v": ["q", "p"], "k": ["y", "x"]}, {}),
    ({"k": ["x", "y"], "v": ["p", "q"]}, {"a": ["x", "y"], "b": ["q", "p"]}, {}),
    ({"k": ["x", "x"], "v": ["x", "y"]}, {"a": ["x", "y"], "b": ["x", "x"]}, {}),
    ({"v": [b"\x00\x01", b"\x02", None]}, {"w": [b"\x02", None, b"\x00\x01"]}, {}),
    ({"v": [b"\x00\x01", b"\x02"]}, {"w": [b"\x02", b"\x00"]}, {}),
    ({"v": ["é", "e"]}, {"w": ["e", "e\u0301"]}, {}),
    ({"v": ["a", "b"], "n": [1, 2]}, {"w": ["a", "b"], "n": [1, 2], "x": ["a", "b"]}, {}),
    (
        {"v": ["a", "b"], "n": [1, 2]},
        {"w": ["a", "b"], "n": [1, 2], "x": ["a", "b"]},
        {"columns": "exact"},
    ),
    ({"v": ["2024-01-01", "x"]}, {"w": ["x", "2024-01-01"]}, {}),
]


@pytest.mark.parametrize(("expected", "actual", "options"), _CASES)
def test_ranked_codes_give_the_dictionarys_verdict_and_reason(
    expected: dict[str, list[object]],
    actual: dict[str, list[object]],
    options: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    e, a = pa.table(expected), pa.table(actual)
    with_dictionary = compare_results(e, a, **options)  # type: ignore[arg-type]
    monkeypatch.setattr(views, "RANKED_BYTES", 0)
    ranked = compare_results(e, a, **options)  # type: ignore[arg-type]
    assert (ranked.verdict, ranked.reason) == (with_dictionary.verdict, with_dictionary.reason)
    assert ranked.details.column_mapping == with_dictionary.details.column_mapping


_MEASURE = """
import pyarrow as pa
from sqlbench.compare import compare_results

def kb(field):
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith(field))

values = pa.array(["%07d" % i + "x" * 999_993 for i in range(96)])  # 96 MB of distinct text
reverse = pa.array(range(95, -1, -1))
expected, actual = pa.table({"v": values}), pa.table({"w": values.take(reverse)})
before = kb("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
assert compare_results(expected, actual).passed
print((kb("VmHWM") - before) / 1024)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_comparing_large_text_adds_little_memory() -> None:
    # Dictionary encoding added ~3x the inputs (two 96 MB columns: ~570 MB); ranks add the
    # ranks (8 bytes a row) and little else.
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE], capture_output=True, text=True, timeout=300, check=True
    )
    added_mb = float(done.stdout.strip())
    assert added_mb < 96, f"comparing two 96 MB text columns added {added_mb:.0f} MB"
