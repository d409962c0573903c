"""The demo project at the repository root: its warehouse, its ground truth, its recorded agent.

The warehouse is built here with DuckDB directly, the way sqlbench's embedded engine does it
(``file_search_path`` at the project root, then the ``setup:`` files in order), so these tests
hold whether or not the engine changes. ``INTENDED`` documents the verdict each recorded answer
is meant to get, and why; the verdicts are asserted with ``sqlbench.compare.compare_results``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import pytest
import sqlglot
import yaml
from sqlglot import exp

from sqlbench.agents.base import Answer
from sqlbench.compare import compare_results
from sqlbench.engines.base import ResultSet
from sqlbench.project.files import RUN_WIDE_COMPARE_KEYS, CertifiedQuery, Question, Settings
from sqlbench.project.rules import sql_drift, text_drift
from sqlbench.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
GENERATOR = ROOT / "scripts" / "make_demo_data.py"
RECORDED = ROOT / "agents" / "recorded_answers.jsonl"


class How(Enum):
    """What a recorded answer does, which decides how its intent is checked."""

    MATCHES = "its SQL runs and its result matches a ground truth"
    DIFFERS = "its SQL runs and its result does not match"
    DOES_NOT_RUN = "its SQL does not run"
    WORDS = "it answers in words, without SQL"
    NO_TRUTH = "the question has no ground truth"
    AGENT_ERROR = "it carries an `error`"
    NO_ANSWER = "there is no recorded answer"
    SKIPPED = "the question is skipped"
    DECLINES = "a decline is expected and it answers without SQL"
    ANSWERS_A_DECLINE = "a decline is expected and it answers with SQL"
    CONVERSATION = "a conversation: each turn is checked on its own (TURNS)"


class Intent(NamedTuple):
    """The verdict a recorded answer should get, and the honest reason for it."""

    verdict: Verdict
    how: How
    why: str


P, F, R, E, S = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR, Verdict.SKIPPED
INTENDED: dict[str, Intent] = {
    "sales/revenue_by_region_2023": Intent(P, How.MATCHES, "other aliases and column order"),
    "sales/top_customers_2024": Intent(P, How.MATCHES, "LIMIT 5 in the right order (strict)"),
    "sales/avg_order_value_by_segment_2024": Intent(
        F, How.DIFFERS, "rounding near-miss: ROUND(..., 2) under the default tolerances"
    ),
    "sales/rep_leaderboard_2024": Intent(P, How.MATCHES, "extra columns (region, customers)"),
    "sales/revenue_by_category_2024": Intent(
        F, How.DIFFERS, "wrong filter: cancelled, refunded and pending orders counted"
    ),
    "sales/running_revenue_2024": Intent(P, How.MATCHES, "explicit window frame, DATE months"),
    "sales/revenue_by_channel_2024": Intent(P, How.MATCHES, "orders instead of revenue, IFNULL"),
    "sales/addon_orders_by_region_2024": Intent(
        F, How.DIFFERS, "join to order_items counts an order once per add-on line"
    ),
    "sales/mom_revenue_growth_2024": Intent(
        F, How.DOES_NOT_RUN, "MySQL's DATE_FORMAT does not exist in DuckDB"
    ),
    "sales/priciest_product_per_category": Intent(P, How.MATCHES, "correlated MAX keeps ties"),
    "sales/new_customers_by_month_2022": Intent(P, How.MATCHES, "same rows, reversed order"),
    "sales/customers_without_orders": Intent(P, How.MATCHES, "NOT EXISTS instead of anti-join"),
    "sales/most_orders_2022": Intent(P, How.MATCHES, "ties kept via the third-highest count"),
    "sales/missing_industry_by_segment": Intent(P, How.MATCHES, "COUNT(*) - COUNT(industry)"),
    "sales/unassigned_customers_by_region": Intent(R, How.WORDS, "right numbers, words only"),
    "sales/days_to_first_order_2023": Intent(P, How.MATCHES, "date_diff and median"),
    "sales/orders_by_weekday_2024": Intent(P, How.MATCHES, "strftime('%A') for dayname"),
    "sales/enterprise_emea_industries": Intent(P, How.MATCHES, "no DISTINCT, rows: set"),
    "sales/rep_rank_within_region_2024": Intent(P, How.MATCHES, "ranked in a CTE"),
    "sales/reps_with_most_customers": Intent(P, How.MATCHES, "HAVING = MAX keeps the tie"),
    "sales/reps_without_customers": Intent(P, How.MATCHES, "LEFT JOIN IS NULL, extra rep_id"),
    "finance/arr_by_year_end": Intent(P, How.MATCHES, "subscriptions instead of arr_snapshots"),
    "finance/arr_by_plan_2024": Intent(P, How.MATCHES, "columns in another order"),
    "finance/churn_by_quarter_2023": Intent(P, How.MATCHES, "DATEs against midnight TIMESTAMPs"),
    "finance/net_new_arr_by_quarter_2024": Intent(E, How.AGENT_ERROR, "agent hit max_tool_calls"),
    "finance/arr_by_region_2023": Intent(P, How.MATCHES, "arr_snapshots instead of dates"),
    "finance/large_accounts_2024": Intent(P, How.MATCHES, "subquery over subscriptions"),
    "finance/churned_subscription_length": Intent(P, How.MATCHES, "date_diff instead of minus"),
    "finance/churn_reasons_2024": Intent(P, How.MATCHES, "CASE instead of COALESCE"),
    "finance/active_customers_by_segment_2024": Intent(S, How.SKIPPED, "skip: FIN-142"),
    "finance/enterprise_arr_change_q3_2023": Intent(R, How.NO_TRUTH, "no ground truth"),
    "finance/revenue_by_quarter_2024": Intent(P, How.MATCHES, "quarter numbers: also_accept"),
    "finance/yearly_revenue_growth": Intent(P, How.MATCHES, "float noise within tolerance"),
    "finance/order_status_counts_2024": Intent(E, How.NO_ANSWER, "not recorded"),
    "finance/revenue_share_by_segment_2024": Intent(P, How.MATCHES, "ROUND 2 within abs_tol"),
    "finance/refunded_orders_by_month_2024": Intent(P, How.MATCHES, "written independently"),
    "finance/avg_discount_by_segment_2023": Intent(P, How.MATCHES, "written independently"),
    "sales/revenue_drilldown_2024": Intent(P, How.CONVERSATION, "every turn right"),
    "sales/channel_orders_followup_2024": Intent(
        F, How.CONVERSATION, "turn 2 forgets turn 1's 2024"
    ),
    "sales/revenue_forecast_2025": Intent(P, How.DECLINES, "says the data ends in 2024"),
    "sales/best_sales_rep": Intent(F, How.ANSWERS_A_DECLINE, "picks revenue without asking"),
}
TURNS: dict[tuple[str, int], Intent] = {
    ("sales/revenue_drilldown_2024", 1): Intent(P, How.MATCHES, "year() instead of a range"),
    ("sales/revenue_drilldown_2024", 2): Intent(P, How.MATCHES, "keeps EMEA and 2024"),
    ("sales/revenue_drilldown_2024", 3): Intent(P, How.DECLINES, "no 2025 data to report"),
    ("sales/channel_orders_followup_2024", 1): Intent(P, How.MATCHES, "year() instead of a range"),
    ("sales/channel_orders_followup_2024", 2): Intent(
        F, How.DIFFERS, "completed orders of every year: the 2024 of turn 1 is lost"
    ),
}
"""The verdict each turn of a demo conversation should get, and why."""
NEEDS_ALSO_ACCEPT = {"finance/revenue_by_quarter_2024"}
"""Answers that pass only through an ``also_accept`` ground truth, not the main one."""
NEAR_MISSES = {"sales/avg_order_value_by_segment_2024"}
"""Failing answers that would pass at a looser tolerance (rounding)."""


class DemoQuestion(NamedTuple):
    """A question of the demo with its ground truths resolved."""

    question: Question
    truths: list[str]
    """The main ground truth first, then ``also_accept``; empty when it has none."""


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _settings() -> Settings:
    return Settings.model_validate(_yaml(ROOT / "sqlbench.yml"))


def _certified_queries() -> dict[str, CertifiedQuery]:
    queries: dict[str, CertifiedQuery] = {}
    for path in sorted((ROOT / "certified_queries").rglob("*.yml")):
        for entry in _yaml(path)["certified_queries"]:
            query = CertifiedQuery.model_validate(entry)
            assert query.name not in queries, f"{path}: certified query {query.name} repeated"
            queries[query.name] = query
    return queries


def _questions() -> dict[str, DemoQuestion]:
    certified = _certified_queries()
    questions: dict[str, DemoQuestion] = {}
    for path in sorted((ROOT / "eval_questions").rglob("*.yml")):
        document = _yaml(path)
        for entry in document["eval_questions"]:
            truth = entry.get("sql")
            if entry.get("certifiedQuery") is not None:
                truth = certified[entry["certifiedQuery"]].sql
            if "turns" in entry:
                question = Question.build(
                    entry,
                    space=document.get("space", "auto"),
                    path=path.relative_to(ROOT).as_posix(),
                    line=0,
                )
                truths = [turn["sql"] for turn in entry["turns"] if "sql" in turn]
                questions[question.full_name] = DemoQuestion(question, truths)
                continue
            question = Question.build(
                entry,
                space=document.get("space", "auto"),
                path=path.relative_to(ROOT).as_posix(),
                line=0,
                truth_sql=truth,
            )
            assert question.full_name not in questions, f"{question.full_name} repeated"
            truths = [truth, *question.also_accept] if truth is not None else []
            questions[question.full_name] = DemoQuestion(question, truths)
    return questions


def _recorded_answers() -> dict[str, dict[str, Any]]:
    answers: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(RECORDED.read_text(encoding="utf-8").splitlines(), start=1):
        record = json.loads(line)
        full_name = f"{record['space']}/{record['name']}"
        if "turn" in record:
            full_name += f"#{record['turn']}"
        assert full_name not in answers, f"line {number}: a second answer for {full_name}"
        answers[full_name] = record
    return answers


QUESTIONS = _questions()
ANSWERS = _recorded_answers()
TRUTHS = [(name, index) for name, item in QUESTIONS.items() for index in range(len(item.truths))]


def _setup_files() -> list[Path]:
    files: list[Path] = []
    for pattern in _settings().setup:
        matched = sorted(ROOT.glob(pattern))
        assert matched, f"setup glob {pattern!r} matches no file"
        files += matched
    return files


def _build_warehouse(threads: int | None = None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads = {threads}")
    quoted = str(ROOT).replace("'", "''")
    con.execute(f"SET file_search_path = '{quoted}'")
    for path in _setup_files():
        con.execute(path.read_text(encoding="utf-8")).fetchall()
    return con


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    # Built from another folder: the setup's relative paths must resolve via file_search_path.
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("elsewhere"))
        con = _build_warehouse()
    yield con
    con.close()


def _run(con: duckdb.DuckDBPyConnection, sql: str) -> ResultSet:
    return ResultSet(con.sql(sql).to_arrow_table())


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in con.sql(sql).fetchall()]


def _is_null(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# --- the warehouse ---------------------------------------------------------------------------

RAW_TABLES = ["sales_reps", "customers", "products", "orders", "order_items", "subscriptions"]
VIEWS = [*RAW_TABLES, "revenue", "arr_snapshots"]


def test_every_csv_row_reaches_its_raw_table(warehouse: duckdb.DuckDBPyConnection) -> None:
    assert sorted(p.stem for p in DATA.glob("*.csv")) == sorted(RAW_TABLES)
    total = 0
    for table in RAW_TABLES:
        csv_rows = len((DATA / f"{table}.csv").read_text(encoding="utf-8").splitlines()) - 1
        assert _rows(warehouse, f"SELECT COUNT(*) FROM raw_{table}") == [(csv_rows,)], table
        total += csv_rows
    assert total >= 3000, "a few thousand rows"
    assert sum(p.stat().st_size for p in DATA.iterdir()) < 1_000_000


def test_data_model_views_exist_and_agree(warehouse: duckdb.DuckDBPyConnection) -> None:
    for view in VIEWS:
        (count,) = _rows(warehouse, f"SELECT COUNT(*) FROM {view}")[0]
        assert count > 0, view
    # Revenue (line level) and completed orders (order level) are the same money.
    assert _rows(warehouse, "SELECT SUM(amount) FROM revenue") == _rows(
        warehouse, "SELECT SUM(net_amount) FROM orders WHERE status = 'completed'"
    )
    types = dict(
        _rows(warehouse, "SELECT column_name, column_type FROM (DESCRIBE raw_subscriptions)")
    )
    assert (types["arr"], types["start_date"]) == ("DECIMAL(12,2)", "DATE")


def test_the_data_has_nulls_and_ties_on_purpose(warehouse: duckdb.DuckDBPyConnection) -> None:
    nulls = [
        ("customers", "industry"),
        ("customers", "sales_rep_id"),
        ("orders", "channel"),
        ("subscriptions", "end_date"),
        ("subscriptions", "churn_reason"),
        ("products", "discontinued_on"),
        ("sales_reps", "manager_id"),
    ]
    for table, column in nulls:
        (count,) = _rows(warehouse, f"SELECT COUNT(*) FROM {table} WHERE {column} IS NULL")[0]
        assert count > 0, f"{table}.{column} has no NULLs"
    ties = {
        "sales/priciest_product_per_category": 5,
        "sales/reps_with_most_customers": 2,
        "sales/most_orders_2022": 4,
    }
    for name, rows in ties.items():
        assert len(_rows(warehouse, QUESTIONS[name].truths[0])) == rows, name


def test_generator_is_deterministic(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in DATA.iterdir())
    for name in written:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), (
            f"data/{name} differs from the generator's output: run scripts/make_demo_data.py"
        )


# --- the questions and their ground truth ----------------------------------------------------


def test_question_set_covers_what_the_demo_promises() -> None:
    questions = [item.question for item in QUESTIONS.values()]
    assert len(questions) >= 30
    assert {q.space for q in questions} >= {"sales", "finance"}
    assert len(_certified_queries()) >= 10
    kinds = [q.truth_kind.value for q in questions if q.expect is None and q.turns is None]
    assert kinds.count("none") == 1
    assert sum(q.expect == "decline" for q in questions) == 2
    assert sum(q.turns is not None for q in questions) == 2
    assert kinds.count("certified_query") >= 10 and kinds.count("sql") >= 10
    assert sum(bool(q.skip) for q in questions) == 1
    assert sum(bool(q.also_accept) for q in questions) == 1
    assert sum(q.compare is not None for q in questions) >= 2
    assert any(q.compare and q.compare.order == "strict" for q in questions)
    assert any("must-pass" in q.tags for q in questions)
    used = {q.certified_query for q in questions}
    assert set(_certified_queries()) <= used | {None}, "every certified query is asked about"


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_questions_are_dated_absolutely(name: str) -> None:
    item = QUESTIONS[name]
    assert text_drift(item.question.question) is None
    for turn in item.question.turns or []:
        assert text_drift(turn.question) is None
    for sql in item.truths:
        assert sql_drift(sql, "duckdb") is None


@pytest.mark.parametrize(("name", "index"), TRUTHS)
def test_ground_truth_returns_rows(
    warehouse: duckdb.DuckDBPyConnection, name: str, index: int
) -> None:
    rows = _rows(warehouse, QUESTIONS[name].truths[index])
    assert rows, "empty result"
    assert not all(_is_null(value) for row in rows for value in row), "only NULLs"


def _stable(value: object) -> object:
    if isinstance(value, float | Decimal) and not _is_null(value):
        return round(float(value), 6)
    return None if _is_null(value) else value


def test_ground_truth_is_deterministic(warehouse: duckdb.DuckDBPyConnection) -> None:
    """No LIMIT that could cut through ties, and the same rows on one thread as on many."""
    single = _build_warehouse(threads=1)
    try:
        for name, index in TRUTHS:
            sql = QUESTIONS[name].truths[index]
            assert not list(sqlglot.parse_one(sql, read="duckdb").find_all(exp.Limit)), name
            ordered = _settings().compare.merged(QUESTIONS[name].question.compare).order == "strict"
            results = []
            for con in (warehouse, single):
                rows = [tuple(_stable(v) for v in row) for row in _rows(con, sql)]
                results.append(rows if ordered else sorted(rows, key=repr))
            assert results[0] == results[1], name
    finally:
        single.close()


# --- the recorded agent ----------------------------------------------------------------------


def test_recorded_agent_file() -> None:
    agents = _yaml(ROOT / "agents" / "recorded.yml")["agents"]
    assert agents == [
        {
            "name": "recorded",
            "kind": "replay",
            "path": "recorded_answers.jsonl",
            "dialect": "duckdb",
        }
    ]
    assert _settings().default_agent == "recorded"


def test_intents_cover_every_question_and_verdict() -> None:
    assert set(INTENDED) == set(QUESTIONS)
    assert {intent.verdict for intent in INTENDED.values()} == set(Verdict)
    assert {intent.how for intent in INTENDED.values()} == set(How)
    assert {n.split("#")[0] for n in ANSWERS} <= set(QUESTIONS), "recorded answers name questions"
    conversations = {n for n, item in QUESTIONS.items() if item.question.turns is not None}
    assert {name for name, _ in TURNS} == conversations
    for name in conversations:
        turns = QUESTIONS[name].question.turns or []
        assert sorted(t for n, t in TURNS if n == name) == list(range(1, len(turns) + 1))
    passed = sum(intent.verdict is Verdict.PASS for intent in INTENDED.values())
    assert passed > len(INTENDED) / 2, "most recorded answers are right"


@pytest.mark.parametrize("name", sorted(INTENDED))
def test_recorded_answer_does_what_it_is_meant_to(
    warehouse: duckdb.DuckDBPyConnection, name: str
) -> None:
    intent, item = INTENDED[name], QUESTIONS[name]
    if intent.how is How.NO_ANSWER:
        assert name not in ANSWERS
        return
    if intent.how is How.CONVERSATION:
        assert item.question.turns is not None and name not in ANSWERS
        turns = [TURNS[(name, n)] for n in range(1, len(item.question.turns) + 1)]
        assert (intent.verdict is Verdict.PASS) == all(t.verdict is Verdict.PASS for t in turns)
        return
    assert (intent.how in (How.DECLINES, How.ANSWERS_A_DECLINE)) == (
        item.question.expect == "decline"
    )
    record = dict(ANSWERS[name])
    del record["name"], record["space"]
    answer = Answer.model_validate(record)
    assert (intent.how is How.SKIPPED) == bool(item.question.skip)
    assert (intent.how is How.NO_TRUTH) == (not item.truths and item.question.expect is None)
    if intent.how is How.AGENT_ERROR:
        assert answer.error and answer.sql is None
        return
    assert answer.error is None
    if intent.how in (How.WORDS, How.DECLINES):
        assert answer.sql is None and answer.answer
        return
    assert answer.sql is not None
    if intent.how is How.ANSWERS_A_DECLINE:
        return
    if intent.how is How.DOES_NOT_RUN:
        with pytest.raises(duckdb.Error):
            _rows(warehouse, answer.sql)
        return
    assert _rows(warehouse, answer.sql), "the recorded SQL runs and returns rows"


NOT_COMPARE_OPTIONS = {"variants", "variants_seed", "constant_answers", *RUN_WIDE_COMPARE_KEYS}
"""``compare:`` keys that are not ``compare_results`` options: data variants, the constant-answer
rule (the run's grading applies them) and the run-wide ones."""


@pytest.mark.parametrize(
    "name", sorted(n for n, i in INTENDED.items() if i.how in (How.MATCHES, How.DIFFERS))
)
def test_recorded_answer_gets_its_verdict(warehouse: duckdb.DuckDBPyConnection, name: str) -> None:
    intent, item = INTENDED[name], QUESTIONS[name]
    options = (
        _settings().compare.merged(item.question.compare).model_dump(exclude=NOT_COMPARE_OPTIONS)
    )
    actual = _run(warehouse, ANSWERS[name]["sql"]).to_pandas()
    verdicts = [
        compare_results(_run(warehouse, truth).to_pandas(), actual, **options).verdict
        for truth in item.truths
    ]
    verdict = Verdict.PASS if Verdict.PASS in verdicts else verdicts[0]
    assert verdict == intent.verdict, f"{name}: {intent.why}"
    if name in NEEDS_ALSO_ACCEPT:
        assert verdicts[0] != Verdict.PASS and Verdict.PASS in verdicts[1:]
    if name in NEAR_MISSES:
        looser = {**options, "rel_tol": 1e-6}
        expected = _run(warehouse, item.truths[0]).to_pandas()
        assert compare_results(expected, actual, **looser).verdict == Verdict.PASS


@pytest.mark.parametrize(("name", "turn"), sorted(TURNS))
def test_each_conversation_turn_gets_its_verdict(
    warehouse: duckdb.DuckDBPyConnection, name: str, turn: int
) -> None:
    intent = TURNS[(name, turn)]
    asked = (QUESTIONS[name].question.turns or [])[turn - 1]
    record = ANSWERS[f"{name}#{turn}"]
    if intent.how is How.DECLINES:
        assert asked.expect == "decline" and "sql" not in record and record["answer"]
        return
    assert asked.sql is not None
    options = _settings().compare.model_dump(exclude=NOT_COMPARE_OPTIONS)
    expected = _run(warehouse, asked.sql).to_pandas()
    actual = _run(warehouse, record["sql"]).to_pandas()
    assert compare_results(expected, actual, **options).verdict == intent.verdict, intent.why


# --- the README's first command ------------------------------------------------------------


def _readme_first_command_and_ending() -> tuple[list[str], list[str]]:
    """The arguments of the README's first ``sqlbench`` command (the last step of its first
    shell block) and the lines the README says that run ends with (the block that follows,
    starting ``Accuracy:``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    first_shell = next(i for i, (lang, _) in enumerate(blocks) if lang == "sh")
    command = blocks[first_shell][1].strip().split("&&")[-1].split()
    assert command[0].endswith("sqlbench"), command
    ending = next(
        body for _, body in blocks[first_shell + 1 :] if body.startswith("Accuracy:")
    ).splitlines()
    return command[1:], ending


@pytest.mark.slow
def test_readme_first_command_ends_as_the_readme_prints(tmp_path: Path) -> None:
    """README's "Start here": the first command runs the demo and ends with the accuracy and
    summary it prints (run on a copy, so the run store is not written into the repository)."""
    args, ending = _readme_first_command_and_ending()
    assert args == ["run", "--agent", "recorded"] and ending[0].startswith("Accuracy: ")
    demo = tmp_path / "demo"
    demo.mkdir()
    for part in ("sqlbench.yml", "eval_questions", "certified_queries", "agents", "models", "data"):
        copy = shutil.copytree if (ROOT / part).is_dir() else shutil.copy
        copy(ROOT / part, demo / part)
    done = subprocess.run(
        [sys.executable, "-m", "sqlbench", *args],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    start = printed.index(ending[0]) if ending[0] in printed else -1
    assert printed[start : start + len(ending)] == ending, done.stdout
