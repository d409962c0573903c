"""The gate in ``tests/conftest.py``: tests marked ``hostile`` skip, saying why, unless
``SQLBENCH_TEST_HOSTILE=1`` (those marked ``security`` unless ``SQLBENCH_TEST_SECURITY=1``);
the others run either way."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py")


def _suite(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    hostile: hostile input\n    security: security\n")
    # The gate as tests/conftest.py defines it, loaded from that file.
    pytester.makeconftest(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('gated_conftest', {str(CONFTEST)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "pytest_collection_modifyitems = module.pytest_collection_modifyitems\n"
    )
    pytester.makepyfile(
        "import pytest\n@pytest.mark.hostile\ndef test_marked(): pass\ndef test_plain(): pass\n"
        "@pytest.mark.security\ndef test_secure(): pass\n"
    )


def test_hostile_tests_skip_with_their_reason_when_the_variable_is_unset(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SQLBENCH_TEST_HOSTILE", raising=False)
    monkeypatch.delenv("SQLBENCH_TEST_SECURITY", raising=False)
    _suite(pytester)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED*hostile-input tests: set SQLBENCH_TEST_HOSTILE=1*"])
    result.stdout.fnmatch_lines(["SKIPPED*security tests: set SQLBENCH_TEST_SECURITY=1*"])


def test_hostile_tests_run_when_the_variable_is_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SQLBENCH_TEST_HOSTILE", "1")
    monkeypatch.delenv("SQLBENCH_TEST_SECURITY", raising=False)
    _suite(pytester)
    pytester.runpytest().assert_outcomes(passed=2, skipped=1)  # security's gate stays


def test_security_tests_run_when_their_variable_is_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SQLBENCH_TEST_HOSTILE", raising=False)
    monkeypatch.setenv("SQLBENCH_TEST_SECURITY", "1")
    _suite(pytester)
    pytester.runpytest().assert_outcomes(passed=2, skipped=1)


def test_another_value_than_one_keeps_them_skipped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SQLBENCH_TEST_HOSTILE", "yes")
    monkeypatch.setenv("SQLBENCH_TEST_SECURITY", "yes")
    _suite(pytester)
    pytester.runpytest().assert_outcomes(passed=1, skipped=2)
