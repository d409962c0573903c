"""``sqlbench show RUN QUESTION --variant K``: the rows of the data variant an answer failed on,
rebuilt from the run's record (docs/verdicts.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from sqlbench.testing import write_project

SETUP = """
CREATE TABLE owners (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, city VARCHAR NOT NULL);
INSERT INTO owners VALUES (1, 'ann', 'Oslo'), (2, 'bob', 'Rome'), (3, 'cy', 'Lima'),
    (4, 'di', 'Kyiv'), (5, 'ed', 'Baku'), (6, 'flo', 'Pune');
CREATE TABLE pets (
    id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, owner_id INTEGER REFERENCES owners (id)
);
INSERT INTO pets VALUES (1, 'rex', 1), (2, 'tom', 2), (3, 'kit', 3), (4, 'max', 4),
    (5, 'bo', 5), (6, 'zed', 6);
CREATE TABLE unrelated (id INTEGER PRIMARY KEY, note VARCHAR);
INSERT INTO unrelated VALUES (1, 'x');
"""


def _project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path,
        {
            "sqlbench.yml": {"setup": ["setup.sql"], "dialect": "duckdb", "default_agent": "lucky"},
            "setup.sql": SETUP,
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "cities",
                        "question": "Which cities do owners live in?",
                        "sql": "SELECT DISTINCT city FROM owners",
                    }
                ]
            },
            "agents/agents.yml": {
                "agents": [{"name": "lucky", "kind": "replay", "path": "lucky.yml"}]
            },
            "agents/lucky.yml": yaml.safe_dump(
                [{"name": "cities", "sql": "SELECT city FROM owners"}]
            ),
        },
    )


def test_show_prints_the_rows_of_the_variant_an_answer_failed_on(tmp_path: Path, invoke) -> None:
    root = _project(tmp_path)
    invoke("run", "-C", str(root), "--variants", "4", "--name", "r")
    detail = invoke("show", "-C", str(root), "r", "cities").stdout
    found = re.search(r"not on data variant #(\d+) \((\w+)\)", detail)
    assert found is not None, detail
    number, printed = found.groups()
    out = invoke("show", "-C", str(root), "r", "cities", "--variant", number).stdout
    assert f"data variant #{number} ({printed})" in out
    assert "owners (" in out and "unrelated" not in out and "pets" not in out
    cities = re.findall(r"\b(Oslo|Rome|Lima|Kyiv|Baku|Pune)\b", out)
    assert len(cities) > len(set(cities))  # the repeated city that failed the answer


def test_show_variant_refuses_a_variant_the_answer_was_not_graded_on(
    tmp_path: Path, invoke
) -> None:
    root = _project(tmp_path)
    invoke("run", "-C", str(root), "--variants", "4", "--name", "r")
    result = invoke("show", "-C", str(root), "r", "cities", "--variant", "999", exit_code=2)
    assert "--variant 999: auto/cities's kept data variants are #" in result.stderr
    invoke("run", "-C", str(root), "--name", "plain")
    result = invoke("show", "-C", str(root), "plain", "cities", "--variant", "0", exit_code=2)
    assert "was not checked on any data variant in this run" in result.stderr


def test_the_report_holds_the_rows_of_the_variant_an_answer_failed_on(
    tmp_path: Path, invoke
) -> None:
    root = _project(tmp_path)
    invoke("run", "-C", str(root), "--variants", "4", "--name", "r")
    detail = invoke("show", "-C", str(root), "r", "cities").stdout
    found = re.search(r"not on data variant #(\d+) \((\w+)\)", detail)
    assert found is not None
    page = tmp_path / "report.html"
    invoke("report", "-C", str(root), "r", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    number, printed = found.groups()
    assert f'"variant":{{"number":{number},"fingerprint":"{printed}"' in html
    assert '"name":"owners","columns":["id","name","city"]' in html
    assert '"name":"unrelated"' not in html
    assert "function variantBlock(q)" in html


def test_audit_names_the_near_neighbour_an_answer_read(tmp_path: Path, invoke) -> None:
    """An answer failing only on a variant: the audit shows both results there and the ground
    truth's near neighbour that gives the answer's (the reading it took)."""
    root = _project(tmp_path)
    invoke("run", "-C", str(root), "--variants", "4", "--name", "r")
    data = json.loads(invoke("audit", "-C", str(root), "--format", "json").stdout)
    (question,) = data["questions"]
    (evidence,) = question["evidence"]
    assert evidence["kind"] == "variant" and evidence["weight"] == 0.1
    detail = evidence["detail"]
    assert detail.startswith("1 agent (lucky) matches the ground truth on the original data")
    assert "the ground truth's near neighbour `SELECT city FROM owners` gives lucky's result" in (
        detail
    )
    assert "`sqlbench show RUN auto/cities --variant " in detail
