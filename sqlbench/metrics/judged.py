"""Judged metrics (docs/agent-behaviour.md): answer correctness, logical consistency, tool execution
accuracy and custom metrics, each scored by the LLM judge. They never change a verdict.

Every judge prompt asks for one JSON object ``{"score": <number>, "explanation": "<text>"}``
(a fenced JSON block is accepted). Built-in metrics score 0 to 1; a custom metric scores in
its ``score_ranges`` (from ``min_score``'s low end to ``max_score``'s high end), stored scaled
to 0-1, its band from the range the raw score falls in. A reply that does not parse, or a
score out of range, is that metric's error with the reply's first line; a failed call is its
error too.

What applies when: answer correctness needs the question's ``ground_truth_output`` and a text
answer (or SQL, judged as the answer when there is no text); logical consistency needs a trace
(tool calls or a text answer); tool execution accuracy needs ``expected_tools`` entries with
``tool_input`` or ``tool_output`` (each paired with the unpaired call of that tool whose
arguments, else output, read most alike; the input and output judged separately; entries whose
tool was never called are left to tool selection accuracy); custom metrics apply to every
answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlbench.metrics.judge import Judge, JudgeError
from sqlbench.metrics.names import ANSWER_CORRECTNESS, LOGICAL_CONSISTENCY, TOOL_EXECUTION_ACCURACY
from sqlbench.metrics.summary import band
from sqlbench.project.files import CustomMetric, ExpectedTool, Question
from sqlbench.runs.records import MetricResult, ToolCallRecord, TrialResult
from sqlbench.text import likeness, one_line

_SYSTEM = (
    "You are a strict evaluator of a data agent's behaviour. Reply with one JSON object and "
    'nothing else: {"score": <number>, "explanation": "<one or two sentences>"}.'
)
_JSON = re.compile(r"\{.*\}", re.DOTALL)
_TEXT_LIMIT = 6000

ANSWER_CORRECTNESS_PROMPT = """Score how correct the agent's answer is against the expected \
answer, from 0 (wrong or missing) to 1 (fully correct: the same facts and numbers; wording and \
format may differ).

Question: {{input}}
Expected answer: {{ground_truth}}
Agent's answer: {{output}}"""

LOGICAL_CONSISTENCY_PROMPT = """Score the logical consistency of the agent's work, from 0 to 1: \
do its plan, its tool calls and its final answer follow from each other and from the question, \
without contradictions, redundant or superfluous calls, or ignored tool errors? No reference \
answer is given; judge the trace itself.

Question: {{input}}
Tool calls, in order: {{tool_info}}
SQL: {{sql}}
Final answer: {{output}}
Agent error: {{error}}"""

TOOL_INPUT_PROMPT = """Score from 0 to 1 how well the input the agent gave the tool `{tool}` \
matches the expected input (same meaning counts; irrelevant differences do not).

Question: {question}
Expected input: {expected}
Actual input: {actual}"""

TOOL_OUTPUT_PROMPT = """Score from 0 to 1 how well the output the tool `{tool}` returned meets \
the expected output (same meaning counts; irrelevant differences do not).

Question: {question}
Expected output: {expected}
Actual output: {actual}"""


@dataclass(frozen=True)
class Verdicts:
    """What a judged score says: the score (0-1), its band and the judge's explanation."""

    score: float
    band: str
    explanation: str
    tokens: int | None


def placeholder_values(question: Question | None, trial: TrialResult) -> dict[str, str]:
    """The values of a prompt's ``{{placeholders}}`` for one answer."""
    tool_info = [
        {k: v for k, v in call.model_dump(mode="json").items() if v is not None}
        for call in trial.tool_calls
    ]
    truth = question.ground_truth_output if question is not None else None
    return {
        "input": trial.question,
        "output": trial.answer or trial.agent_sql or "",
        "ground_truth": _text(truth) if truth is not None else "",
        "tool_info": _text(tool_info) if tool_info else "(no tool calls)",
        "sql": trial.agent_sql or "",
        "duration": "" if trial.latency_ms is None else f"{trial.latency_ms:.0f} ms",
        "error": trial.agent_error or "",
        "status": trial.verdict.value,
    }


def fill(prompt: str, values: dict[str, str]) -> str:
    """``prompt`` with each ``{{name}}`` replaced by its value.

    Example:
        >>> fill("Q: {{input}} / {{ sql }}", {"input": "How many?", "sql": "SELECT 1"})
        'Q: How many? / SELECT 1'
    """
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m.group(1), m.group(0)), prompt)


def prompt_hash(prompt: str) -> str:
    """A short hash naming a prompt template (stored with each judged score)."""
    return hashlib.sha256(prompt.encode()).hexdigest()[:16]


def judged_metrics(
    question: Question | None,
    trial: TrialResult,
    judge: Judge,
    custom: Sequence[CustomMetric] = (),
) -> dict[str, MetricResult]:
    """Every judged metric that applies to ``trial`` (see the module docstring)."""
    values = placeholder_values(question, trial)
    results: dict[str, MetricResult] = {}
    has_output = bool(trial.answer or trial.agent_sql)
    if question is not None and question.ground_truth_output is not None and has_output:
        results[ANSWER_CORRECTNESS] = _judged(judge, ANSWER_CORRECTNESS_PROMPT, values, 0, 1, None)
    if trial.tool_calls or trial.answer:
        results[LOGICAL_CONSISTENCY] = _judged(
            judge, LOGICAL_CONSISTENCY_PROMPT, values, 0, 1, None
        )
    if question is not None and question.expected_tools:
        execution = tool_execution_accuracy(question, trial, judge)
        if execution is not None:
            results[TOOL_EXECUTION_ACCURACY] = execution
    for metric in custom:
        ranges = metric.score_ranges
        results[metric.name] = _judged(
            judge, metric.prompt, values, ranges.lowest, ranges.highest, metric
        )
    return results


def pair_calls(
    expected: Sequence[ExpectedTool], calls: Sequence[ToolCallRecord]
) -> list[tuple[ExpectedTool, int | None]]:
    """Each entry with ``tool_input``/``tool_output`` paired with the unpaired call of its tool
    that reads most alike (arguments against ``tool_input``, else output against
    ``tool_output``); None when no call of that tool is left. Each call is paired once."""
    free = set(range(len(calls)))
    pairs: list[tuple[ExpectedTool, int | None]] = []
    for entry in expected:
        if entry.tool_input is None and entry.tool_output is None:
            continue
        candidates = [i for i in sorted(free) if calls[i].name == entry.tool_name]
        if not candidates:
            pairs.append((entry, None))
            continue

        def likeness(index: int, entry: ExpectedTool = entry) -> float:
            call = calls[index]
            if entry.tool_input is not None:
                return _alike(entry.tool_input, call.arguments)
            return _alike(entry.tool_output, call.output)

        best = max(candidates, key=lambda i: (likeness(i), -i))
        free.discard(best)
        pairs.append((entry, best))
    return pairs


def tool_execution_accuracy(
    question: Question, trial: TrialResult, judge: Judge
) -> MetricResult | None:
    """The mean of the judged input and output scores over paired calls; None when no entry
    gives ``tool_input``/``tool_output`` (NA); score None when no such tool was called."""
    assert question.expected_tools is not None
    pairs = pair_calls(question.expected_tools, trial.tool_calls)
    if not pairs:
        return None
    scores: list[float] = []
    detail: list[dict[str, Any]] = []
    errors: list[str] = []
    tokens = 0
    for entry, index in pairs:
        item: dict[str, Any] = {"tool_name": entry.tool_name, "call": index}
        if index is None:
            item["note"] = "not called (tool selection accuracy counts it)"
            detail.append(item)
            continue
        call = trial.tool_calls[index]
        for aspect, expected, actual, template in (
            ("input", entry.tool_input, call.arguments, TOOL_INPUT_PROMPT),
            ("output", entry.tool_output, call.output, TOOL_OUTPUT_PROMPT),
        ):
            if expected is None:
                item[f"{aspect}_score"] = None  # NA: nothing expected
                continue
            prompt = template.format(
                tool=entry.tool_name,
                question=trial.question,
                expected=_text(expected),
                actual=_text(actual),
            )
            try:
                verdict = _ask(judge, prompt, 0, 1)
            except JudgeError as err:
                errors.append(str(err))
                item[f"{aspect}_error"] = str(err)
                continue
            tokens += verdict.tokens or 0
            scores.append(verdict.score)
            item[f"{aspect}_score"] = verdict.score
            item[f"{aspect}_explanation"] = verdict.explanation
        detail.append(item)
    score = sum(scores) / len(scores) if scores else None
    explanation = "; ".join(
        f"{d['tool_name']} {aspect}: {d[aspect + '_explanation']}"
        for d in detail
        for aspect in ("input", "output")
        if d.get(aspect + "_explanation")
    )
    return MetricResult(
        score=score,
        band=band(score) if score is not None else None,
        explanation=explanation or None,
        error=errors[0] if errors and score is None else None,
        judge_model=judge.model,
        prompt_hash=prompt_hash(TOOL_INPUT_PROMPT + TOOL_OUTPUT_PROMPT),
        judge_tokens=tokens or None,
        detail={"pairs": detail},
    )


def _judged(
    judge: Judge,
    template: str,
    values: dict[str, str],
    lowest: float,
    highest: float,
    custom: CustomMetric | None,
) -> MetricResult:
    common: dict[str, Any] = {"judge_model": judge.model, "prompt_hash": prompt_hash(template)}
    try:
        verdict = _ask(judge, fill(template, values), lowest, highest, custom)
    except JudgeError as err:
        return MetricResult(error=str(err), **common)
    return MetricResult(
        score=verdict.score,
        band=verdict.band,
        explanation=verdict.explanation,
        judge_tokens=verdict.tokens,
        **common,
    )


def _ask(
    judge: Judge,
    prompt: str,
    lowest: float,
    highest: float,
    custom: CustomMetric | None = None,
) -> Verdicts:
    scale = f"\n\nThe score must be a number from {lowest:g} to {highest:g}."
    messages = [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": prompt + scale},
    ]

    def parses(text: str) -> bool:
        try:
            parse_reply(text, lowest, highest)
        except JudgeError:
            return False
        return True

    reply = judge.ask(messages, keep=parses)
    raw, explanation = parse_reply(reply.text, lowest, highest)
    score = (raw - lowest) / (highest - lowest) if highest > lowest else 1.0
    if custom is not None:
        ranges = custom.score_ranges
        if ranges.min_score[0] <= raw < ranges.min_score[1]:
            level = "low"
        elif ranges.median_score[0] <= raw <= ranges.median_score[1]:
            level = "medium"
        elif ranges.max_score[0] < raw <= ranges.max_score[1]:
            level = "high"
        else:
            level = band(score)  # a gap between ranges: the position on the scale decides
    else:
        level = band(score)
    return Verdicts(score, level, explanation, reply.tokens)


def parse_reply(text: str, lowest: float = 0.0, highest: float = 1.0) -> tuple[float, str]:
    """``(score, explanation)`` from a judge's reply.

    Raises:
        JudgeError: The reply holds no JSON object with a numeric ``score`` in range; the
            message quotes the reply's first line.

    Example:
        >>> parse_reply('```json\\n{"score": 0.5, "explanation": "half"}\\n```')
        (0.5, 'half')
    """
    first = one_line(text.strip().splitlines()[0] if text.strip() else "(empty)", 120)
    found = _JSON.search(text)
    data: Any = None
    if found is not None:
        try:
            data = json.loads(found.group(0))
        except json.JSONDecodeError:
            data = None
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise JudgeError(f"the judge's reply did not parse (no numeric score): {first}")
    if not lowest <= score <= highest:
        raise JudgeError(f"the judge's score {score:g} is outside {lowest:g}-{highest:g}: {first}")
    explanation = data.get("explanation") if isinstance(data, dict) else None
    return float(score), str(explanation or "").strip()


def _alike(expected: Any, actual: Any) -> float:
    return likeness(_text(expected), _text(actual))


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def with_judged_metrics(
    question: Question | None,
    trial: TrialResult,
    judge: Judge,
    custom: Sequence[CustomMetric] = (),
) -> TrialResult:
    """``trial`` with its judged metrics added (replacing earlier judged ones); the verdict is
    never touched. An agent error or a skipped question is not judged."""
    if trial.verdict.value in ("error", "skipped"):
        return trial
    metrics = dict(trial.metrics)
    metrics.update(judged_metrics(question, trial, judge, custom))
    return trial.model_copy(update={"metrics": metrics})


def wants_judge(questions: Sequence[Question], custom: Sequence[CustomMetric]) -> bool:
    """True when the project asks for something only a judge can score."""
    return bool(custom) or any(
        q.ground_truth_output is not None
        or any(
            t.tool_input is not None or t.tool_output is not None for t in q.expected_tools or []
        )
        for q in questions
    )
