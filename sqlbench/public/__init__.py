"""Public text-to-SQL benchmarks as sqlbench projects (``sqlbench init --from``).

``import_benchmark`` reads Spider, BIRD or defog in the layout their authors publish and writes a
project: one named warehouse per database (its SQLite file referenced read-only where it is,
never copied), one question file per database (``space`` and ``warehouse`` = the database),
the compare options closest to the benchmark's official evaluator, and each published
predictions file as a ``replay`` agent. Questions whose database is absent are left out and
counted per database.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sqlbench.errors import PublicBenchmarkError
from sqlbench.project.names import name_problem
from sqlbench.public.layout import Benchmark, Grading, Prediction

KINDS = ("spider", "bird", "defog")


@dataclass(frozen=True)
class ImportedAgent:
    """A predictions file turned into a replay agent."""

    name: str
    source: Path
    answers: int
    """Answers written (questions whose database is present)."""


@dataclass
class ImportResult:
    """What ``import_benchmark`` wrote."""

    root: Path
    kind: str
    questions: int
    databases: int
    grading: Grading
    agents: list[ImportedAgent] = field(default_factory=list)
    absent: dict[str, int] = field(default_factory=dict)
    """db_id to questions left out because its database is not in the layout."""
    files: list[str] = field(default_factory=list)

    @property
    def absent_warning(self) -> str | None:
        """One sentence naming the absent databases and the questions each lost."""
        if not self.absent:
            return None
        lost = sum(self.absent.values())
        each = ", ".join(f"{db} ({n})" for db, n in sorted(self.absent.items()))
        return (
            f"left out {lost} question{'s' if lost != 1 else ''} whose database is not in the "
            f"benchmark folder: {each}"
        )


def read_benchmark(kind: str, path: Path | str) -> Benchmark:
    """Read a benchmark in its published layout.

    Raises:
        PublicBenchmarkError: an unknown kind, or files that are not that benchmark's layout.
    """
    from sqlbench.public import bird, defog, spider

    readers = {"spider": spider.read_spider, "bird": bird.read_bird, "defog": defog.read_defog}
    if kind not in readers:
        raise PublicBenchmarkError(
            f"unknown benchmark {kind!r}; expected one of {', '.join(KINDS)}"
        )
    path = Path(path)
    if not path.exists():
        raise PublicBenchmarkError(f"{path} does not exist")
    return readers[kind](path)


def read_predictions(benchmark: Benchmark, path: Path | str) -> list[Prediction]:
    """A published predictions file of ``benchmark``'s kind (defog publishes none).

    Raises:
        PublicBenchmarkError: the file does not fit the benchmark's questions.
    """
    from sqlbench.public import bird, spider

    path = Path(path)
    if benchmark.kind == "spider":
        return spider.read_spider_predictions(path, benchmark)
    if benchmark.kind == "bird":
        return bird.read_bird_predictions(path, benchmark)
    raise PublicBenchmarkError(
        f"{benchmark.kind} publishes no predictions format; write a replay agent (JSONL with "
        "space, name, sql) by hand"
    )


def import_benchmark(
    kind: str,
    path: Path | str,
    directory: Path | str,
    predictions: Sequence[tuple[Path | str, str]] = (),
) -> ImportResult:
    """Write a sqlbench project in ``directory`` from a public benchmark at ``path``.

    Args:
        kind: ``spider``, ``bird`` or ``defog``.
        path: The benchmark's folder (or its question file) in the published layout.
        directory: Where the project goes (created; must not hold or be inside a project).
        predictions: ``(predictions file, agent name)`` pairs, each written as a replay agent.

    Raises:
        PublicBenchmarkError: unreadable benchmark or predictions files, bad agent names.
        SqlbenchError: ``directory`` already holds or is inside a project, or a file exists.
    """
    from sqlbench.project.scaffold import ensure_new_project

    root = Path(directory)
    names = [name for _, name in predictions]
    for name in names:
        problem = name_problem(name, "agent name")
        if problem is None and name == "auto":
            problem = "'auto' is the built-in agent; pick another --agent name"
        if problem:
            raise PublicBenchmarkError(problem)
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise PublicBenchmarkError(f"--agent {doubled[0]!r} is given twice; names must differ")
    benchmark = read_benchmark(kind, path)
    answers = [(name, Path(file), read_predictions(benchmark, file)) for file, name in predictions]
    kept = benchmark.kept
    if not kept:
        raise PublicBenchmarkError(
            f"none of the {len(benchmark.questions)} questions of {benchmark.source} has its "
            "database in the benchmark folder, so there is nothing to import"
        )
    files = _project_files(benchmark, answers)
    ensure_new_project(root, list(files))
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    present = {q.index for q in kept}
    return ImportResult(
        root=root,
        kind=kind,
        questions=len(kept),
        databases=len({q.db_id for q in kept}),
        grading=benchmark.grading,
        agents=[
            ImportedAgent(name, file, sum(1 for p in preds if p.index in present))
            for name, file, preds in answers
        ],
        absent=dict(benchmark.absent),
        files=list(files),
    )


_C_DUMPER: Any = getattr(yaml, "CSafeDumper", None)
"""libyaml's emitter, when PyYAML was built with it: several times faster than PyYAML's own."""


def _dump(data: Any) -> str:
    # A document that is one plain scalar ends with "..." from PyYAML only: never written here.
    alike = isinstance(data, dict | list) and _emitted_alike(data)
    dumper = _C_DUMPER if _C_DUMPER is not None and alike else yaml.SafeDumper
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)
    return text


def _emitted_alike(data: Any) -> bool:
    r"""Whether libyaml writes ``data`` as PyYAML's emitter does: every key a short printable
    ASCII string (PyYAML writes an empty or a long key as ``? key``), every string printable and
    in the Basic Multilingual Plane, line breaks only between two other characters. Any other
    string (a tab, a control character, one past U+FFFF, a line break at an end, beside a space
    or another break) is double-quoted with escapes, which the two emitters fold differently.
    ``tests/cli/test_init_from.py`` compares them on strings of every kind.

    Example:
        >>> _emitted_alike({"q": ["How many?\nEvidence: Quel âge ?"]})
        True
        >>> _emitted_alike({"q": "a\n\nb"}), _emitted_alike({"q": "a\tb"}), _emitted_alike({"": 1})
        (False, False, False)
    """
    if isinstance(data, str):
        return _alike_text(data)
    if isinstance(data, dict):
        return all(_short_key(k) and _emitted_alike(v) for k, v in data.items())
    if isinstance(data, list):
        return all(_emitted_alike(item) for item in data)
    return True


def _alike_text(text: str) -> bool:
    if "\n" in text:
        if text[0] == "\n" or text[-1] == "\n" or any(p in text for p in (" \n", "\n ", "\n\n")):
            return False
        text = text.replace("\n", "")
    return text.isprintable() and (text.isascii() or max(text) <= "\uffff")


def _short_key(key: Any) -> bool:
    return isinstance(key, str) and 0 < len(key) < 100 and key.isascii() and key.isprintable()


def _project_files(
    benchmark: Benchmark, answers: list[tuple[str, Path, list[Prediction]]]
) -> dict[str, str]:
    grading = benchmark.grading
    kept = benchmark.kept
    databases = sorted({q.db_id for q in kept})
    header = [
        f"# Made by `sqlbench init --from {benchmark.kind} {benchmark.source}`.",
        f"# Graded as closely as sqlbench can to {grading.evaluator}.",
        "# What still differs:",
        *(f"#   - {line}" for line in grading.differences),
        "# The databases are used read-only where they are; they were not copied.",
    ]
    settings: dict[str, Any] = {}
    if answers:
        settings["default_agent"] = answers[0][0]
    settings["compare"] = dict(grading.compare)
    settings["run"] = dict(grading.run)
    settings["warehouses"] = {
        db: f"sqlite:///{benchmark.databases[db].as_posix()}" for db in databases
    }
    files = {"sqlbench.yml": "\n".join(header) + "\n" + _dump(settings)}
    for db in databases:
        entries = []
        for q in kept:
            if q.db_id != db:
                continue
            entry: dict[str, Any] = {"name": q.name, "question": q.question, "sql": q.sql}
            if q.also_accept:
                entry["also_accept"] = list(q.also_accept)
            if q.tags:
                entry["tags"] = list(q.tags)
            if benchmark.kind == "defog" and "order_by" in q.tags:
                entry["compare"] = {"order": "auto"}
            entries.append(entry)
        files[f"eval_questions/{db}.yml"] = _dump(
            {"space": db, "warehouse": db, "eval_questions": entries}
        )
    by_index = {q.index: q for q in kept}
    for name, source, predictions in answers:
        lines = []
        for prediction in predictions:
            question = by_index.get(prediction.index)
            if question is None:
                continue  # its database is absent: the question is left out
            record = {"space": question.db_id, "name": question.name, "sql": prediction.sql}
            lines.append(json.dumps(record, ensure_ascii=False))
        files[f"agents/{name}.jsonl"] = "\n".join(lines) + "\n"
        # Run as the official evaluator runs them: a prediction in a Markdown fence is a
        # syntax error there, so it is not taken out of the fence here either.
        agent = {"name": name, "kind": "replay", "path": f"{name}.jsonl", "sql_as_recorded": True}
        files[f"agents/{name}.yml"] = (
            f"# Published predictions {source}, replayed exactly as published.\n"
            + _dump({"agents": [agent]})
        )
    return files
