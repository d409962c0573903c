"""CPU of building and storing each answer's record, after the comparison: the code before its
speed-ups against today's, alternated in one process (A B A B ...), outputs checked identical.

One ``sqlbench run --agent '*'`` of a corpus project (``--project DIR``, its store emptied
first; ``run.processes: 1`` is forced so that every call is seen here) records, as the run
makes them, every preview a question's answers ask for (``SharedSql.preview``), every answer
before its metrics (``with_metrics``) and every record the store writes. Then, over all of
them, with the garbage collector frozen:

- ``previews``: ``make_preview`` validating each ``Preview`` for every answer's two sides
  (before) against one ``SharedSql`` per question and today's ``make_preview`` (one preview
  per result object and marks, not validated again);
- ``make_preview``: every call, validating each ``Preview`` (before) or not (now);
- ``with_metrics``: the copy of the record it made every time (before) against today's;
- ``scrub``: the secret-parameter pattern searched over every character of the stored JSON
  (before) against today's ``scrub`` (tried only at each ``?``, ``&``, ``;``).

Prints the median CPU (``time.process_time``) of each side over ``--rounds``, per answer.

Usage: ``python benchmarks/record_cpu.py --project DIR [--rounds 5]``. Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlbench import secrets
from sqlbench.metrics import compute
from sqlbench.metrics.assertions import answer_record, check_assertions
from sqlbench.project.files import Question
from sqlbench.records.run import Preview, TrialResult
from sqlbench.runs import answers, store
from sqlbench.runs import previews as previews_module
from sqlbench.runs.previews import make_preview
from sqlbench.runs.shared_sql import SharedAnswers, SharedSql
from sqlbench.verdicts import Verdict


def old_with_metrics(question: Question, trial: TrialResult) -> TrialResult:
    """``with_metrics`` before it returned an answer with nothing to measure as it is."""
    if trial.verdict in (Verdict.ERROR, Verdict.SKIPPED):
        return trial
    metrics = dict(trial.metrics)
    metrics.update(compute.deterministic_metrics(question, trial))
    assertions = check_assertions(question.assertions, answer_record(trial))
    verdict, reason = trial.verdict, trial.reason
    failed = [result for result in assertions if not result.passed]
    if failed:
        verdict, reason = Verdict.FAIL, compute._failed_reason(trial, failed)
    return trial.model_copy(
        update={"metrics": metrics, "assertions": assertions, "verdict": verdict, "reason": reason}
    )


def validating(run: Callable[[], object]) -> Callable[[], object]:
    """``run`` with ``make_preview`` validating every ``Preview`` it makes, as it did."""

    def validated() -> object:
        cheap = previews_module._validated_already
        previews_module._validated_already = lambda fields: Preview(**fields)
        try:
            return run()
        finally:
            previews_module._validated_already = cheap

    return validated


def old_scrub(text: str) -> str:
    """``secrets.scrub`` before it tried the parameter pattern only at ``?``, ``&``, ``;``."""
    if not text:
        return text
    pairs = sorted(secrets._secrets.items(), key=lambda item: -len(item[0]))
    for value, shown in pairs:
        if value in text:
            text = text.replace(value, shown)
    if "://" in text:
        text = secrets._URL_PASSWORD.sub(secrets._masked, text)
    if "=" in text:
        text = secrets._SECRET_PARAM.sub(secrets._masked, text)
    if " " in text and any(word in text for word in secrets._BEARER_WORDS):
        text = secrets._BEARER.sub(secrets._masked, text)
    return text


def record(project: Path) -> tuple[list[Any], list[Any], list[str]]:
    """Run ``project`` once here; what the record-building steps were given."""
    previews: list[Any] = []  # (question group, result, differing, count)
    metrics: list[Any] = []  # (question, trial)
    texts: list[str] = []
    groups: dict[int, int] = {}
    original_preview = SharedSql.preview
    original_metrics = answers.with_metrics
    original_json = store._scrubbed_json

    def preview(self: SharedSql, result: Any, differing: list[int], differing_count: int) -> Any:
        group = groups.setdefault(id(self._shared), len(groups))
        previews.append((group, result, list(differing), differing_count))
        return original_preview(self, result, differing, differing_count)

    def with_metrics(question: Question, trial: TrialResult) -> TrialResult:
        metrics.append((question, trial))
        return original_metrics(question, trial)

    def scrubbed_json(model: Any) -> Any:
        found = original_json(model)
        texts.append(found[1])
        return found

    SharedSql.preview = preview  # type: ignore[method-assign]
    answers.with_metrics = with_metrics
    store._scrubbed_json = scrubbed_json
    from sqlbench.cli.main import main as sqlbench_main

    cwd = os.getcwd()
    os.chdir(project)
    sys.argv = ["sqlbench", "run", "--agent", "*"]
    streams = sys.stdout, sys.stderr
    try:
        with open(os.devnull, "w") as quiet:
            sys.stdout = sys.stderr = quiet
            sqlbench_main()
    except SystemExit:
        pass
    finally:
        sys.stdout, sys.stderr = streams
        os.chdir(cwd)
        SharedSql.preview = original_preview  # type: ignore[method-assign]
        answers.with_metrics = original_metrics
        store._scrubbed_json = original_json
    return previews, metrics, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / "project"
        shutil.copytree(args.project, project, ignore=shutil.ignore_patterns(".sqlbench"))
        text = (project / "sqlbench.yml").read_text()
        if "\nrun:\n" in text:
            text = text.replace("\nrun:\n", "\nrun:\n  processes: 1\n", 1)
        else:
            text += "\nrun:\n  processes: 1\n"
        (project / "sqlbench.yml").write_text(text)
        previews, metrics, texts = record(project)
    answered = len(metrics)
    print(f"{len(texts)} records, {answered} answers with metrics, {len(previews)} previews")
    faults = sum("building the previews" in t for t in texts)
    assert faults == 0, f"{faults} records say building the previews failed"
    # Outputs identical.
    olds = validating(lambda: [make_preview(r, d, differing_count=c) for _, r, d, c in previews])()
    for made, old in zip(_shared_previews(previews), olds, strict=True):  # type: ignore[call-overload]
        assert made == old and made.model_dump_json() == old.model_dump_json()
    for question, trial in metrics:
        new, old = compute.with_metrics(question, trial), old_with_metrics(question, trial)
        assert new == old and new.model_dump_json() == old.model_dump_json()
    assert all(secrets.scrub(t) == old_scrub(t) for t in texts)
    print("outputs identical")

    steps: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "previews": (
            validating(lambda: [make_preview(r, d, differing_count=c) for _, r, d, c in previews]),
            lambda: _shared_previews(previews),
        ),
        "make_preview": (
            validating(lambda: [make_preview(r, d, differing_count=c) for _, r, d, c in previews]),
            lambda: [make_preview(r, d, differing_count=c) for _, r, d, c in previews],
        ),
        "with_metrics": (
            lambda: [old_with_metrics(q, t) for q, t in metrics],
            lambda: [compute.with_metrics(q, t) for q, t in metrics],
        ),
        "scrub": (
            lambda: [old_scrub(t) for t in texts],
            lambda: [secrets.scrub(t) for t in texts],
        ),
    }
    gc.collect()
    gc.freeze()
    for name, (before, after) in steps.items():
        spent: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            for side, run in (("before", before), ("after", after)):
                start = time.process_time()
                run()
                spent[side].append(time.process_time() - start)
        old, new = statistics.median(spent["before"]), statistics.median(spent["after"])
        print(
            f"{name:13s} before {old:.3f} s ({old / answered * 1e6:.1f} us an answer), "
            f"after {new:.3f} s ({new / answered * 1e6:.1f} us), after/before {new / old:.2f}"
        )


def _shared_previews(previews: list[Any]) -> list[Any]:
    shared: dict[int, SharedSql] = {}
    made = []
    for group, result, differing, count in previews:
        sql = shared.get(group)
        if sql is None:
            sql = shared[group] = SharedSql(SharedAnswers(1))
        made.append(sql.preview(result, differing, count))
    return made


if __name__ == "__main__":
    main()
