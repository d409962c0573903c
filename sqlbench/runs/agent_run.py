"""One agent's run within the run loop (``runs/batch.py``): its plan, its answers to grade,
its agent and judge, grading one answer, and storing one result.

The loop itself (threads, events, stopping) is the batch's; a run of one agent is a batch of
one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from sqlbench.agents.base import Agent
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import build_agent
from sqlbench.engines.base import Engine
from sqlbench.errors import SqlbenchError, StoreError
from sqlbench.metrics.judge import Judge, resolve_judge
from sqlbench.metrics.judged import wants_judge
from sqlbench.project.files import Project, Question, RunSettings
from sqlbench.records.run import RunStatus, TrialResult
from sqlbench.runs.agenttrust import require_trusted_agent
from sqlbench.runs.answers import Asking, GradingContext, grade_answer
from sqlbench.runs.budget import BudgetGuard
from sqlbench.runs.faults import fault_reason
from sqlbench.runs.plan import RunOptions, RunPlan
from sqlbench.runs.pricing import priced, settings_model
from sqlbench.runs.regrade import REUSED_LABEL, PartlyReplayedAgent, ReplayedAgent
from sqlbench.runs.shared_sql import SharedSql
from sqlbench.runs.store import RunStore
from sqlbench.runs.warehouses import RunWarehouses, warehouse_label
from sqlbench.text import one_line
from sqlbench.verdicts import MAX_REASON, Verdict


class Stored(NamedTuple):
    """A result as recorded (``AgentRun.stored``)."""

    result: TrialResult
    data: str
    """Its JSON text in the store (what ``RunStore.load_run`` reads back)."""


@dataclass(frozen=True)
class Item:
    """One answer a run needs: a question, its trial, and its place in the selection."""

    position: int
    question: Question
    trial: int


class Items(NamedTuple):
    """A run's answers still to grade, and how many it needs in all."""

    todo: list[Item]
    total: int


class AgentRun:
    """One agent's run: its plan (``plan_run``), agent and judge, and its answers' grading
    and storing. ``runs/batch.py`` runs one or several of them."""

    def __init__(
        self, project: Project, plan: RunPlan, options: RunOptions, store: RunStore
    ) -> None:
        self.project = project
        self.plan = plan
        self.info = plan.info
        self.options = options
        self.store = store
        self.settings = project.settings.run
        self.judge: Judge | None = None
        self.judge_note = ""
        self.budget: BudgetGuard | None = None
        """Keeps ``run.budget`` (docs/cost.md) once ``start_budget`` made it; None: no
        budget."""

    def start_budget(self) -> BudgetGuard | None:
        """The guard of ``run.budget`` (None: no budget), counting what a resumed run's
        stored answers spent already."""
        budget = self.settings.budget
        if budget is None:
            self.budget = None
            return None
        spent = self.store.trials(self.info.id) if self.plan.resumed else ()
        self.budget = BudgetGuard(budget, spent)
        return self.budget

    def budget_stop(self) -> str | None:
        """Why ``run.budget`` stopped this run asking, as the sentence stored with it
        (Interrupted, so ``--resume`` continues it); None when it did not."""
        stopped = self.budget.stopped if self.budget is not None else None
        if stopped is None:
            return None
        return (
            f"{stopped}; run '{self.info.name}' kept what it graded: `sqlbench run "
            f"--resume {self.info.name}` with a larger run.budget continues it"
        )

    def items(self) -> Items:
        """The answers still to grade (a resumed run's stored ones left out)."""
        repeat = self.info.repeat
        todo: list[Item] = []
        total = 0
        for position, question in enumerate(self.plan.questions):
            trials = 1 if question.skip is not None else repeat
            total += trials
            for trial in range(trials):
                if (question.space, question.name, trial) not in self.plan.done:
                    todo.append(Item(position, question, trial))
        return Items(todo, total)

    def stored_counts(self) -> dict[Verdict, int]:
        """Verdicts of the answers already stored (a resumed run), by verdict."""
        counts: dict[Verdict, int] = {}
        if self.plan.resumed:
            for trial in self.store.trials(self.info.id):
                counts[trial.verdict] = counts.get(trial.verdict, 0) + 1
        return counts

    def prepare(self, warehouses: RunWarehouses) -> Agent:
        """The run's agent (a replayed one for a regrade or the reused answers) and judge."""
        engine = warehouses.primary
        by_key = {(q.space, q.name): q for q in self.plan.questions}

        def warehouse_for(space: str, name: str) -> tuple[Engine, RunSettings]:
            found = warehouses.of(by_key[(space, name)])
            return found.engine, found.settings

        context = AgentContext(
            project_root=self.project.root,
            certified_queries=self.project.certified_queries,
            llm=self.project.settings.llm,
            env=dict(self.options.env if self.options.env is not None else os.environ),
            engine=engine,
            run=self.settings,
            dialect=engine.dialect,
            agents=self.project.agents,
            warehouse_for=warehouse_for if self.project.settings.warehouses else None,
        )
        agent: Agent
        if self.options.regrade is not None:
            agent = ReplayedAgent(self.options.regrade.answers, self.options.regrade.turns)
        else:
            require_trusted_agent(self.project, self.plan.agent, self.options.trusted_refs)
            agent = build_agent(self.plan.agent, context)
        if self.options.reuse is not None:
            agent = PartlyReplayedAgent(
                agent, ReplayedAgent(self.options.reuse.answers, self.options.reuse.turns)
            )
        self._prepare_judge(context.env)
        return agent

    def _prepare_judge(self, env: Mapping[str, str]) -> None:
        """The judge for judged metrics, or the notice saying once why they are not computed."""
        settings = self.project.settings
        endpoint, why = resolve_judge(settings.judge, env)
        self.judge = Judge(endpoint, self.store, env) if endpoint is not None else None
        self.judge_note = ""
        if self.judge is None and wants_judge(self.plan.questions, settings.metrics):
            self.judge_note = f"judged metrics are not computed: {why}"

    def grade(
        self,
        warehouses: RunWarehouses,
        agent: Agent,
        item: Item,
        shared: SharedSql | None = None,
    ) -> TrialResult:
        """Grade one answer (a reused one's reason says so), priced with ``pricing:``."""
        warehouse = warehouses.of(item.question)
        result = grade_answer(
            Asking(item.question, item.trial, item.position),
            GradingContext(
                engine=warehouse.engine,
                agent=agent,
                truths=warehouse.truths,
                settings=warehouse.settings,
                compare=self.project.settings.compare,
                truth_dialect=warehouse.truth_dialect,
                branch=self.project.source.branch,
                warehouse=warehouse_label(self.project, item.question),
                judge=self.judge,
                custom_metrics=tuple(self.project.settings.metrics),
                variants=warehouse.variants,
                shared=shared,
            ),
        )
        reuse = self.options.reuse
        if reuse is not None and (result.space, result.name) in reuse.answers:
            result = result.model_copy(update={"reason": f"{REUSED_LABEL}: {result.reason}"})
        return priced(
            result, self.project.settings.pricing, settings_model(self.info.agent_settings)
        )

    def stored(self, result: TrialResult) -> Stored:
        """Store one result, with its JSON text; one whose content cannot be stored (a value
        the record cannot hold) is stored as an error saying so, with its verdict and reason
        kept in the reason. A store that fails on that too is the run's failure."""
        try:
            return Stored(result, self.store.record(self.info.id, result))
        except _CONTENT_FAULTS as err:
            kept = f"was {result.verdict.value}: {result.reason}"
            stored = TrialResult(
                space=result.space,
                name=result.name,
                trial=result.trial,
                position=result.position,
                question=result.question,
                tags=result.tags,
                truth_sql=result.truth_sql,
                also_accept=result.also_accept,
                verdict=Verdict.ERROR,
                reason=one_line(f"{fault_reason('storing this answer', err)}; {kept}", MAX_REASON),
                timings_ms=result.timings_ms,
            )
            return Stored(stored, self.store.record(self.info.id, stored))

    def store_fault(self, err: StoreError) -> StoreError:
        """The store failed mid-run (full disk, locked too long...): every result graded so far
        is committed, so the run is Interrupted, not Failed, and ``--resume`` finishes it. When
        the store cannot take even that, the run stays Running under this process, which reads
        Interrupted once it exits."""
        with contextlib.suppress(StoreError):
            self.store.finish(self.info.id, RunStatus.INTERRUPTED, error=str(err))
        return StoreError(
            f"{err}; run '{self.info.name}' stopped: `sqlbench run --resume {self.info.name}` "
            "finishes it"
        )


_CONTENT_FAULTS = (ValueError, TypeError, OverflowError, RecursionError, MemoryError)
"""What storing a result raises for its content (the store itself failing is not one)."""


def describe_error(err: BaseException) -> str:
    """A run's failure in one sentence: a sqlbench error as it reads, anything else with its
    exception type."""
    if isinstance(err, SqlbenchError):
        return str(err)
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
