"""Running a benchmark (docs/commands.md, docs/verdicts.md and docs/runs.md): ask the agent every
selected question, execute both SQL texts, grade, and commit each result to the store the moment it
is graded.

The entry points: one agent's run (``run_benchmark``), several agents' runs together
(``run_benchmarks``), and a stored run graded again (``regrade_run``). Each plans its runs
(``runs/plan.py``), opens the warehouses, and hands them to the one run loop
(``runs/batch.py``; a run of one agent is a batch of one). The library never prints: the CLI
renders the events and the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import Project
from sqlbench.records.run import RunStatus
from sqlbench.runs import locate
from sqlbench.runs.agent_run import AgentRun, describe_error
from sqlbench.runs.batch import Batch, named
from sqlbench.runs.events import ProgressCallback, RunCreated, RunNotice
from sqlbench.runs.plan import RunOptions, agent_config, pick_questions, plan_run, with_variants
from sqlbench.runs.regrade import regrade_source
from sqlbench.runs.scores import RunResult
from sqlbench.runs.store import RunStore
from sqlbench.runs.warehouses import RunWarehouses


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
        run = AgentRun(project, plan, options, active)
        if progress is not None:
            progress(RunCreated(plan.info))
        try:
            warehouses = RunWarehouses(
                project, [item.question for item in run.items().todo], _dbt_lines(progress)
            )
        except KeyboardInterrupt:
            active.finish(plan.info.id, RunStatus.INTERRUPTED)
            raise
        except BaseException as err:
            active.finish(plan.info.id, RunStatus.FAILED, error=describe_error(err))
            raise
        try:
            Batch(project, [run], warehouses, active, options, progress, alone=True).execute()
        finally:
            warehouses.close()
        return active.load_run(plan.info.id)
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
    project = with_variants(project, options.variants)
    for name in agent_names:
        agent_config(project, name)  # unknown names fail before anything runs
    questions = pick_questions(project, options.select, options.space, options.shard)
    repeat = options.repeat or 1
    answers = [q for q in questions for _ in range(1 if q.skip is not None else repeat)]
    shared = RunWarehouses(project, answers * len(agent_names), _dbt_lines(progress))
    try:
        runs: list[AgentRun] = []
        try:
            for name in agent_names:
                plan = plan_run(project, name, named(options, name), store)
                runs.append(AgentRun(project, plan, named(options, name), store))
                if progress is not None:
                    progress(RunCreated(plan.info))
        except BaseException as err:
            for run in runs:  # created before the failing one: not left Running
                store.finish(run.info.id, RunStatus.FAILED, error=describe_error(err))
            raise
        return Batch(project, runs, shared, store, options, progress).execute()
    finally:
        shared.close()


def regrade_run(
    project: Project,
    store: RunStore,
    ref: str,
    *,
    name: str | None = None,
    project_dir: Path | None = None,
    progress: ProgressCallback | None = None,
) -> RunResult:
    """Grade stored run ``ref``'s answers again under ``project`` (its ground truth, compare
    options and warehouse) and store the result as a new run; the agent is not asked
    (``runs/regrade.py``).

    Raises:
        SqlbenchError: No such run, or none of its answered questions is in the project.
    """
    info = store.find_run(ref)
    options = RunOptions(
        name=name, project_dir=project_dir, regrade=regrade_source(info, store.trials(info.id))
    )
    return run_benchmark(project, info.agent_name, options, progress=progress, store=store)


def _dbt_lines(progress: ProgressCallback | None) -> Callable[[str], None] | None:
    """dbt's progress lines while the ref's dbt project builds, as notices (docs/dbt.md)."""
    if progress is None:
        return None
    report = progress
    return lambda line: report(RunNotice(f"dbt: {line}"))
