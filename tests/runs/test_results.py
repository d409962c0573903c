"""Per-question results and run accuracy: repeats, pass@k, pass^k, flaky, bootstrap interval."""

from __future__ import annotations

from math import comb
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlbench.records.rates import bootstrap_mean_interval, is_flaky, pass_at_k, pass_hat_k
from sqlbench.records.run import RunStatus
from sqlbench.runs.scores import gather
from sqlbench.verdicts import Verdict

P, F, R, E, S = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.ERROR, Verdict.SKIPPED


def run_of(make_info: Any, make_trial: Any, repeat: int, **questions: list[Verdict]) -> Any:
    trials = [
        make_trial(name, v, trial=i, position=pos, reason=f"{name} {v.value} #{i}")
        for pos, (name, verdicts) in enumerate(questions.items())
        for i, v in enumerate(verdicts)
    ]
    return gather(make_info(repeat=repeat), RunStatus.COMPLETED, trials)


def test_one_trial_per_question(make_info: Any, make_trial: Any) -> None:
    run = run_of(make_info, make_trial, 1, a=[P], b=[F], c=[R], d=[E], e=[S])
    assert [q.verdict for q in run.questions] == [P, F, R, E, S]
    assert run.accuracy.label() == "25% (1/4)"
    assert run.accuracy.interval is None
    assert run.counts() == {P: 1, F: 1, R: 1, E: 1, S: 1}
    skipped = run.questions[-1]
    assert skipped.pass_rate is None and not skipped.flaky


def test_repeated_trials(make_info: Any, make_trial: Any) -> None:
    run = run_of(
        make_info, make_trial, 3, steady=[P, P, P], flaky=[P, F, E], never=[F, E, E], tie=[R, F, P]
    )
    steady, flaky, never, tie = run.questions
    assert (steady.verdict, steady.pass_rate, steady.pass_at_k, steady.pass_hat_k) == (
        P,
        1.0,
        1.0,
        1.0,
    )
    assert flaky.flaky and flaky.pass_rate == pytest.approx(1 / 3)
    assert flaky.verdict is E  # fail and error tie at one each: the worse wins
    assert flaky.reason == "flaky error #2"
    assert (never.verdict, never.pass_rate, never.pass_at_k) == (E, 0.0, 0.0)
    assert tie.verdict is F  # review and fail tie: fail is worse
    assert run.accuracy.value == pytest.approx((1 + 1 / 3 + 0 + 1 / 3) / 4)
    assert (run.accuracy.passed, run.accuracy.total, run.accuracy.questions) == (5, 12, 4)
    assert run.accuracy.interval is not None
    low, high = run.accuracy.interval
    assert 0 <= low <= run.accuracy.value <= high <= 1


def test_question_lookup(make_info: Any, make_trial: Any) -> None:
    run = gather(
        make_info(),
        RunStatus.COMPLETED,
        [make_trial("x", P), make_trial("x", F, space="other"), make_trial("y", P)],
    )
    assert run.question("auto/x").verdict is P
    assert run.question("y").name == "y"
    assert run.question("x") is None  # in two spaces: ambiguous


def test_pass_at_k_matches_its_definition() -> None:
    # 1 - C(n-c, k)/C(n, k), computed independently.
    for n, c, k in [(10, 3, 1), (10, 3, 5), (5, 0, 2), (5, 5, 5), (20, 1, 10)]:
        expected = 1 - comb(n - c, k) / comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(expected)
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)  # pass@1 is the pass rate
    assert pass_hat_k(10, 3, 1) == pytest.approx(0.3)


@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_at_k_bounds(args: tuple[int, int, int]) -> None:
    n, c, k = args
    at_least_one, all_pass = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    rate = c / n
    assert 0 <= all_pass <= rate + 1e-12
    assert rate <= at_least_one + 1e-12 and at_least_one <= 1
    if c < n:
        assert pass_at_k(n, c + 1, k) >= at_least_one


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_mean_interval([1.0], confidence=1.5)
    assert bootstrap_mean_interval([]) is None


def test_bootstrap_is_reproducible_and_resamples_questions() -> None:
    rates = [1.0] * 15 + [0.0] * 5 + [0.5] * 10
    first = bootstrap_mean_interval(rates)
    assert first == bootstrap_mean_interval(rates)
    assert first is not None and first.low < 0.667 < first.high
    # More questions with the same mix: a narrower interval.
    wide = first.high - first.low
    narrow = bootstrap_mean_interval(rates * 10)
    assert narrow is not None and narrow.high - narrow.low < wide / 2


def test_flaky() -> None:
    assert [is_flaky(r) for r in (None, 0.0, 0.5, 1.0)] == [False, False, True, False]


def test_run_and_compare_print_the_same_accuracy(make_info: Any, make_trial: Any) -> None:
    """One Accuracy class and one formatter: 199/200 reads 99.5% in `run`, `show`, `runs`,
    `compare` and `check`, never 100% in one of them (issue 10)."""
    from sqlbench.records.run import RunSummary
    from sqlbench.report.run_format import accuracy_line
    from sqlbench.report.rundiff_format import accuracy_text
    from sqlbench.rundiff.diff import side_accuracy, side_from_run

    info = make_info(repeat=1)
    trials = [make_trial(f"q{i}", P if i else F, position=i) for i in range(200)]
    run = gather(info, RunStatus.COMPLETED, trials)
    compared = side_accuracy(side_from_run(info, trials))
    listed = RunSummary(info=info, status=RunStatus.COMPLETED, passed=199, total=200, graded=200)
    assert accuracy_line(run.accuracy) == "Accuracy: 99.5% (199/200)"
    assert accuracy_text(compared) == "99.5% (199/200)"
    assert listed.accuracy.label() == "99.5% (199/200)"
    assert compared.value == run.accuracy.value == 0.995


def test_show_and_compare_give_a_question_the_same_verdict_across_trials(
    make_info: Any, make_trial: Any
) -> None:
    """One rule (``verdicts.across_trials``) for a question's verdict over its trials: a run's
    results (``show``) and a run comparison's side (``compare``) never disagree, for every
    combination of up to three trials' verdicts; before, a question with passed and skipped
    trials read skipped in one and pass in the other."""
    from itertools import product

    from sqlbench.rundiff.diff import side_from_run

    differ = []
    for count in (1, 2, 3):
        info = make_info(repeat=count)
        for verdicts in product(list(Verdict), repeat=count):
            trials = [make_trial("q", v, trial=i, reason=f"r{i}") for i, v in enumerate(verdicts)]
            shown = gather(info, RunStatus.COMPLETED, trials).questions[0]
            compared = side_from_run(info, trials).outcomes[0]
            if (shown.verdict, shown.reason) != (compared.verdict, compared.reason):
                differ.append((verdicts, shown.verdict, compared.verdict))
    assert differ == []
