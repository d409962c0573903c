"""A run as JUnit XML (docs/commands.md): one testcase per question (classname = space); fail ->
failure, error -> error, review, skipped and not asked (an unreachable agent endpoint) ->
skipped, each with the reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from sqlbench.hygiene import xml_safe
from sqlbench.report.metric_format import metric_detail
from sqlbench.report.run_format import abstention_json, verdict_text
from sqlbench.runs.scores import QuestionResult, RunResult
from sqlbench.verdicts import Verdict


def render(run: RunResult) -> str:
    """The run as a JUnit XML document (UTF-8, with declaration)."""
    suite = ET.Element("testsuite", name=f"sqlbench run {run.info.name}")
    # The answered/declined counts and reliability (docs/conversations.md), as properties.
    properties = ET.SubElement(suite, "properties")
    for key, value in abstention_json(run.abstention()).items():
        ET.SubElement(properties, "property", name=f"sqlbench.{key}", value=str(value))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_s = 0.0
    for question in run.questions:
        seconds = sum((t.latency_ms or 0.0) for t in question.trials) / 1000.0
        total_s += seconds
        case = ET.SubElement(
            suite, "testcase", classname=question.space, name=question.name, time=f"{seconds:.3f}"
        )
        counts["tests"] += 1
        message = _message(question)
        # A person's decision counts here as in the accuracy (verdict_text shows both).
        verdict = question.decided_verdict
        if question.pass_rate is None and any(t.not_asked for t in question.trials):
            # Not asked (the agent's endpoint was unreachable): nothing was tested.
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=message)
        elif verdict is Verdict.FAIL:
            counts["failures"] += 1
            ET.SubElement(case, "failure", message=message, type="fail").text = _detail(question)
        elif verdict is Verdict.ERROR:
            counts["errors"] += 1
            ET.SubElement(case, "error", message=message, type="error").text = _detail(question)
        elif verdict in (Verdict.REVIEW, Verdict.SKIPPED):
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"{verdict.value}: {message}")
        else:
            ET.SubElement(case, "system-out").text = _detail(question)
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{total_s:.3f}")
    root = ET.Element(
        "testsuites",
        name="sqlbench",
        tests=str(counts["tests"]),
        failures=str(counts["failures"]),
        errors=str(counts["errors"]),
        skipped=str(counts["skipped"]),
        time=f"{total_s:.3f}",
    )
    root.append(suite)
    ET.indent(root)
    return xml_safe(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"


def _message(question: QuestionResult) -> str:
    if len(question.trials) > 1 or question.human is not None:
        return f"{verdict_text(question)}: {question.reason}"
    return question.reason


def _detail(question: QuestionResult) -> str:
    trial = next((t for t in question.trials if t.verdict is question.verdict), question.first)
    lines = [f"verdict: {verdict_text(question)}", f"reason: {trial.reason}"]
    for turn in trial.turns or []:  # a conversation, turn by turn
        lines.append(f"turn {turn.turn} {turn.verdict.value}: {turn.question}")
        lines.append(f"  reason: {turn.reason}")
        if turn.sql:
            lines += ["  agent SQL:", turn.sql.strip()]
        elif turn.answer:
            lines += ["  agent answer:", turn.answer.strip()]
    if trial.truth_sql:
        lines += ["ground truth SQL:", trial.truth_sql.strip()]
    if trial.agent_sql:
        lines += ["agent SQL:", trial.agent_sql.strip()]
    elif trial.answer:
        lines += ["agent answer:", trial.answer.strip()]
    for name, result in trial.metrics.items():
        lines += metric_detail(name, result)
    for check in trial.assertions:
        state = "passed" if check.passed else f"failed: {check.reason}"
        lines.append(f"assertion {check.label!r} {state}")
    return "\n".join(lines)
