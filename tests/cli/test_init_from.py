"""`sqlbench init --from spider|bird|defog`: small fixtures in each benchmark's published layout
(made here, with tiny SQLite databases), then `run --agent a,b` over the replayed predictions."""

from __future__ import annotations

import csv
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench.project.load import load_project
from sqlbench.public import _dump, _emitted_alike, import_benchmark
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmarks
from sqlbench.runs.warehouses import RunWarehouses


def _database(folder: Path, db_id: str, script: str) -> Path:
    path = folder / db_id / f"{db_id}.sqlite"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()
    return path


SINGERS = (
    "CREATE TABLE singer (name TEXT, age INTEGER);"
    "INSERT INTO singer VALUES ('Ann', 30), ('Bob', 41), ('Cy', 25);"
)
PETS = "CREATE TABLE pets (kind TEXT, n INTEGER); INSERT INTO pets VALUES ('cat', 2), ('dog', 2);"


def _spider(tmp_path: Path) -> Path:
    root = tmp_path / "spider"
    (root / "database").mkdir(parents=True)
    _database(root / "database", "concert_singer", SINGERS)
    _database(root / "database", "pets_1", PETS)
    dev = [
        {
            "db_id": "concert_singer",
            "question": "How many singers?",
            "query": "SELECT count(*) FROM singer",
        },
        {
            "db_id": "concert_singer",
            "question": "Names by age?",
            "query": "SELECT name FROM singer ORDER BY age",
        },
        {
            "db_id": "wta_1",
            "question": "How many players?",
            "query": "SELECT count(*) FROM players",
        },
        {"db_id": "pets_1", "question": "Kinds?", "query": "SELECT DISTINCT n FROM pets"},
        {"db_id": "wta_1", "question": "Players?", "query": "SELECT * FROM players"},
    ]
    (root / "dev.json").write_text(json.dumps(dev, indent=4))
    (root / "tables.json").write_text("[]")
    return root


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_spider_layout_with_two_systems(tmp_path: Path, invoke) -> None:
    bench = _spider(tmp_path)
    good = _lines(
        tmp_path / "good.sql",
        [
            "SELECT count(name) FROM singer\tconcert_singer",
            "SELECT name, age FROM singer ORDER BY age\tconcert_singer",
            "SELECT 1\twta_1",
            "SELECT DISTINCT n FROM pets\tpets_1",
            "SELECT 2\twta_1",
        ],
    )
    bad = _lines(
        tmp_path / "bad.sql",
        [
            "SELECT count(*) + 1 FROM singer",
            "SELECT name FROM singer ORDER BY age DESC",
            "SELECT 1",
            "SELECT n FROM pets",
            "",
        ],
    )
    project = tmp_path / "proj"
    result = invoke(
        "init", str(project), "--from", "spider", str(bench),
        "--predictions", str(good), "--agent", "good",
        "--predictions", str(bad), "--agent", "bad",
    )  # fmt: skip
    out = result.stdout
    assert f"Created a spider project in {project}: 3 questions on 2 databases" in out
    assert "agent good: 3 answers from" in out
    assert "compare: {order: auto, rows: bag, columns: exact}" in out
    assert "What still differs from it:" in out and "--keep_distinct" in out
    assert f"sqlbench run -C {project} --agent good,bad" in out
    assert result.stderr.count("Warning:") == 1
    assert "left out 2 questions whose database is not in the benchmark folder: wta_1 (2)" in (
        result.stderr
    )
    settings = yaml.safe_load((project / "sqlbench.yml").read_text())
    db = (bench / "database/concert_singer/concert_singer.sqlite").resolve()
    assert settings["warehouses"]["concert_singer"] == f"sqlite:///{db.as_posix()}"
    assert settings["compare"] == {"order": "auto", "rows": "bag", "columns": "exact"}
    assert not list(project.rglob("*.sqlite"))  # referenced in place, never copied
    questions = yaml.safe_load((project / "eval_questions/concert_singer.yml").read_text())
    assert questions["warehouse"] == "concert_singer"
    assert [q["name"] for q in questions["eval_questions"]] == ["dev_0000", "dev_0001"]

    result = invoke("run", "-C", str(project), "--agent", "good,bad", "--format", "json")
    runs = json.loads(result.stdout)["runs"]
    verdicts = {
        run["run"]["agent"]["name"]: {r["name"]: r["verdict"] for r in run["results"]}
        for run in runs
    }
    assert verdicts == {
        # the extra age column fails under columns: exact, as Spider's evaluator fails it
        "good": {"dev_0000": "pass", "dev_0001": "fail", "dev_0003": "pass"},
        # order auto: strict because the gold has ORDER BY; its key (age) is not an output
        # column, so the ORDER BY probe decides the reversed names; duplicates count (bag)
        "bad": {"dev_0000": "fail", "dev_0001": "fail", "dev_0003": "fail"},
    }
    assert runs[0]["warehouses"] == {
        "concert_singer": {"passed": 1, "total": 2, "value": 0.5},
        "pets_1": {"passed": 1, "total": 1, "value": 1.0},
    }


def test_spider_predictions_must_line_up(tmp_path: Path, invoke) -> None:
    bench = _spider(tmp_path)
    short = _lines(tmp_path / "short.sql", ["SELECT 1"] * 4)
    result = invoke(
        "init", str(tmp_path / "p"), "--from", "spider", str(bench),
        "--predictions", str(short), "--agent", "x", exit_code=2,
    )  # fmt: skip
    assert "has 4 lines but dev.json has 5 questions" in result.stderr
    shifted = _lines(tmp_path / "shifted.sql", ["SELECT 1\tpets_1"] + ["SELECT 1"] * 4)
    result = invoke(
        "init", str(tmp_path / "p"), "--from", "spider", str(bench),
        "--predictions", str(shifted), "--agent", "x", exit_code=2,
    )  # fmt: skip
    assert "shifted.sql:1: the line names database 'pets_1' but question #0 is on" in (
        result.stderr
    )
    assert not (tmp_path / "p").exists()  # nothing half-written
    invoke("init", str(tmp_path / "p"), "--from", "spider", str(bench), "--agent", "x", exit_code=2)
    result = invoke("init", str(tmp_path / "p"), "--from", "sparrow", str(bench), exit_code=2)
    assert "use one of spider, bird, defog" in result.stderr
    result = invoke("init", str(tmp_path / "p"), "--from", "spider", str(tmp_path), exit_code=2)
    assert "does not exist" in result.stderr and "Traceback" not in result.output


def _bird(tmp_path: Path) -> Path:
    root = tmp_path / "minidev"
    (root / "dev_databases").mkdir(parents=True)
    _database(root / "dev_databases", "superhero", SINGERS.replace("singer", "hero"))
    questions = [
        {
            "question_id": 7,
            "db_id": "superhero",
            "question": "Heroes over 26?",
            "evidence": "over 26 refers to age > 26",
            "SQL": "SELECT name FROM hero WHERE age > 26",
            "difficulty": "simple",
        },
        {
            "question_id": 9,
            "db_id": "california_schools",
            "question": "Schools?",
            "evidence": "",
            "SQL": "SELECT 1",
            "difficulty": "moderate",
        },
        {
            "question_id": 12,
            "db_id": "superhero",
            "question": "Ages?",
            "evidence": "",
            "SQL": "SELECT age, name FROM hero",
            "difficulty": "challenging",
        },
    ]
    (root / "mini_dev_sqlite.json").write_text(json.dumps(questions, indent=4))
    return root


_BIRD_SEP = "\t----- bird -----\t"


def _init_bird(tmp_path: Path, invoke, predictions: dict[str, str]) -> tuple[Path, Path, Any]:
    """``_bird``'s layout, ``predictions`` (index -> (SQL, db_id)) written as BIRD publishes
    them, and ``init --from bird`` with them as agent ``x``: the layout, the project and the
    init's result."""
    bench = _bird(tmp_path)
    preds = tmp_path / "predict_mini_dev_x_sqlite.json"
    preds.write_text(
        json.dumps({i: f"{sql}{_BIRD_SEP}{db}" for i, (sql, db) in predictions.items()})
    )
    project = tmp_path / "proj"
    result = invoke(
        "init", str(project), "--from", "bird", str(bench), "--predictions", str(preds),
        "--agent", "x",
    )  # fmt: skip
    return bench, project, result


def test_spider_predictions_for_the_present_databases_only(tmp_path: Path, invoke) -> None:
    bench = _spider(tmp_path)  # wta_1 (questions #2 and #4) is absent
    present = ["SELECT count(*) FROM singer", "SELECT name FROM singer", "SELECT 2"]
    plain = _lines(tmp_path / "plain.sql", present)
    result = invoke(
        "init", str(tmp_path / "p"), "--from", "spider", str(bench),
        "--predictions", str(plain), "--agent", "x", exit_code=2,
    )  # fmt: skip
    assert (
        "write a line (an empty one will do) for each of the 2 questions whose database is "
        "absent (wta_1), or end every line with a tab and its db_id (SQL<TAB>db_id)"
    ) in result.stderr
    tagged = _lines(
        tmp_path / "tagged.sql",
        [
            f"{sql}\t{db}"
            for sql, db in zip(present, ["concert_singer"] * 2 + ["pets_1"], strict=True)
        ],
    )
    invoke(
        "init", str(tmp_path / "p"), "--from", "spider", str(bench),
        "--predictions", str(tagged), "--agent", "x",
    )  # fmt: skip
    answers = [json.loads(line) for line in next((tmp_path / "p" / "agents").glob("*.jsonl"))
               .read_text().splitlines()]  # fmt: skip
    assert [(a["space"], a["sql"]) for a in answers] == [
        ("concert_singer", "SELECT count(*) FROM singer"),
        ("concert_singer", "SELECT name FROM singer"),
        ("pets_1", "SELECT 2"),
    ]
    # A tagged file may not skip a question whose database is present.
    skipping = _lines(tmp_path / "skip.sql", ["SELECT 1\tconcert_singer", "SELECT 2\tpets_1"])
    result = invoke(
        "init", str(tmp_path / "q"), "--from", "spider", str(bench),
        "--predictions", str(skipping), "--agent", "x", exit_code=2,
    )  # fmt: skip
    assert (
        "skip.sql:2: the line names database 'pets_1' but the next question without a line, #1"
        in (result.stderr)
    )


def test_bird_layout(tmp_path: Path, invoke) -> None:
    sep = _BIRD_SEP
    bench, project, result = _init_bird(
        tmp_path,
        invoke,
        {
            "0": ("SELECT name FROM hero WHERE age > 26 UNION ALL SELECT 'Bob'", "superhero"),
            "1": ("SELECT 1", "california_schools"),
            "2": ("SELECT name, age FROM hero", "superhero"),
        },
    )
    assert "compare: {order: ignore, rows: set, columns: exact}" in result.stdout
    assert "california_schools (1)" in result.stderr
    questions = yaml.safe_load((project / "eval_questions/superhero.yml").read_text())
    first = questions["eval_questions"][0]
    assert first["name"] == "q7" and first["tags"] == ["simple"]
    assert first["question"] == "Heroes over 26?\nEvidence: over 26 refers to age > 26"
    run = json.loads(invoke("run", "-C", str(project), "--format", "json").stdout)
    # a set: the duplicated 'Bob' passes as BIRD's set(pred) == set(gold) does; the columns
    # in another order pass here (BIRD would fail them: a listed difference)
    assert {r["name"]: r["verdict"] for r in run["results"]} == {"q7": "pass", "q12": "pass"}
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"0": f"SELECT 1{sep}toxicology"}))
    result = invoke(
        "init", str(tmp_path / "p2"), "--from", "bird", str(bench), "--predictions", str(wrong),
        "--agent", "x", exit_code=2,
    )  # fmt: skip
    assert "names database 'toxicology' but question #0 of mini_dev_sqlite.json" in result.stderr


def test_sql_sqlglot_cannot_parse_is_a_listed_difference_and_fails_with_sqlites_message(
    tmp_path: Path, invoke
) -> None:
    """The official evaluators run every prediction; sqlbench does not run SQL its guard cannot
    parse: init says so among the differences, and such a prediction fails with SQLite's own
    message (the quote in Bob's ends the string)."""
    _, project, result = _init_bird(
        tmp_path,
        invoke,
        {
            "0": ("SELECT name FROM hero WHERE name = 'Bob's'", "superhero"),
            "2": ("SELECT name, age FROM hero", "superhero"),
        },
    )
    assert "agent SQL that sqlglot cannot parse is not run here" in result.stdout
    run = json.loads(invoke("run", "-C", str(project), "--format", "json").stdout)
    reasons = {r["name"]: (r["verdict"], r["reason"]) for r in run["results"]}
    assert reasons["q7"] == ("fail", 'the agent\'s SQL has a syntax error: near "s": syntax error')
    assert reasons["q12"][0] == "pass"


def test_defog_layout_gold_alternatives(tmp_path: Path) -> None:
    root = tmp_path / "defog"
    (root / "databases").mkdir(parents=True)
    _database(root / "databases", "academic", "CREATE TABLE author (aid INTEGER, name TEXT);"
              "INSERT INTO author VALUES (1, 'Ada'), (2, 'Bo');")  # fmt: skip
    with open(root / "questions_gen_sqlite.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["db_name", "query_category", "question", "query", "instructions"])
        writer.writerow(
            ["academic", "group_by", "Authors?", "SELECT name FROM author;SELECT aid FROM author;"
             "SELECT name, aid FROM author WHERE name <> 'a;b'", ""]
        )  # fmt: skip
        writer.writerow(
            ["academic", "order_by", "By id?", "SELECT name FROM author ORDER BY aid", "Use aid"]
        )
        writer.writerow(["restaurants", "table_join", "?", "SELECT 1", ""])
    result = import_benchmark("defog", root, tmp_path / "proj")
    assert result.absent == {"restaurants": 1}
    project = load_project(tmp_path / "proj")
    by_name = {q.name: q for q in project.questions}
    assert by_name["q000"].also_accept == [
        "SELECT aid FROM author",
        "SELECT name, aid FROM author WHERE name <> 'a;b'",
    ]
    assert by_name["q001"].compare is not None and by_name["q001"].compare.order == "auto"
    assert by_name["q001"].question == "By id?\nInstructions: Use aid"


def test_several_agents_execute_each_ground_truth_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _spider(tmp_path)
    files = []
    for name in ("a", "b", "c"):
        files.append((_lines(tmp_path / f"{name}.sql", ["SELECT count(*) FROM singer"] * 5), name))
    import_benchmark("spider", bench, tmp_path / "proj", files)
    project = load_project(tmp_path / "proj")
    opened: list[RunWarehouses] = []
    real_init = RunWarehouses.__init__

    def spying_init(self: RunWarehouses, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        opened.append(self)

    monkeypatch.setattr(RunWarehouses, "__init__", spying_init)
    runs = run_benchmarks(project, ["a", "b", "c"])
    assert [run.info.agent_name for run in runs] == ["a", "b", "c"]
    assert [run.accuracy.label() for run in runs] == ["33% (1/3)"] * 3
    assert len(opened) == 1  # the warehouses were opened (and set up) once
    assert opened[0].executed == 3  # 3 ground truths for 9 answers


def test_agent_globs(tmp_path: Path, invoke) -> None:
    bench = _spider(tmp_path)
    pairs = []
    for name in ("gpt4", "gpt4o", "llama"):
        path = _lines(tmp_path / f"{name}.sql", ["SELECT count(*) FROM singer"] * 5)
        pairs += ["--predictions", str(path), "--agent", name]
    invoke("init", str(tmp_path / "proj"), "--from", "spider", str(bench), *pairs)
    result = invoke("run", "-C", str(tmp_path / "proj"), "--agent", "gpt4*,llama,gpt4")
    summary = result.stdout
    assert [line.split()[0] for line in summary.splitlines()[2:-1]] == ["gpt4", "gpt4o", "llama"]
    assert "33.3% (1/3)" in summary
    result = invoke("run", "-C", str(tmp_path / "proj"), "--agent", "claude*", exit_code=2)
    assert "--agent 'claude*' matches no agent; agents: gpt4, gpt4o, llama" in result.stderr


def test_agents_with_the_same_sql_share_one_execution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agent SQL two agents wrote alike runs once per question, unless it calls a volatile
    function; the verdicts are those of runs made one agent at a time."""
    from sqlbench.engines.sqlalchemy import SqlAlchemyEngine
    from sqlbench.runs.runner import run_benchmark

    bench = _spider(tmp_path)
    same = ["SELECT count(*) FROM singer"] + ["SELECT 1"] * 4
    lucky = ["SELECT 1 WHERE random() IS NOT NULL"] * 5
    files = [
        (_lines(tmp_path / "a.sql", same), "a"),
        (_lines(tmp_path / "b.sql", same), "b"),
        (_lines(tmp_path / "c.sql", lucky), "c"),
        (_lines(tmp_path / "d.sql", lucky), "d"),
    ]
    import_benchmark("spider", bench, tmp_path / "proj", files)
    project = load_project(tmp_path / "proj")
    executed: list[str] = []
    real = SqlAlchemyEngine.run_agent

    def counting(self: SqlAlchemyEngine, sql: str, **kwargs: object) -> object:
        executed.append(sql)
        return real(self, sql, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SqlAlchemyEngine, "run_agent", counting)
    together = run_benchmarks(project, ["a", "b", "c", "d"])
    # 3 questions with SQL answers (2 have no database): a and b share, c and d do not.
    assert executed.count("SELECT count(*) FROM singer") == 1
    assert executed.count("SELECT 1") == 2  # once per question, not per agent
    assert executed.count(lucky[0]) == 6
    alone = {name: run_benchmark(project, name) for name in ("a", "c")}
    for run in together:
        single = alone["a" if run.info.agent_name in ("a", "b") else "c"]
        assert [(q.name, q.verdict, q.reason) for q in run.questions] == [
            (q.name, q.verdict, q.reason) for q in single.questions
        ]
    a, b = together[0].questions[0].trials[0], together[1].questions[0].trials[0]
    assert a.verdict.value == "pass" and a.agent_sql == b.agent_sql
    assert a.timings_ms["agent_sql"] == b.timings_ms["agent_sql"]  # the one execution's time


def test_a_failing_agent_fails_its_run_alone(tmp_path: Path, invoke) -> None:
    """An agent that cannot be built fails its own run with one sentence; the runs of the
    agents before and after it complete and are stored, and the exit code says one failed."""
    bench = _spider(tmp_path)
    pairs = []
    for name in ("first", "last"):
        path = _lines(tmp_path / f"{name}.sql", ["SELECT count(*) FROM singer"] * 5)
        pairs += ["--predictions", str(path), "--agent", name]
    project = tmp_path / "proj"
    invoke("init", str(project), "--from", "spider", str(bench), *pairs)
    (project / "broken_agent.py").write_text(
        "raise RuntimeError('no model weights here')\n\ndef answer(request):\n    return {}\n"
    )
    (project / "agents" / "middle.yml").write_text(
        "agents:\n- name: middle\n  kind: python\n  function: broken_agent:answer\n"
    )
    result = invoke("run", "-C", str(project), "--agent", "first,middle,last", exit_code=2)
    assert "(agent middle) failed: cannot import broken_agent from" in result.stderr
    assert "RuntimeError: no model weights here" in result.stderr
    assert "Traceback" not in result.output
    summary = result.stdout.split("\n\n")[-1]
    rows = {line.split()[0]: line for line in summary.splitlines()[2:]}
    assert "33.3% (1/3)" in rows["first"] and "33.3% (1/3)" in rows["last"]
    assert "failed" in rows["middle"]
    listing = invoke("runs", "-C", str(project), "--format", "json").stdout
    statuses = {r["agent"]: r["status"] for r in json.loads(listing)["runs"]}
    assert statuses == {"first": "completed", "middle": "failed", "last": "completed"}


@pytest.mark.parametrize("slow_loop", [False, True], ids=["loop", "slow_loop"])
def test_a_run_that_crashes_mid_way_fails_alone(
    tmp_path: Path, invoke, monkeypatch: pytest.MonkeyPatch, slow_loop: bool
) -> None:
    """A sqlbench bug while grading one run's answer, after that run has graded others: that
    run is Failed with one sentence (what it graded before stays stored), the runs beside it
    complete and are stored, and the exit code is 2. ``slow_loop``: the loop that reads the
    workers' events is slow (a busy machine), so the worker reaches the failed run's next
    answers before the loop reads the crash; they must not be graded and stored either."""
    from sqlbench.runs import agent_run, batch

    if slow_loop:
        emit = batch.Batch._emit

        def slow_emit(self: batch.Batch, event: object) -> None:
            time.sleep(0.05)
            emit(self, event)

        monkeypatch.setattr(batch.Batch, "_emit", slow_emit)

    bench = _spider(tmp_path)
    pairs = []
    for name in ("first", "middle", "last"):
        path = _lines(tmp_path / f"{name}.sql", ["SELECT count(*) FROM singer"] * 5)
        pairs += ["--predictions", str(path), "--agent", name]
    project = tmp_path / "proj"
    invoke("init", str(project), "--from", "spider", str(bench), *pairs)
    grade = agent_run.AgentRun.grade

    def crashing(self: agent_run.AgentRun, warehouses, agent, item, shared=None):  # type: ignore[no-untyped-def]
        if self.info.agent_name == "middle" and item.position == 1:
            raise KeyError("a sqlbench bug")
        return grade(self, warehouses, agent, item, shared)

    monkeypatch.setattr(agent_run.AgentRun, "grade", crashing)
    result = invoke(
        "run",
        "-C",
        str(project),
        "--agent",
        "first,middle,last",
        "--concurrency",
        "1",
        exit_code=2,
    )
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "(agent middle) failed: KeyError: 'a sqlbench bug'" in errors[0]
    assert "Traceback" not in result.output
    summary = result.stdout.split("\n\n")[-1]
    rows = {line.split()[0]: line for line in summary.splitlines()[2:]}
    assert "33.3% (1/3)" in rows["first"] and "33.3% (1/3)" in rows["last"]
    assert "failed" in rows["middle"]
    listing = json.loads(invoke("runs", "-C", str(project), "--format", "json").stdout)
    statuses = {r["agent"]: r["status"] for r in listing["runs"]}
    assert statuses == {"first": "completed", "middle": "failed", "last": "completed"}
    middle = next(r["name"] for r in listing["runs"] if r["agent"] == "middle")
    shown = json.loads(invoke("show", "-C", str(project), middle, "--format", "json").stdout)
    assert [r["name"] for r in shown["results"]] == ["dev_0000"]  # graded before the crash


def test_published_predictions_run_as_published(tmp_path: Path) -> None:
    """A prediction in a Markdown fence is a syntax error for the official evaluators: the
    imported replay agent runs it as published (sql_as_recorded), where a live agent's fenced
    SQL would be taken out of the fence."""
    from sqlbench.runs.runner import run_benchmark

    bench = _spider(tmp_path)
    path = _lines(tmp_path / "x.sql", ["SELECT count(*) FROM singer"] * 5)
    import_benchmark("spider", bench, tmp_path / "proj", [(path, "x")])
    agent_file = tmp_path / "proj" / "agents" / "x.yml"
    assert yaml.safe_load(agent_file.read_text())["agents"][0]["sql_as_recorded"] is True
    fenced = {
        "space": "concert_singer",
        "name": "dev_0000",
        "sql": "```sql\nSELECT count(*) FROM singer\n```",
    }
    (tmp_path / "proj" / "agents" / "x.jsonl").write_text(json.dumps(fenced) + "\n")
    project = load_project(tmp_path / "proj")
    run = run_benchmark(project, "x", RunOptions(select=("concert_singer/dev_0000",)))
    trial = run.questions[0].trials[0]
    assert trial.verdict.value == "fail" and trial.agent_sql == fenced["sql"]
    agent_file.write_text(agent_file.read_text().replace("sql_as_recorded: true", ""))
    project = load_project(tmp_path / "proj")
    run = run_benchmark(project, "x", RunOptions(select=("concert_singer/dev_0000",)))
    assert run.questions[0].trials[0].verdict.value == "pass"


def test_equal_results_are_compared_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two agents' SQL texts that differ but give equal results (names, types, rows) are
    compared with the ground truth once per question; a result that differs is compared on
    its own."""
    import sqlbench.runs.answers as answers

    bench = _spider(tmp_path)
    files = [
        (_lines(tmp_path / "a.sql", ["SELECT count(*) FROM singer"] * 5), "a"),
        (_lines(tmp_path / "b.sql", ["SELECT count(*)  FROM singer"] * 5), "b"),
        (_lines(tmp_path / "c.sql", ["SELECT count(*) FROM singer WHERE age > 26"] * 5), "c"),
    ]
    import_benchmark("spider", bench, tmp_path / "proj", files)
    project = load_project(tmp_path / "proj")
    graded: list[str] = []
    real = answers.grade

    def counting(question, *args, **kwargs):  # type: ignore[no-untyped-def]
        graded.append(question.name)
        return real(question, *args, **kwargs)

    monkeypatch.setattr(answers, "grade", counting)
    runs = run_benchmarks(project, ["a", "b", "c"])
    # dev_0003 is on pets_1, where every agent's SQL fails: errors are graded each on its own
    assert sorted(graded) == ["dev_0000"] * 2 + ["dev_0001"] * 2 + ["dev_0003"] * 3
    verdicts = [[q.verdict.value for q in run.questions] for run in runs]
    assert verdicts[0] == verdicts[1] == ["pass", "fail", "fail"]
    assert verdicts[2] == ["fail", "fail", "fail"]


# What init --from writes: names, questions, SQL, evidence, numbers, in maps and lists.
_TEXT = st.text(st.characters(max_codepoint=0x2FFFF, exclude_categories=("Cs",)), max_size=240)
_WORDS = st.lists(
    st.sampled_from(
        ["SELECT", "a", "'x'", '"y"', ":", "- ", "#", "?", "…", "名前", "é", " ", "\n"]
    ),
    max_size=80,
).map("".join)
_VALUES = st.recursive(
    st.one_of(_TEXT, _WORDS, st.integers(), st.booleans(), st.none(), st.floats()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(_TEXT, _WORDS), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML built without libyaml")
@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_project_files_are_written_as_pyyaml_writes_them(data: object) -> None:
    """libyaml writes what PyYAML's own emitter writes whenever ``_dump`` uses it
    (``_emitted_alike``); anything else goes to PyYAML's."""
    options = {"sort_keys": False, "allow_unicode": True, "width": 100}
    expected = yaml.dump(data, Dumper=yaml.SafeDumper, **options)  # type: ignore[call-overload]
    assert _dump(data) == expected
    if isinstance(data, dict | list) and _emitted_alike(data):
        assert yaml.dump(data, Dumper=yaml.CSafeDumper, **options) == expected  # type: ignore[call-overload]
