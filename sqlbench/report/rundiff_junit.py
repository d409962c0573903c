"""``sqlbench check --junit FILE``: the check as JUnit XML (GitHub, GitLab, Jenkins).

One testcase per head question (classname = space): it fails exactly when the question breaks
an enforced rule (a regression, a failing must-pass question), with the rule and both reasons.
Questions only on base appear as skipped testcases ("removed"). Run-level rules
(``significant_drop``, ``below_floor``) are testcases of a ``policy`` class when enforced.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from sqlbench.hygiene import xml_safe
from sqlbench.report.rundiff_format import outcome_text, source_text
from sqlbench.rundiff.diff import ChangeKind, QuestionOutcome
from sqlbench.rundiff.policy import CheckResult


def render(result: CheckResult) -> str:
    """The check as a JUnit XML document (UTF-8, with declaration)."""
    diff = result.diff
    failures = result.question_failures()
    base_by = {o.full_name: o for o in diff.base.outcomes}
    title = f"sqlbench check: {source_text(diff.base)} → {source_text(diff.head)}"
    suite = ET.Element("testsuite", name=title)
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    for outcome in diff.head.outcomes:
        case = _case(suite, outcome.space, outcome.name, counts)
        old = base_by.get(outcome.full_name)
        detail = _detail(old, outcome)
        rules = failures.get(outcome.full_name)
        if rules:
            counts["failures"] += 1
            failure = ET.SubElement(
                case, "failure", message=f"{', '.join(rules)}: {outcome.reason}", type=rules[0]
            )
            failure.text = detail
        elif outcome.uncounted:  # skipped, or not asked (an unreachable agent endpoint)
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=outcome.reason)
        else:
            ET.SubElement(case, "system-out").text = detail
    for change in diff.of_kind(ChangeKind.REMOVED):
        case = _case(suite, change.space, change.name, counts)
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message="removed: on base only, not on head")
    for rule in result.rules:
        if not rule.enforced or rule.rule in ("regression", "must_pass"):
            continue
        case = _case(suite, "policy", rule.rule, counts)
        if rule.failed:
            counts["failures"] += 1
            ET.SubElement(case, "failure", message=rule.message, type=rule.rule)
        else:
            ET.SubElement(case, "system-out").text = rule.message
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("errors", "0")
    root = ET.Element("testsuites", name="sqlbench check")
    for key in ("tests", "failures"):
        root.set(key, suite.get(key, "0"))
    root.append(suite)
    ET.indent(root)
    body = xml_safe(ET.tostring(root, encoding="unicode"))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _case(suite: ET.Element, classname: str, name: str, counts: dict[str, int]) -> ET.Element:
    counts["tests"] += 1
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")


def _detail(base: QuestionOutcome | None, head: QuestionOutcome) -> str:
    lines = [f"base: {outcome_text(base)}" + (f": {base.reason}" if base else "")]
    lines.append(f"head: {outcome_text(head)}: {head.reason}")
    return "\n".join(lines)
