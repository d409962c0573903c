"""The run-loop project with hostile agent output (for the HTML report's escaping tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"
SCRIPT = "<script>window.__pwned = 1</script>"
IMG = '"><img src=x onerror="window.__pwned = 2">'


def hostile_project(root: Path) -> Path:
    """A copy of the run-loop project whose agent answers with markup: words with a
    ``<script>``, SQL whose column alias and value carry an ``<img onerror>``."""
    project = Path(shutil.copytree(RUN_LOOP, root))
    scripted = project / "agents" / "scripted.py"
    text = scripted.read_text(encoding="utf-8")
    text = text.replace(
        '{"answer": "There are three customers."}',
        repr({"answer": f"There are {SCRIPT} customers {IMG}"}),
    )
    alias = IMG.replace('"', '""')
    text = text.replace(
        '{"sql": "SELECT name FROM customers WHERE region = \'APAC\'"}',
        repr({"sql": f"SELECT name AS \"{alias}\", '{SCRIPT}' AS x FROM customers"}),
    )
    scripted.write_text(text, encoding="utf-8")
    return project
