"""``sqlbench audit`` as text and JSON (docs/audit.md)."""

from __future__ import annotations

import json
from typing import Any

from sqlbench.audit import AuditReport
from sqlbench.records.run import Dispute

SCHEMA_VERSION = 1


def render_json(report: AuditReport, disputes: list[Dispute]) -> str:
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "runs": list(report.runs),
        "agents": list(report.agents),
        "audited": report.questions,
        "questions": [
            {
                "name": s.name,
                "space": s.space,
                "score": s.score,
                "evidence": [
                    {"kind": e.kind, "detail": e.detail, "weight": e.weight} for e in s.evidence
                ],
            }
            for s in report.suspects
        ],
        "problems": list(report.problems),
        "disputed": [
            {
                "name": d.name,
                "space": d.space,
                "reason": d.reason,
                "disputed_by": d.disputed_by,
                "since": d.disputed_at.isoformat(),
            }
            for d in disputes
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def render_text(report: AuditReport, disputes: list[Dispute], *, limit: int | None = None) -> str:
    agents = ", ".join(report.agents)
    lines = [
        f"Audit of the answer key: {report.questions} question{_s(report.questions)}, "
        f"{len(report.runs)} run{_s(len(report.runs))} ({agents}); {len(report.suspects)} "
        "suspect, most suspect first",
    ]
    shown = report.suspects if limit is None else report.suspects[:limit]
    for rank, suspect in enumerate(shown, start=1):
        lines.append("")
        lines.append(f"{rank:>3}. {suspect.full_name}  score {suspect.score:.2f}")
        for evidence in suspect.evidence:
            lines.append(f"     - {evidence.kind}: {evidence.detail}")
    if limit is not None and len(report.suspects) > limit:
        lines += ["", f"... {len(report.suspects) - limit} more (--limit 0 shows all)"]
    if disputes:
        lines += ["", f"Disputed ({len(disputes)}, not counted in accuracy):"]
        lines += [
            f"  {d.space}/{d.name} since {d.disputed_at:%Y-%m-%d %H:%M} UTC by {d.disputed_by}: "
            f"{d.reason}"
            for d in disputes
        ]
    if report.problems:
        lines += ["", "Not audited:"] + [f"  {p}" for p in report.problems]
    return "\n".join(lines)


def _s(count: int) -> str:
    return "" if count == 1 else "s"
