"""One broken fixture project per validation rule, each reported at its exact ``path:line``.

Each folder under ``tests/fixtures/projects/`` holds a project and ``expected.yml``: the start
of every problem ``sqlbench validate`` must report, in order, and nothing else.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sqlbench.errors import ProjectInvalid, Severity
from sqlbench.validation import load_project, validate_project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "projects"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.yml").is_file())


def _expected(name: str) -> list[str]:
    data = yaml.safe_load((FIXTURES / name / "expected.yml").read_text())
    return list(data["problems"])


def test_there_is_a_fixture_per_rule() -> None:
    assert len(CASES) >= 30
    assert "good" in CASES


@pytest.mark.parametrize("name", CASES)
def test_fixture_reports_exactly_the_expected_problems(name: str) -> None:
    expected = _expected(name)
    got = [str(problem) for problem in validate_project(FIXTURES / name).problems]
    assert len(got) == len(expected), "\n".join(got)
    for want, have in zip(expected, got, strict=True):
        assert have.startswith(want), f"expected {want!r}\n     got {have!r}"


@pytest.mark.parametrize("name", [c for c in CASES if c != "good"])
def test_load_project_raises_on_errors_and_keeps_warnings(name: str) -> None:
    problems = validate_project(FIXTURES / name).problems
    if any(p.severity is Severity.ERROR for p in problems):
        with pytest.raises(ProjectInvalid) as caught:
            load_project(FIXTURES / name)
        assert caught.value.problems == problems
        first_error = next(p for p in problems if p.severity is Severity.ERROR)
        assert str(caught.value).startswith(f"the project does not validate: {first_error}")
    else:
        project = load_project(FIXTURES / name)
        assert project.warnings == problems and problems
