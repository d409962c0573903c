"""The pull-request check policy and its Markdown and JUnit reports."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import CheckSettings
from sqlbench.report import rundiff_junit, rundiff_markdown
from sqlbench.rundiff.diff import QuestionOutcome, RunSide
from sqlbench.rundiff.policy import CheckPolicy, run_check
from sqlbench.verdicts import Verdict

P, F, R, S = Verdict.PASS, Verdict.FAIL, Verdict.REVIEW, Verdict.SKIPPED


def outcome(name: str, *verdicts: Verdict, tags: tuple[str, ...] = ()) -> QuestionOutcome:
    reasons = tuple(f"{name} {v.value}" for v in verdicts)
    return QuestionOutcome("sales", name, tuple(verdicts), reasons, tags)


def side(label: str, *outcomes: QuestionOutcome) -> RunSide:
    return RunSide(label, tuple(outcomes))


def steady(count: int) -> list[QuestionOutcome]:
    return [outcome(f"steady_{i:02d}", P) for i in range(count)]


def test_default_policy_is_regression_and_must_pass() -> None:
    policy = CheckPolicy.from_settings(CheckSettings())
    assert policy == CheckPolicy(("regression", "must_pass"), None, 0.05, "must-pass")


def test_flags_override_settings_and_a_floor_flag_enforces_it() -> None:
    settings = CheckSettings(fail_on=["significant_drop"], floor=0.5, alpha=0.1)
    assert CheckPolicy.from_settings(settings).fail_on == ("significant_drop",)
    with_floor = CheckPolicy.from_settings(settings, floor=0.8)
    assert with_floor.fail_on == ("significant_drop", "below_floor")
    assert with_floor.floor == 0.8 and with_floor.alpha == 0.1
    explicit = CheckPolicy.from_settings(settings, fail_on=["regression"], floor=0.8, alpha=0.01)
    assert (explicit.fail_on, explicit.alpha) == (("regression",), 0.01)


def test_setup_errors_are_one_sentence() -> None:
    with pytest.raises(SqlbenchError, match="no floor is set"):
        CheckPolicy.from_settings(CheckSettings(), fail_on=["below_floor"])
    with pytest.raises(SqlbenchError, match="unknown check rule 'regresion'"):
        CheckPolicy.from_settings(CheckSettings(), fail_on=["regresion"])
    with pytest.raises(SqlbenchError, match="between 0 and 1"):
        CheckPolicy(floor=80)


def test_regression_fails_and_names_only_the_regressed_questions() -> None:
    base = side("main", outcome("broken", P), outcome("old_failure", F), *steady(10))
    head = side("dev", outcome("broken", F), outcome("old_failure", F), *steady(10))
    result = run_check(base, head, CheckPolicy())
    assert not result.passed
    assert [r.rule for r in result.blocking()] == ["regression"]
    assert result.question_failures() == {"sales/broken": ["regression"]}
    drop = next(r for r in result.rules if r.rule == "significant_drop")
    assert not drop.failed and not drop.enforced  # one regression is not significant


def test_same_results_pass() -> None:
    runs = [outcome("old_failure", F), *steady(10)]
    result = run_check(side("main", *runs), side("main", *runs), CheckPolicy())
    assert result.passed and result.question_failures() == {}


def test_flaky_does_not_fail_the_regression_rule() -> None:
    base = side("main", outcome("wobbly", P, P, P), *steady(10))
    head = side("dev", outcome("wobbly", P, F, P), *steady(10))
    assert run_check(base, head, CheckPolicy()).passed


def test_significant_drop_only() -> None:
    policy = CheckPolicy(fail_on=("significant_drop",))
    one = run_check(
        side("main", outcome("a", P), *steady(20)),
        side("dev", outcome("a", F), *steady(20)),
        policy,
    )
    assert one.passed  # a single regression is not a significant drop
    many_base = [outcome(f"q{i}", P) for i in range(6)]
    many_head = [outcome(f"q{i}", F) for i in range(6)]
    six = run_check(
        side("main", *many_base, *steady(20)), side("dev", *many_head, *steady(20)), policy
    )
    assert not six.passed
    assert [r.rule for r in six.blocking()] == ["significant_drop"]
    assert six.question_failures() == {}  # run-level rule: reported as a policy testcase


def test_below_floor_and_must_pass() -> None:
    head = side(
        "dev",
        outcome("key", F, tags=("must-pass",)),
        outcome("other", P),
        outcome("skipped_key", S, tags=("must-pass",)),
    )
    policy = CheckPolicy(fail_on=("below_floor", "must_pass"), floor=0.6)
    result = run_check(side("main"), head, policy)  # empty base: no project there yet
    assert [r.rule for r in result.blocking()] == ["below_floor", "must_pass"]
    assert result.must_pass == ("sales/key", "sales/skipped_key")
    assert result.question_failures() == {"sales/key": ["must_pass"]}
    floor = next(r for r in result.rules if r.rule == "below_floor")
    assert floor.message == "head accuracy 50.0% is under the floor 60%"


def test_must_pass_tag_is_configurable() -> None:
    head = side("dev", outcome("key", F, tags=("critical",)), outcome("other", F))
    result = run_check(side("main"), head, CheckPolicy(must_pass_tag="critical"))
    assert result.question_failures() == {"sales/key": ["must_pass"]}


def test_markdown_and_junit_name_exactly_the_broken_questions() -> None:
    base = side(
        "main", outcome("broken", P), outcome("old_failure", F), outcome("gone", P), *steady(10)
    )
    head = side(
        "dev", outcome("broken", R), outcome("old_failure", F), outcome("new", F), *steady(10)
    )
    result = run_check(base, head, CheckPolicy())
    markdown = rundiff_markdown.render_check(result)
    assert markdown.startswith("## ❌ sqlbench check failed (regression)")
    assert "| regression | yes | ❌ 1 regression: sales/broken |" in markdown
    assert "| `sales/broken` | pass → review | broken pass | broken review |" in markdown
    assert "old_failure" not in markdown.split("#### Regressions")[1].split("####")[0]

    root = ET.fromstring(rundiff_junit.render(result))
    suite = root.find("testsuite")
    assert suite is not None
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["broken"]
    failure = suite.find("testcase[@name='broken']/failure")
    assert failure is not None
    assert failure.get("message") == "regression: broken review"
    assert failure.text == "base: pass: broken pass\nhead: review: broken review"
    removed = suite.find("testcase[@name='gone']/skipped")
    assert removed is not None and "removed" in (removed.get("message") or "")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("14", "1", "1")


def test_junit_reports_enforced_run_level_rules() -> None:
    policy = CheckPolicy(fail_on=("regression", "below_floor"), floor=0.9)
    head = side("dev", outcome("a", P), outcome("b", F))
    root = ET.fromstring(rundiff_junit.render(run_check(side("main"), head, policy)))
    floor = root.find("testsuite/testcase[@classname='policy'][@name='below_floor']/failure")
    assert floor is not None
    assert floor.get("message") == "head accuracy 50.0% is under the floor 90%"
    passing = rundiff_markdown.render_check(
        run_check(side("main"), side("dev", *steady(3)), CheckPolicy())
    )
    assert passing.startswith("## ✅ sqlbench check passed")
