"""The run loop: one run per agent, stored as usual, executed together question by question. A
run of one agent (``run_benchmark``) is a batch of one; several (``run --agent a,b,c``,
``run_benchmarks``) run together.

Every agent's answers to a question are graded one after another, so a ground truth runs
once and its result is dropped as soon as the last answer to it is graded; agent SQL written
alike runs once (``runs/shared_sql.py``). Workers grade on daemon threads; the caller's thread
only receives graded results and reports them through the progress callback, so Ctrl-C
(KeyboardInterrupt) is handled there: every unfinished run is marked Interrupted with
everything graded kept, and re-raised. A heartbeat thread keeps each run's ``updated_at``
fresh so other processes can tell a live run from a dead one; a store that fails a heartbeat
is tried again at the next (a store that stays down fails the run through the next result it
cannot record). A ground truth that fails while running ahead of its answers is its
question's verdict (``error``, with the reason), never the run's end.

The runs of a batch are independent: an agent that cannot be built (a missing predictions
file, a command that is not found) or a run that breaks fails alone, with one sentence, and the
others complete. A batch of one raises its run's failure to the caller once the run is stored
as Failed (a store that fails: Interrupted, which ``--resume`` finishes).

``run.budget`` (docs/cost.md) is kept for each run of the batch on its own (every agent's run
may spend the budget): a worker that takes an answer asks that run's guard (``runs/budget.py``)
before asking the agent, and settles it once graded; an answer the guard refuses is not asked
(as a failed run's). A run the budget stopped is stored Interrupted, with everything graded kept
and the sentence saying so, and ``--resume`` continues it; the batch's other runs go on.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from sqlbench.agents.base import Agent
from sqlbench.agents.registry import agent_notice
from sqlbench.errors import QueryProcessError, StoreError
from sqlbench.records.run import RunStatus, TrialResult
from sqlbench.runs import forked
from sqlbench.runs.agent_run import AgentRun, Item, describe_error
from sqlbench.runs.budget import BudgetGuard
from sqlbench.runs.events import (
    ProgressCallback,
    QuestionGraded,
    RunNotice,
    RunStarted,
    RunWaiting,
)
from sqlbench.runs.faults import stage_error
from sqlbench.runs.shared_sql import SharedAnswers, SharedSql
from sqlbench.truth import ground_truths
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.project.files import Project, Question
    from sqlbench.runs.plan import RunOptions
    from sqlbench.runs.store import RunStore
    from sqlbench.runs.warehouses import RunWarehouses

STOP_WAIT_S = 10.0
"""How long a batch that ends on an error (or Ctrl-C) waits for its threads to finish the query
or call they are in."""

ONE_AGENT_ONE_PROCESS = (
    "run.processes is {}, but a run of one agent is graded in one process (several processes "
    "grade `run --agent a,b,...` of replayed answers)"
)

_STAND_IN_AFTER_S = 0.5
"""How long the one worker (and each stand-in before the next) is held up by one answer before
a stand-in grades the next ones (``Batch._stand_in``)."""

_READ_PARENT_EVERY_S = 0.05
"""How often a forked process reads its parent's messages between answers (a poll each answer
cost a selector each)."""


@dataclass(frozen=True)
class _Work:
    run: AgentRun
    item: Item
    capped: bool = False
    """Its run's ``run.budget`` refused it: not asked."""


class _Claims:
    """The groups of a batch's work (``Batch._groups``) as one forked process takes them.

    Every process takes the next group not yet taken, in order, from a counter they share, when
    it runs out of work: a process that meets slow queries takes fewer groups, and the others
    do the rest, so no process idles while one still grades a share dealt out before anybody
    knew what it would cost (BIRD dev in two processes, dealt out in turn: one ended 1.35 s of
    a 7 s batch before the other). Without a shared counter (a system that gives no
    semaphores), process ``index`` takes every ``processes``-th group.

    ``taken(group)`` is called for each group this process takes.
    """

    def __init__(
        self,
        groups: list[list[_Work]],
        counter: forked.SharedCounter | None,
        index: int,
        processes: int,
        taken: Callable[[list[_Work]], None],
    ) -> None:
        self.groups = groups
        self.processes = processes
        self._counter = counter
        self._next = index
        self._taken = taken
        self._closed = False
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Take the next group; False when none is left (or after ``close``)."""
        with self._lock:
            if self._closed:
                return False
            index = self._claim()
            if index >= len(self.groups):
                self._closed = True
                return False
            self._taken(self.groups[index])
            return True

    def _claim(self) -> int:
        if self._counter is None:
            index = self._next
            self._next += self.processes
            return index
        return self._counter.take_below(len(self.groups))

    def close(self) -> None:
        """Take nothing more."""
        self._closed = True


class Batch:
    """Runs ``runs`` together; see the module docstring.

    Args:
        alone: The one run of ``run_benchmark``: its events name no run, its failure is raised
            to the caller (once stored), and it is graded in one process.
    """

    def __init__(
        self,
        project: Project,
        runs: list[AgentRun],
        warehouses: RunWarehouses,
        store: RunStore,
        options: RunOptions,
        progress: ProgressCallback | None,
        *,
        alone: bool = False,
    ) -> None:
        self.project = project
        self.runs = runs
        self.warehouses = warehouses
        self.store = store
        self.options = options
        self.alone = alone
        self._progress = progress
        self._events: queue.Queue[tuple[str, Any, Any]] = queue.Queue()
        self._work: queue.Queue[_Work] = queue.Queue()
        self._stop = threading.Event()
        self._record_lock = threading.Lock()
        self._failed: dict[str, str] = {}
        """Run id -> why it failed."""
        self._errors: dict[str, BaseException] = {}
        """Run id -> what ended it (raised to the caller of a batch that is ``alone``)."""
        self._done: dict[str, int] = {}
        """Run id -> answers graded (a resumed run's stored ones included)."""
        self._totals: dict[str, int] = {}
        """Run id -> answers it needs in all."""
        self._counts: dict[str, Counter[Verdict]] = {}
        """Run id -> verdicts so far (a resumed run's stored ones included)."""
        self._helpers: list[threading.Thread] = []
        """The ground-truth prefetcher and the heartbeat, joined with the workers."""
        self._shared: dict[tuple[str, str], SharedAnswers] = {}
        self._shared_lock = threading.Lock()
        self._taken = 0
        self._window = threading.Condition()
        self._claims: _Claims | None = None
        """In a forked process: the groups of work it takes as it runs out."""
        self._parent_conn: Connection | None = None
        """In a forked process: its pipe to the parent (the parent's messages are read here)."""
        self._outbox: forked.Outbox | None = None
        """In a forked process: its messages to the parent."""
        self._parent_read_at = 0.0
        """When a forked process last read its parent's messages (``time.monotonic``)."""
        self._held: list[float | None] | None = None
        """With stand-ins (``_stand_in``: a forked process, or a batch that waits on SQLite
        files only): per grader, the worker first, then each stand-in, when it began the answer
        it is grading (None between answers)."""
        self._first_done = threading.Event()
        """With stand-ins: the worker found nothing left to grade."""
        self._parent_lock = threading.Lock()
        """In a forked process: held by the grader reading the parent's messages."""
        self._budgets: dict[str, BudgetGuard] = {}
        """Each run's guard of ``run.budget``, by run id (none: no budget)."""

    def _emit(self, event: Any) -> None:
        if self._progress is not None:
            self._progress(event)

    def execute(self) -> list[str]:
        """Prepare each run's agent (a run whose agent cannot be built fails alone), grade
        every answer, and finish each run; the runs' ids, in the given order (each run is
        stored: ``store.load_run``).

        Raises:
            KeyboardInterrupt: Ctrl-C; every unfinished run is stored as Interrupted first.
            Exception: ``alone``: what ended the run (a ``StoreError`` saying how to resume).
        """
        agents: dict[str, Agent] = {}
        items: dict[str, list[Item]] = {}
        started: list[AgentRun] = []
        processes, why_one = self._processes()
        # Forking: the events wait until the children are forked (a live progress display
        # starts a thread, and a process forks only while its main thread is the only one).
        held: list[Any] = []
        emit = held.append if processes > 1 else self._emit
        if why_one is not None:
            self._emit(RunNotice(why_one))
        try:
            for run in self.runs:
                for notice in run.plan.notices:
                    emit(RunNotice(notice))
                todo, total = run.items()
                try:
                    agent = run.prepare(self.warehouses)
                except KeyboardInterrupt:
                    raise
                except BaseException as err:
                    self._fail(run, err)
                    for item in todo:
                        self._release_truths(item)
                    continue
                rid = run.info.id
                budget = run.start_budget()
                if budget is not None:
                    self._budgets[rid] = budget
                agents[rid] = agent
                items[rid] = todo
                started.append(run)
                self._totals[rid] = total
                self._done[rid] = total - len(todo)
                self._counts[rid] = Counter(run.stored_counts())
                for note in (agent_notice(agent), run.judge_note):
                    if note:
                        emit(RunNotice(note))
                emit(
                    RunStarted(
                        run.info,
                        total,
                        self._done[rid],
                        dict(self._counts[rid]),
                        run.plan.resumed,
                        together=not self.alone,
                    )
                )
            if processes > 1:
                self._forked(started, agents, items, processes, held)
            elif started:
                self._loop(started, agents, items)
        except KeyboardInterrupt:
            self._finish_unfinished(RunStatus.INTERRUPTED)
            raise
        except BaseException as err:
            self._finish_unfinished(RunStatus.FAILED, describe_error(err))
            raise
        for run in started:
            if run.info.id in self._failed:
                continue
            stopped = run.budget_stop()
            if stopped is not None:
                # Stopped asking, everything graded kept: Interrupted, so --resume continues.
                self._emit(RunNotice(stopped))
                self.store.finish(run.info.id, RunStatus.INTERRUPTED, error=stopped)
            else:
                self.store.finish(run.info.id, RunStatus.COMPLETED)
        if self.alone:
            self._raise_failure()
        return [run.info.id for run in self.runs]

    def _finish_unfinished(self, status: RunStatus, error: str | None = None) -> None:
        """The batch stops (Ctrl-C, or an error of its own): nothing more is recorded, and
        each run not failed already is stored with ``status``."""
        with self._record_lock:
            self._stop.set()
        for run in self.runs:
            if run.info.id not in self._failed:
                self.store.finish(run.info.id, status, error=error)

    def _raise_failure(self) -> None:
        """A batch of one: its run's failure, raised as the caller's."""
        for run in self.runs:
            err = self._errors.get(run.info.id)
            if isinstance(err, StoreError):
                raise run.store_fault(err) from err
            if err is not None:
                raise err

    def _fail(self, run: AgentRun, err: BaseException) -> None:
        """``run`` ends on ``err``: stored as Failed (alone, on a store error: Interrupted, by
        ``_raise_failure``); a batch of one stops."""
        self._errors[run.info.id] = err
        if self.alone:
            self._stop.set()
            if isinstance(err, StoreError):
                self._failed[run.info.id] = describe_error(err)
                return
        self._fail_why(run, describe_error(err))

    def _fail_why(self, run: AgentRun, why: str) -> None:
        self._failed[run.info.id] = why
        self.store.finish(run.info.id, RunStatus.FAILED, error=why)

    def _processes(self) -> tuple[int, str | None]:
        """How many processes grade this batch (``forked.process_count``), and the notice
        saying why one when more were asked for."""
        setting = self.project.settings.run.processes
        if setting == 1:
            return 1, None
        if self.alone:
            return 1, None if setting == "auto" else ONE_AGENT_ONE_PROCESS.format(setting)
        answers = [item for run in self.runs for item in run.items().todo]
        questions = {(item.question.space, item.question.name) for item in answers}
        return forked.process_count(
            setting, answers=len(answers), questions=len(questions), refusal=self._fork_refusal
        )

    def _fork_refusal(self) -> str | None:
        """Why this batch cannot be graded in forked processes (see ``runs/forked.py``)."""
        if self.project.settings.run.budget is not None:
            return "run.budget is kept in one process"
        if self.options.variants:
            return "--variants grades on data variants"
        if self.options.regrade is not None or self.options.reuse is not None:
            return "it replays stored answers"
        for run in self.runs:
            if run.plan.agent.kind != "replay":
                return (
                    f"agent {run.plan.agent.name} is a {run.plan.agent.kind} agent "
                    "(only replayed answers are graded in several processes)"
                )
        return self.warehouses.fork_refusal() or forked.fork_refusal()

    def _loop(
        self, runs: list[AgentRun], agents: dict[str, Agent], items: dict[str, list[Item]]
    ) -> None:
        order = _question_major(runs, items)
        beat = threading.Thread(
            target=self._heartbeat, args=(runs,), daemon=True, name="sqlbench-heartbeat"
        )
        beat.start()
        self._helpers.append(beat)
        workers = self._start(order, agents, self._concurrency())
        ended = False
        try:
            handled = 0
            while handled < len(order):
                try:
                    kind, run, payload = self._events.get(timeout=0.5)
                except queue.Empty:
                    if not any(w.is_alive() for w in workers):
                        # Every remaining item belonged to a failed run, or run.budget
                        # stopped the workers (what they graded is kept).
                        break
                    self._emit(RunWaiting())
                    continue
                if kind == "notice":
                    self._emit(RunNotice(payload))
                    continue
                handled += 1
                if kind == "skipped":
                    continue
                if kind == "crash":
                    if self.alone:
                        break  # raised by execute once every thread has stopped
                    if payload:  # the first of this run's failures
                        why = self._failed[run.info.id]
                        self._emit(RunNotice(f"run {run.info.name} failed: {why}"))
                    continue
                self._graded_event(run, payload)
            ended = not self._errors or not self.alone
        finally:
            # No thread of a batch may be inside a warehouse's engine once it ends: an error
            # ends the process, and a daemon thread stopped inside DuckDB at interpreter exit
            # aborts it ("terminate called without an active exception", exit -6).
            self._stop_workers(workers, None if ended else STOP_WAIT_S)

    def _graded_event(self, run: AgentRun, result: TrialResult) -> None:
        """Report one graded answer of ``run``."""
        rid = run.info.id
        self._counts[rid][result.verdict] += 1
        self._done[rid] += 1
        self._emit(
            QuestionGraded(
                result,
                self._done[rid],
                self._totals[rid],
                dict(self._counts[rid]),
                None if self.alone else run.info,
            )
        )

    def _concurrency(self) -> int:
        return self.options.concurrency or self.project.settings.run.concurrency

    def _start(
        self, order: list[_Work], agents: dict[str, Agent], concurrency: int
    ) -> list[threading.Thread]:
        """Queue ``order`` and start the threads that grade it: when its answers wait on
        nothing but SQLite files (``_waits_on_sqlite_only``), one worker and its stand-ins, as
        in a forked process; else the ground-truth prefetcher and ``concurrency`` workers
        (agents that think, judges and servers are waited on side by side)."""
        self._queue(order)
        if self._waits_on_sqlite_only():
            stand_ins = self._stand_ins(agents, max(0, min(concurrency, forked.cores()) - 1))
            first = threading.Thread(
                target=self._first_worker, args=(agents,), daemon=True, name="sqlbench-run-0"
            )
            first.start()
            return [first, *stand_ins]
        return self._threads(agents, min(concurrency, len(order)), order)

    def _stand_ins(self, agents: dict[str, Agent], count: int) -> list[threading.Thread]:
        """Start ``count`` stand-ins (``_stand_in``) for the one worker."""
        self._held = [None] * (count + 1)
        threads = [
            threading.Thread(
                target=self._stand_in,
                args=(agents, slot),
                daemon=True,
                name="sqlbench-stand-in" if slot == 1 else f"sqlbench-stand-in-{slot}",
            )
            for slot in range(1, count + 1)
        ]
        for thread in threads:
            thread.start()
        return threads

    def _waits_on_sqlite_only(self) -> bool:
        """Whether grading this batch waits on nothing but SQLite files: every agent replays
        recorded answers, no run has a judge, and no answer is graded on data variants or
        replayed from the store. Its workers then only take the interpreter lock from each
        other: in one process, Spider took 11.2-11.4 s with 8 workers and the prefetcher
        (308k voluntary context switches) against 7.8-10.3 s with one worker."""
        options = self.options
        if options.variants or options.regrade is not None or options.reuse is not None:
            return False
        if any(run.plan.agent.kind != "replay" or run.judge is not None for run in self.runs):
            return False
        return self.warehouses.fork_refusal() is None

    def _first_worker(self, agents: dict[str, Agent]) -> None:
        """``_worker``, the one its stand-ins watch; they end after it."""
        try:
            self._worker(agents)
        finally:
            self._first_done.set()

    def _queue(self, works: list[_Work]) -> None:
        """Queue ``works`` for the workers, every answer to one of their questions among them
        (its agent SQL is shared by that count of answers)."""
        uses = Counter((w.item.question.space, w.item.question.name) for w in works)
        with self._shared_lock:
            for key, count in uses.items():
                self._shared[key] = SharedAnswers(count)
        for work in works:
            self._work.put(work)

    def _threads(
        self, agents: dict[str, Agent], count: int, upcoming: Iterable[_Work]
    ) -> list[threading.Thread]:
        """Start the ground-truth prefetcher over ``upcoming`` and ``count`` worker threads."""
        workers = [
            threading.Thread(
                target=self._worker, args=(agents,), daemon=True, name=f"sqlbench-run-{i}"
            )
            for i in range(count)
        ]
        ahead = threading.Thread(
            target=self._prefetch, args=(upcoming, count), daemon=True, name="sqlbench-truths"
        )
        ahead.start()
        self._helpers.append(ahead)
        for worker in workers:
            worker.start()
        return workers

    def _stop_workers(self, workers: list[threading.Thread], budget: float | None = None) -> None:
        """Stop the graders and the helpers, and wait for them to end: without limit, or
        ``budget`` seconds in all (a batch ending on an error or Ctrl-C)."""
        self._stop.set()
        if self._claims is not None:
            self._claims.close()
        with self._window:
            self._window.notify_all()
        deadline = None if budget is None else time.monotonic() + budget
        for thread in [*workers, *self._helpers]:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    # --- several processes (runs/forked.py) ----------------------------------------------

    def _forked(
        self,
        runs: list[AgentRun],
        agents: dict[str, Agent],
        items: dict[str, list[Item]],
        processes: int,
        held: list[Any],
    ) -> None:
        """``_loop`` with the questions dealt out to ``processes`` forked processes; ``held``:
        the events of the preparation, given once the children are forked."""
        order = _question_major(runs, items)
        groups = self._groups(order)
        why = forked.fork_refusal()  # checked again: a thread may have started since
        if any(run.judge is not None for run in runs):
            why = "judged metrics call the judge's endpoint (not tried in several processes)"
        children: list[forked.Child] = []
        finished = False
        try:
            if why is None:
                writing = forked.shared_lock()
                counter = forked.shared_counter()
                try:
                    forked.fork_children(
                        processes,
                        lambda index, conn: self._child(
                            conn,
                            _Claims(groups, counter, index, processes, self._took),
                            agents,
                            writing,
                        ),
                        children,
                    )
                except OSError as err:
                    why = f"cannot fork: {err.strerror or err}"
            for event in held:
                self._emit(event)
            if why is not None:
                if self.project.settings.run.processes != "auto":
                    self._emit(RunNotice(f"this batch is graded in one process: {why}"))
                self._loop(runs, agents, items)
                return
            by_id = {run.info.id: run for run in runs}
            threading.Thread(
                target=self._heartbeat, args=(runs,), daemon=True, name="sqlbench-heartbeat"
            ).start()
            self._parent(children, by_id)
            finished = True
        finally:
            self._stop.set()
            # Done: each child is exiting on its own; else (Ctrl-C, an error) none may go on.
            forked.stop_children(children, kill=not finished)

    def _groups(self, order: list[_Work]) -> list[list[_Work]]:
        """``order`` in the groups the processes take (``_Claims``): questions with the same
        ground truth on the same warehouse go together (their truth then runs once, and an
        agent's SQL repeated for them is parsed and run in one process), each question with
        every agent's answer to it; the groups in the order their first question comes."""
        groups: dict[Any, list[_Work]] = {}
        group_of: dict[tuple[str, str], Any] = {}
        for work in order:
            question = work.item.question
            key = (question.space, question.name)
            group = group_of.get(key)
            if group is None:
                truths = tuple(ground_truths(question)) if question.skip is None else ()
                group = (self.project.warehouse_of(question), truths) if truths else key
                group_of[key] = group
            groups.setdefault(group, []).append(work)
        return list(groups.values())

    def _parent(
        self,
        children: list[forked.Child],
        runs: dict[str, AgentRun],
    ) -> None:
        """Receive the children's events until each has ended; report them as ``_loop``
        does. A child that ends before its work is graded fails every run (any run may have
        answers among the groups it took)."""
        live = {child.conn: child for child in children}
        while live:
            ready = wait(list(live), timeout=0.5)
            while not self._events.empty():  # this process's own: the heartbeat's notices
                _, _, notice = self._events.get_nowait()
                self._emit(RunNotice(notice))
            if not ready:
                self._emit(RunWaiting())
                continue
            for found in ready:
                child = live[found]  # type: ignore[index]
                try:
                    message: tuple[str, Any, Any] = child.conn.recv()
                    kind, rid, payload = message
                except (EOFError, OSError):
                    del live[child.conn]
                    if not child.done:
                        self._child_lost(child, runs, live.values())
                    continue
                if kind == "done":
                    child.done = True
                elif kind == "notice":
                    self._emit(RunNotice(payload))
                elif kind == "crash":  # the child stored the run as failed
                    self._run_failed(runs[rid], payload, live.values(), stored=True)
                elif kind == "graded":  # (run id, the record as stored), ...
                    for rid, text in payload:
                        if rid not in self._failed:
                            self._graded_event(runs[rid], TrialResult.model_validate_json(text))

    def _run_failed(self, run: AgentRun, why: str, children: Any, *, stored: bool = False) -> None:
        if run.info.id in self._failed:
            return
        if stored:
            self._failed[run.info.id] = why
        else:
            self._fail_why(run, why)
        self._emit(RunNotice(f"run {run.info.name} failed: {why}"))
        for child in children:  # the others stop grading its answers
            with contextlib.suppress(OSError, ValueError):
                child.conn.send(("failed", run.info.id, why))

    def _child_lost(self, child: forked.Child, runs: dict[str, AgentRun], others: Any) -> None:
        forked.stop_children([child])
        if forked.stopped_on_request(child):
            # SIGTERM to the process group (a cancelled CI job) may reach a child before
            # this process: the batch stops as on Ctrl-C.
            raise KeyboardInterrupt
        why = (
            f"the process grading part of its answers (pid {child.pid}) "
            f"{forked.how_it_ended(child)} before it finished"
        )
        for run in runs.values():
            self._run_failed(run, why, others)

    def _child(
        self,
        conn: Connection,
        claims: _Claims,
        agents: dict[str, Agent],
        writing: AbstractContextManager[Any] | None,
    ) -> None:
        """A forked process: grade the groups of work it takes (``claims``), in this thread,
        and send each event to the parent; the parent's store and warehouse connections are
        left alone. ``writing``: the lock the children take around each store write.

        One worker and no ground-truth prefetcher: replayed answers wait on nothing but the
        database, whose queries keep this process's core busy on their own. A second worker
        always at it, the prefetcher and a thread passing events on only handed the interpreter
        lock around (Spider: 61k voluntary context switches and 1.5 s of system CPU, against
        8.6k and 0.85 s, and 5.9-6.1 s against 5.0-5.1 s of wall time; docs/performance.md).
        A stand-in (``_stand_in``) grades only while the worker is held up by a slow answer.
        """
        self.store.after_fork(writing)
        self.warehouses.after_fork()
        for group in claims.groups:  # nothing is needed here until this process takes it
            for work in group:
                self._release_truths(work.item)
        self._claims = claims
        self._parent_conn = conn
        outbox = self._outbox = forked.Outbox(conn)
        # At most one stand-in (the processes are one per idle core already), none when
        # run.concurrency leaves this process one grader.
        share = -(-self._concurrency() // claims.processes)
        stand_ins = self._stand_ins(agents, min(1, share - 1))
        try:
            self._worker(agents)
            self._first_done.set()
            for stand_in in stand_ins:
                stand_in.join()  # its last answer
        finally:
            self._first_done.set()
            self._stop_workers(stand_ins)
        outbox.close()
        forked.send(conn, ("done", None, None))
        conn.close()

    def _took(self, group: list[_Work]) -> None:
        """A group this process took (``_Claims``): its ground truths are needed here, and its
        answers queued for the worker."""
        for work in group:
            question = work.item.question
            if question.skip is None:
                self.warehouses.of(question).truths.expect(ground_truths(question))
        self._queue(group)

    def _event(self, kind: str, run: AgentRun, payload: Any) -> None:
        """A worker's event: for this process's loop (``_loop``) or, in a forked process, sent
        to the parent (``_parent``), which needs neither a skipped answer nor a run's failures
        after its first."""
        outbox = self._outbox
        if outbox is None:
            self._events.put((kind, run, payload))
        elif kind == "graded":
            outbox.record((run.info.id, payload))
        elif kind == "crash" and payload:  # the first of this run's failures
            outbox.send(("crash", run.info.id, self._failed[run.info.id]))

    def _from_parent(self) -> None:
        """In a forked process, at most every ``_READ_PARENT_EVERY_S``: the runs the parent
        said failed (another process's crash); their answers left here are skipped. The
        parent gone (EOF) ends this process."""
        conn = self._parent_conn
        if conn is None:
            return
        now = time.monotonic()
        if now < self._parent_read_at + _READ_PARENT_EVERY_S:
            return
        if not self._parent_lock.acquire(blocking=False):
            return  # the other worker is reading them
        try:
            self._parent_read_at = now
            while conn.poll():
                _, rid, why = conn.recv()
                with self._record_lock:
                    self._failed.setdefault(rid, why)
        finally:
            self._parent_lock.release()

    def _worker(self, agents: dict[str, Agent]) -> None:
        """Grade answers until none is left to take (or the batch stops)."""
        slot = 0 if self._held is not None else None  # the one worker, with stand-ins
        while not self._stop.is_set():
            work = self._next_work()
            if work is None or not self._graded(work, agents, slot=slot):
                return

    def _stand_in(self, agents: dict[str, Agent], slot: int) -> None:
        """A stand-in for the one worker (a forked process, or a batch that waits on SQLite
        files only), at ``slot``: it grades the next answers only while the worker and every
        stand-in before it have been held up in one answer for ``_STAND_IN_AFTER_S`` (slow
        queries; SQLite lets the interpreter go meanwhile), and sleeps otherwise. Two workers
        always at it passed the interpreter lock back and forth on every answer; one alone
        left its core idle beside a slow query (BIRD mini-dev: 33 s against 19 s, its two
        15 s queries one after the other). A forked process has at most one (the processes
        are one per idle core); one process has one fewer than its cores; and there are at most
        ``run.concurrency`` graders in all (shared out over the processes)."""
        while not self._first_done.wait(_STAND_IN_AFTER_S / 2):
            while self._all_held(slot):
                work = self._next_work()
                if work is None or not self._graded(work, agents, slot=slot):
                    return

    def _all_held(self, slot: int) -> bool:
        """Whether every grader before stand-in ``slot`` (the worker, then the stand-ins
        before it) has been held up in one answer for ``_STAND_IN_AFTER_S``."""
        held = self._held or []
        now = time.monotonic()
        return all(since is not None and now - since >= _STAND_IN_AFTER_S for since in held[:slot])

    def _next_work(self) -> _Work | None:
        """The next answer to grade, taking the next group (``_Claims``) when none is queued;
        None when none is left. With ``run.budget``, its run's guard admits it (counting it in
        flight until ``_graded`` settles it), else it comes ``capped``: asking it would pass
        the budget."""
        work = self._take_work()
        if work is None or not self._budgets:
            return work
        budget = self._budgets.get(work.run.info.id)
        if budget is None or budget.admit(self._stop.is_set):
            return work
        return replace(work, capped=True)

    def _take_work(self) -> _Work | None:
        claims = self._claims
        while True:
            try:
                return self._work.get_nowait()
            except queue.Empty:
                if claims is None or not claims.take():
                    return None

    def _graded(self, work: _Work, agents: dict[str, Agent], *, slot: int | None) -> bool:
        """Grade and store ``work`` (``slot``: the grader's place among the worker and its
        stand-ins, which watch it); False when the batch stopped meanwhile."""
        self._from_parent()
        if self._held is None:  # workers with the ground-truth prefetcher: it follows them
            with self._window:
                self._taken += 1
                self._window.notify_all()
        run, item = work.run, work.item
        key = (item.question.space, item.question.name)
        held = self._held if slot is not None else None
        if held is not None and slot is not None:
            held[slot] = time.monotonic()
        spent: TrialResult | None = None  # the stored result, for run.budget (None: not graded)
        try:
            if work.capped or run.info.id in self._failed:
                self._release_truths(item)
                self._event("skipped", run, None)
                return True
            try:
                result = run.grade(
                    self.warehouses, agents[run.info.id], item, SharedSql(self._shared[key])
                )
                with self._record_lock:
                    if self._stop.is_set():
                        return False
                    if run.info.id in self._failed:
                        self._event("skipped", run, None)
                        return True
                    stored = run.stored(result)
                    spent = stored.result
            except BaseException as err:  # this run's failure; the others go on
                # Failed here, not when the loop reads the event: a worker must not grade
                # and store this run's next answers in between.
                with self._record_lock:
                    first = run.info.id not in self._failed
                    if first:
                        self._fail(run, err)
                self._event("crash", run, first)
                return True
            # A forked process sends the parent the record's stored text: it is made already,
            # and it is read back (validate_json) in about half the CPU of unpickling the
            # result it came from, which the child would have pickled too.
            payload = stored.data if self._claims is not None else stored.result
            self._event("graded", run, payload)
            return True
        finally:
            if held is not None and slot is not None:
                held[slot] = None
            budget = self._budgets.get(run.info.id)
            if budget is not None and not work.capped:
                budget.settle(spent)
            self._release(key)

    def _release_truths(self, item: Item) -> None:
        """An answer that will not be graded (its run failed) needs its ground truth no more."""
        if item.question.skip is None:
            self.warehouses.of(item.question).truths.release(ground_truths(item.question))

    def _release(self, key: tuple[str, str]) -> None:
        with self._shared_lock:
            shared = self._shared.get(key)
            if shared is None:
                return
            shared.uses -= 1
            if shared.uses <= 0:
                del self._shared[key]

    def _prefetch(self, order: Iterable[_Work], lookahead: int) -> None:
        """Run ground truths of upcoming questions while the workers wait on agents. What
        fails here is that question's verdict (``TruthCache.failed_ahead``), and the next
        questions are run ahead still."""
        seen: set[tuple[str, str]] = set()
        try:
            for index, work in enumerate(order):
                question: Question = work.item.question
                key = (question.space, question.name)
                if key in seen:
                    continue
                seen.add(key)
                with self._window:
                    while not self._stop.is_set() and index >= self._taken + lookahead:
                        self._window.wait()
                if self._stop.is_set():
                    return
                if question.skip is None:
                    truths = self.warehouses.of(question).truths
                    sqls = ground_truths(question)
                    try:
                        truths.prefetch(sqls)
                    except QueryProcessError:
                        return  # the worker asking for it meets it too, and ends the run
                    except Exception as err:  # graded as its question's, not the run's end
                        truths.failed_ahead(sqls, stage_error("running it ahead", err))
        except Exception as err:  # a ground truth's failure is graded with its question
            self._events.put(("notice", None, f"running ground truth ahead stopped: {err}"))

    def _heartbeat(self, runs: list[AgentRun]) -> None:
        while not self._stop.wait(self.options.heartbeat_s):
            for run in runs:
                if run.info.id in self._failed:
                    continue
                try:
                    self.store.heartbeat(run.info.id)
                except (SQLAlchemyError, StoreError) as err:
                    # Not fatal by itself: the next beat tries again, and a store that stays
                    # down fails the run through the next result it cannot record.
                    self._events.put(
                        ("notice", run, f"heartbeat not recorded: {describe_error(err)}")
                    )


def _question_major(runs: list[AgentRun], items: dict[str, list[Item]]) -> list[_Work]:
    """Every agent's answer to a question before the next question."""
    order: list[_Work] = []
    by_position: dict[int, list[_Work]] = {}
    for run in runs:
        for item in items[run.info.id]:
            by_position.setdefault(item.position, []).append(_Work(run, item))
    for position in sorted(by_position):
        order.extend(by_position[position])
    return order


def named(options: RunOptions, agent: str) -> RunOptions:
    """``options`` for one agent's run of a batch: ``--name N`` becomes ``N-AGENT``."""
    if options.name is None:
        return options
    return replace(options, name=f"{options.name}-{agent}")
