"""`sqlbench questions`: the benchmark set as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "projects"
GOOD = str(FIXTURES / "good")


def test_table(invoke) -> None:
    result = invoke("questions", "-C", GOOD)
    assert result.stdout.splitlines() == [
        "SPACE  NAME                     GROUND TRUTH                            TAGS",
        "auto   revenue_2024             sql",
        "auto   order_count              sql                                     (skipped: the "
        "orders table is being reloaded)",
        "sales  orders_per_country_2024  certifiedQuery orders_per_country_2024  orders, must-pass",
        "sales  revenue_2024             sql",
        "4 questions in 2 spaces (1 skipped)",
    ]


def test_json_with_select_and_space(invoke) -> None:
    result = invoke(
        "questions", "-C", GOOD, "--format", "json", "--space", "sales", "--select", "revenue_2024"
    )
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1
    assert data["questions"] == [
        {
            "space": "sales",
            "name": "revenue_2024",
            "full_name": "sales/revenue_2024",
            "question": "What was the total order amount in 2024?",
            "ground_truth": "sql",
            "certified_query": None,
            "tags": [],
            "skip": None,
            "path": "eval_questions/sales/orders.yml",
            "line": 8,
        }
    ]


def test_select_matching_nothing_is_exit_2_with_a_suggestion(invoke) -> None:
    result = invoke("questions", "-C", GOOD, "--select", "orders_per_county_2024", exit_code=2)
    assert result.stderr == (
        "Error: no question matches 'orders_per_county_2024'; did you "
        "mean 'orders_per_country_2024'?\n"
    )


def test_an_invalid_project_is_exit_2_pointing_to_validate(invoke) -> None:
    result = invoke("questions", "-C", str(FIXTURES / "duplicate_question_name"), exit_code=2)
    assert result.stderr.startswith(
        "Error: the project does not validate: eval_questions/b.yml"
        ":6: error: duplicate question 'orders_2024'"
    )
