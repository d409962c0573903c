"""The run loop (SPEC sections 2, 3 and 5): ask the agent every selected question, execute both
SQL texts, grade, and commit each result to the store the moment it is graded.

Questions run concurrently on daemon worker threads; the caller's thread only receives graded
results and reports them through the progress callback, so Ctrl-C (KeyboardInterrupt) is
handled there: the run is marked Interrupted with everything graded kept, and re-raised.
A heartbeat thread keeps the run's ``updated_at`` fresh so other processes can tell a live
run from a dead one. The library never prints: the CLI renders the events and the result.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy.exc import SQLAlchemyError

from sqlbench.agents.base import Agent
from sqlbench.agents.context import AgentContext
from sqlbench.agents.registry import agent_notice, build_agent
from sqlbench.engines.base import Engine
from sqlbench.errors import SqlbenchError, StoreError
from sqlbench.metrics.judge import Judge, resolve_judge
from sqlbench.metrics.judged import wants_judge
from sqlbench.project.files import Project, Question, RunSettings
from sqlbench.runs import locate
from sqlbench.runs.answers import Asking, GradingContext, grade_answer
from sqlbench.runs.batch import Batch, SharedSql, named
from sqlbench.runs.budget import BudgetGuard
from sqlbench.runs.events import (
    ProgressCallback,
    ProgressEvent,
    QuestionGraded,
    RunCreated,
    RunNotice,
    RunStarted,
    RunWaiting,
)
from sqlbench.runs.faults import fault_reason
from sqlbench.runs.plan import (
    RunOptions,
    RunPlan,
    agent_config,
    pick_questions,
    plan_run,
    with_variants,
)
from sqlbench.runs.pricing import priced, settings_model
from sqlbench.runs.records import RunStatus, TrialResult
from sqlbench.runs.regrade import REUSED_LABEL, PartlyReplayedAgent, ReplayedAgent
from sqlbench.runs.scores import RunResult
from sqlbench.runs.store import RunStore
from sqlbench.runs.warehouses import RunWarehouses, warehouse_label
from sqlbench.text import one_line
from sqlbench.truth import ground_truths
from sqlbench.verdicts import Verdict


def open_store(project: Project, options: RunOptions | None = None) -> RunStore:
    """The store ``project`` names (``store:``, ``${ENV}`` resolved), else ``.sqlbench/runs.db``
    in ``options.project_dir`` (the checkout) or ``project.root``."""
    options = options or RunOptions()
    return locate.open_store(
        options.project_dir or project.root, project.settings.store, options.env
    )


def run_benchmark(
    project: Project,
    agent_name: str | None = None,
    options: RunOptions | None = None,
    *,
    progress: ProgressCallback | None = None,
    store: RunStore | None = None,
) -> RunResult:
    """Run (or resume) a benchmark and return the stored run with its results.

    Args:
        project: A loaded project (``sqlbench.project.load.load_project``).
        agent_name: An agent of the project, or ``auto``; None: ``default_agent`` (a resumed
            run: its own agent).
        options: Selection, concurrency, repeat, name, resume, shard.
        progress: Called with each ``ProgressEvent`` from the calling thread.
        store: Where to record the run; None: ``open_store(project, options)``.

    Returns:
        The run as stored: Completed, every selected question graded.

    Raises:
        SqlbenchError: Bad options, unknown agent, a run that cannot be resumed, or a setup
            error (the run is then recorded as Failed).
        KeyboardInterrupt: Ctrl-C; the run is recorded as Interrupted first.
    """
    options = options or RunOptions()
    project = with_variants(project, options.variants)
    own_store = store is None
    active = store if store is not None else open_store(project, options)
    try:
        plan = plan_run(project, agent_name, options, active)
        return _Run(project, plan, options, active, progress).execute()
    finally:
        if own_store:
            active.close()


def run_benchmarks(
    project: Project,
    agent_names: Sequence[str],
    options: RunOptions | None = None,
    *,
    progress: ProgressCallback | None = None,
    store: RunStore | None = None,
) -> list[RunResult]:
    """One run per agent, run together (``sqlbench.runs.batch``): each ground truth runs
    once for all of them, and agent SQL two agents wrote alike runs once per question.

    The warehouses are opened and set up once. With ``options.name``, each run is named
    ``NAME-AGENT``. A run whose agent cannot be built, or that breaks, is stored as Failed with
    its reason (``RunInfo.error``); the other runs complete.

    Returns:
        Every run as stored, in ``agent_names`` order (check ``status`` for failed ones).
        ``run_benchmarks_stored`` returns their ids instead, for a caller that loads one at a
        time.

    Raises:
        SqlbenchError: No agent, ``--resume`` (one run at a time), an unknown agent (before
            any run starts), a selection that picks nothing, or a warehouse that cannot be
            set up.
        KeyboardInterrupt: Ctrl-C; every unfinished run is recorded as Interrupted first.
    """
    own_store = store is None
    active = store if store is not None else open_store(project, options)
    try:
        ids = run_benchmarks_stored(project, agent_names, options, progress=progress, store=active)
        return [active.load_run(run_id) for run_id in ids]
    finally:
        if own_store:
            active.close()


def run_benchmarks_stored(
    project: Project,
    agent_names: Sequence[str],
    options: RunOptions | None = None,
    *,
    progress: ProgressCallback | None = None,
    store: RunStore,
) -> list[str]:
    """``run_benchmarks`` without loading the runs back: their ids, in ``agent_names`` order,
    every run stored in ``store`` (``store.load_run(id)``). A caller that renders one run at a
    time holds one run's results instead of all (a Spider corpus run: 10 MB each, 9 runs).
    The warehouses are closed before it returns."""
    options = options or RunOptions()
    if not agent_names:
        raise SqlbenchError("no agent to run")
    if options.resume is not None:
        raise SqlbenchError("--resume finishes one run; give it without several agents")
    if project.settings.run.budget is not None and len(agent_names) > 1:
        raise SqlbenchError(
            "run.budget is kept for one agent at a time; run the agents one by one "
            "(sqlbench run --agent NAME)"
        )
    project = with_variants(project, options.variants)
    for name in agent_names:
        agent_config(project, name)  # unknown names fail before anything runs
    questions = pick_questions(project, options.select, options.space, options.shard)
    repeat = options.repeat or 1
    answers = [q for q in questions for _ in range(1 if q.skip is not None else repeat)]
    shared = RunWarehouses(project, answers * len(agent_names))
    try:
        runs: list[_Run] = []
        try:
            for name in agent_names:
                plan = plan_run(project, name, named(options, name), store)
                run = _Run(project, plan, named(options, name), store, progress, shared)
                run._emit(RunCreated(plan.info))
                runs.append(run)
        except BaseException as err:
            for run in runs:  # created before the failing one: not left Running
                store.finish(run.info.id, RunStatus.FAILED, error=describe_error(err))
            raise
        return Batch(project, runs, shared, store, options, progress).execute()
    finally:
        shared.close()


class Stored(NamedTuple):
    """A result as recorded (``_Run._stored``)."""

    result: TrialResult
    data: str
    """Its JSON text in the store (what ``RunStore.load_run`` reads back)."""


@dataclass(frozen=True)
class _Item:
    position: int
    question: Question
    trial: int


STOP_WAIT_S = 10.0
"""How long a run that ends on an error (or Ctrl-C) waits for its threads to finish the query
or call they are in."""


def join_threads(threads: list[threading.Thread], budget: float | None) -> None:
    """Wait for the started ``threads`` to end: without limit, or ``budget`` seconds in all."""
    deadline = None if budget is None else time.monotonic() + budget
    for thread in threads:
        thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))


class _Run:
    def __init__(
        self,
        project: Project,
        plan: RunPlan,
        options: RunOptions,
        store: RunStore,
        progress: ProgressCallback | None,
        shared: RunWarehouses | None = None,
    ) -> None:
        self.shared = shared
        """Warehouses shared with other runs (``run --agent a,b``); None: this run opens and
        closes its own."""
        self.project = project
        self.plan = plan
        self.info = plan.info
        self.options = options
        self.store = store
        self._progress = progress
        self._events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._work: queue.Queue[_Item] = queue.Queue()
        self._stop = threading.Event()
        # Held while recording a result, and while stopping: no result lands after a stop.
        self._record_lock = threading.Lock()
        # How many items the workers have taken; the ground-truth prefetcher stays a bounded
        # number of items ahead of them (so memory holds only truths soon needed).
        self._taken = 0
        self._window = threading.Condition()
        self.settings = project.settings.run
        self.judge: Judge | None = None
        self.judge_note = ""
        self.budget: BudgetGuard | None = None
        """Keeps ``run.budget`` (docs/cost.md); None: no budget."""

    def _emit(self, event: ProgressEvent) -> None:
        if self._progress is not None:
            self._progress(event)

    def execute(self) -> RunResult:
        self._emit(RunCreated(self.info))
        for notice in self.plan.notices:
            self._emit(RunNotice(notice))
        if self.settings.processes not in (1, "auto"):
            self._emit(RunNotice(ONE_AGENT_ONE_PROCESS.format(self.settings.processes)))
        items, total = self._items()
        counts: Counter[Verdict] = Counter()
        if self.plan.resumed:
            counts.update(t.verdict for t in self.store.trials(self.info.id))
        done = total - len(items)
        if self.settings.budget is not None:
            spent = self.store.trials(self.info.id) if self.plan.resumed else ()
            self.budget = BudgetGuard(self.settings.budget, spent)
        try:
            warehouses, agent = self._prepare(items)
        except KeyboardInterrupt:
            self.store.finish(self.info.id, RunStatus.INTERRUPTED)
            raise
        except BaseException as err:
            self.store.finish(self.info.id, RunStatus.FAILED, error=describe_error(err))
            raise
        try:
            agent_note = agent_notice(agent)
            if agent_note:
                self._emit(RunNotice(agent_note))
            if self.judge_note:
                self._emit(RunNotice(self.judge_note))
            self._emit(RunStarted(self.info, total, done, dict(counts), self.plan.resumed))
            self._loop(warehouses, agent, items, done, total, counts)
        except KeyboardInterrupt:
            self._halt()
            self.store.finish(self.info.id, RunStatus.INTERRUPTED)
            raise
        except StoreError as err:
            self._halt()
            raise self._store_fault(err) from err
        except BaseException as err:
            self._halt()
            self.store.finish(self.info.id, RunStatus.FAILED, error=describe_error(err))
            raise
        if self.shared is None:
            warehouses.close()
        stopped = self.budget.stopped if self.budget is not None else None
        if stopped is not None:
            # Stopped asking, everything graded kept: Interrupted, so --resume continues.
            sentence = (
                f"{stopped}; run '{self.info.name}' kept what it graded: `sqlbench run "
                f"--resume {self.info.name}` with a larger run.budget continues it"
            )
            self._emit(RunNotice(sentence))
            self.store.finish(self.info.id, RunStatus.INTERRUPTED, error=sentence)
            return self.store.load_run(self.info.id)
        self.store.finish(self.info.id, RunStatus.COMPLETED)
        return self.store.load_run(self.info.id)

    def _store_fault(self, err: StoreError) -> StoreError:
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

    def _items(self) -> tuple[list[_Item], int]:
        repeat = self.info.repeat
        items: list[_Item] = []
        total = 0
        for position, question in enumerate(self.plan.questions):
            trials = 1 if question.skip is not None else repeat
            total += trials
            for trial in range(trials):
                if (question.space, question.name, trial) not in self.plan.done:
                    items.append(_Item(position, question, trial))
        return items, total

    def _prepare(self, items: list[_Item]) -> tuple[RunWarehouses, Agent]:
        warehouses = self.shared
        if warehouses is None:
            warehouses = RunWarehouses(self.project, [item.question for item in items])
        try:
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
                agent = ReplayedAgent(self.options.regrade.answers)
            else:
                agent = build_agent(self.plan.agent, context)
            if self.options.reuse is not None:
                agent = PartlyReplayedAgent(agent, ReplayedAgent(self.options.reuse.answers))
            self._prepare_judge(context.env)
        except BaseException:
            if self.shared is None:
                warehouses.close()
            raise
        return warehouses, agent

    def _prepare_judge(self, env: Mapping[str, str]) -> None:
        """The judge for judged metrics, or the notice saying once why they are not computed."""
        settings = self.project.settings
        endpoint, why = resolve_judge(settings.judge, env)
        self.judge = Judge(endpoint, self.store, env) if endpoint is not None else None
        self.judge_note = ""
        if self.judge is None and wants_judge(self.plan.questions, settings.metrics):
            self.judge_note = f"judged metrics are not computed: {why}"

    def _loop(
        self,
        warehouses: RunWarehouses,
        agent: Agent,
        items: list[_Item],
        done: int,
        total: int,
        counts: Counter[Verdict],
    ) -> None:
        for item in items:
            self._work.put(item)
        concurrency = self.options.concurrency or self.settings.concurrency
        workers = [
            threading.Thread(
                target=self._worker, args=(warehouses, agent), daemon=True, name=f"sqlbench-run-{i}"
            )
            for i in range(min(concurrency, len(items)))
        ]
        beat = threading.Thread(target=self._heartbeat, daemon=True, name="sqlbench-heartbeat")
        beat.start()
        ahead = threading.Thread(
            target=self._prefetch,
            args=(warehouses, items, len(workers)),
            daemon=True,
            name="sqlbench-truths",
        )
        ahead.start()
        for worker in workers:
            worker.start()
        ended = False
        try:
            graded = 0
            while graded < len(items):
                try:
                    kind, payload = self._events.get(timeout=0.5)
                except queue.Empty:
                    if not any(w.is_alive() for w in workers):
                        if self.budget is not None and self.budget.stopped is not None:
                            break  # the budget stopped the workers: what they graded is kept
                        raise RuntimeError(
                            "the run's workers stopped before every question was graded"
                        ) from None
                    self._emit(RunWaiting())
                    continue
                if kind == "crash":
                    raise payload
                if kind == "notice":
                    self._emit(RunNotice(payload))
                    continue
                graded += 1
                counts[payload.verdict] += 1
                self._emit(QuestionGraded(payload, done + graded, total, dict(counts)))
            ended = True
        finally:
            self._stop.set()
            with self._window:
                self._window.notify_all()
            # No thread of this run may be inside a warehouse's engine once the run ends: an
            # error ends the process, and a daemon thread stopped inside DuckDB at interpreter
            # exit aborts it ("terminate called without an active exception", exit -6).
            join_threads([*workers, ahead, beat], None if ended else STOP_WAIT_S)

    def _halt(self) -> None:
        """Stop the workers; once this returns, nothing more is recorded for this run (an
        answer still in flight is dropped: it was not graded when the run stopped)."""
        with self._record_lock:
            self._stop.set()

    def _worker(self, warehouses: RunWarehouses, agent: Agent) -> None:
        while not self._stop.is_set():
            if self._work.empty():
                return
            if self.budget is not None and not self.budget.admit(self._stop.is_set):
                return
            try:
                item = self._work.get_nowait()
            except queue.Empty:
                if self.budget is not None:
                    self.budget.settle(None)
                return
            with self._window:
                self._taken += 1
                self._window.notify_all()
            try:
                result = self._grade(warehouses, agent, item)
                reuse = self.options.reuse
                if reuse is not None and (result.space, result.name) in reuse.answers:
                    result = result.model_copy(
                        update={"reason": f"{REUSED_LABEL}: {result.reason}"}
                    )
                with self._record_lock:
                    if self._stop.is_set():
                        return
                    result = self._record(result)
            except BaseException as err:  # handed to the caller's thread, which re-raises it
                self._events.put(("crash", err))
                return
            if self.budget is not None:
                self.budget.settle(result)
            self._events.put(("graded", result))

    def _record(self, result: TrialResult) -> TrialResult:
        """Store one result; one whose content cannot be stored (a value the record cannot
        hold) is stored as an error saying so, with its verdict and reason kept in the reason.
        A store that fails on that too is the run's failure."""
        return self._stored(result).result

    def _stored(self, result: TrialResult) -> Stored:
        """``_record``, with the JSON text stored."""
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
                reason=one_line(f"{fault_reason('storing this answer', err)}; {kept}", 400),
                timings_ms=result.timings_ms,
            )
            return Stored(stored, self.store.record(self.info.id, stored))

    def _prefetch(self, warehouses: RunWarehouses, items: list[_Item], lookahead: int) -> None:
        """Run ground truths of upcoming items while the workers wait on the agent."""
        try:
            for index, item in enumerate(items):
                with self._window:
                    while not self._stop.is_set() and index >= self._taken + lookahead:
                        self._window.wait()
                if self._stop.is_set():
                    return
                if item.question.skip is None:
                    warehouses.of(item.question).truths.prefetch(ground_truths(item.question))
        except BaseException as err:  # handed to the caller's thread, which re-raises it
            self._events.put(("crash", err))

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.options.heartbeat_s):
            try:
                self.store.heartbeat(self.info.id)
            except (SQLAlchemyError, StoreError) as err:
                # Not fatal by itself (the next beat may work); a store that stays down fails
                # the run through the next result it cannot record.
                self._events.put(("notice", f"heartbeat not recorded: {describe_error(err)}"))

    def _grade(
        self,
        warehouses: RunWarehouses,
        agent: Agent,
        item: _Item,
        shared: SharedSql | None = None,
    ) -> TrialResult:
        warehouse = warehouses.of(item.question)
        graded = grade_answer(
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
        return priced(
            graded, self.project.settings.pricing, settings_model(self.info.agent_settings)
        )


ONE_AGENT_ONE_PROCESS = (
    "run.processes is {}, but a run of one agent is graded in one process (several processes "
    "grade `run --agent a,b,...` of replayed answers)"
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
