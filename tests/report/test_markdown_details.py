"""``<details>`` blocks of the Markdown reports: both SQL texts and small previews, safe fences,
cut to a size budget."""

from __future__ import annotations

from sqlbench.records.run import Preview, TrialResult
from sqlbench.report.markdown_details import details_blocks
from sqlbench.verdicts import Verdict


def _trial(name: str, agent_sql: str = "SELECT 2", rows: int = 3) -> TrialResult:
    preview = Preview(
        columns=["n", "label"],
        types=["int64", "string"],
        rows=[[i, f"<b>{i}</b> | x"] for i in range(rows)],
        row_numbers=list(range(rows)),
        differs=[i == 1 for i in range(rows)],
        total_rows=rows + 10,
        differing_rows=1,
    )
    return TrialResult(
        space="s",
        name=name,
        verdict=Verdict.FAIL,
        reason="1 row differs <script>",
        truth_sql="SELECT 1",
        agent_sql=agent_sql,
        expected_preview=preview,
        actual_preview=preview,
    )


def test_a_block_holds_both_sql_texts_and_escaped_previews() -> None:
    text = "\n".join(details_blocks([("fail", _trial("q"))]))
    assert text.startswith(
        "<details><summary><code>s/q</code> (fail): 1 row differs &lt;script&gt;"
    )
    assert "```sql\nSELECT 1\n```" in text and "```sql\nSELECT 2\n```" in text
    assert "| ✗ | 1 | &lt;b&gt;1&lt;/b&gt; \\| x |" in text  # marked, escaped, pipe kept in cell
    assert "| … | 10 more rows | |" in text
    assert text.rstrip().endswith("</details>")


def test_sql_with_backticks_cannot_close_its_fence() -> None:
    text = "\n".join(details_blocks([("fail", _trial("q", agent_sql="SELECT '```' AS x"))]))
    assert "````sql\nSELECT '```' AS x\n````" in text


def test_blocks_stop_at_the_budget_and_say_how_many_are_left() -> None:
    items = [("fail", _trial(f"q{i}", agent_sql="SELECT " + "x, " * 500)) for i in range(50)]
    lines = details_blocks(items, budget=20_000)
    text = "\n".join(lines)
    assert len(text.encode()) < 20_000 + 300
    shown = text.count("<details>")
    assert 0 < shown < 50
    assert f"_{50 - shown} more questions not detailed here" in lines[-1]


def test_one_row_is_one_row() -> None:
    trial = _trial("q", rows=1)
    one = trial.model_copy(
        update={"expected_preview": trial.expected_preview.model_copy(update={"total_rows": 1})}
    )
    text = "\n".join(details_blocks([("fail", one)]))
    assert "(1 row, 1 without a partner" in text and "(1 rows" not in text
