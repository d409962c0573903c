"""How problems are worded and located: closest-key suggestions, short value descriptions,
pydantic errors mapped back to the line of the key they concern (name rules: ``names``)."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from sqlbench.errors import Problem, Severity
from sqlbench.project.yamlload import YamlMap, line_of, plain
from sqlbench.text import suggest


def error(message: str, path: str, line: int | None) -> Problem:
    """An error-severity problem."""
    return Problem(Severity.ERROR, message, path, line)


def _model_keys(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


RANGE_ERRORS = frozenset(
    {"finite_number", "greater_than", "greater_than_equal", "less_than", "less_than_equal"}
)
"""pydantic's error types for a number out of its range, worded from the key's definition."""
KEY_ERROR = "sqlbench_key"
"""The error type of a model's check of one of its keys against the others: the message is the
whole sentence, reported at the key named by the error's context (``key``, under ``loc``)."""


def _allowed_range(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> str | None:
    """``a finite number above 0 and at most 86400`` for a field with bounds; None without.

    Example:
        >>> from sqlbench.project.files import Settings
        >>> _allowed_range(Settings, ("run", "agent_timeout_s"))
        'a finite number above 0 and at most 86400'
        >>> _allowed_range(Settings, ("warehouses", "lake", "run", "max_rows"))
        'a finite number at least 1 and at most 100000000'
    """
    if model is None or not loc:
        return None
    owner = _submodel(model, tuple(loc[:-1]))
    field = owner.model_fields.get(str(loc[-1])) if owner is not None else None
    if field is None:
        return None
    return _range_words(field)


def _bounds(field: FieldInfo) -> list[Any]:
    """The constraints of ``field``: its own, or those of an ``Annotated`` type it makes
    optional (``Timeout | None``)."""
    found = list(field.metadata)
    for arg in typing.get_args(field.annotation):
        if typing.get_origin(arg) is typing.Annotated:
            for extra in typing.get_args(arg)[1:]:
                found.extend(getattr(extra, "metadata", [extra]))
    return found


def _range_words(field: FieldInfo) -> str | None:
    low = high = ""
    for bound in _bounds(field):
        for attr, words in (
            ("gt", "above"),
            ("ge", "at least"),
            ("lt", "below"),
            ("le", "at most"),
        ):
            value = getattr(bound, attr, None)
            if value is not None:
                text = f"{words} {value:g}" if isinstance(value, float) else f"{words} {value}"
                if attr in ("gt", "ge"):
                    low = text
                else:
                    high = text
    if not (low or high):
        return None
    return "a finite number " + " and ".join(t for t in (low, high) if t)


def allowed_values(model: type[BaseModel], name: str) -> str:
    """What field ``name`` of ``model`` accepts, in words, from its one definition.

    Example:
        >>> from sqlbench.project.files import CompareOptions
        >>> allowed_values(CompareOptions, "rel_tol"), allowed_values(CompareOptions, "rows")
        ('a finite number at least 0 and below 1', 'one of bag, set')
    """
    field = model.model_fields[name]
    words = _range_words(field)
    if words is not None:
        return words
    choices = [a for a in typing.get_args(field.annotation) if a is not type(None)]
    if typing.get_origin(field.annotation) is typing.Literal:
        return "one of " + ", ".join(str(c) for c in choices)
    return f"a {getattr(field.annotation, '__name__', field.annotation)}"


def _submodel(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model found at ``loc`` under ``model`` (skipping list indexes and the keys
    of a mapping of models, such as ``warehouses``)."""
    current: type[BaseModel] = model
    keyed = False
    for part in loc:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        by_key = {f.alias or n: f for n, f in current.model_fields.items()}
        field = by_key.get(str(part))
        if field is None:
            return None
        found = _find_model(field.annotation)
        if found is None:
            return None
        keyed = typing.get_origin(field.annotation) is dict
        current = found
    return current


def _find_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list, dict):
        for arg in typing.get_args(annotation):
            found = _find_model(arg)
            if found is not None:
                return found
    return None


def describe(value: Any) -> str:
    """A short description of a YAML value for messages.

    Example:
        >>> describe("eight"), describe({"a": 1}), describe(None), describe(True)
        ("'eight'", 'a mapping', 'nothing (null)', 'True')
    """
    if value is None:
        return "nothing (null)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def pydantic_problems(
    err: ValidationError, data: Any, path: str, model: type[BaseModel], context: str = ""
) -> list[Problem]:
    """Problems for each error of ``err``, at the line of the key concerned.

    Args:
        err: What ``model.model_validate(plain(data))`` raised.
        data: The located YAML data that was validated.
        path: File path relative to the project root.
        model: The model validated against (for suggesting valid keys).
        context: Prefix naming the entry, e.g. ``question 'x': ``.
    """
    problems: list[Problem] = []
    for details in err.errors():
        loc = tuple(details["loc"])
        dotted = ".".join(str(p) for p in loc)
        kind = details["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            sub = _submodel(model, loc[:-1])
            where = f" under {'.'.join(map(str, loc[:-1]))!r}" if len(loc) > 1 else ""
            valid = _model_keys(sub) if sub is not None else []
            message = f"unknown key {key!r}{where}{suggest(key, valid, listing=True)}"
            line = line_of(data, loc)
        elif kind == KEY_ERROR:
            loc = (*loc, str(details.get("ctx", {}).get("key", "")))
            message = f"{'.'.join(str(p) for p in loc)}: {details['msg']}"
            line = line_of(data, loc)
        elif kind == "missing":
            message = f"missing required key {str(loc[-1])!r}"
            line = line_of(data, loc[:-1])
        else:
            allowed = _allowed_range(model, loc) if kind in RANGE_ERRORS else None
            what = f"must be {allowed}" if allowed else details["msg"]
            message = f"{dotted}: {what} (got {describe(details.get('input'))})"
            line = line_of(data, loc)
        problems.append(error(context + message, path, line))
    return problems


def validate_partial(model: type[BaseModel], data: YamlMap) -> BaseModel:
    """``model`` from the top-level keys of ``data`` that validate (best effort after errors)."""
    good = {}
    for key, value in plain(data).items():
        try:
            model.model_validate({key: value})
        except ValidationError:
            continue
        good[key] = value
    return model.model_validate(good)
