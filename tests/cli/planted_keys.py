"""A project with three planted wrong keys among twelve questions and four recorded agents
(replay), for ``sqlbench audit`` and disputes."""

from __future__ import annotations

from pathlib import Path

import yaml

from sqlbench.testing import write_project

SETUP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, region VARCHAR NOT NULL);
INSERT INTO customers VALUES (1, 'ann', 'EMEA'), (2, 'bob', 'APAC'), (3, 'cy', 'EMEA'),
    (4, 'di', 'AMER'), (5, 'ed', 'APAC'), (6, 'flo', 'EMEA'), (7, 'gus', 'AMER'),
    (8, 'hal', 'EMEA');
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount INTEGER NOT NULL,
    year INTEGER NOT NULL
);
INSERT INTO orders VALUES (1, 1, 120, 2022), (2, 1, 80, 2023), (3, 2, 310, 2023),
    (4, 3, 45, 2022), (5, 4, 99, 2023), (6, 4, 150, 2022), (7, 5, 20, 2023),
    (8, 6, 260, 2022), (9, 1, 75, 2023), (10, 5, 130, 2022), (11, 2, 55, 2023),
    (12, 3, 18, 2022);
"""

# name -> (question, ground truth, the right SQL when the key is planted wrong)
QUESTIONS: dict[str, tuple[str, str, str | None]] = {
    "q01": ("How many customers are there?", "SELECT COUNT(*) FROM customers", None),
    "q02": (
        "How many customers are in EMEA?",
        "SELECT COUNT(*) FROM customers WHERE region = 'APAC'",
        "SELECT COUNT(*) FROM customers WHERE region = 'EMEA'",
    ),
    "q03": ("What is the total amount of all orders?", "SELECT SUM(amount) FROM orders", None),
    "q04": (
        "What is the total amount of the orders of 2023?",
        "SELECT SUM(amount) FROM orders WHERE year = 2022",
        "SELECT SUM(amount) FROM orders WHERE year = 2023",
    ),
    "q05": (
        "Which customers are in APAC?",
        "SELECT name FROM customers WHERE region = 'APAC'",
        None,
    ),
    "q06": (
        "How many orders were placed each year?",
        "SELECT year, COUNT(*) FROM orders GROUP BY year",
        None,
    ),
    "q07": (
        "Which customer placed the largest single order?",
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
        "ORDER BY o.amount ASC LIMIT 1",
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
        "ORDER BY o.amount DESC LIMIT 1",
    ),
    "q08": ("What is the average amount of an order?", "SELECT AVG(amount) FROM orders", None),
    "q09": ("Which regions have customers?", "SELECT DISTINCT region FROM customers", None),
    "q10": (
        "Which customers have no orders?",
        "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)",
        None,
    ),
    "q11": ("What is the largest amount of one order?", "SELECT MAX(amount) FROM orders", None),
    "q12": (
        "Which orders did ann place?",
        "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.name = 'ann'",
        None,
    ),
}
WRONG = ("q02", "q04", "q07")

# Answers that differ from the right one: per agent, question -> SQL.
MISTAKES: dict[str, dict[str, str]] = {
    "a1": {},
    "a2": {"q09": "SELECT region FROM customers"},
    "a3": {"q05": "SELECT name FROM customers WHERE region = 'EMEA'"},
    "a4": {
        "q02": "SELECT COUNT(*) FROM customers",
        "q03": "SELECT SUM(amount) FROM orders WHERE year = 2023",
        "q05": "SELECT name FROM customers",
        "q09": "SELECT region FROM customers",
        "q11": "SELECT MIN(amount) FROM orders",
    },
}


def answers_of(agent: str) -> list[dict[str, str]]:
    return [
        {"name": name, "sql": MISTAKES[agent].get(name, right or truth)}
        for name, (_, truth, right) in QUESTIONS.items()
    ]


def write_planted(root: Path) -> Path:
    files: dict[str, object] = {
        "sqlbench.yml": {"setup": ["setup.sql"], "dialect": "duckdb"},
        "setup.sql": SETUP,
        "eval_questions/shop.yml": {
            "space": "shop",
            "eval_questions": [
                {"name": name, "question": text, "sql": truth}
                for name, (text, truth, _) in QUESTIONS.items()
            ],
        },
        "agents/agents.yml": {
            "agents": [
                {"name": agent, "kind": "replay", "path": f"{agent}.yml"} for agent in MISTAKES
            ]
        },
    }
    for agent in MISTAKES:
        files[f"agents/{agent}.yml"] = yaml.safe_dump(answers_of(agent), sort_keys=False)
    return write_project(root, files)  # type: ignore[arg-type]
