"""From ground truth and the agent's answer to a verdict and reason (docs/verdicts.md)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlbench.agents.base import Answer
from sqlbench.engines.base import ResultSet
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.grading import TruthOutcome, agent_problem, grade, grade_skipped, truth_problem
from sqlbench.project.files import CompareOptions, Question
from sqlbench.runs.previews import difference_of
from sqlbench.verdicts import Verdict

OPTIONS = CompareOptions()


def question(truth_sql: str | None = "SELECT 1", **fields: object) -> Question:
    q = Question.build(
        {"name": "q", "question": "How many?", **fields},
        space="sales",
        path="eval_questions/q.yml",
        line=3,
    )
    return q.with_truth_sql(truth_sql)


def result(**columns: list[object]) -> ResultSet:
    return ResultSet(pa.table(columns))


def truth(sql: str = "SELECT 1", **columns: list[object]) -> TruthOutcome:
    return TruthOutcome(sql=sql, result=result(**(columns or {"n": [3]})))


def decide(
    q: Question, truths: list[TruthOutcome], answer: Answer, outcome: ResultSet | QueryError | None
) -> tuple[Verdict, str]:
    graded = grade(q, truths, answer, outcome, options=OPTIONS, dialect="duckdb")
    return graded.verdict, graded.reason


def test_pass_whatever_the_column_names() -> None:
    verdict, reason = decide(
        question(sql="SELECT 1"), [truth(n=[3])], Answer(sql="SELECT 3"), result(how_many=[3])
    )
    assert verdict is Verdict.PASS and reason.startswith("results match")


def test_fail_says_what_differs() -> None:
    verdict, reason = decide(
        question(sql="SELECT 1"), [truth(n=[3, 4])], Answer(sql="x"), result(n=[3])
    )
    assert verdict is Verdict.FAIL and "row" in reason


def test_also_accept() -> None:
    q = question(sql="SELECT 1", also_accept=["SELECT 2"])
    truths = [truth(n=[3]), truth("SELECT 2", n=[4])]
    graded = grade(q, truths, Answer(sql="x"), result(n=[4]), options=OPTIONS, dialect="duckdb")
    assert graded.verdict is Verdict.PASS and graded.matched_truth == 1
    assert graded.reason.startswith("matches also_accept #1: results match")
    verdict, reason = decide(q, truths, Answer(sql="x"), result(n=[5]))
    assert verdict is Verdict.FAIL and reason.endswith("(no also_accept matched either)")


def test_ambiguous_comparison_stays_review() -> None:
    expected = TruthOutcome("SELECT min(x) AS lo, max(x) AS hi", result(lo=[1, 2], hi=[5, 6]))
    verdict, reason = decide(
        question(sql="x"), [expected], Answer(sql="x"), result(lo=[5, 6], hi=[1, 2])
    )
    assert verdict is Verdict.REVIEW and reason


def test_an_ambiguous_also_accept_gives_review_not_fail() -> None:
    # The main ground truth fails outright; the also_accept only fails through a swap of two
    # same-named columns (review). No ground truth matched, but one could not decide: review.
    main = TruthOutcome(
        "SELECT 1 AS lo, 2 AS hi, 'x' AS label", result(lo=[1], hi=[2], label=["x"])
    )
    alt = TruthOutcome("SELECT 1 AS lo, 2 AS hi", result(lo=[1], hi=[2]))
    q = question(sql=main.sql, also_accept=[alt.sql])
    verdict, reason = decide(q, [main, alt], Answer(sql="x"), result(lo=[2], hi=[1]))
    assert verdict is Verdict.REVIEW
    assert reason.startswith("also_accept #1: ")


def test_question_compare_columns_exact_reaches_the_comparison() -> None:
    q = question(sql="SELECT n", compare={"columns": "exact"})
    wide = result(id=[7], n=[3])
    loose = grade(q, [truth(n=[3])], Answer(sql="x"), wide, options=OPTIONS, dialect="duckdb")
    assert loose.verdict is Verdict.PASS  # the options passed in are the merged ones
    merged = OPTIONS.merged(q.compare)
    assert merged.columns == "exact" and OPTIONS.columns == "superset"
    graded = grade(q, [truth(n=[3])], Answer(sql="x"), wide, options=merged, dialect="duckdb")
    assert graded.verdict is Verdict.FAIL
    assert graded.comparison is not None and graded.comparison.details.columns == "exact"
    assert graded.reason == (
        "the agent returned 2 columns, the ground truth 1 (columns: exact): extra agent column "
        "'id'; near miss: would pass with columns: superset"
    )
    # An also_accept with the agent's width can still pass under exact.
    q2 = question(sql="SELECT n", also_accept=["SELECT 7, n"], compare={"columns": "exact"})
    truths = [truth(n=[3]), truth("SELECT 7, n", a=[7], b=[3])]
    again = grade(q2, truths, Answer(sql="x"), wide, options=merged, dialect="duckdb")
    assert again.verdict is Verdict.PASS and again.matched_truth == 1


def test_skipped() -> None:
    assert grade_skipped(question(skip="FIN-142")).reason == "skipped: FIN-142"
    verdict, _ = decide(question(sql="x", skip="later"), [truth()], Answer(sql="x"), None)
    assert verdict is Verdict.SKIPPED


def test_broken_ground_truth_is_an_error() -> None:
    broken = TruthOutcome(
        "SELECT * FROM nowhere",
        error=QueryError(QueryErrorKind.RUNTIME, "Table nowhere does not exist"),
    )
    assert decide(question(sql="x"), [broken], Answer(sql="x"), None) == (
        Verdict.ERROR,
        "the ground truth failed: Table nowhere does not exist",
    )
    big = TruthOutcome("SELECT 2", error=QueryError(QueryErrorKind.TOO_MANY_ROWS, "over 10"))
    grade_ = truth_problem(question(sql="x", also_accept=["SELECT 2"]), [truth(), big])
    assert grade_ is not None and grade_.verdict is Verdict.ERROR
    assert grade_.reason == "also_accept #1 returned more rows than max_rows: over 10"


def test_unresolved_certified_query_is_an_error() -> None:
    q = question(truth_sql=None, certifiedQuery="gone")
    assert decide(q, [], Answer(sql="x"), None) == (
        Verdict.ERROR,
        "certified query 'gone' was not found",
    )


def test_agent_failure_is_an_error() -> None:
    assert decide(question(sql="x"), [truth()], Answer(error="exit 1: boom"), None) == (
        Verdict.ERROR,
        "agent error: exit 1: boom",
    )
    assert agent_problem(Answer(sql="SELECT 1")) is None


def test_no_ground_truth_is_review() -> None:
    q = question(truth_sql=None)
    verdict, reason = decide(q, [], Answer(sql="SELECT 1"), result(a=[1]))
    assert verdict is Verdict.REVIEW and reason.startswith("no ground truth to compare with")
    assert decide(q, [], Answer(), None)[1].endswith("the agent gave no SQL either")
    error = QueryError(QueryErrorKind.SYNTAX, "bad SQL")
    assert decide(q, [], Answer(sql="SELEC"), error)[1].endswith(
        "the agent's SQL did not run: bad SQL"
    )


def test_no_sql_is_review() -> None:
    assert decide(question(sql="x"), [truth()], Answer(answer="About   3\n customers."), None) == (
        Verdict.REVIEW,
        "the answer is not SQL (the agent answered in words): About 3 customers.",
    )
    assert decide(question(sql="x"), [truth()], Answer(), None) == (
        Verdict.REVIEW,
        "the agent gave no SQL and no answer (declined)",
    )


@pytest.mark.parametrize(
    ("kind", "message", "reason"),
    [
        (
            QueryErrorKind.SYNTAX,
            "Parser Error: near SELEC",
            "the agent's SQL has a syntax error: Parser Error: near SELEC",
        ),
        (
            QueryErrorKind.RUNTIME,
            "Binder Error: column x",
            "the agent's SQL failed: Binder Error: column x",
        ),
        (QueryErrorKind.TIMEOUT, "ran past 30 s", "the agent's SQL timed out: ran past 30 s"),
        (
            QueryErrorKind.TOO_MANY_ROWS,
            "more than 10 rows",
            "the agent's SQL returned more rows than max_rows: more than 10 rows",
        ),
        (
            QueryErrorKind.NOT_READ_ONLY,
            "not a read-only query: DROP is not a query",
            "not a read-only query: DROP is not a query",
        ),
    ],
)
def test_agent_sql_that_does_not_run_fails(kind: QueryErrorKind, message: str, reason: str) -> None:
    assert decide(question(sql="x"), [truth()], Answer(sql="..."), QueryError(kind, message)) == (
        Verdict.FAIL,
        reason,
    )


def test_a_lost_connection_is_not_the_agents_fault() -> None:
    error = QueryError(QueryErrorKind.CONNECTION, "server closed the connection")
    verdict, reason = decide(question(sql="x"), [truth()], Answer(sql="SELECT 1"), error)
    assert verdict is Verdict.ERROR and "connection was lost" in reason


def test_reasons_are_one_line_and_bounded() -> None:
    _, reason = decide(question(sql="x"), [truth()], Answer(error="line\n" * 500), None)
    assert "\n" not in reason and len(reason) <= 400


def test_a_cut_reason_keeps_the_differing_row_and_the_whole_finding() -> None:
    # Long column names make the column detail long; the differing row leads, so the
    # one-line cut at 400 characters never loses it, and the comparison keeps it all.
    names = [f"a_rather_long_column_name_number_{k}_of_the_report" for k in range(6)]
    expected = {n: [k, k + 1] for k, n in enumerate(names)}
    actual = {n: [k + 100, k + 1] for k, n in enumerate(names)}
    graded = grade(
        question(sql="x"),
        [truth(**expected)],
        Answer(sql="SELECT 1"),
        result(**actual),
        options=OPTIONS,
        dialect="duckdb",
    )
    assert graded.verdict is Verdict.FAIL and len(graded.reason) <= 400
    assert graded.reason.startswith("1 of 2 rows differ, e.g. expected (0, 1, 2, 3, 4, 5), got")
    assert graded.comparison is not None and len(graded.comparison.reason) > 400
    difference = difference_of(graded.comparison)
    assert difference is not None and difference.reason == graded.comparison.reason
    assert difference.expected_example == "(0, 1, 2, 3, 4, 5)"
    assert difference.expected_missing == 1 and len(difference.missing_columns) == 6


def test_large_results_are_compared_one_pair_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Comparing takes about 3.3 times its inputs: large pairs never overlap across threads,
    small ones do."""
    import threading
    import time

    import sqlbench.grading as grading

    running: list[int] = [0]
    most: dict[str, int] = {}
    lock = threading.Lock()
    original = grading.compare_results

    def counting(expected: pa.Table, actual: pa.Table, **options: object) -> object:
        size = "large" if expected.nbytes >= 1000 else "small"
        with lock:
            running[0] += 1
            most[size] = max(most.get(size, 0), running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return original(expected, actual, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(grading, "compare_results", counting)
    monkeypatch.setattr(grading, "_LARGE_COMPARISON_BYTES", 2000)
    for rows in (1000, 10):  # 8,000 bytes per side (large), then 80 (small)
        values = list(range(rows))
        graders = [
            threading.Thread(
                target=decide,
                args=(question(), [truth(n=values)], Answer(sql="SELECT"), result(n=values)),
            )
            for _ in range(3)
        ]
        for grader in graders:
            grader.start()
        for grader in graders:
            grader.join()
    assert most == {"large": 1, "small": 3}
