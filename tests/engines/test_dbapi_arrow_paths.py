"""A column of one plain Python type (what SQLite hands over) skips the kind analysis: the
array is the one the general path builds, type and values."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sqlbench.engines import dbapi_arrow
from sqlbench.engines.dbapi_arrow import column_array

PLAIN = {
    "int": st.integers(min_value=-(2**70), max_value=2**70),
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "text": st.text(max_size=5),
    "bytes": st.binary(max_size=5),
    "bool": st.booleans(),
}


@given(st.sampled_from(sorted(PLAIN)).flatmap(lambda k: st.tuples(st.just(k), st.data())))
def test_a_plain_column_is_built_as_the_general_path_builds_it(case: tuple[str, Any]) -> None:
    kind, data = case
    values = data.draw(st.lists(st.none() | PLAIN[kind], max_size=8))
    built = column_array(values)
    if kind in ("int", "float"):
        general = dbapi_arrow._numbers(list(values), {kind})
    else:
        general = dbapi_arrow._single(kind, list(values))
    if all(v is None for v in values):
        general = dbapi_arrow.pa.array(values)
    assert built.type == general.type
    assert repr(built.to_pylist()) == repr(general.to_pylist())
