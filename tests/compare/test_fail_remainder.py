"""A failing comparison of large results explains itself from the rows left unmatched (the
remainder), not by searching the whole table again for every near miss: fail as fast as pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sqlbench.compare import compare_results, nearmiss

ROWS = 30_000


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    expected = pd.DataFrame(
        {
            "id": np.arange(ROWS),
            "amount": rng.normal(1000, 100, ROWS),
            "name": [f"c{i % 977}" for i in range(ROWS)],
        }
    )
    actual = expected.sample(frac=1, random_state=3).rename(columns=str.upper)
    return expected, actual.reset_index(drop=True)


@pytest.fixture
def no_full_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a near miss searched the whole table again")

    monkeypatch.setattr(nearmiss.Analysis, "found", refuse)


def test_one_cell_off_is_explained_from_the_remainder(no_full_searches: None) -> None:
    expected, actual = _frames()
    assert compare_results(expected, actual).passed
    actual.loc[10, "AMOUNT"] *= 1.001
    result = compare_results(expected, actual)
    assert not result.passed
    assert result.reason.startswith(f"1 of {ROWS} rows differ, e.g. expected (")
    assert "; near miss: would pass with rel_tol=" in result.reason
    actual.loc[10, "AMOUNT"] *= 1000  # plainly wrong: no tolerance is offered
    assert "rel_tol" not in compare_results(expected, actual).reason


def test_duplicates_from_the_remainder(no_full_searches: None) -> None:
    expected, actual = _frames()
    actual.iloc[5] = actual.iloc[6]  # one row twice, another gone: not the same rows
    result = compare_results(expected, actual)
    assert not result.passed and "near miss" not in result.reason
    # The same distinct rows, one repeated a different number of times:
    doubled = pd.concat([expected, expected.iloc[[0]]], ignore_index=True)
    swapped = pd.concat([expected, expected.iloc[[1]]], ignore_index=True)
    result = compare_results(doubled, swapped.rename(columns=str.upper))
    assert result.reason.endswith(
        "near miss: the same distinct rows, but they repeat a different number of times"
    ), result.reason


def test_small_results_still_search_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = nearmiss.Analysis.found

    def counting(self: nearmiss.Analysis, *args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(nearmiss.Analysis, "found", counting)
    small = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    result = compare_results(small, pd.DataFrame({"b": [1.0, 2.0, 3.0001]}))
    assert "would pass with rel_tol=0.0001" in result.reason
    assert calls  # below 20,000 rows the near misses still search the whole result
