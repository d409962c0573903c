"""Pairing two runs: regressions, fixes, flaky, added/removed, and what is (not) counted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from fractions import Fraction

import pytest

from sqlbench.records.run import RunInfo, RunStatus, TrialResult
from sqlbench.report import rundiff_json, rundiff_markdown, rundiff_text
from sqlbench.rundiff.diff import (
    ChangeKind,
    QuestionOutcome,
    RunSide,
    diff_runs,
    side_accuracy,
    side_from_run,
)
from sqlbench.rundiff.stats import Conclusion, wilson_interval
from sqlbench.verdicts import Verdict

P, F, R, E, S = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR, Verdict.SKIPPED


def outcome(name: str, *verdicts: Verdict, space: str = "sales", why: str = "") -> QuestionOutcome:
    reasons = tuple(f"{why or name}: {v.value} #{i}" for i, v in enumerate(verdicts))
    return QuestionOutcome(space, name, tuple(verdicts), reasons)


def side(label: str, *outcomes: QuestionOutcome) -> RunSide:
    return RunSide(label, tuple(outcomes), branch=label, commit="0123456789abcdef", agent="auto")


def filler(count: int, verdict: Verdict = P) -> list[QuestionOutcome]:
    return [outcome(f"same_{i:02d}", verdict) for i in range(count)]


def test_regressions_fixes_and_what_is_not_counted() -> None:
    base = side(
        "main",
        outcome("to_fail", P),
        outcome("to_review", P),  # an agent that starts declining has regressed
        outcome("to_error", P),
        outcome("fixed", F),
        outcome("fail_to_error", F),
        outcome("removed", P),
        outcome("now_skipped", P),
        outcome("steady", P),
    )
    head = side(
        "dev",
        outcome("to_fail", F),
        outcome("to_review", R),
        outcome("to_error", E),
        outcome("fixed", P),
        outcome("fail_to_error", E),
        outcome("added", F),
        outcome("now_skipped", S),
        outcome("steady", P),
    )
    diff = diff_runs(base, head)
    kinds = {c.name: c.kind for c in diff.changes}
    assert kinds == {
        "to_fail": ChangeKind.REGRESSION,
        "to_review": ChangeKind.REGRESSION,
        "to_error": ChangeKind.REGRESSION,
        "fixed": ChangeKind.FIX,
        "fail_to_error": ChangeKind.CHANGED,
        "added": ChangeKind.ADDED,
        "removed": ChangeKind.REMOVED,
        "now_skipped": ChangeKind.SKIPPED,
    }
    assert [c.name for c in diff.regressions] == ["to_error", "to_fail", "to_review"]
    assert diff.paired == 6  # added, removed and the one-side skip are not paired
    assert (diff.test.questions, diff.test.changed) == (6, 4)
    assert diff.test.p_value == pytest.approx(2 * (1 + 4) / 16)  # 3 vs 1 discordant: 0.625
    assert diff.conclusion is Conclusion.INCONCLUSIVE
    regression = diff.regressions[1]
    assert regression.base is not None and regression.head is not None
    assert regression.base.reason == "to_fail: pass #0"
    assert regression.head.reason == "to_fail: fail #0"


def test_accuracy_uses_each_sides_own_questions_with_wilson() -> None:
    head = side("dev", *filler(7), *[outcome(f"bad{i}", F) for i in range(3)], outcome("skip", S))
    accuracy = side_accuracy(head)
    assert (accuracy.passed, accuracy.total, accuracy.method) == (7, 10, "Wilson")
    assert accuracy.value == 0.7
    assert accuracy.interval == wilson_interval(7, 10)


def test_significant_regression_and_too_few() -> None:
    base = side("main", *[outcome(f"q{i}", P) for i in range(6)], *filler(20))
    head = side("dev", *[outcome(f"q{i}", F) for i in range(6)], *filler(20))
    diff = diff_runs(base, head)
    assert diff.conclusion is Conclusion.REGRESSED
    assert diff.test.p_value == pytest.approx(2 / 64)
    assert diff.difference == pytest.approx(20 / 26 - 1)
    small = diff_runs(side("main", outcome("a", P)), side("dev", outcome("a", F)))
    assert small.conclusion is Conclusion.TOO_FEW
    assert small.test.p_value is None
    assert [c.name for c in small.regressions] == ["a"]  # still listed, just not "significant"


def test_flaky_is_labelled_not_a_regression() -> None:
    base = side("main", outcome("wobbly", P, P, P), outcome("solid", P, P, P), *filler(8))
    head = side("dev", outcome("wobbly", P, F, P), outcome("solid", F, F, F), *filler(8))
    diff = diff_runs(base, head)
    assert [c.name for c in diff.flaky] == ["wobbly"]
    assert [c.name for c in diff.regressions] == ["solid"]
    assert diff.test.method == "exact sign-flip"
    assert diff.head_accuracy.method == "bootstrap over questions"
    assert diff.head_accuracy.value == pytest.approx((Fraction(2, 3) + 0 + 8) / 10)
    assert diff.difference_interval is not None
    text = rundiff_text.render(diff)
    assert "flaky 2/3" in text and "pass 3/3 → fail 0/3" in text


def test_a_repeated_side_uses_rates_and_matches_mcnemar_when_rates_are_whole() -> None:
    base = side("main", *[outcome(f"q{i}", P, P) for i in range(7)], *filler(5))
    head = side("dev", *[outcome(f"q{i}", F, F) for i in range(7)], *filler(5))
    diff = diff_runs(base, head)
    assert diff.test.method == "exact sign-flip"
    assert diff.test.p_value == pytest.approx(2 / 2**7)
    assert diff.conclusion is Conclusion.REGRESSED


def test_empty_base_counts_every_head_question_as_added() -> None:
    diff = diff_runs(RunSide("main (no sqlbench project)", ()), side("dev", *filler(3)))
    assert [c.kind for c in diff.changes] == [ChangeKind.ADDED] * 3
    assert diff.regressions == [] and diff.conclusion is Conclusion.TOO_FEW
    assert "n/a (no questions)" in rundiff_text.render(diff)


def test_a_question_listed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="sales/a twice"):
        diff_runs(side("main", outcome("a", P), outcome("a", F)), side("dev"))


def test_tie_between_non_pass_verdicts_goes_to_the_worse() -> None:
    assert outcome("t", F, E, P).verdict is E
    assert outcome("t", R, R, E).verdict is R
    assert outcome("t", P, P).verdict is P


def _trial(name: str, verdict: Verdict, trial: int, position: int) -> TrialResult:
    return TrialResult(
        space="sales",
        name=name,
        trial=trial,
        position=position,
        verdict=verdict,
        reason=f"{name} {verdict.value} {trial}",
        tags=["must-pass"],
    )


def test_side_from_run_groups_trials_in_run_order() -> None:
    now = datetime.now(UTC)
    info = RunInfo(
        id="0" * 32,
        name="r1",
        status=RunStatus.COMPLETED,
        created_at=now,
        updated_at=now,
        created_by="me",
        branch="main",
        commit="abc",
        environment="prod",
        question_set_hash="q",
        question_count=2,
        agent_name="auto",
        agent_kind="auto",
        agent_settings_hash="a",
        sqlbench_version="0",
        compare_hash="c",
        repeat=2,
    )
    trials = [
        _trial("b", F, 1, 0),
        _trial("a", P, 0, 1),
        _trial("b", P, 0, 0),
        _trial("a", P, 1, 1),
    ]
    result = side_from_run(info, trials, reused=True)
    assert [o.name for o in result.outcomes] == ["b", "a"]
    assert result.outcomes[0].verdicts == (P, F)
    assert result.outcomes[0].tags == ("must-pass",)
    assert (result.label, result.branch, result.agent, result.reused) == (
        "r1",
        "main",
        "auto",
        True,
    )


def test_renderers_show_both_reasons_and_the_conclusion() -> None:
    base = side("main", outcome("revenue", P, why="result sets match"), *filler(9))
    head = side(
        "dev", outcome("revenue", F, why="3 of 12 rows differ"), *filler(9), outcome("new_q", P)
    )
    diff = diff_runs(base, head)
    text = rundiff_text.render(diff)
    assert "sales/revenue  pass → fail" in text
    assert "base: result sets match: pass #0" in text
    assert "head: 3 of 12 rows differ: fail #0" in text
    assert "Added: on head only (not counted) (1):" in text
    assert "100% (10/10)" in text and "91% (10/11)" in text
    assert (
        "Conclusion: inconclusive: the difference is not significant at alpha 0.05 (p = 1)" in text
    )
    markdown = rundiff_markdown.render(diff)
    assert "| `sales/revenue` | pass → fail | result sets match: pass #0 | 3 of 12 rows" in markdown
    document = json.loads(rundiff_json.render(diff))
    assert document["schema_version"] == 1
    assert document["conclusion"] == "inconclusive"
    assert document["counts"] == {
        "regressions": 1,
        "fixes": 0,
        "by_person": 0,
        "flaky": 0,
        "answer_changes": 0,
    }
    assert document["answer_changes"] == []
    assert document["changes"][0]["base"]["reason"] == "result sets match: pass #0"
    assert document["changes"][1] == {
        "kind": "added",
        "space": "sales",
        "name": "new_q",
        "by_person": False,
        "base": None,
        "head": {
            "verdict": "pass",
            "reason": "new_q: pass #0",
            "passes": 1,
            "trials": 1,
            "rate": 1.0,
            "flaky": False,
            "human": None,
            "automatic": None,
        },
    }


def _decided(
    o: QuestionOutcome, verdict: Verdict, carried_from: str | None = None
) -> QuestionOutcome:
    from dataclasses import replace

    from sqlbench.records.run import HumanReview

    review = HumanReview(
        verdict=verdict,
        decided_by="alice",
        decided_at=datetime.now(UTC),
        truth_hash="t",
        sql_hash="s",
        carried_from=carried_from,
    )
    return replace(o, human=review)


def test_a_persons_decision_counts_and_a_flip_it_alone_makes_is_said() -> None:
    # Head's automatic verdict is fail as on base; a person decided pass on head only.
    base = side("main", outcome("rounded", F), outcome("carried", F), *filler(8))
    head = side(
        "dev",
        _decided(outcome("rounded", F), P),
        _decided(outcome("carried", F), P, carried_from="r0"),
        *filler(8),
    )
    base = RunSide(
        base.label, (base.outcomes[0], _decided(base.outcomes[1], P), *base.outcomes[2:])
    )
    diff = diff_runs(base, head)
    assert diff.head_accuracy.label() == "100% (10/10, 2 decided by a person)"
    assert diff.base_accuracy.label() == "90% (9/10, 1 decided by a person)"
    [fix] = diff.fixes
    assert fix.name == "rounded" and fix.by_person
    text = rundiff_text.render(diff)
    assert "Fixes: pass on head, did not on base (1, 1 by a person's decision only):" in text
    assert "fail → pass (person; automatic fail)" in text
    assert "decided pass by alice; automatic: rounded: fail #0" in text
    assert "Counted: a person's decision counts" in text
    markdown = rundiff_markdown.render(diff)
    assert "(1, 1 by a person's decision only)" in markdown
    assert "90% (9/10, 1 decided by a person)" in markdown
    document = json.loads(rundiff_json.render(diff))
    assert document["counts"]["by_person"] == 1
    assert document["head"]["accuracy"]["human"] == 2

    machine = diff_runs(base, head, automatic_only=True)
    assert machine.head_accuracy.label() == "80% (8/10)"
    assert machine.base_accuracy.label() == "80% (8/10)"
    assert not machine.fixes and machine.decisions_left_out == 3
    assert "automatic verdicts only (--automatic-only): 3 decisions by a person left out" in (
        rundiff_text.render(machine)
    )


def test_a_decision_on_a_question_that_also_flipped_automatically_is_a_plain_fix() -> None:
    base = side("main", outcome("q", F), *filler(5))
    head = side("dev", _decided(outcome("q", P), P), *filler(5))
    [fix] = diff_runs(base, head).fixes
    assert not fix.by_person


def test_a_dirty_working_tree_keeps_its_mark_in_every_label() -> None:
    from sqlbench.report.rundiff_format import side_text, source_text

    base = RunSide("b", (), branch="main", commit="facd2bc0000", agent="auto")
    head = RunSide("h", (), branch="main", commit="facd2bc0000", agent="auto", dirty=True)
    assert source_text(base) == "main@facd2bc"
    assert source_text(head) == "main@facd2bc+dirty"
    assert side_text(head) == "h (main@facd2bc+dirty, agent auto)"
    diff = diff_runs(base, head)
    assert "main@facd2bc+dirty" in rundiff_text.render(diff)
    assert json.loads(rundiff_json.render(diff))["head"]["dirty"] is True


def test_answer_changes_write_decimals_as_numbers_beside_floats() -> None:
    from sqlbench.records.run import Preview
    from sqlbench.rundiff.answers import AnswerChange

    def preview(kind: str, value: object) -> Preview:
        return Preview(
            columns=["avg"],
            types=[kind],
            rows=[[value]],
            row_numbers=[0],
            differs=[False],
            total_rows=1,
        )

    change = AnswerChange("s", "q", preview("decimal128(10, 2)", "69.30"), preview("double", 69.5))
    assert change.summary() == "1 row → 1 row; base only: [69.30]; head only: [69.5]"
    text = AnswerChange("s", "t", preview("string", "69.30"), preview("double", 69.5))
    assert 'base only: ["69.30"]' in text.summary()
