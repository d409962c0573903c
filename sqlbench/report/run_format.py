"""Wording shared by the run renderers (text, Markdown, JSON, JUnit), built once here."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sqlbench.records.accuracy import Accuracy, IntervalMethod
from sqlbench.records.run import HumanReview, RunInfo, TrialResult, utc_now
from sqlbench.runs.scores import Abstention, QuestionResult, RunResult, not_asked_summary
from sqlbench.text import percent
from sqlbench.verdicts import Verdict

VERDICT_STYLES: dict[Verdict, str] = {
    Verdict.PASS: "green",
    Verdict.FAIL: "red",
    Verdict.REVIEW: "yellow",
    Verdict.ERROR: "magenta",
    Verdict.SKIPPED: "dim",
}
"""Rich style of each verdict in terminal output."""


def accuracy_line(accuracy: Accuracy, repeat: int = 1) -> str:
    """``Accuracy: NN% (passed/total)``; with repeats, the trials, the interval and the rule.

    Example:
        >>> accuracy_line(Accuracy(passed=2, total=3, questions=3, value=2 / 3))
        'Accuracy: 67% (2/3)'
    """
    recalled = accuracy.certified_label()
    tail = f"; {recalled}" if recalled else ""
    if repeat <= 1 or accuracy.value is None:
        return f"Accuracy: {accuracy.label()}{tail}"
    line = (
        f"Accuracy: {percent(accuracy.value)} ({accuracy.passed}/{accuracy.total} trials); "
        f"mean pass rate over {accuracy.questions} "
        f"question{'' if accuracy.questions == 1 else 's'}"
    )
    if accuracy.interval is not None:
        line += (
            f", 95% interval {percent(accuracy.interval.low)}–"
            f"{percent(accuracy.interval.high)} ({accuracy.method or IntervalMethod.BOOTSTRAP})"
        )
    return line + tail


def not_asked_line(run: RunResult) -> str | None:
    """``2 not asked: the agent's endpoint answered 429 (outside accuracy); `sqlbench run
    --resume RUN` asks them again``; None when every question was asked."""
    summary = not_asked_summary(run)
    if summary is None:
        return None
    return f"{summary} (outside accuracy); `sqlbench run --resume {run.info.name}` asks them again"


def shows_abstention(run: RunResult) -> bool:
    """True when the run has something to say about declining: an expected decline, a
    conversation, or an answer without SQL (text and Markdown print the line only then; JSON
    and HTML always carry the counts)."""
    abstention = run.abstention()
    if abstention.expected_declines or abstention.declined:
        return True
    return has_conversations(run)


def abstention_line(abstention: Abstention) -> str:
    """``Answered 8 · declined 2 (2/2 expected declines correct) · wrong answers 1 ·
    reliability 0.70 (decline_penalty 1)``.

    Example:
        >>> line = abstention_line(Abstention(answered=3, declined=1, expected_declines=1,
        ...     correct_declines=1, wrong_answers=1, correct=3, total=4, penalty=1.0))
        >>> line.split(" · ")[-1]
        'reliability 0.50 (decline_penalty 1)'
    """
    reliability = abstention.reliability
    score = "–" if reliability is None else f"{reliability:.2f}"
    return (
        f"Answered {abstention.answered} · declined {abstention.declined} "
        f"({abstention.correct_declines}/{abstention.expected_declines} expected declines "
        f"correct) · wrong answers {abstention.wrong_answers} · reliability {score} "
        f"(decline_penalty {abstention.penalty:g})"
    )


def turn_accuracy_line(abstention: Abstention) -> str:
    """``Per-turn accuracy: 83% (5/6)``: every conversation turn and single question counted
    on its own (the run's accuracy counts a conversation once)."""
    return f"Per-turn accuracy: {Accuracy.of_trials(abstention.correct, abstention.total).label()}"


def has_conversations(run: RunResult) -> bool:
    """True when the run asked a conversation (``turns:``)."""
    return any(t.turns is not None for q in run.questions for t in q.trials)


def abstention_json(abstention: Abstention) -> dict[str, int | float | None]:
    """The run's ``abstention`` object of the JSON outputs (docs/conversations.md)."""
    return {
        "answered": abstention.answered,
        "declined": abstention.declined,
        "expected_declines": abstention.expected_declines,
        "correct_declines": abstention.correct_declines,
        "wrong_answers": abstention.wrong_answers,
        "correct": abstention.correct,
        "total": abstention.total,
        "decline_penalty": abstention.penalty,
        "reliability": abstention.reliability,
    }


def counts_line(run: RunResult) -> str:
    """``pass 20 · fail 5 · review 3 · error 2 · skipped 1`` (verdicts with zero left out).
    With repeats, a flaky question (some trials pass, some not) counts as ``flaky`` only, so
    the counts add up to the questions; then pass@k and pass^k (means over questions)."""
    flaky = [q for q in run.questions if q.flaky]
    unasked = {q.full_name for q in run.questions if all(t.not_asked for t in q.trials)}
    tally = Counter(q.verdict for q in run.questions if not q.flaky and q.full_name not in unasked)
    parts = [f"{verdict.value} {tally[verdict]}" for verdict in Verdict if tally[verdict]]
    if unasked:
        parts.append(f"not asked {len(unasked)}")
    if flaky:
        parts.append(f"flaky {len(flaky)}")
    line = " · ".join(parts) if parts else "no results"
    at_k = [q.pass_at_k for q in run.questions if q.pass_at_k is not None]
    hat_k = [q.pass_hat_k for q in run.questions if q.pass_hat_k is not None]
    if run.info.repeat > 1 and at_k and hat_k:
        k = run.info.repeat
        line += (
            f" · pass@{k} {percent(sum(at_k) / len(at_k))}"
            f" · pass^{k} {percent(sum(hat_k) / len(hat_k))}"
        )
    return line


def run_line(info: RunInfo) -> str:
    """``Run NAME · dev · main@abc1234 · agent NAME (kind)``."""
    shard = f" · shard {info.shard}" if info.shard else ""
    repeat = f" · repeat {info.repeat}" if info.repeat > 1 else ""
    regraded = f" · regraded from {info.regraded_from}" if info.regraded_from else ""
    return (
        f"Run {info.name} · {info.environment} · {info.source_label} · agent "
        f"{info.agent_name} ({info.agent_kind}){shard}{repeat}{regraded}"
    )


def verdict_text(question: QuestionResult) -> str:
    """``pass``; with repeats ``pass 3/3``, ``flaky 2/3`` or ``fail 0/3``; a person's decision
    follows the automatic verdict: ``review → pass (person)``."""
    trials = [t for t in question.trials if t.verdict is not Verdict.SKIPPED]
    if len(trials) <= 1:
        text = question.verdict.value
    else:
        automatic = sum(1 for t in trials if t.verdict is Verdict.PASS)
        label = "flaky" if 0 < automatic < len(trials) else question.verdict.value
        text = f"{label} {automatic}/{len(trials)}"
    if question.human is not None:
        text += f" → {question.human.verdict.value} (person)"
    return text


def human_line(review: HumanReview) -> str:
    """``pass, decided by alice on 2026-11-24 20:31 UTC: note (carried from run R)``; for
    decisions on turns of a conversation, ``turn 2 pass, turn 3 fail (the conversation: fail),
    decided by ...``."""
    verdict = review.verdict.value
    if review.turns:
        decided = ", ".join(f"turn {n} {v.value}" for n, v in sorted(review.turns.items()))
        verdict = f"{decided} (the conversation: {review.verdict.value})"
    line = f"{verdict}, decided by {review.decided_by} on {review.decided_at:%Y-%m-%d %H:%M} UTC"
    if review.note:
        line += f": {review.note}"
    if review.carried_from:
        line += f" (carried from run {review.carried_from}: same ground truth and agent SQL)"
    if review.imported:
        line += f" ({review.imported})"
    return line


def latency_text(ms: float | None) -> str:
    """``850 ms`` / ``12.3 s``; empty when unknown.

    Example:
        >>> latency_text(850.4), latency_text(12345.0), latency_text(None)
        ('850 ms', '12.3 s', '')
    """
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def question_latency(question: QuestionResult) -> float | None:
    """Mean agent latency over a question's trials (None when none was measured)."""
    values = [t.latency_ms for t in question.trials if t.latency_ms is not None]
    return sum(values) / len(values) if values else None


def tokens_text(input_tokens: int | None, output_tokens: int | None) -> str:
    """``120 in / 45 out``, or empty when the agent reported no usage."""
    if input_tokens is None and output_tokens is None:
        return ""
    return f"{input_tokens or 0} in / {output_tokens or 0} out"


def when_text(moment: datetime, now: datetime | None = None) -> str:
    """How long ago, for recent times; the UTC date and time otherwise.

    Example:
        >>> from datetime import timedelta
        >>> now = utc_now()
        >>> when_text(now - timedelta(seconds=5), now), when_text(now - timedelta(hours=3), now)
        ('5 s ago', '3 h ago')
    """
    now = now or utc_now()
    seconds = (now - moment).total_seconds()
    if seconds < 0:
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def warehouse_lines(run: RunResult) -> list[str]:
    """``  NAME  NN% (passed/total)`` per warehouse, under a ``By warehouse:`` heading; empty
    for a run on a single warehouse."""
    accuracies = run.by_warehouse()
    if not accuracies:
        return []
    width = max(len(name) for name in accuracies)
    return ["By warehouse:"] + [
        f"  {name.ljust(width)}  {accuracy.label()}" for name, accuracy in accuracies.items()
    ]


def summary_lines(run: RunResult) -> list[str]:
    """Accuracy per space (with several) and per tag, the agent's latency p50/p95 and the
    tokens: the summary of ``sqlbench show RUN --summary``."""
    lines: list[str] = []
    for title, accuracies in (("By space:", run.by_space()), ("By tag:", run.by_tag())):
        if title == "By space:" and len(accuracies) < 2:
            continue
        if not accuracies:
            continue
        width = max(len(name) for name in accuracies)
        lines.append(title)
        lines += [f"  {name.ljust(width)}  {acc.label()}" for name, acc in accuracies.items()]
    facts = usage_line(run)
    if facts:
        lines.append(facts)
    return lines + economy_lines(run)


def usage_line(run: RunResult) -> str:
    """``Latency p50 12 ms · p95 340 ms · tokens 1200 in / 300 out`` (what is known)."""
    facts = []
    latency = run.latency_percentiles()
    if latency is not None:
        facts.append(f"Latency p50 {latency_text(latency[0])} · p95 {latency_text(latency[1])}")
    tokens = run.tokens()
    if tokens is not None:
        facts.append(f"tokens {tokens[0]} in / {tokens[1]} out")
    return " · ".join(facts)


def usd_text(usd: float | None) -> str:
    """Dollars as people read a small bill: ``$0.0042``, ``$1.23``, ``$1,234``; ``not priced``
    for None.

    Example:
        >>> usd_text(0.0041666), usd_text(1.234), usd_text(1234.5), usd_text(None)
        ('$0.00417', '$1.23', '$1,234', 'not priced')
    """
    if usd is None:
        return "not priced"
    if usd >= 1000:
        return f"${usd:,.0f}"
    if usd >= 1 or usd == 0:
        return f"${usd:,.2f}"
    return f"${usd:.3g}"


def ratio_text(ratio: float | None) -> str:
    """A work ratio: ``40x``, ``1.2x``, ``0.05x``; ``not reported`` for None.

    Example:
        >>> ratio_text(40.0), ratio_text(1.234), ratio_text(0.0512), ratio_text(None)
        ('40x', '1.2x', '0.051x', 'not reported')
    """
    if ratio is None:
        return "not reported"
    return f"{ratio:.2g}x" if ratio < 10 else f"{ratio:,.0f}x"


def cost_line(run: RunResult) -> str:
    """``Cost $0.042 · $0.0105 per correct answer · 12,345 tokens`` (empty when no answer
    recorded a cost); names the models without a price."""
    cost = run.cost()
    if cost is None:
        return ""
    facts = [f"Cost {usd_text(cost.usd)}"]
    if cost.usd is not None:
        facts.append(
            f"{usd_text(cost.per_correct)} per correct answer"
            if cost.per_correct is not None
            else "no correct answer"
        )
        if cost.judge_usd:
            facts.append(f"judge {usd_text(cost.judge_usd)}")
    elif cost.unpriced:
        facts.append(f"no price for {', '.join(cost.unpriced)} in pricing:")
    if cost.tokens is not None:
        facts.append(f"{cost.tokens:,} tokens")
    return " · ".join(facts)


def credit_line(run: RunResult) -> str:
    """``Partial credit F1 0.73 (precision 0.80, recall 0.70) over 30 answers``; empty when
    no answer has one."""
    credit = run.partial_credit()
    if credit is None:
        return ""
    return (
        f"Partial credit F1 {credit.f1:.2f} (precision {credit.precision:.2f}, recall "
        f"{credit.recall:.2f}) over {credit.answers} answer{'s' if credit.answers != 1 else ''}"
    )


def work_line(run: RunResult) -> str:
    """``Work (rows scanned): agent/truth median 1.2x, max 40x over 28 answers; 2 above
    10x``; empty when no answer recorded work."""
    work = run.work()
    if work is None:
        return ""
    if not work.ratios:
        return f"Work: {work.unit}"
    line = (
        f"Work ({work.unit}): agent/truth median {ratio_text(work.median)}, max "
        f"{ratio_text(work.ratios[-1])} over {len(work.ratios)} answers"
    )
    above = work.above(10)
    return line + (f"; {above} above 10x" if above else "")


def economy_lines(run: RunResult) -> list[str]:
    """The cost, partial-credit and work lines that apply to the run."""
    return [line for line in (cost_line(run), credit_line(run), work_line(run)) if line]


def trial_economy(trial: TrialResult) -> list[str]:
    """An answer's cost, partial credit and work, as ``show`` lists its facts."""
    facts = []
    if trial.cost is not None and (trial.cost.usd is not None or trial.cost.unpriced):
        facts.append(f"cost {usd_text(trial.cost.usd)}")
    if trial.partial_credit is not None:
        credit = trial.partial_credit
        facts.append(
            f"partial credit F1 {credit.f1:.2f} (precision {credit.precision:.2f}, recall "
            f"{credit.recall:.2f})"
        )
    if trial.work is not None:
        work = trial.work
        if work.ratio is not None:
            facts.append(
                f"work {ratio_text(work.ratio)} the ground truth's ({work.unit}: "
                f"{work.agent:,.0f} vs {work.truth:,.0f})"
                if work.agent is not None and work.truth is not None
                else f"work {ratio_text(work.ratio)}"
            )
        elif work.unit is None:
            facts.append("work not reported")
    return facts
