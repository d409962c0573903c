"""``sqlbench validate``'s report: each problem as ``path:line: severity: message`` and a
summary line (text), or the same as JSON (``schema_version`` 1)."""

from __future__ import annotations

import json
from typing import Any

from sqlbench.project.validate import plural
from sqlbench.validation import Validation

SCHEMA_VERSION = 1


def _where(validation: Validation, branch: str | None) -> str:
    source = validation.check.source
    if branch is None or source.dev_mode_note is not None:
        return ""
    commit = f" ({source.commit[:12]})" if source.commit else ""
    return f" at {source.branch}{commit}"


def render_text(validation: Validation, branch: str | None = None) -> str:
    """Each problem as ``path:line: severity: message``, then one summary line."""
    lines = [str(problem) for problem in validation.problems]
    errors, warnings = validation.errors, validation.warnings
    where = _where(validation, branch)
    if errors:
        found = plural(errors, "error") + (
            f" and {plural(warnings, 'warning')}" if warnings else ""
        )
        lines.append(f"Found {found} ({plural(validation.check.files, 'file')} checked){where}.")
    else:
        project = validation.check.project
        assert project is not None  # no error means the project loaded
        spaces = len({q.space for q in project.questions})
        file_agents = len(project.agents) - 1  # the implicit auto
        details = (
            f"{plural(len(project.questions), 'question')} in "
            f"{plural(spaces, 'space')}, "
            f"{plural(len(project.certified_queries), 'certified query')}, "
            f"{plural(file_agents, 'agent')} (+ auto)"
        )
        also = " Ground truth executed." if validation.executed else ""
        tail = f"; {plural(warnings, 'warning')}" if warnings else ""
        lines.append(f"Valid{where}: {details}{tail}.{also}")
    return "\n".join(lines)


def render_json(validation: Validation) -> str:
    """The problems and counts as JSON (``schema_version`` 1)."""
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source": validation.check.source.model_dump(mode="json"),
        "valid": validation.errors == 0,
        "executed": validation.executed,
        "errors": validation.errors,
        "warnings": validation.warnings,
        "problems": [
            {"severity": p.severity.value, "path": p.path, "line": p.line, "message": p.message}
            for p in validation.problems
        ],
    }
    return json.dumps(data, indent=2)
