"""``sqlbench runs``' JSON report: the run list with its counts (``schema_version`` 1). The
table is ``run_text.render_runs``."""

from __future__ import annotations

import json

from sqlbench.records.run import RunSummary

SCHEMA_VERSION = 1


def runs_to_json(runs: list[RunSummary]) -> str:
    """The run list as JSON: ``schema_version`` and one entry per run."""
    data = {
        "schema_version": SCHEMA_VERSION,
        "runs": [
            {
                "id": s.info.id,
                "name": s.info.name,
                "environment": s.info.environment,
                "branch": s.info.branch,
                "commit": s.info.commit,
                "dirty": s.info.dirty,
                "agent": s.info.agent_name,
                "agent_kind": s.info.agent_kind,
                "status": s.status.value,
                "passed": s.passed,
                "total": s.total,
                "human": s.human,
                "disputed": s.disputed,
                "graded": s.graded,
                "accuracy": s.accuracy.value,
                "cost_usd": s.cost_usd,
                "repeat": s.info.repeat,
                "shard": s.info.shard,
                "select": s.info.select,
                "spaces": s.info.spaces,
                "partial": s.info.partial,
                "error": s.info.error,
                "created_by": s.info.created_by,
                "created_at": s.info.created_at.isoformat(),
                "updated_at": s.info.updated_at.isoformat(),
            }
            for s in runs
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)
