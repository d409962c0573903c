"""The HTML report: self-contained, escaped, with the comparison and the trend."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hostile_project import IMG, SCRIPT, hostile_project

from sqlbench.records.run import Preview
from sqlbench.report import html
from sqlbench.report.html_data import aligned_rows
from sqlbench.rundiff.answers import answer_changes
from sqlbench.runs.locate import open_project_store

RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"


@pytest.fixture
def project(tmp_path: Path, invoke) -> Path:
    root = hostile_project(tmp_path / "project")
    invoke("run", "-C", str(root), "--name", "r1")
    return root


def _data(page: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="sqlbench-data">(.*?)</script>', page, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def test_report_is_one_self_contained_file(invoke, project: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = invoke("report", "-C", str(project), "r1", "-o", str(out))
    assert result.stdout.startswith(f"Wrote {out} (") and "run r1" in result.stdout
    page = out.read_text(encoding="utf-8")
    # Nothing from the network: no external scripts, styles, fonts or images.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "connect-src 'none'" in page and "default-src 'none'" in page
    data = _data(page)
    assert data["run"]["name"] == "r1" and data["run"]["accuracy"] == "30% (3/10)"
    names = [q["id"] for q in data["questions"]]
    assert "sales/emea_names" in names and len(names) == 11


def test_agent_markup_stays_text(project: Path) -> None:
    with open_project_store(project) as store:
        page = html.render(store.load_run("r1"))
    # The hostile strings reach the page only inside the JSON block, with < > & escaped ...
    assert SCRIPT not in page and IMG not in page
    assert "window.__pwned" in page  # ... but they are there, as data
    data = _data(page)
    words = next(q for q in data["questions"] if q["name"] == "words")
    assert words["answer"] == f"There are {SCRIPT} customers {IMG}"
    emea = next(q for q in data["questions"] if q["name"] == "emea_names")
    assert emea["actual"]["columns"][0] == IMG and emea["actual"]["rows"][0][1] == SCRIPT
    # The only scripts are the data block and the page's own, which runs by nonce.
    assert len(re.findall(r"<script\b", page)) == 2
    nonce = re.search(r"script-src 'nonce-([^']+)'", page)
    assert nonce and f'<script nonce="{nonce.group(1)}">' in page


def test_report_with_a_base_shows_changes_and_answer_changes(
    invoke, project: Path, tmp_path: Path
) -> None:
    # Head: the agent now gets emea_names right and the ground truth of count_customers
    # gives another answer (the data model changed), while its verdict stays pass.
    scripted = project / "agents" / "scripted.py"
    text = scripted.read_text(encoding="utf-8")
    start = text.index('"sales/emea_names":')
    end = text.index("\n", start)
    text = (
        text[:start]
        + '"sales/emea_names": {"sql": "SELECT name FROM customers WHERE region = \'EMEA\'"},'
        + text[end:]
    )
    text = text.replace(
        "SELECT count(*) AS how_many FROM customers",
        "SELECT count(*) - 1 AS how_many FROM customers",
    )
    scripted.write_text(text, encoding="utf-8")
    questions = project / "eval_questions" / "sales.yml"
    questions.write_text(
        questions.read_text().replace(
            "SELECT count(*) AS n FROM customers", "SELECT count(*) - 1 AS n FROM customers"
        )
    )
    invoke("run", "-C", str(project), "--name", "r2")
    out = tmp_path / "c.html"
    invoke("report", "-C", str(project), "r2", "--base", "r1", "-o", str(out))
    data = _data(out.read_text(encoding="utf-8"))
    compare = data["compare"]
    assert compare["base"]["name"] == "r1" and compare["fixes"] == ["sales/emea_names"]
    assert [a["id"] for a in compare["answer_changes"]] == ["sales/count_customers"]
    assert compare["answer_changes"][0]["base"]["rows"] == [[3]]
    assert compare["answer_changes"][0]["head"]["rows"] == [[2]]
    by_id = {q["id"]: q for q in data["questions"]}
    assert by_id["sales/emea_names"]["change"] == "fix"
    assert by_id["sales/count_customers"]["answer_changed"] is True
    assert by_id["sales/count_customers"]["change"] is None  # the verdict did not move
    # The trend: both runs of (dev, scripted), oldest first, this run marked.
    [series] = data["trend"]
    assert [p["name"] for p in series["points"]] == ["r1", "r2"]
    assert series["points"][1]["current"] is True
    assert "<polyline" in out.read_text(encoding="utf-8")


def test_report_refuses_two_bases_and_an_unknown_base_ref(invoke, project: Path) -> None:
    result = invoke("report", "-C", str(project), "--base", "r1", "--base-ref", "main", exit_code=2)
    assert result.stderr == "Error: --base and --base-ref both name a base: give one\n"
    result = invoke("report", "-C", str(project), "--base-ref", "main", exit_code=2)
    assert "no stored run of 'main' with agent scripted to compare with" in result.stderr
    result = invoke("report", "-C", str(project), "nope", exit_code=2)
    assert "no run named 'nope'" in result.stderr


def _preview(rows: list[list], differs: list[bool], total: int | None = None) -> Preview:
    return Preview(
        columns=[f"c{i}" for i in range(len(rows[0]))] if rows else [],
        types=["int64"] * (len(rows[0]) if rows else 0),
        rows=rows,
        row_numbers=list(range(len(rows))),
        differs=differs,
        total_rows=len(rows) if total is None else total,
    )


def test_matching_rows_are_aligned_and_differing_rows_follow() -> None:
    expected = _preview([[1, "a"], [2, "b"], [3, "c"]], [False, False, True])
    actual = _preview([[2.0, "b", "extra"], [1, "a", "x"], [4, "d", "y"]], [False, False, True])
    assert aligned_rows(expected, actual) == [[0, 1], [1, 0], [2, 2]]
    assert aligned_rows(expected, None) == [[0, None], [1, None], [2, None]]


def test_answer_changes_compare_complete_previews_in_any_order() -> None:
    from sqlbench.records.run import TrialResult
    from sqlbench.verdicts import Verdict

    def trial(name: str, preview: Preview) -> TrialResult:
        return TrialResult(
            space="s", name=name, verdict=Verdict.PASS, reason="", expected_preview=preview
        )

    same = _preview([[1], [2]], [False, False])
    reordered = _preview([[2], [1]], [False, False])
    changed = _preview([[1], [3]], [False, False])
    longer = _preview([[1], [2]], [False, False], total=50)
    base = [trial("a", same), trial("b", same), trial("c", same)]
    head = [trial("a", reordered), trial("b", changed), trial("c", longer)]
    assert [c.name for c in answer_changes(base, head)] == ["b", "c"]


def test_report_of_the_run_loop_project_without_runs_is_one_sentence(invoke, tmp_path) -> None:
    root = Path(shutil.copytree(RUN_LOOP, tmp_path / "empty"))
    result = invoke("report", "-C", str(root), exit_code=2)
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr


def test_markdown_details_failing_and_regressed_questions(invoke, project: Path) -> None:
    out = invoke("run", "-C", str(project), "--name", "md", "--format", "markdown").stdout
    assert "#### Failing questions (5)" in out
    block = out[out.index("<details><summary><code>sales/emea_names</code>") :]
    block = block[: block.index("</details>")]
    assert "Ground truth SQL:\n\n```sql\nSELECT name FROM customers WHERE region = 'EMEA'" in block
    assert "Agent SQL:\n\n```sql\nSELECT name AS" in block
    # Agent markup is escaped outside code fences (inside them Markdown shows it as text).
    outside = re.sub(r"```sql\n.*?\n```", "", block, flags=re.S)
    assert "&lt;script&gt;" in outside and SCRIPT not in outside and "<img" not in outside
    assert "Expected result (" in block and "Agent result (" in block

    scripted = project / "agents" / "scripted.py"
    scripted.write_text(
        scripted.read_text(encoding="utf-8").replace(
            "SELECT count(*) AS how_many FROM customers", "SELECT 7 AS how_many"
        ),
        encoding="utf-8",
    )
    invoke("run", "-C", str(project), "--name", "md2")
    out = invoke("compare", "-C", str(project), "md", "md2", "--format", "markdown").stdout
    assert "<details><summary><code>sales/count_customers</code> (pass → fail)" in out
    assert "```sql\nSELECT 7 AS how_many\n```" in out
