"""The warehouses a run uses (docs/project-files.md, ``warehouses``): one engine per warehouse its
questions name, each set up once, with its own limits, ground-truth dialect and ground-truth
cache.

Several runs may share one ``RunWarehouses`` (``run --agent a,b``): each ground truth then runs
once for all of them, because the caches count every answer of every run that needs it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlbench.engines.base import Engine
from sqlbench.engines.open import open_project_engine
from sqlbench.project.files import DEFAULT_WAREHOUSE, Project, Question, RunSettings
from sqlbench.runs.truth_cache import TruthCache
from sqlbench.truth import ground_truths, truth_dialect

if TYPE_CHECKING:  # data variants (DuckDB) load only for a run that grades on them
    from sqlbench.variants.suite import VariantCache


def _display(name: str | None) -> str:
    """How messages name a warehouse."""
    return "the warehouse" if name is None else f"warehouse '{name}'"


def warehouse_label(project: Project, question: Question) -> str | None:
    """What a run records as the question's warehouse: None in a project without
    ``warehouses:`` (there is only one), else the name (``default`` for the top-level one)."""
    if not project.settings.warehouses:
        return None
    return project.warehouse_of(question) or DEFAULT_WAREHOUSE


@dataclass(frozen=True)
class Warehouse:
    """One opened warehouse of a run."""

    name: str | None
    """None: the default warehouse."""
    engine: Engine
    settings: RunSettings
    """The project's ``run:`` settings with this warehouse's limits applied."""
    truths: TruthCache
    truth_dialect: str
    variants: VariantCache | None = None
    """Data variants (``compare: variants``); None: no question of the run asks for them."""


class RunWarehouses:
    """Opens (and sets up) every warehouse the given answers need, at once.

    Args:
        project: The loaded project.
        questions: One entry per answer that will be graded (a question asked by two agents,
            or twice under ``--repeat``, appears twice): how often each ground truth is needed.

    Raises:
        EngineError: A warehouse cannot be opened or set up (those already opened are closed).
    """

    def __init__(
        self,
        project: Project,
        questions: Iterable[Question],
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.project = project
        self._notify = notify
        """Receives dbt's progress lines while a dbt project builds (docs/dbt.md)."""
        self._questions = list(questions)
        uses: dict[str | None, list[str]] = {}
        compare = project.settings.compare
        self._variants: set[str | None] = set()
        """Warehouses some question is graded on data variants of."""
        for question in self._questions:
            where = project.warehouse_of(question)
            sqls = uses.setdefault(where, [])
            if question.skip is None:
                sqls.extend(ground_truths(question))
                if where not in self._variants and compare.merged(question.compare).variants > 0:
                    self._variants.add(where)
        if not uses:
            uses[None] = []
        self._by_name: dict[str | None, Warehouse] = {}
        self._closed = False
        try:
            for name, sqls in uses.items():
                self._by_name[name] = self._open(name, sqls)
        except BaseException:
            self.close()
            raise

    def _open(self, name: str | None, sqls: list[str]) -> Warehouse:
        settings = self.project.settings.for_warehouse(name)
        engine = open_project_engine(self.project, name, progress=self._notify)
        try:
            # Before the first question: no answer's timings hold sqlbench's start-up.
            engine.start_query_process()
        except BaseException:
            engine.close()
            raise
        dialect = truth_dialect(settings, engine.dialect)
        truths = TruthCache(
            engine,
            timeout_s=settings.run.gold_timeout_s,
            max_rows=settings.run.max_rows,
            max_bytes=settings.run.max_result_bytes,
            uses=Counter(sqls).elements(),
            dialect=dialect,
        )
        variants = None
        if name in self._variants:
            from sqlbench.variants.source import variant_source
            from sqlbench.variants.suite import VariantCache

            try:
                variants = VariantCache(variant_source(engine, _display(name)))
            except BaseException:
                engine.close()
                raise
        return Warehouse(name, engine, settings.run, truths, dialect, variants)

    def of(self, question: Question) -> Warehouse:
        """The warehouse ``question`` runs on."""
        return self._by_name[self.project.warehouse_of(question)]

    @property
    def primary(self) -> Engine:
        """The engine agents see for their schema and tools: the default warehouse's when the
        run uses it, else the first one opened."""
        found = self._by_name.get(None) or next(iter(self._by_name.values()))
        return found.engine

    @property
    def executed(self) -> int:
        """Ground-truth queries actually run, over every warehouse."""
        return sum(w.truths.executed for w in self._by_name.values())

    def fork_refusal(self) -> str | None:
        """Why these warehouses cannot be used from forked processes (``runs/forked.py``), or
        None: every one is a SQLite file (DuckDB and the query processes of server warehouses
        are not fork-safe), without data variants."""
        from sqlbench.engines.sqlalchemy import SqlAlchemyEngine

        for warehouse in self._by_name.values():
            engine = warehouse.engine
            if not isinstance(engine, SqlAlchemyEngine) or engine.sqlite_path is None:
                return f"{_display(warehouse.name)} is not a SQLite file"
            if warehouse.variants is not None:
                return f"{_display(warehouse.name)} grades on data variants"
        return None

    def after_fork(self) -> None:
        """In a forked process: let every engine open its own connections."""
        from sqlbench.engines.sqlalchemy import SqlAlchemyEngine

        for warehouse in self._by_name.values():
            engine = warehouse.engine
            if isinstance(engine, SqlAlchemyEngine):
                engine.after_fork()

    def close(self) -> None:
        """Close every engine (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        for warehouse in self._by_name.values():
            if warehouse.variants is not None:
                warehouse.variants.close()
            warehouse.engine.close()
