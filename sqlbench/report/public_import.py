"""What ``sqlbench init --from`` prints: the project made, the grading it picked, what differs."""

from __future__ import annotations

from pathlib import Path

from sqlbench.public import ImportResult


def render_import(result: ImportResult, directory: Path) -> str:
    """The created project, its agents, the official evaluator it mimics, and what differs."""
    where = "" if directory == Path(".") else f" -C {directory}"
    lines = [
        f"Created a {result.kind} project in {result.root}: {result.questions} questions on "
        f"{result.databases} databases (one warehouse each, read-only in place).",
    ]
    for agent in result.agents:
        lines.append(f"  agent {agent.name}: {agent.answers} answers from {agent.source}")
    compare = ", ".join(f"{k}: {v}" for k, v in result.grading.compare.items())
    lines += [
        f"Graded as closely as sqlbench can to {result.grading.evaluator}:",
        f"  compare: {{{compare}}}",
        "What still differs from it:",
        *(f"  - {line}" for line in result.grading.differences),
        "Next:",
        f"  sqlbench validate{where}",
    ]
    if result.agents:
        names = ",".join(agent.name for agent in result.agents)
        lines.append(f"  sqlbench run{where} --agent {names}")
    return "\n".join(lines)
