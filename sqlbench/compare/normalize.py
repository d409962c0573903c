"""Turn a result (pandas DataFrame or Arrow table) into typed columns that can be compared.

Columns are addressed by position, never by name, so duplicate names (``SELECT a.name, b.name``)
are normal. pandas columns go through Arrow without copying where their dtype is typed; object
columns are typed by pandas' inference and converted when Arrow can hold them faithfully. Only
object columns that mix Python types (SQLite's dynamic typing) take a per-value path.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from sqlbench.compare.arrowcols import as_array, from_arrow, single
from sqlbench.compare.columns import Column, Instants, Kind
from sqlbench.compare.exactnum import from_decimals
from sqlbench.compare.values import instants_from_objects, is_null_value
from sqlbench.errors import InputError


def normalize(result: pd.DataFrame | pa.Table) -> list[Column]:
    """The columns of a result, in order, typed for comparison.

    Args:
        result: a pandas DataFrame (duplicate column names allowed) or a pyarrow Table.

    Returns:
        One :class:`Column` per result column.

    Raises:
        InputError: for anything else.
    """
    if isinstance(result, pa.RecordBatch):
        result = pa.Table.from_batches([result])
    if isinstance(result, pa.Table):
        return [
            from_arrow(pos, str(name), single(result.column(pos)))
            for pos, name in enumerate(result.column_names)
        ]
    if isinstance(result, pd.DataFrame):
        return [
            _from_pandas(pos, str(name), result.iloc[:, pos])
            for pos, name in enumerate(result.columns)
        ]
    raise InputError(
        f"compare_results takes pandas DataFrames or pyarrow Tables, not {type(result).__name__}"
    )


def _from_pandas(pos: int, name: str, series: pd.Series) -> Column:
    column = _typed_from_pandas(pos, name, series)
    if not isinstance(column.source, list) and not isinstance(series.dtype, pd.ArrowDtype):
        # Show values as given (time zones, Decimal scale); Arrow-backed values stay Arrow,
        # whose conversion never raises (pandas' tolist of a year-12024 date would).
        column.source = series
    return column


def _typed_from_pandas(pos: int, name: str, series: pd.Series) -> Column:
    if series.dtype != object:
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(series.cat.categories.dtype)
            if series.dtype == object:
                return _from_objects(pos, name, series.to_numpy())
        return from_arrow(pos, name, as_array(pa.array(series, from_pandas=True)))  # no copy
    values = series.to_numpy()
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    target = _SAFE_OBJECT_TYPES.get(inferred)
    if inferred == "date" and set(map(type, values)) - {dt.date, type(None)}:
        target = None  # datetimes mixed into dates: Arrow would drop their time of day
    if target is not None:
        try:
            arr = as_array(pa.array(values, type=target(), from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            pass  # a value Arrow cannot hold (huge int, odd Decimal): use the per-value path
        else:
            return from_arrow(pos, name, arr)
    if inferred == "decimal":
        try:
            arr = as_array(pa.array(values, from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            pass
        else:
            return from_arrow(pos, name, arr)
    return _from_objects(pos, name, values)


_SAFE_OBJECT_TYPES: dict[str, Callable[[], pa.DataType]] = {
    "string": pa.large_string,
    "bytes": pa.large_binary,
    "integer": pa.int64,
    "floating": pa.float64,
    "mixed-integer-float": pa.float64,
    "boolean": pa.bool_,
    "date": pa.date32,
    "datetime": lambda: pa.timestamp("us"),
    "datetime64": lambda: pa.timestamp("us"),
    "time": lambda: pa.time64("us"),
    "timedelta": lambda: pa.duration("us"),
    "empty": pa.null,
}


def _from_objects(pos: int, name: str, values: np.ndarray) -> Column:
    """The per-value path for object columns Arrow cannot type safely."""
    items: list[object] = list(values)
    null = np.fromiter((is_null_value(v) for v in items), dtype=bool, count=len(items))
    present = [v for v, missing in zip(items, null, strict=True) if not missing]
    cleaned = [None if missing else v for v, missing in zip(items, null, strict=True)]
    if not present:
        return Column(pos, name, Kind.NULL, null, cleaned)
    numbers = (bool, int, float, decimal.Decimal, np.integer, np.floating, np.bool_)
    if all(isinstance(v, numbers) for v in present):
        integral = all(
            isinstance(v, bool | int | np.integer | np.bool_)
            or (isinstance(v, decimal.Decimal) and v.is_finite() and v == v.to_integral_value())
            for v in present
        )
        if integral:
            ints = [0 if v is None else int(v) for v in cleaned]  # type: ignore[call-overload]
            try:
                array = np.array(ints, dtype=np.int64)
            except OverflowError:
                array = np.array(ints, dtype=object)
            return Column(pos, name, Kind.INT, null, cleaned, ints=array)
        floats = np.array(
            [0.0 if v is None else float(v) for v in cleaned],  # type: ignore[arg-type]
            dtype=np.float64,
        )
        floats += 0.0
        exact = from_decimals(cleaned)
        return Column(pos, name, Kind.FLOAT, null, cleaned, floats_=floats, exact_=exact)
    if all(isinstance(v, dt.date) for v in present):
        return Column(
            pos,
            name,
            Kind.INSTANT,
            null,
            cleaned,
            instants=Instants(us=instants_from_objects(cleaned)),
        )
    return Column(pos, name, Kind.MIXED, null, cleaned)
