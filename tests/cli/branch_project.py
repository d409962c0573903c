"""A git repository whose branches change a data model, for the compare/check/merge tests.

- ``main``: DuckDB setup SQL with two views; nine questions; a python agent (``analyst``)
  whose SQL reads the views. Seven pass, ``already_failing`` fails, ``declines`` is review.
- ``dev``: the ``revenue_by_region`` view is broken, so exactly ``sales/revenue_by_region``
  and ``sales/top_region`` (whose agent SQL reads it) regress; a question is added.
- ``flaky``: the agent answers ``sales/wobbly`` wrongly on every second call (2 of 3 under
  ``--repeat 3``): a flaky question, not a regression.
"""

from __future__ import annotations

from pathlib import Path

from sqlbench.testing import GitRepo

ORDERS = """\
CREATE TABLE orders AS SELECT * FROM (VALUES
  (1, 'EU', 'alice', 120.0), (2, 'EU', 'bob', 80.0), (3, 'US', 'carol', 200.0),
  (4, 'US', 'dave', 50.0), (5, 'APAC', 'erin', 75.0)
) AS t(id, region, customer, amount);
CREATE VIEW big_orders AS SELECT id, customer, amount FROM orders WHERE amount >= 100;
"""
GOOD_VIEW = (
    "CREATE VIEW revenue_by_region AS\n"
    "  SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region;\n"
)
BROKEN_VIEW = (
    "CREATE VIEW revenue_by_region AS  -- 'only small orders' slipped in\n"
    "  SELECT region, SUM(amount) AS revenue FROM orders WHERE amount < 100 GROUP BY region;\n"
)

QUESTIONS = """\
space: sales
eval_questions:
  - name: revenue_by_region
    question: What is the revenue of each region?
    sql: SELECT region, SUM(amount) FROM orders GROUP BY region
    tags: [must-pass]
  - name: top_region
    question: Which region has the most revenue?
    sql: SELECT region FROM orders GROUP BY region ORDER BY SUM(amount) DESC LIMIT 1
  - name: big_orders
    question: Which orders are of 100 or more?
    sql: SELECT id, customer, amount FROM orders WHERE amount >= 100
  - name: order_count
    question: How many orders are there?
    sql: SELECT COUNT(*) FROM orders
  - name: customers
    question: Who are our customers?
    sql: SELECT DISTINCT customer FROM orders
  - name: eu_revenue
    question: What is the revenue in the EU?
    sql: SELECT SUM(amount) FROM orders WHERE region = 'EU'
  - name: wobbly
    question: What is the largest order?
    sql: SELECT MAX(amount) FROM orders
  - name: already_failing
    question: What is the average order?
    sql: SELECT AVG(amount) FROM orders
  - name: declines
    question: What will revenue be next year?
    sql: SELECT SUM(amount) FROM orders
"""
ADDED_QUESTION = """\
space: sales
eval_questions:
  - name: smallest_order
    question: What is the smallest order?
    sql: SELECT MIN(amount) FROM orders
"""

AGENT = '''\
"""A scripted analyst: SQL per question, reading the views where a person would."""

import itertools

FLAKY = {flaky}
_calls = itertools.count()

SQL = {{
    "revenue_by_region": "SELECT region, revenue FROM revenue_by_region",
    "top_region": "SELECT region FROM revenue_by_region ORDER BY revenue DESC LIMIT 1",
    "big_orders": "SELECT * FROM big_orders",
    "order_count": "SELECT COUNT(*) AS n FROM orders",
    "customers": "SELECT customer FROM orders GROUP BY customer",
    "eu_revenue": "SELECT SUM(amount) FROM orders WHERE region = 'EU'",
    "already_failing": "SELECT AVG(amount) * 2 FROM orders",
    "smallest_order": "SELECT MIN(amount) FROM orders",
}}


def answer(request):
    name = request["name"]
    if name == "declines":
        return {{"answer": "I cannot predict the future."}}
    if name == "wobbly":
        wrong = FLAKY and next(_calls) % 2 == 1
        return "SELECT MIN(amount) FROM orders" if wrong else "SELECT MAX(amount) FROM orders"
    return SQL[name]
'''


def project_files(*, broken: bool = False, flaky: bool = False) -> dict[str, str]:
    """The project's files: ``broken`` breaks the view, ``flaky`` makes ``wobbly`` flaky."""
    return {
        "sqlbench.yml": "dialect: duckdb\nsetup:\n  - models/*.sql\ndefault_agent: analyst\n",
        "models/orders.sql": ORDERS,
        "models/views.sql": BROKEN_VIEW if broken else GOOD_VIEW,
        "eval_questions/sales.yml": QUESTIONS,
        "agents/analyst.yml": (
            "agents:\n  - name: analyst\n    kind: python\n    function: analyst_agent:answer\n"
        ),
        "analyst_agent.py": AGENT.format(flaky=flaky),
    }


BROKEN_QUESTIONS = ("sales/revenue_by_region", "sales/top_region")
"""The questions that regress on ``dev``, exactly."""


def make_repo(root: Path) -> GitRepo:
    """The repository at ``root``: ``main`` checked out, ``dev`` and ``flaky`` branches."""
    repo = GitRepo.init(root)
    repo.commit(project_files(), "sqlbench project")
    repo.commit(
        {"models/views.sql": BROKEN_VIEW, "eval_questions/more.yml": ADDED_QUESTION},
        "refactor revenue view",
        branch="dev",
    )
    repo.commit({"analyst_agent.py": AGENT.format(flaky=True)}, "agent retry", branch="flaky")
    return repo
