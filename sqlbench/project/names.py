"""What may name a question, space, certified query, agent or run: how long a name may be and
``name_problem``. Nothing else is imported here, so ``sqlbench init --from`` checks agent names
without loading pydantic."""

from __future__ import annotations

MAX_NAME_CHARS = 200
"""Run, space, question and agent names: what every store backend's columns hold."""

_NAME_FORBIDDEN = set("/*?[]")


def name_problem(name: str, what: str) -> str | None:
    """Why ``name`` cannot name a question, space, certified query or agent; None if it can.

    Example:
        >>> name_problem("sales/q1", "question name")
        "question name 'sales/q1' may not contain any of / * ? [ ] (they pick questions out)"
    """
    if not name.strip():
        return f"{what} is empty"
    if name != name.strip():
        return f"{what} {name!r} starts or ends with whitespace"
    if _NAME_FORBIDDEN & set(name):
        return f"{what} {name!r} may not contain any of / * ? [ ] (they pick questions out)"
    if len(name) > MAX_NAME_CHARS:
        # What validate accepts fits every store backend (names are 200-character columns).
        return f"{what} {name[:40]!r}... has {len(name)} characters; at most {MAX_NAME_CHARS}"
    if not name.isprintable():
        return f"{what} {name!r} holds a character that is not printable"
    return None
