"""YAML with line numbers and duplicate-key errors.

PyYAML keeps the last of two equal keys silently; here a duplicate key is a problem at the
second key's line. Mappings load as ``YamlMap`` (a dict remembering each key's line) and
sequences as ``YamlList`` (a list remembering each item's line), so any later finding, such as
a pydantic error's ``loc``, can be mapped back to the line of the key it concerns.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from sqlbench.errors import Problem, Severity


class YamlMap(dict[Any, Any]):
    """A mapping from YAML; ``line`` is its first line, ``key_lines`` each key's line (1-based)."""

    line: int
    key_lines: dict[Any, int]

    def __init__(self, line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.key_lines = {}


class YamlList(list[Any]):
    """A sequence from YAML; ``line`` is its first line, ``item_lines`` each item's line."""

    line: int
    item_lines: list[int]

    def __init__(self, line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.item_lines = []


class YamlDocument(NamedTuple):
    """What ``load_yaml`` found in one file."""

    data: Any
    """The loaded value (``YamlMap``/``YamlList``/scalar), None for an empty or broken file."""
    problems: list[Problem]
    """Syntax errors and duplicate keys, located in the file."""
    empty: bool
    """True when the file holds no document (nothing but whitespace and comments)."""


# libyaml's parser when PyYAML was built with it (about 10x faster); same nodes and marks.
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[misc]
    """A safe loader building YamlMap/YamlList and collecting duplicate keys, not hiding them."""

    def __init__(self, stream: str, path: str) -> None:
        super().__init__(stream)
        self.sqlbench_path = path
        self.sqlbench_problems: list[Problem] = []


def _construct_map(loader: _Loader, node: MappingNode) -> YamlMap:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                "found an unhashable key",
                key_node.start_mark,
            )
        if key in seen:
            loader.sqlbench_problems.append(
                Problem(
                    Severity.ERROR,
                    f"duplicate key {key!r} (first at line {seen[key]}); YAML would silently keep "
                    "only one of them",
                    loader.sqlbench_path,
                    line,
                )
            )
        else:
            seen[key] = line
    # Merge keys (<<) are legitimate repeats: flatten them first, written keys then override.
    loader.flatten_mapping(node)
    result = YamlMap(node.start_mark.line + 1)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        value = loader.construct_object(value_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in seen and seen[key] != line:
            continue  # a later duplicate (reported above) or a merged key written over: skip
        result[key] = value
        result.key_lines[key] = line
    return result


def _construct_seq(loader: _Loader, node: SequenceNode) -> YamlList:
    result = YamlList(node.start_mark.line + 1)
    for item in node.value:
        result.append(loader.construct_object(item, deep=True))
        result.item_lines.append(_node_line(item))
    return result


def _node_line(node: Node) -> int:
    return int(node.start_mark.line) + 1


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def load_yaml(text: str, path: str) -> YamlDocument:
    """Parse one YAML document, keeping lines and reporting syntax errors and duplicate keys.

    Args:
        text: The file's content.
        path: The file's path relative to the project root (for the problems).

    Returns:
        The data (None when the file is empty or does not parse), the problems, and whether
        the file was empty.

    Example:
        >>> doc = load_yaml("a: 1\\nb: [x, y]\\na: 2\\n", "f.yml")
        >>> doc.data["a"], doc.data.key_lines["b"], str(doc.problems[0])[:48]
        (1, 2, "f.yml:3: error: duplicate key 'a' (first at line")
    """
    refused = _check_limits(text, path)
    if refused is not None:
        return YamlDocument(None, [refused], False)
    loader = _Loader(text, path)
    try:
        data = loader.get_single_data()
    except RecursionError:
        problem = Problem(Severity.ERROR, _too_deep(), path, None)
        return YamlDocument(None, [problem], False)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        what = err.problem or "invalid YAML"
        context = f" ({err.context})" if err.context else ""
        return YamlDocument(
            None,
            [Problem(Severity.ERROR, f"YAML syntax error: {what}{context}", path, line)],
            False,
        )
    except yaml.YAMLError as err:
        return YamlDocument(
            None, [Problem(Severity.ERROR, f"YAML error: {err}", path, None)], False
        )
    finally:
        loader.dispose()
    return YamlDocument(data, loader.sqlbench_problems, data is None and _is_blank(text))


MAX_YAML_BYTES = 8 * 2**20
"""Largest YAML file sqlbench reads (8 MB: about 100,000 short questions, 40 s to load; more
is a mistake or an attack, and would take minutes and gigabytes)."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of mappings and lists in a YAML file."""
MAX_ALIAS_NODES = 100_000
"""How many values aliases (``*name``) may add to a file beyond what is written in it: enough
for any ``<<: *defaults``, not for a "billion laughs" that expands to gigabytes."""


def _check_limits(text: str, path: str) -> Problem | None:
    """A problem when ``text`` is too large, nested too deeply, or its aliases expand too far;
    read from libyaml's event stream (no recursion, nothing built) before anything is loaded.

    Example:
        >>> str(_check_limits("a: " + "[" * 70 + "]" * 70, "f.yml"))
        'f.yml:1: error: the YAML is nested more than 64 levels deep; sqlbench reads no deeper'
    """
    size = len(text.encode("utf-8", "surrogatepass")) if len(text) > MAX_YAML_BYTES // 4 else 0
    if size > MAX_YAML_BYTES:
        return too_big(size, path)
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, values inside] per open collection
    written = added = 0
    try:
        for event in yaml.parse(text, Loader=_SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                if len(stack) > MAX_YAML_DEPTH:
                    line = event.start_mark.line + 1
                    return Problem(Severity.ERROR, _too_deep(), path, line)
                stack.append([event.anchor, 0])
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, inside = stack.pop()
                if anchor is not None:
                    sizes[anchor] = inside + 1
                stack[-1][1] += inside + 1
                written += 1
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = 1
                stack[-1][1] += 1
                written += 1
            elif isinstance(event, yaml.AliasEvent):
                expands = sizes.get(str(event.anchor), 1)
                stack[-1][1] += expands
                added += expands
                if added > MAX_ALIAS_NODES:
                    return Problem(
                        Severity.ERROR,
                        f"YAML aliases here expand the file past {MAX_ALIAS_NODES:,} values "
                        f"(it writes {written:,}); a file that repeats itself this much is "
                        'refused ("billion laughs")',
                        path,
                        event.start_mark.line + 1,
                    )
    except yaml.YAMLError:
        return None  # the loader reports it, with its line
    return None


def too_big(size: int, path: str) -> Problem:
    """The problem of a YAML file of ``size`` bytes, over ``MAX_YAML_BYTES``."""
    return Problem(
        Severity.ERROR,
        f"the file is {size / 2**20:,.1f} MB, over sqlbench's limit of "
        f"{MAX_YAML_BYTES // 2**20} MB for a YAML file; split it into several files",
        path,
        None,
    )


def nesting_depth(value: Any) -> int:
    """How deeply lists and mappings nest in ``value`` (0 for a scalar), without recursion.

    Example:
        >>> nesting_depth({"a": [1, {"b": []}]}), nesting_depth("x")
        (4, 0)
    """
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def _too_deep() -> str:
    return f"the YAML is nested more than {MAX_YAML_DEPTH} levels deep; sqlbench reads no deeper"


def _is_blank(text: str) -> bool:
    return all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines())


def line_of(data: Any, loc: Sequence[Any], default: int | None = None) -> int | None:
    """The line of the deepest key or item of ``loc`` found in ``data``.

    Walks ``loc`` (keys and list indexes, as in a pydantic error) as far as the data goes and
    returns the line of the last key or item reached: for a missing key, the line of the key
    (or item) holding the mapping that lacks it.

    Args:
        data: A value returned by ``load_yaml`` (or any part of one).
        loc: Keys and indexes from ``data`` down.
        default: Returned when ``data`` carries no line at all.

    Example:
        >>> doc = load_yaml("run:\\n  concurrency: x\\n", "f.yml")
        >>> line_of(doc.data, ("run", "concurrency")), line_of(doc.data, ("run", "missing"))
        (2, 1)
    """
    line = getattr(data, "line", None) or default
    node = data
    for part in loc:
        if isinstance(node, YamlMap) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, YamlList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line


def plain(data: Any) -> Any:
    """A copy of ``data`` with YamlMap/YamlList turned into plain dicts and lists.

    Example:
        >>> type(plain(load_yaml("a: [1]", "f.yml").data)["a"])
        <class 'list'>
    """
    if isinstance(data, dict):
        return {key: plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [plain(item) for item in data]
    return data
