"""YAML loading keeps lines, reports duplicate keys and syntax errors with their line."""

from __future__ import annotations

import pytest

from sqlbench.errors import Severity
from sqlbench.project.yamlload import YamlList, YamlMap, line_of, load_yaml, plain

TEXT = """\
# comment
space: sales
eval_questions:
  - name: a
    sql: |
      SELECT 1
    tags: [x, y]
  - name: b
    compare:
      order: strict
"""


def test_keys_and_items_keep_their_lines() -> None:
    doc = load_yaml(TEXT, "q.yml")
    assert doc.problems == [] and not doc.empty
    data = doc.data
    assert isinstance(data, YamlMap)
    assert data.key_lines == {"space": 2, "eval_questions": 3}
    entries = data["eval_questions"]
    assert isinstance(entries, YamlList)
    assert entries.item_lines == [4, 8]
    assert entries[0].key_lines == {"name": 4, "sql": 5, "tags": 7}
    assert line_of(data, ("eval_questions", 1, "compare", "order")) == 10
    assert line_of(data, ("eval_questions", 0, "tags", 1)) == 7


def test_line_of_stops_at_the_deepest_existing_key() -> None:
    data = load_yaml(TEXT, "q.yml").data
    assert line_of(data, ("eval_questions", 1, "compare", "rows")) == 9
    assert line_of(data, ("eval_questions", 5, "name")) == 3
    assert line_of(data, ("nope",)) == 2  # the mapping starts at its first key


def test_duplicate_key_is_an_error_at_the_second_key_and_the_first_value_is_kept() -> None:
    doc = load_yaml("a: 1\nb: 2\na: 3\n", "f.yml")
    assert [str(p) for p in doc.problems] == [
        "f.yml:3: error: duplicate key 'a' (first at line 1); YAML would silently keep only "
        "one of them"
    ]
    assert doc.data == {"a": 1, "b": 2}


def test_duplicate_keys_are_found_in_nested_mappings() -> None:
    doc = load_yaml("x:\n  - name: q\n    sql: a\n    sql: b\n", "f.yml")
    assert [(p.line, p.severity) for p in doc.problems] == [(4, Severity.ERROR)]


def test_merge_keys_are_not_duplicates() -> None:
    doc = load_yaml("base: &b {order: strict, rows: set}\nq:\n  <<: *b\n  rows: bag\n", "f.yml")
    assert doc.problems == []
    assert plain(doc.data)["q"] == {"order": "strict", "rows": "bag"}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: [1, 2\n", 2),
        ("a: 1\n  b: 2\n", 2),
        ("a:\n  - x\n - y\n", 3),
        ("a: 'unclosed\n", 2),
    ],
)
def test_syntax_errors_name_their_line(text: str, line: int) -> None:
    doc = load_yaml(text, "f.yml")
    assert doc.data is None
    assert len(doc.problems) == 1
    assert doc.problems[0].line == line
    assert doc.problems[0].message.startswith("YAML syntax error: ")


def test_python_tags_are_refused_not_executed() -> None:
    doc = load_yaml("a: !!python/object/apply:os.system ['true']\n", "f.yml")
    assert doc.data is None
    assert "could not determine a constructor" in doc.problems[0].message


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n  # another\n"])
def test_blank_files_are_empty(text: str) -> None:
    doc = load_yaml(text, "f.yml")
    assert doc.empty and doc.data is None and doc.problems == []


def test_an_explicit_null_document_is_not_empty() -> None:
    doc = load_yaml("~\n", "f.yml")
    assert doc.data is None and not doc.empty


def test_plain_returns_builtin_containers() -> None:
    data = plain(load_yaml(TEXT, "q.yml").data)
    assert type(data) is dict and type(data["eval_questions"]) is list
    assert type(data["eval_questions"][1]["compare"]) is dict
