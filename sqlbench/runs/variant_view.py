"""A data variant a stored answer was graded on, rebuilt from the run's record for a person to
read (``sqlbench show RUN QUESTION --variant K``, docs/verdicts.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import DEFAULT_WAREHOUSE, Project
from sqlbench.records.run import TrialResult

if TYPE_CHECKING:
    from sqlbench.variants.rebuild import RebuiltVariant


def failing_variants(
    project: Project, results: list[TrialResult]
) -> dict[tuple[str, str], RebuiltVariant]:
    """The variant each of ``results`` failed on (those that failed on one), rebuilt, by
    ``(space, name)``; a result whose variant cannot be rebuilt any more is left out.

    Raises:
        EngineError: The warehouse cannot be opened or read.
    """
    found: dict[tuple[str, str], RebuiltVariant] = {}
    for result in results:
        record = result.variants
        if record is None or record.failed_on not in record.fingerprints:
            continue
        number = record.numbers[record.fingerprints.index(record.failed_on)]
        try:
            found[(result.space, result.name)] = variant_of(project, result, number)
        except SqlbenchError:
            continue  # the data, the ground truth or the generator changed: nothing to show
    return found


def variant_of(project: Project, result: TrialResult, number: int) -> RebuiltVariant:
    """Variant ``number`` of ``result``'s ground truth on the project's warehouse, holding the
    tables the ground truth and the agent's SQL read.

    Raises:
        SqlbenchError: The answer was not graded on variants, ``number`` is not one of its
            kept variants, or the data, the ground truth or the generator changed since (the
            rebuilt variant is not the recorded one).
        EngineError: The warehouse cannot be opened or read.
    """
    from sqlbench.engines.open import open_project_engine
    from sqlbench.truth import ground_truths, truth_dialect
    from sqlbench.variants.rebuild import rebuild_variant
    from sqlbench.variants.source import variant_source

    record = result.variants
    name = f"{result.space}/{result.name}"
    if record is None or not record.numbers:
        raise SqlbenchError(f"{name} was not checked on any data variant in this run")
    if number not in record.numbers:
        kept = ", ".join(f"#{n}" for n in record.numbers)
        raise SqlbenchError(f"--variant {number}: {name}'s kept data variants are {kept}")
    wanted = record.fingerprints[record.numbers.index(number)]
    question = next(
        (q for q in project.questions if (q.space, q.name) == (result.space, result.name)), None
    )
    if question is not None:
        truths, warehouse = ground_truths(question), project.warehouse_of(question)
    else:
        truths = [t for t in (result.truth_sql, *result.also_accept) if t]
        label = result.warehouse
        warehouse = None if label in (None, DEFAULT_WAREHOUSE) else label
    settings = project.settings.for_warehouse(warehouse)
    engine = open_project_engine(project, warehouse)
    try:
        source = variant_source(engine, "the warehouse" if warehouse is None else warehouse)
        try:
            rebuilt = rebuild_variant(
                source,
                truths,
                truth_dialect=truth_dialect(settings, engine.dialect),
                seed=record.seed,
                number=number,
                fingerprint_wanted=wanted,
                agent_sql=result.agent_sql,
            )
        finally:
            source.close()
    finally:
        engine.close()
    if rebuilt is None:
        raise SqlbenchError(
            f"data variant #{number} of {name} cannot be rebuilt: the warehouse's data, the "
            f"ground truth or the way sqlbench makes variants changed since the run (recorded "
            f"fingerprint {wanted})"
        )
    return rebuilt


def neighbour_of(project: Project, result: TrialResult, number: int) -> str | None:
    """The ground truth's near neighbour that gives ``result``'s answer on variant ``number``
    (None: none does, or the question or its warehouse cannot be found).

    Raises:
        EngineError: The warehouse cannot be opened or read, or the variant built.
    """
    from sqlbench.engines.open import open_project_engine
    from sqlbench.truth import truth_dialect
    from sqlbench.variants.rebuild import matching_neighbour
    from sqlbench.variants.source import variant_source

    record = result.variants
    question = next(
        (q for q in project.questions if (q.space, q.name) == (result.space, result.name)), None
    )
    if record is None or question is None or question.truth_sql is None or not result.agent_sql:
        return None
    warehouse = project.warehouse_of(question)
    settings = project.settings.for_warehouse(warehouse)
    engine = open_project_engine(project, warehouse)
    try:
        source = variant_source(engine, "the warehouse" if warehouse is None else warehouse)
        try:
            return matching_neighbour(
                source,
                question.truth_sql,
                truth_dialect=truth_dialect(settings, engine.dialect),
                seed=record.seed,
                # The variant it failed on first (most neighbours fail there), then the others.
                numbers=[number, *(n for n in record.numbers if n != number)],
                agent_sql=result.agent_sql,
                options=settings.compare.merged(question.compare),
                settings=settings.run,
                original=engine,
            )
        finally:
            source.close()
    finally:
        engine.close()
