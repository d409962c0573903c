"""Where an imported run came from, signed exports, and the rules every stored record obeys
(docs/security.md, "Imported runs").

- ``ImportOrigin``: the file's sha256, when it was imported, its source and whether its
  signature was checked; kept on the run (``RunInfo.origin``) and shown wherever it is named.
- ``sign`` / ``verify``: with ``SQLBENCH_SIGNING_KEY`` set, ``export`` adds an HMAC-SHA256 over
  a canonical form (sorted keys, no spaces, ASCII) of the whole document, and ``import``
  refuses a file without one or whose content no longer matches it.
- ``run_name_problem`` and ``record_problems``: run names are printable, 1-200 characters; an
  imported record holds no NaN or infinity and no integer a store column cannot hold.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from sqlbench.project.names import MAX_NAME_CHARS

SIGNATURE_KEY = "signature"
SIGNING_ENV = "SQLBENCH_SIGNING_KEY"
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
"""Integers in stored records fit a 32-bit INTEGER column (PostgreSQL, MySQL)."""


class ImportOrigin(BaseModel):
    """Where an imported run came from."""

    sha256: str
    """Of the imported file's bytes."""
    imported_at: datetime
    source: str
    """The file as named on the command line (``-``: standard input)."""
    signed: bool = False
    """True when its HMAC-SHA256 signature was checked with ``SQLBENCH_SIGNING_KEY``."""

    @property
    def label(self) -> str:
        """``imported sha256:0123456789ab`` (``, signed`` when checked)."""
        return f"imported sha256:{self.sha256[:12]}" + (", signed" if self.signed else "")


def canonical(document: dict[str, Any]) -> bytes:
    """The bytes signed: the document without its signature, keys sorted, no spaces, ASCII.

    Example:
        >>> canonical({"b": 1, "a": [1.5, "é"], "signature": {"value": "x"}})
        b'{"a":[1.5,"\\\\u00e9"],"b":1}'
    """
    body = {key: value for key, value in document.items() if key != SIGNATURE_KEY}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(document: dict[str, Any], key: str) -> dict[str, Any]:
    """``document`` with an HMAC-SHA256 ``signature`` over ``canonical(document)``."""
    digest = hmac.new(key.encode(), canonical(document), hashlib.sha256).hexdigest()
    return {**document, SIGNATURE_KEY: {"algorithm": "HMAC-SHA256", "value": digest}}


def verify(document: dict[str, Any], key: str | None) -> str | None:
    """Why ``document`` may not be imported under ``key`` (None: it may).

    Without a key nothing is checked. With one, the file must carry a signature that matches.

    Example:
        >>> doc = sign({"run": {"name": "a"}}, "k3y-k3y")
        >>> verify(doc, "k3y-k3y") is None, verify(doc, None) is None
        (True, True)
        >>> doc["run"]["name"] = "b"
        >>> print(verify(doc, "k3y-k3y"))  # doctest: +ELLIPSIS
        the file's signature does not match its content: it was altered, or signed with ...
    """
    if not key:
        return None
    signature = document.get(SIGNATURE_KEY)
    if not isinstance(signature, dict) or not isinstance(signature.get("value"), str):
        return (
            f"the file is not signed, and {SIGNING_ENV} is set: export it with the same "
            f"{SIGNING_ENV} set"
        )
    expected = hmac.new(key.encode(), canonical(document), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature["value"]):
        return (
            "the file's signature does not match its content: it was altered, or signed with "
            f"another {SIGNING_ENV}"
        )
    return None


def run_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a run (None: it can).

    Example:
        >>> run_name_problem("nightly-2024"), run_name_problem("")
        (None, 'a run name cannot be empty')
        >>> print(run_name_problem("a\\nb"))
        the run name 'a\\nb' holds a character that is not printable (U+000A)
    """
    if not name or not name.strip():
        return "a run name cannot be empty"
    if len(name) > MAX_NAME_CHARS:
        return f"a run name is at most {MAX_NAME_CHARS} characters (this one has {len(name)})"
    for char in name:
        if not char.isprintable():
            shown = name.encode("unicode_escape", "backslashreplace").decode("ascii")
            return (
                f"the run name '{shown[:80]}' holds a character that is not printable "
                f"(U+{ord(char):04X})"
            )
    return None


_NON_NEGATIVE = re.compile(r"(?:_ms|tokens|_count|count|_rows|rows|repeat|trial|_mb|_bytes)$")
"""Keys of numbers that are amounts (latencies, tokens, counts): never negative."""
MAX_IMPORTED_QUESTIONS = 1_000_000
"""The most questions an imported run may say it planned (a count of 2^31 means nothing)."""
MAX_IMPORTED_REPEAT = 1000
FUTURE_SLACK = timedelta(days=1)
"""How far past this machine's clock an imported time may be (clocks differ a little; a
``created_at`` in 9999 would make that run ``latest`` forever)."""


def meaning_problems(run: dict[str, Any], results: list[Any]) -> list[str]:
    """Values of an imported run that a store could hold but that mean nothing: times in the
    future, negative latencies, tokens or counts, more planned questions or repeats than any
    run has, a trial past the run's repeat; each as one sentence at its JSON path.

    Example:
        >>> found = meaning_problems({"created_at": "9999-01-01T00:00:00+00:00", "repeat": 1},
        ...                          [{"latency_ms": -5, "trial": 0}])
        >>> [problem.split(" (")[0] for problem in found]
        ['run.created_at: 9999-01-01T00:00:00+00:00 is in the future', \
'results[0].latency_ms: -5 is negative; it is an amount']
    """
    problems: list[str] = []
    latest = datetime.now(UTC) + FUTURE_SLACK
    for key in ("created_at", "updated_at", "finished_at"):
        value = run.get(key)
        if not isinstance(value, str):
            continue
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            continue  # the record's own validation names it
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        if when > latest:
            problems.append(
                f"run.{key}: {value[:40]} is in the future (this machine says "
                f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC)"
            )
    count = run.get("question_count")
    if isinstance(count, int) and not 0 <= count <= MAX_IMPORTED_QUESTIONS:
        problems.append(
            f"run.question_count: {count} is not a number of questions (0 to "
            f"{MAX_IMPORTED_QUESTIONS:,})"
        )
    repeat = run.get("repeat", 1)
    if isinstance(repeat, int) and not 1 <= repeat <= MAX_IMPORTED_REPEAT:
        problems.append(f"run.repeat: {repeat} is not a repeat count (1 to {MAX_IMPORTED_REPEAT})")
    problems += _negative_amounts(run, "run")
    for index, item in enumerate(results):
        problems += _negative_amounts(item, f"results[{index}]")
        trial = item.get("trial") if isinstance(item, dict) else None
        if isinstance(trial, int) and isinstance(repeat, int) and trial >= max(repeat, 1):
            problems.append(f"results[{index}].trial: {trial} is past the run's repeat of {repeat}")
    return problems


def _negative_amounts(data: Any, where: str) -> list[str]:
    """Negative numbers under amount-like keys (``_NON_NEGATIVE``; every number inside such a
    key's object, as ``timings_ms``), without recursion."""
    problems: list[str] = []
    stack: list[tuple[Any, str, bool]] = [(data, where, False)]
    while stack and len(problems) < 10:
        value, path, amount = stack.pop()
        if isinstance(value, int | float) and not isinstance(value, bool):
            if amount and value < 0:
                problems.append(f"{path}: {value} is negative; it is an amount")
        elif isinstance(value, dict):
            for key, item in value.items():
                named = isinstance(key, str) and _NON_NEGATIVE.search(key) is not None
                stack.append((item, f"{path}.{key}", amount or named))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]", amount) for i, item in enumerate(value))
    return problems


def record_problems(data: Any, where: str) -> list[str]:
    """Values in an imported record that no store can hold: NaN or infinite numbers, integers
    outside 32 bits (at their JSON path), each as one sentence.

    Example:
        >>> record_problems({"trial": 2**70, "x": [float("nan")], "ok": 3}, "results[0]")
        ['results[0].trial: 1180591620717411303424 is out of range (at most 2147483647)', \
'results[0].x[0]: NaN is not a number a run can hold']
    """
    problems: list[str] = []
    if isinstance(data, bool) or data is None or isinstance(data, str):
        return problems
    if isinstance(data, int):
        if not INT_MIN <= data <= INT_MAX:
            problems.append(f"{where}: {data} is out of range (at most {INT_MAX})")
    elif isinstance(data, float):
        if not math.isfinite(data):
            problems.append(
                f"{where}: {data!r} is not a number a run can hold".replace("nan", "NaN")
            )
    elif isinstance(data, dict):
        for key, value in data.items():
            problems.extend(record_problems(value, f"{where}.{key}"))
    elif isinstance(data, list):
        for index, item in enumerate(data):
            problems.extend(record_problems(item, f"{where}[{index}]"))
    return problems
