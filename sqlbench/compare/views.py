"""Comparable views of columns: which domain two columns meet in, and their codes there.

Two columns are compared in one *domain* (integers exactly, numbers with tolerance, text,
instants, ...), chosen from their kinds. In a domain every column becomes int64 *codes*, equal
exactly when the values are equal (text through one dictionary shared by both results), plus a
NULL mask and, for the tolerant numeric domain, the float values. Codes are mixed into 64-bit
hashes for row hashing and column fingerprints; a hash is only ever a shortcut, never the last
word (``sqlbench.compare.rows`` verifies every hash-based match on the codes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum, StrEnum
from fractions import Fraction
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlbench.compare.columns import Column, Kind
from sqlbench.compare.exactnum import ExactRows, close_exact

_C1 = np.uint64(0xBF58476D1CE4E5B9)
_NULL_MIX = np.uint64(0x6A09E667F3BCC909)
_NS_SAFE_US = 9_000_000_000_000_000  # |us| below this fits in int64 nanoseconds
_INFINITY = np.iinfo(np.int64).max  # +-infinity of instants, in microseconds and nanoseconds
_EXACT_CODES = 0x7FF8_0000_0000_0001
"""First code of the exactly-compared numbers: a quiet-NaN bit pattern, which no float code
has (NaN is NULL, its float is replaced by 0)."""


class ResultRole(IntEnum):
    """Which result a column belongs to."""

    EXPECTED = 0
    ACTUAL = 1


class Domain(StrEnum):
    """Where a pair of columns is compared."""

    NULL = "null"
    INT = "int"
    BIG_INT = "big_int"
    """Integers past int64 on either side (UBIGINT, HUGEINT, Python ints): exact."""
    FLOAT = "float"
    TEXT = "text"
    INSTANT_US = "instant_us"
    INSTANT_NS = "instant_ns"
    TIME = "time"
    DURATION = "duration"
    BYTES = "bytes"
    TAGGED = "tagged"

    @property
    def tolerant(self) -> bool:
        """True where numbers match within the tolerances rather than exactly."""
        return self is Domain.FLOAT


def pair_domain(expected: Column, actual: Column) -> Domain | None:
    """The domain two columns are compared in, or None when they can never match.

    Example: an INT column and a text column of plain numbers meet in ``INT``; an INT and a
    FLOAT column in ``FLOAT``; two ISO-date text columns in an instant domain.
    """
    e, a = expected, actual
    if e.kind is Kind.NULL or a.kind is Kind.NULL:
        return Domain.NULL
    if e.kind is Kind.MIXED or a.kind is Kind.MIXED:
        return Domain.TAGGED
    if e.kind is Kind.TEXT and a.kind is Kind.TEXT:
        if e.instants is not None and a.instants is not None:
            return _instant_domain(e, a)
        return Domain.TEXT
    if e.numeric and a.numeric:
        if e.ints is not None and a.ints is not None:
            if e.ints.dtype == object or a.ints.dtype == object:
                return Domain.BIG_INT  # past int64: exact through Python ints
            return Domain.INT
        return Domain.FLOAT
    if e.instants is not None and a.instants is not None:
        return _instant_domain(e, a)
    if e.kind is a.kind and e.kind in _SAME_KIND:
        return _SAME_KIND[e.kind]
    return None


_SAME_KIND = {Kind.TIME: Domain.TIME, Kind.DURATION: Domain.DURATION, Kind.BYTES: Domain.BYTES}


def _instant_domain(e: Column, a: Column) -> Domain:
    """Nanoseconds when either side has them, unless a side without them holds a finite
    instant nanoseconds cannot (past 2262): then microseconds."""
    assert e.instants is not None and a.instants is not None
    if e.instants.ns is None and a.instants.ns is None:
        return Domain.INSTANT_US
    for inst in (e.instants, a.instants):
        if inst.ns is None and len(inst.us):
            finite = np.abs(inst.us) != _INFINITY
            if finite.any() and np.abs(inst.us[finite]).max() >= _NS_SAFE_US:
                return Domain.INSTANT_US
    return Domain.INSTANT_NS


def _us_as_ns(us: np.ndarray) -> np.ndarray:
    """Microseconds (all finite ones below ``_NS_SAFE_US``) as nanoseconds; infinity stays
    +-INT64_MAX, the nanosecond infinity."""
    infinite = np.abs(us) == _INFINITY
    ns: np.ndarray = np.where(infinite, 0, us) * 1000
    ns[infinite] = us[infinite]
    return ns


def _exact_value(view: View, row: int) -> Fraction | float:
    """A tolerant view's value at ``row``: exact where its float64 is not, else the float."""
    if view.exact is not None:
        found = view.exact.get(row)
        if found is not None:
            return found
    assert view.floats is not None
    return float(view.floats[row])


def mix(codes: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
    """64-bit hashes of integer codes (NULL rows get one fixed hash); a new array."""
    if codes.dtype.itemsize == 8:
        x = codes.view(np.uint64) * _C1  # a bijection of the codes: odd multiply, xor-shift
    else:
        x = codes.astype(np.int64).view(np.uint64)
        x *= _C1
    x ^= x >> np.uint64(29)
    if null is not None and null.any():
        x[null] = _NULL_MIX
    return x


_CACHE_ROWS = 200_000
"""Per-row hashes of views up to this many rows are kept (searches reuse them); larger views
recompute them, so a comparison's memory stays within a small multiple of its inputs."""


class View:
    """One column in one domain: integer codes (0 where NULL), NULL mask, floats if tolerant.

    In the tolerant domain a value whose float64 is not its value (``sqlbench.compare.exactnum``)
    has its exact value in ``exact``, a code of its own (so it never equals another value in
    the exact stage) and, in ``residual``, its distance to its float64 (so that sorting by
    (floats, residual) sorts by exact value).
    """

    def __init__(
        self,
        codes: np.ndarray,
        null: np.ndarray,
        floats: np.ndarray | None = None,
        exact: ExactRows | None = None,
    ):
        self.codes = codes
        self.null = null
        self.floats = floats
        self.exact = exact
        self.exact_mask: np.ndarray | None = None
        self.residual: np.ndarray | None = None
        if exact is not None and floats is not None:
            rows = np.fromiter(exact.keys(), dtype=np.int64, count=len(exact))
            self.exact_mask = np.zeros(len(codes), dtype=bool)
            self.exact_mask[rows] = True
            self.residual = np.zeros(len(codes), dtype=np.float64)
            self.residual[rows] = [float(v - Fraction(floats[k])) for k, v in exact.items()]
        self._mixed: np.ndarray | None = None

    def hashes(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per-row hash of (code, NULL) for ``rows`` (all when None), as a new array."""
        if self._mixed is None and len(self.codes) <= _CACHE_ROWS:
            self._mixed = mix(self.codes, self.null)
        if self._mixed is not None:
            return self._mixed.copy() if rows is None else self._mixed[rows]
        if rows is None:
            return mix(self.codes, self.null)
        return mix(self.codes[rows], self.null[rows])

    @cached_property
    def null_only(self) -> View:
        """The NULL mask alone, as a view (rows differ only by NULL-ness)."""
        return View(np.zeros(len(self.null), dtype=np.int64), self.null)

    @cached_property
    def null_count(self) -> int:
        """Number of NULL rows."""
        return int(np.count_nonzero(self.null))

    @cached_property
    def bounds(self) -> tuple[float, float] | None:
        """(min, max) of the non-NULL values (floats if tolerant, else codes); None if none."""
        values = self.floats if self.floats is not None else self.codes
        if self.null_count:
            values = values[~self.null]
        if not len(values):
            return None
        return (values.min(), values.max())

    @cached_property
    def bag_fingerprint(self) -> int:
        """Order-independent hash of the value multiset."""
        return int(self.hashes().sum(dtype=np.uint64))

    @cached_property
    def set_fingerprint(self) -> int:
        """Hash of the value set (duplicates ignored)."""
        return int(np.unique(self.hashes()).sum(dtype=np.uint64))

    @cached_property
    def sorted_floats(self) -> np.ndarray:
        """Non-NULL float values, sorted (tolerant domain)."""
        assert self.floats is not None
        return np.sort(self.floats[~self.null])


@dataclass(frozen=True)
class Tolerance:
    """Numbers a, b match when |a-b| <= max(abs_tol, rel_tol * max(|a|, |b|))."""

    abs_tol: float
    rel_tol: float
    margin: int = 0
    """float64 steps added to the bound: a loosened tolerance, for necessary conditions on
    floats that stand for values compared exactly later (see :meth:`loosened`)."""

    def loosened(self) -> Tolerance:
        """This tolerance a few float64 steps wider: two values that match exactly also match
        here as float64s, whatever their rounding (for column-level necessary conditions)."""
        return replace(self, margin=4)

    def close_rows(self, e: View, rows_e: np.ndarray, a: View, rows_a: np.ndarray) -> np.ndarray:
        """Elementwise match of ``e``'s values at ``rows_e`` with ``a``'s at ``rows_a``; values
        whose float64 is not their value are compared exactly."""
        assert e.floats is not None and a.floats is not None
        matched = self.close(e.floats[rows_e], a.floats[rows_a])
        if e.exact_mask is None and a.exact_mask is None:
            return matched
        flagged = np.zeros(len(rows_e), dtype=bool)
        for view, rows in ((e, rows_e), (a, rows_a)):
            if view.exact_mask is not None:
                flagged |= view.exact_mask[rows]
        for k in np.flatnonzero(flagged):
            x = _exact_value(e, int(rows_e[k]))
            y = _exact_value(a, int(rows_a[k]))
            if isinstance(x, float):
                x, y = y, x
            assert isinstance(x, Fraction)
            matched[k] = close_exact(x, y, self.abs_tol, self.rel_tol)
        return matched

    def close(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise match (equal infinities match; NaN never reaches here: it is NULL)."""
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - b)
            larger = np.maximum(np.abs(a), np.abs(b))
            bound = np.maximum(self.abs_tol, self.rel_tol * larger)
            if self.margin:
                bound = bound + self.margin * np.spacing(larger)
            # An infinity only matches the same infinity (its bound would be infinite too).
            matched: np.ndarray = (a == b) | ((diff <= bound) & np.isfinite(diff))
            return matched

    def reach(self, values: np.ndarray) -> np.ndarray:
        """How far from each value a match can lie (a superset bound, for search windows)."""
        if self.rel_tol >= 1:
            return np.full(len(values), np.inf)
        with np.errstate(over="ignore", invalid="ignore"):
            bound: np.ndarray = np.maximum(
                self.abs_tol, self.rel_tol * np.abs(values) / (1 - self.rel_tol)
            )
            # A few float64 steps more: a value compared exactly may lie just past its float.
            steps = np.spacing(np.abs(values))
            bound = bound + np.where(np.isfinite(steps), 4 * steps, 0.0)
            return bound


class ViewSet:
    """Views of every column of both results, built on demand and cached."""

    def __init__(self, expected: list[Column], actual: list[Column], rows: tuple[int, int]) -> None:
        self.columns = (expected, actual)
        self.rows = rows
        """Row counts of the expected and the actual result."""
        self._views: dict[tuple[ResultRole, int, Domain], View] = {}
        self._dictionaries: dict[Domain, dict[tuple[ResultRole, int], np.ndarray]] = {}
        self._tags: dict[str, int] = {}
        self._big_ints: dict[int, int] = {}
        self._exact_codes: dict[Fraction, int] = {}
        self.distinct_rows: dict[tuple[frozenset[int], int], np.ndarray] = {}
        """Distinct rows (each one's first occurrence, read-only) of sets of this view set's
        views, by the views' ids and the row count: a set of columns has the same distinct rows
        in any order, so the mappings a search tries share them (``rows: set``)."""

    def bounds(self, side: ResultRole, pos: int, domain: Domain) -> tuple[float, float] | None:
        """(min, max) of a column's non-NULL values in ``domain``, without building a float
        copy of an integer column just to learn them."""
        col = self.columns[side][pos]
        if domain is Domain.FLOAT and col.ints is not None and col.ints.dtype != object:
            ints = col.ints[~col.null] if col.null_count else col.ints
            return (float(ints.min()), float(ints.max())) if len(ints) else None
        return self.view(side, pos, domain).bounds

    def native(self, side: ResultRole, pos: int) -> View | None:
        """The column in its own exact domain (text as text), for telling identical columns
        apart; None for mixed-type columns."""
        col = self.columns[side][pos]
        if col.kind is Kind.MIXED:
            return None
        if col.kind is Kind.TEXT:
            return self.view(side, pos, Domain.TEXT)
        own = pair_domain(col, col)
        return None if own is None or own is Domain.TAGGED else self.view(side, pos, own)

    def column(self, side: ResultRole, pos: int) -> Column:
        """The column at ``pos`` of one side."""
        return self.columns[side][pos]

    def domain(self, e_pos: int, a_pos: int) -> Domain | None:
        """The domain of expected column ``e_pos`` against actual column ``a_pos``."""
        return pair_domain(self.columns[0][e_pos], self.columns[1][a_pos])

    def view(self, side: ResultRole, pos: int, domain: Domain) -> View:
        """Column ``pos`` of ``side`` in ``domain`` (cached)."""
        key = (side, pos, domain)
        found = self._views.get(key)
        if found is None:
            found = self._build(side, pos, domain)
            self._views[key] = found
        return found

    def _build(self, side: ResultRole, pos: int, domain: Domain) -> View:
        col = self.columns[side][pos]
        null = col.null
        if domain is Domain.NULL:
            return View(np.zeros(col.rows, dtype=np.int64), null)
        if domain is Domain.INT:
            assert col.ints is not None
            return View(col.ints, null)
        if domain is Domain.BIG_INT:  # one code per integer value, shared by both sides
            assert col.ints is not None
            big = self._big_ints
            codes = np.fromiter(
                (big.setdefault(int(v), len(big)) for v in col.ints),
                dtype=np.int64,
                count=len(col.ints),
            )
            codes[null] = 0
            return View(codes, null)
        if domain is Domain.FLOAT:
            floats = col.floats
            assert floats is not None
            codes = floats.view(np.int64)
            exact = col.exact
            if exact is not None:  # codes of their own, among NaN bit patterns (NaN is NULL)
                codes = codes.copy()
                table = self._exact_codes
                for row, value in exact.items():
                    codes[row] = _EXACT_CODES + table.setdefault(value, len(table))
            return View(codes, null, floats, exact)
        if domain in (Domain.INSTANT_US, Domain.INSTANT_NS):
            assert col.instants is not None
            if domain is Domain.INSTANT_US:
                return View(col.instants.us, null)
            ns = col.instants.ns
            return View(ns if ns is not None else _us_as_ns(col.instants.us), null)
        if domain in (Domain.TIME, Domain.DURATION):
            assert col.other is not None
            return View(col.other, null)
        if domain in (Domain.TEXT, Domain.BYTES):
            return View(self._dictionary(domain)[(side, pos)], null)
        keys = col.tagged_keys()
        tags = self._tags
        codes = np.fromiter(
            (tags.setdefault(k, len(tags)) for k in keys), dtype=np.int64, count=len(keys)
        )
        return View(codes, null)

    def _dictionary(self, domain: Domain) -> dict[tuple[ResultRole, int], np.ndarray]:
        """One dictionary for all text (or binary) columns of both sides: each column is
        encoded on its own, then the (usually small) column dictionaries are unified."""
        found = self._dictionaries.get(domain)
        if found is not None:
            return found
        columns: list[tuple[tuple[ResultRole, int], pa.Array | pa.ChunkedArray]] = []
        for side in ResultRole:
            for col in self.columns[side]:
                arr = col.text if domain is Domain.TEXT else col.binary
                if arr is not None:
                    columns.append(((side, col.position), arr))
        if sum(arr.nbytes for _, arr in columns) >= RANKED_BYTES:
            found = self._ranked(columns)
            self._dictionaries[domain] = found
            return found
        small = self._small_dictionary(columns)
        if small is not None:
            self._dictionaries[domain] = small
            return small
        members = [(key, *_encode(arr)) for key, arr in columns]
        unified = pc.dictionary_encode(pa.concat_arrays([d for _, d, _ in members]))
        to_global = unified.indices.to_numpy(zero_copy_only=False)
        found = {}
        start = 0
        for (side, pos), dictionary, local in members:
            size = len(dictionary)
            codes = to_global[start : start + size][local]
            null = self.columns[side][pos].null
            if null.any():
                codes[null] = 0  # NULL rows carry code 0 in every column, like other domains
            found[(side, pos)] = codes
            start += size
        self._dictionaries[domain] = found
        return found

    def _small_dictionary(
        self, columns: list[tuple[tuple[ResultRole, int], pa.Array | pa.ChunkedArray]]
    ) -> dict[tuple[ResultRole, int], np.ndarray] | None:
        """The dictionary's codes for a few values, in Python: each distinct value's code is
        its rank of first appearance, reading the columns in order, as Arrow's dictionary
        encoding gives them (``tests/compare/test_small_paths.py``), without its per-call
        cost (five Arrow calls a column). None past ``SMALL_DICTIONARY`` values or
        ``SMALL_DICTIONARY_BYTES``."""
        if (
            sum(len(arr) for _, arr in columns) > SMALL_DICTIONARY
            or sum(arr.get_total_buffer_size() for _, arr in columns) > SMALL_DICTIONARY_BYTES
        ):
            return None
        seen: dict[object, int] = {}
        found = {}
        for key, arr in columns:
            try:
                values = arr.to_pylist()
            except (UnicodeDecodeError, ValueError):
                return None
            found[key] = np.fromiter(
                (0 if v is None else seen.setdefault(v, len(seen)) for v in values),
                dtype=np.int32,
                count=len(values),
            )
        return found

    def _ranked(
        self, columns: list[tuple[tuple[ResultRole, int], pa.Array | pa.ChunkedArray]]
    ) -> dict[tuple[ResultRole, int], np.ndarray]:
        """Codes for large text: each value's dense rank among all the columns' values
        together (equal values, and only they, share a code). Arrow ranks the columns' own
        buffers in place, where dictionary encoding copies every distinct value two or three
        times (two results of 256 MB of distinct megabyte strings: 1.5 GB more)."""
        chunks: list[pa.Array] = []
        for _, arr in columns:
            chunks += arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
        together = pa.chunked_array(chunks, type=chunks[0].type)
        ranks = pc.rank(together, sort_keys="ascending", tiebreaker="dense")
        codes_all = ranks.to_numpy(zero_copy_only=False).view(np.int64)
        found = {}
        start = 0
        for (side, pos), arr in columns:
            codes = codes_all[start : start + len(arr)].copy()
            null = self.columns[side][pos].null
            if null.any():
                codes[null] = 0  # NULL rows carry code 0 in every column, like other domains
            found[(side, pos)] = codes
            start += len(arr)
        return found


SMALL_DICTIONARY = 256
"""Text or binary columns of up to this many values together (both results) are coded in
Python (``ViewSet._small_dictionary``), larger ones by Arrow's dictionary encoding."""

SMALL_DICTIONARY_BYTES = 64 * 2**10
"""... and at most this many bytes (their buffers): a few huge values stay in Arrow, which
does not copy them into Python strings."""

RANKED_BYTES = 64 * 2**20
"""Text or binary columns holding this many bytes together (both results) get codes from their
values' ranks (no copy of the values) instead of a shared dictionary; smaller ones keep the
dictionary (its codes are the same for every comparison)."""


def _encode(arr: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """(dictionary, int32 index per row with NULL as 0) of one column, chunks unified."""
    encoded = pc.dictionary_encode(arr)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.unify_dictionaries()
        if encoded.num_chunks == 0:
            return pa.array([], type=arr.type), np.zeros(0, dtype=np.int32)
        dictionary = encoded.chunk(0).dictionary
        parts = [c.indices.fill_null(0).to_numpy(zero_copy_only=False) for c in encoded.chunks]
        return dictionary, np.concatenate(parts) if len(parts) > 1 else parts[0]
    indices = encoded.indices.fill_null(0) if encoded.indices.null_count else encoded.indices
    return encoded.dictionary, indices.to_numpy(zero_copy_only=False)
