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
    loader = _Loader(text, path)
    try:
        data = loader.get_single_data()
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
