"""``run.budget``: a run stops asking before the next question would pass what it may spend
(docs/cost.md). What it graded is kept; ``sqlbench run --resume RUN`` with a larger budget
continues from there.

"Would pass" is estimated from the answers so far: the next question is taken to cost what the
answers so far cost on average, and every question still being answered as much. While no
answer's cost is known yet, one question is asked at a time. An answer whose cost cannot be
counted in the budget's unit (no usage reported, or a model with no price for a budget in
dollars) stops the run too: a limit that cannot be kept is said so, never ignored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from sqlbench.project.files import Budget
from sqlbench.records.run import TrialResult
from sqlbench.verdicts import Verdict

_WAIT_S = 0.2


class BudgetGuard:
    """Admits questions while the budget allows the next one; thread-safe."""

    def __init__(self, budget: Budget, done: Iterable[TrialResult] = ()) -> None:
        self.budget = budget
        self.unit = "usd" if budget.usd is not None else "tokens"
        self.limit = float(budget.usd if budget.usd is not None else budget.tokens or 0)
        self.spent = 0.0
        self.answered = 0
        self.in_flight = 0
        self.stopped: str | None = None
        """Why the run stopped asking (None: it did not)."""
        self._cond = threading.Condition()
        for trial in done:
            self._count(trial)

    def admit(self, halted: Callable[[], bool]) -> bool:
        """True when the next question may be asked (counted in flight until ``settle``);
        False once the budget would be passed (``stopped`` says why) or ``halted()``."""
        with self._cond:
            while not halted():
                if self.stopped is not None:
                    return False
                if not self.answered and self.in_flight:
                    self._cond.wait(_WAIT_S)  # one at a time until a cost is known
                    continue
                estimate = self.spent / self.answered if self.answered else 0.0
                if self.spent + (self.in_flight + 1) * estimate <= self.limit and (
                    self.spent < self.limit
                ):
                    self.in_flight += 1
                    return True
                if self.in_flight:
                    self._cond.wait(_WAIT_S)  # what is being answered may cost less
                    continue
                self.stopped = (
                    f"run.budget reached: {self._amount(self.spent)} spent of "
                    f"{self._amount(self.limit)}, and the next question would pass it "
                    f"(about {self._amount(estimate)} each)"
                )
                self._cond.notify_all()
                return False
            return False

    def settle(self, trial: TrialResult | None) -> None:
        """An admitted question is done (``trial``: its result; None: it was not graded)."""
        with self._cond:
            self.in_flight -= 1
            if trial is not None:
                self._count(trial)
            self._cond.notify_all()

    def _count(self, trial: TrialResult) -> None:
        if trial.verdict is Verdict.SKIPPED or trial.not_asked:
            return  # not asked (an unreachable endpoint): no answer to count, nothing spent
        cost = trial.cost
        if cost is None and (trial.agent_sql is None and trial.answer is None):
            self.answered += 1  # not answered (agent error, ground truth failed): nothing spent
            return
        if cost is None or cost.tokens is None:
            self.stopped = self.stopped or (
                "run.budget cannot be kept: the agent's answers report no token usage"
            )
            return
        if self.unit == "usd" and cost.usd is None:
            self.stopped = self.stopped or (
                "run.budget is in dollars, but "
                + ", ".join(cost.unpriced or ["the answer's usage"])
                + " has no price in pricing:"
            )
            return
        self.spent += cost.usd if self.unit == "usd" and cost.usd is not None else cost.tokens
        self.answered += 1

    def _amount(self, value: float) -> str:
        if self.unit == "usd":
            return f"${value:.4g}"
        return f"{value:,.0f} tokens"
