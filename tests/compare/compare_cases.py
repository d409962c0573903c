"""Golden comparison cases from ``tests/fixtures/compare/*.yml``, built into real inputs.

A case file holds a list of cases::

    - name: column_order_swapped
      research: T17                  # optional: the survey's case (docs/verdicts.md)
      why: Column names never matter; columns map by value.
      expected: {columns: [name, total], rows: [[alice, 100], [bob, 250]]}
      actual:   {columns: [total, name], rows: [[100, alice], [250, bob]]}
      options: {order: ignore}       # compare_results keyword arguments
      verdict: pass
      reason: results match          # a fragment the reason must contain

A side may give ``types`` (one per column) to build typed values from YAML scalars: int,
float, text, decimal, date, timestamp, timestamptz, bool, time, any (default: as YAML gives
them). ``format: arrow`` builds a pyarrow Table instead of a DataFrame (with ``arrow_types``
when a specific Arrow type such as float32 matters).
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import yaml

CASES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "compare"


@dataclass(frozen=True)
class Case:
    """One golden case."""

    file: str
    name: str
    why: str
    expected: pd.DataFrame | pa.Table
    actual: pd.DataFrame | pa.Table
    options: dict[str, Any]
    verdict: str
    reason: str | None
    research: str | None
    near_miss: str | None
    max_seconds: float | None


def load_cases() -> list[Case]:
    """Every case of every fixture file, in file order."""
    cases = []
    for path in sorted(CASES_DIR.glob("*.yml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")):
            cases.append(
                Case(
                    file=path.name,
                    name=raw["name"],
                    why=raw["why"],
                    expected=build_side(raw["expected"]),
                    actual=build_side(raw["actual"]),
                    options=raw.get("options", {}),
                    verdict=raw["verdict"],
                    reason=raw.get("reason"),
                    research=raw.get("research"),
                    near_miss=raw.get("near_miss"),
                    max_seconds=raw.get("max_seconds"),
                )
            )
    return cases


def build_side(spec: dict[str, Any]) -> pd.DataFrame | pa.Table:
    """A DataFrame (or Arrow table) from a case side."""
    columns: list[str] = [str(c) for c in spec["columns"]]
    rows: list[list[Any]] = spec.get("rows") or []
    if "generate" in spec:
        rows = _generate(spec["generate"])
    types: list[str] = spec.get("types") or ["any"] * len(columns)
    values = [[_convert(row[k], types[k]) for row in rows] for k in range(len(columns))]
    if spec.get("format") == "arrow":
        arrow_types = spec.get("arrow_types") or [None] * len(columns)
        arrays = [
            pa.array(v, type=None if t is None else _ARROW[t])
            for v, t in zip(values, arrow_types, strict=True)
        ]
        return pa.Table.from_arrays(arrays, names=columns)
    series = [_series(v, t) for v, t in zip(values, types, strict=True)]
    if not series:
        return pd.DataFrame(index=range(len(rows)))
    frame = (
        pd.concat(series, axis=1, ignore_index=True)
        if rows
        else pd.DataFrame({k: s for k, s in enumerate(series)})
    )
    frame.columns = columns
    return frame


_ARROW = {
    "float32": pa.float32(),
    "float64": pa.float64(),
    "int64": pa.int64(),
    "decimal": pa.decimal128(20, 4),
    "date": pa.date32(),
    "text": pa.string(),
    "timestamp_ns": pa.timestamp("ns"),
    "timestamp_us": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", "UTC"),
    "null": pa.null(),
    "bool": pa.bool_(),
    "uint64": pa.uint64(),
    "decimal0": pa.decimal128(38, 0),
    "decimal38_1": pa.decimal128(38, 1),
    "large_text": pa.large_string(),
}


def _generate(spec: dict[str, Any]) -> list[list[Any]]:
    """Rows from a formula: ``{rows: n, cells: "python expression in i (row) and j (col)",
    columns: k}`` - used for wide cases."""
    count, width, formula = spec["rows"], spec["columns"], spec["cells"]
    rows = [[eval(formula, {}, {"i": i, "j": j}) for j in range(width)] for i in range(count)]
    for i, j, value in spec.get("set", []):
        rows[i][j] = value
    return rows


def _convert(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "any":
        return value
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "text":
        return str(value)
    if kind == "decimal":
        return decimal.Decimal(str(value))  # quote long decimals in YAML (no float on the way)
    if kind == "date":
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
    if kind in ("timestamp", "timestamptz"):
        text = str(value).replace("Z", "+00:00")
        stamp = dt.datetime.fromisoformat(text)
        if kind == "timestamptz" and stamp.tzinfo is None:
            raise ValueError(f"timestamptz value without a zone: {value!r}")
        return stamp
    if kind == "bool":
        return bool(value)
    if kind == "time":
        return dt.time.fromisoformat(str(value))
    raise ValueError(f"unknown case type {kind!r}")


def _series(values: list[Any], kind: str) -> pd.Series:
    if kind == "float":
        return pd.Series([float("nan") if v is None else v for v in values], dtype="float64")
    if kind == "int" and None not in values:
        return pd.Series(values, dtype="int64")
    if kind == "int":
        return pd.Series(values, dtype="Int64")
    if kind == "timestamp" and values:
        return pd.Series(pd.to_datetime(values))  # datetime64; timestamptz stays objects
    return pd.Series(values, dtype=object)
