"""sqlbench on the public corpus, as a researcher runs it, beside the official evaluators.

For Spider dev (9 systems, 8,748 answers), BIRD mini-dev (13 systems, 1,820 answers) and BIRD
dev (4 systems, 1,728 answers) in ``../shared/benchmarks``, this script (the BIRD corpus holds 3
of BIRD's 11 dev databases: 432 dev questions, 140 of them in mini-dev; every published
prediction on them is run):

1. lays each benchmark out as its authors publish it, in a work folder (symlinks to the corpus's
   files; Spider's predictions files rebuilt from ``predictions.jsonl``, one SQL per line in
   ``dev.json`` order; BIRD's are the published ``official_predictions/*.json`` themselves, and
   ``mini_dev_sqlite.json`` is rebuilt from ``examples.jsonl``, with the 360 questions whose
   databases are not in the corpus reduced to their ``db_id``, so the importer leaves them out;
   BIRD dev's ``dev.json`` and its systems' predictions JSON rebuilt the same way from
   ``examples.jsonl`` and ``predictions.jsonl``);
2. times ``sqlbench init --from spider|bird`` and one ``sqlbench run --agent '*'`` per corpus,
   each a fresh process (wall time, peak RSS of its largest process, and its processes'
   memory together, sampled every 50 ms: ``_LAUNCHER``), after byte-compiling sqlbench's
   package and the official evaluators' folders as an install does (``byte_compile``);
3. prints each system's accuracy beside its official rate over the same questions, and how often
   the per-question verdicts agree;
4. when the official evaluators are present, runs them on the same answers in this session and
   prints the time ratio. Nothing is fetched: obtain them once with

       git clone https://github.com/taoyds/test-suite-sql-eval      # at e97acc5
       git clone https://github.com/bird-bench/mini_dev             # at 4d970a9
       python3 -m venv /tmp/official && /tmp/official/bin/pip install tqdm sqlparse \\
           func_timeout psycopg2-binary pymysql

   and pass ``--spider-eval DIR --bird-eval DIR --official-python /tmp/official/bin/python``
   (or set ``SQLBENCH_SPIDER_EVAL``, ``SQLBENCH_BIRD_EVAL``, ``SQLBENCH_OFFICIAL_PYTHON``).
   Spider's runs as its README says, ``evaluation.py --etype exec --keep_distinct`` unmodified,
   once per system (on the questions whose databases are in the corpus); the goal's ratio is
   against that. It needs NLTK's ``punkt_tab`` data (``python -m nltk.downloader punkt_tab``):
   with ``NLTK_DATA`` unset, the script writes an untrained Punkt model (four empty parameter
   files: the same algorithm, no abbreviation list) into the work folder and points
   ``NLTK_DATA`` at it, since this machine cannot download. Its execution core alone is timed
   too, the way the corpus's verdicts were made: ``exec_eval.eval_exec_match`` once per answer
   with ``--keep_distinct`` and the prediction prepared as ``evaluation.py`` prepares it
   (``value`` -> ``1``), from one small driver process (no SQL parsing, no schema reads); BIRD's
   ``evaluation/evaluation_ex.py`` runs unmodified, once per predictions file as its
   ``run_evaluation.sh`` does (``--num_cpus`` = this machine's CPUs, ``--meta_time_out 30``),
   on the 140 questions whose databases are in the corpus. BIRD's ratio is also printed apart
   from the answers that time out in both tools (the issue's goal): the answers whose SQL ran
   into sqlbench's 30 s ``query_timeout_s`` are run through the official's own ``execute_sql``
   under ``func_timeout`` 30 s (its ``--meta_time_out``); those that time out there too are
   left out of both tools (sqlbench: the replay agent has no answer for them, graded at once;
   official: not in that system's prediction and gold files), both are timed again, and the
   ratio of those two timings is printed. The same is printed apart from the answers whose SQL
   runs for at least ``SLOW_S`` seconds in the database in both tools (timed through the
   official's ``execute_sql``, prediction then gold): such a query (BIRD dev's toxicology q254
   runs 19 s in SQLite, on its own longer than the rest of the corpus together) bounds both
   tools' wall time alike, whatever either does around it.
   Without them, only sqlbench's figures are printed. ``--rounds N`` alternates the two tools
   N times and prints the ratio of the medians: Spider's whole corpus, and each BIRD project
   apart from those answers (one pair of BIRD runs moves by 15-20% here between invocations).
   After each BIRD pair it also measures the floor of the same project (``sql_floor.py
   --json``: the least any grader holding typed results must spend) and prints both tools'
   medians as multiples of its median, so that the floor and the ratio come from one window.

Usage: ``python benchmarks/corpus_speed.py [--root DIR] [--work DIR]
[--corpus spider,bird,bird-dev] [--rounds N]``.
Not part of the test suite: it takes minutes. On a shared machine, run it once, late.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SQLBENCH = [sys.executable, "-m", "sqlbench"]
BIRD_SEP = "\t----- bird -----\t"
SLOW_S = 5.0
# The official BIRD evaluator's --num_cpus, as its run_evaluation.sh sets it, and so the cores the
# floor is measured on.
CORES = os.cpu_count() or 1
"""An answer whose SQL runs this long in the database in both tools is one both wait out."""


def slug(text: str) -> str:
    """An agent name from a system's description."""
    text = re.sub(r"\(.*?\)", "", text) if len(text) > 40 else text
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:48]


def _one_line(sql: str) -> str:
    """The official gold file holds one ``SQL<TAB>db_id`` per line."""
    return re.sub(r"[\t\r\n]+", " ", sql).strip()


def jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


_LAUNCHER = """
import os, sys, threading, time
fd = int(sys.argv[1])


def tree(root):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    line = stat.read()
            except OSError:
                continue
            parent = int(line[line.rindex(b")") + 2 :].split()[1])
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.close(fd)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
together = [0]
ended = threading.Event()


def sample():
    while not ended.wait(0.05):
        together[0] = max(together[0], sum(pss_kib(each) for each in tree(pid)))


sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
_, status, usage = os.wait4(pid, 0)  # blocking: the wall time ends when the command does
wall = time.perf_counter() - start
ended.set()
sampler.join()
os.write(fd, f"{wall} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} {together[0]}".encode())
os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""
"""Forks and execs its arguments from a small interpreter and writes the child's wall
seconds, CPU seconds and peak RSS (KiB, from ``wait4``) to the file descriptor ``argv[1]``,
and the most memory its processes held together at one moment: every 50 ms (from a thread,
while the main one waits for the command, so its wall time ends when it exits), the sum of the
proportional set size (``Pss`` in ``/proc/PID/smaps_rollup``: each shared page split among
the processes that map it, so forked children's shared pages are counted once) of the child
and its descendants."""


class Timed:
    """A child process's wall time, CPU time (user + system, its waited-for children's
    included) and peak RSS (its own, or its largest waited-for child's), through wait4. On a
    shared machine the CPU time moves less with the other jobs' load than the wall time does.
    ``keep_output``: its standard output is kept in ``stdout`` instead of thrown away.
    ``together_mb``: its processes' memory together (``_LAUNCHER``).

    The command is started by ``_LAUNCHER`` (``python -S``, about 10 MB), not by this script:
    Linux carries a process's high-water mark of resident memory across fork and exec, so a
    command started straight from this script (which holds the corpus, 100-300 MB) reported
    this script's peak as its own: the official evaluators' and ``sqlbench init``'s "96 MB"
    of earlier sessions. Started from the launcher, a command's peak is at least the
    launcher's."""

    def __init__(
        self,
        argv: list[str],
        cwd: Path | None = None,
        quiet: bool = True,
        env: dict[str, str] | None = None,
        keep_output: bool = False,
    ) -> None:
        readable, writable = os.pipe()
        launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(writable), *argv]
        try:
            with tempfile.TemporaryFile("w+", encoding="utf-8") as kept:
                out = kept if keep_output else subprocess.DEVNULL if quiet else None
                proc = subprocess.Popen(
                    launcher,
                    cwd=cwd,
                    env=env,
                    stdout=out,
                    stderr=subprocess.PIPE,
                    text=True,
                    pass_fds=(writable,),
                )
                os.close(writable)
                writable = -1
                assert proc.stderr is not None
                self.stderr = proc.stderr.read()
                self.returncode = proc.wait()
                figures = os.read(readable, 256).decode().split()
                kept.seek(0)
                self.stdout = kept.read()
        finally:
            os.close(readable)
            if writable >= 0:
                os.close(writable)
        if self.returncode != 0 or len(figures) != 4:
            raise SystemExit(f"{' '.join(argv[:6])} ... exited {self.returncode}:\n{self.stderr}")
        self.seconds = float(figures[0])
        self.cpu_seconds = float(figures[1])
        self.peak_mb = int(figures[2]) / 1024
        self.together_mb = int(figures[3]) / 1024
        """The most memory (PSS) the command and its processes held together, sampled every
        50 ms: a forked child's and a pool worker's own pages count, shared ones once (0 for a
        command that ended before the first sample)."""


def memory(peak_mb: float, together_mb: float) -> str:
    """A command's peak RSS (its largest process's) and its processes' PSS together."""
    return f"peak RSS {peak_mb:.0f} MB, its processes together {together_mb:.0f} MB"


# ---- layouts -------------------------------------------------------------------------------


def spider_layout(root: Path, work: Path) -> tuple[Path, list[tuple[Path, str, str]]]:
    """Spider's published layout, and (predictions file, agent, model) per system."""
    layout = work / "spider"
    layout.mkdir(parents=True)
    (layout / "dev.json").symlink_to(root / "spider/official/dev.json")
    (layout / "tables.json").symlink_to(root / "spider/tables.json")
    (layout / "database").symlink_to(root / "spider/databases")
    count = len(json.loads((root / "spider/official/dev.json").read_text(encoding="utf-8")))
    lines: dict[str, list[str]] = defaultdict(lambda: [""] * count)
    for record in jsonl(root / "spider/predictions.jsonl"):
        index = int(record["example_id"].rsplit("_", 1)[1])
        sql = re.sub(r"[\t\r\n]", " ", str(record["predicted_sql"])).strip()
        lines[record["model"]][index] = f"{sql}\t{record['db_id']}"
    systems = []
    (layout / "predictions").mkdir()
    for model, rows in lines.items():
        path = layout / "predictions" / f"{slug(model)}.sql"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        systems.append((path, slug(model), model))
    return layout, systems


def bird_layout(root: Path, work: Path) -> tuple[Path, list[tuple[Path, str, str]]]:
    """BIRD mini-dev's published layout, and its 13 published predictions files."""
    layout = work / "bird"
    layout.mkdir(parents=True)
    (layout / "dev_databases").symlink_to(root / "bird/databases")
    files = sorted((root / "bird/official_predictions").glob("*.json"))
    stand_ins: dict[int, str] = {}
    for key, value in json.loads(files[0].read_text(encoding="utf-8")).items():
        stand_ins[int(key)] = value.split(BIRD_SEP)[-1].strip()
    questions: list[dict[str, Any]] = [
        {"question_id": None, "db_id": stand_ins[i], "question": "", "evidence": "", "SQL": ""}
        for i in range(len(stand_ins))
    ]
    for example in jsonl(root / "bird/examples.jsonl"):
        if not example.get("in_mini_dev"):
            continue
        questions[example["mini_dev_index"]] = {
            "question_id": example["question_id"],
            "db_id": example["db_id"],
            "question": example.get("mini_dev_question") or example["question"],
            "evidence": example.get("mini_dev_evidence") or example.get("evidence", ""),
            "SQL": example.get("mini_dev_gold_sql") or example["gold_sql"],
            "difficulty": example.get("difficulty", ""),
        }
    (layout / "mini_dev_sqlite.json").write_text(json.dumps(questions, indent=1), encoding="utf-8")
    systems = []
    for path in files:
        name = slug(path.stem.removeprefix("predict_mini_dev_"))
        systems.append((path, name, path.stem))
    return layout, systems


BIRD_DEV_AGENTS = {
    "DAIL-SQL + GPT-4 (7-shot, EUCDISMASKPRESKLSIMTHR selector, threshold 0.8)": "dail_sql_th_0_8",
    "DAIL-SQL + GPT-4 (7-shot, EUCDISMASKPRESKLSIMTHR selector, threshold 0.85)": (
        "dail_sql_th_0_85"
    ),
    "DAIL-SQL + GPT-4 (7-shot, EUCDISQUESTIONMASK selector)": "dail_sql_questionmask",
    "TA-SQL + GPT-4": "ta_sql_gpt_4",
}
"""Agent names of the BIRD dev systems (their descriptions differ only past 40 characters)."""


def bird_dev_layout(root: Path, work: Path) -> tuple[Path, list[tuple[Path, str, str]]]:
    """BIRD dev's published layout (``dev.json`` indexed by ``question_id``; the questions whose
    databases are not in the corpus reduced to a stand-in ``db_id``, so the importer leaves
    them out), and each dev system's predictions as BIRD's JSON, from ``predictions.jsonl``."""
    layout = work / "bird-dev"
    layout.mkdir(parents=True)
    (layout / "dev_databases").symlink_to(root / "bird/databases")
    examples = jsonl(root / "bird/examples.jsonl")
    count = max(e["question_id"] for e in examples) + 1
    questions: list[dict[str, Any]] = [
        {"question_id": None, "db_id": "not_in_corpus", "question": "", "evidence": "", "SQL": ""}
        for _ in range(count)
    ]
    for e in examples:
        questions[e["question_id"]] = {
            "question_id": e["question_id"],
            "db_id": e["db_id"],
            "question": e["question"],
            "evidence": e.get("evidence", ""),
            "SQL": e["gold_sql"],
            "difficulty": e.get("difficulty", ""),
        }
    (layout / "dev.json").write_text(json.dumps(questions, indent=1), encoding="utf-8")
    predictions: dict[str, dict[str, str]] = defaultdict(dict)
    for record in jsonl(root / "bird/predictions.jsonl"):
        if record.get("split") != "dev":
            continue
        qid = int(record["example_id"].rsplit("_", 1)[1])
        predictions[record["model"]][str(qid)] = (
            f"{record['predicted_sql']}{BIRD_SEP}{record['db_id']}"
        )
    (layout / "predictions").mkdir()
    systems = []
    for model, entries in predictions.items():
        name = BIRD_DEV_AGENTS[model]
        path = layout / "predictions" / f"predict_dev_{name}.json"
        path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
        systems.append((path, name, model))
    return layout, systems


# ---- official rates ------------------------------------------------------------------------


def official_verdicts(root: Path, corpus: str) -> dict[tuple[str, str], bool]:
    """(agent, sqlbench question name) -> the official verdict."""
    found = {}
    for record in jsonl(root / f"{corpus.split('-')[0]}/predictions.jsonl"):
        if corpus == "spider":
            index = int(record["example_id"].rsplit("_", 1)[1])
            key = (slug(record["model"]), f"dev_{index:04d}")
            found[key] = bool(record["official_verdict_keep_distinct"])
        elif corpus == "bird" and record.get("split") == "mini_dev":
            stem = Path(record["prediction_source"]["path"]).stem
            agent = slug(stem.removeprefix("predict_mini_dev_"))
            qid = int(record["example_id"].rsplit("_", 1)[1])
            found[(agent, f"q{qid}")] = bool(record["official_verdict"])
        elif corpus == "bird-dev" and record.get("split") == "dev":
            qid = int(record["example_id"].rsplit("_", 1)[1])
            agent = BIRD_DEV_AGENTS[record["model"]]
            found[(agent, f"q{qid}")] = bool(record["official_verdict"])
    return found


# ---- official evaluators -------------------------------------------------------------------

SPIDER_DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from exec_eval import eval_exec_match
pairs = json.load(open(sys.argv[2]))
correct = 0
for db, pred, gold in pairs:
    pred = pred.replace("value", "1")  # as the official evaluation.py prepares predictions
    correct += eval_exec_match(db=db, p_str=pred, g_str=gold, plug_value=False,
                               keep_distinct=True, progress_bar_for_each_datapoint=False)
print(correct, len(pairs))
"""


def run_spider_official(
    eval_dir: Path, python: str, layout: Path, systems: list[tuple[Path, str, str]], work: Path
) -> Timed:
    dev = json.loads((layout / "dev.json").read_text(encoding="utf-8"))
    pairs = []
    for path, _, _ in systems:
        for entry, line in zip(dev, path.read_text(encoding="utf-8").splitlines(), strict=True):
            db = layout / "database" / entry["db_id"] / f"{entry['db_id']}.sqlite"
            if db.is_file():
                pairs.append([str(db), line.split("\t")[0], entry["query"]])
    (work / "spider_pairs.json").write_text(json.dumps(pairs), encoding="utf-8")
    (work / "spider_driver.py").write_text(SPIDER_DRIVER, encoding="utf-8")
    argv = [python, str(work / "spider_driver.py"), str(eval_dir), str(work / "spider_pairs.json")]
    return Timed(argv, cwd=work)


def punkt_stand_in(work: Path) -> dict[str, str]:
    """The environment for Spider's ``evaluation.py``: ``NLTK_DATA`` as set, or else a folder
    holding an untrained Punkt model (``process_sql`` tokenizes with ``nltk.word_tokenize``,
    which loads ``tokenizers/punkt_tab/english``; NLTK cannot download it here)."""
    env = dict(os.environ)
    if "NLTK_DATA" not in env:
        english = work / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
        english.mkdir(parents=True, exist_ok=True)
        for name in ("collocations.tab", "sent_starters.txt", "abbrev_types.txt",
                     "ortho_context.tab"):  # fmt: skip
            (english / name).touch()
        env["NLTK_DATA"] = str(work / "nltk_data")
    return env


def run_spider_evaluation_py(
    eval_dir: Path, python: str, layout: Path, systems: list[tuple[Path, str, str]], work: Path
) -> tuple[float, float, tuple[float, float], list[str]]:
    """Spider's ``evaluation.py --etype exec --keep_distinct``, unmodified, once per system on
    the questions whose databases are in the corpus: total wall and CPU seconds, the largest
    peak RSS and processes' memory together of one call, and each call's execution accuracy
    line ("all" column)."""
    dev = json.loads((layout / "dev.json").read_text(encoding="utf-8"))
    kept = [
        i
        for i, entry in enumerate(dev)
        if (layout / "database" / entry["db_id"] / f"{entry['db_id']}.sqlite").is_file()
    ]
    gold = work / "spider_gold.sql"
    gold.write_text(
        "".join(f"{_one_line(dev[i]['query'])}\t{dev[i]['db_id']}\n" for i in kept),
        encoding="utf-8",
    )
    env = punkt_stand_in(work)
    seconds, cpu, peak, together, rates = 0.0, 0.0, 0.0, 0.0, []
    for path, name, _ in systems:
        lines = path.read_text(encoding="utf-8").splitlines()
        pred = work / f"spider_pred_{name}.sql"
        pred.write_text("".join(lines[i].split("\t")[0] + "\n" for i in kept), encoding="utf-8")
        argv = [
            python, "evaluation.py", "--gold", str(gold), "--pred", str(pred),
            "--db", str(layout / "database"), "--table", str(layout / "tables.json"),
            "--etype", "exec", "--keep_distinct",
        ]  # fmt: skip
        timed = Timed(argv, cwd=eval_dir, env=env, keep_output=True)
        seconds += timed.seconds
        cpu += timed.cpu_seconds
        peak = max(peak, timed.peak_mb)
        together = max(together, timed.together_mb)
        rates += [
            f"{name} {line.split()[-1]}"
            for line in timed.stdout.splitlines()
            if line.startswith("execution")
        ]
    return seconds, cpu, (peak, together), rates


def _bird_questions(layout: Path) -> list[dict[str, Any]]:
    source = layout / "mini_dev_sqlite.json"
    if not source.is_file():
        source = layout / "dev.json"
    questions: list[dict[str, Any]] = json.loads(source.read_text(encoding="utf-8"))
    return questions


def run_bird_official(
    eval_dir: Path,
    python: str,
    layout: Path,
    systems: list[tuple[Path, str, str]],
    work: Path,
    left_out: set[tuple[str, str]] | None = None,
) -> tuple[float, float, tuple[float, float]]:
    """Total wall and CPU seconds, and the largest peak RSS and processes' memory together
    (its pool's workers too), over one evaluation_ex.py call per file; ``left_out``: (agent,
    question name) pairs left out of that agent's files."""
    questions = _bird_questions(layout)
    seconds, cpu, peak, together = 0.0, 0.0, 0.0, 0.0
    for path, name, _ in systems:
        kept = [
            i
            for i, q in enumerate(questions)
            if q["question_id"] is not None
            and (name, f"q{q['question_id']}") not in (left_out or set())
        ]
        gold = work / f"bird_gold_{name}.sql"
        gold.write_text(
            "".join(f"{_one_line(questions[i]['SQL'])}\t{questions[i]['db_id']}\n" for i in kept),
            encoding="utf-8",
        )
        diff = work / f"bird_diff_{name}.jsonl"
        diff.write_text(
            "".join(
                json.dumps({"difficulty": questions[i].get("difficulty", "")}) + "\n" for i in kept
            ),
            encoding="utf-8",
        )
        preds = json.loads(path.read_text(encoding="utf-8"))
        subset = {str(n): preds[str(i)] for n, i in enumerate(kept)}
        mine = work / f"bird_{name}.json"
        mine.write_text(json.dumps(subset), encoding="utf-8")
        argv = [
            python, "-u", "evaluation_ex.py", "--predicted_sql_path", str(mine),
            "--ground_truth_path", str(gold), "--db_root_path", f"{layout / 'dev_databases'}/",
            "--num_cpus", str(CORES), "--meta_time_out", "30",
            "--diff_json_path", str(diff), "--sql_dialect", "SQLite",
            "--output_log_path", str(work / f"bird_{name}.log"),
        ]  # fmt: skip
        timed = Timed(argv, cwd=eval_dir / "evaluation")
        seconds += timed.seconds
        cpu += timed.cpu_seconds
        peak = max(peak, timed.peak_mb)
        together = max(together, timed.together_mb)
    return seconds, cpu, (peak, together)


BIRD_QUERY_DRIVER = """
import json, multiprocessing, sys, time
sys.path.insert(0, sys.argv[1])
from func_timeout import func_timeout, FunctionTimedOut
from evaluation_utils import execute_sql

def seconds(case):
    pred, gold, db = case
    start = time.perf_counter()
    try:
        func_timeout(30.0, execute_sql, args=(pred, gold, db, "SQLite", lambda a, b: 0))
    except FunctionTimedOut:
        return None
    except Exception:
        pass
    return time.perf_counter() - start

if __name__ == "__main__":
    cases = json.load(open(sys.argv[2]))
    with multiprocessing.Pool(int(sys.argv[3])) as pool:
        print(json.dumps(pool.map(seconds, cases, chunksize=1)))
"""


def official_query_seconds(
    eval_dir: Path,
    python: str,
    layout: Path,
    systems: list[tuple[Path, str, str]],
    work: Path,
    candidates: list[tuple[str, str, str]],
) -> list[float | None]:
    """For each of ``candidates`` (agent, space, question name), the seconds the official
    evaluator's own ``execute_sql`` (the prediction, then the gold) takes under ``func_timeout``
    with evaluation_ex.py's ``--meta_time_out 30``; None where it times out."""
    if not candidates:
        return []
    questions = {f"q{q['question_id']}": (i, q) for i, q in enumerate(_bird_questions(layout))}
    paths = {name: path for path, name, _ in systems}
    cases = []
    for agent, space, name in candidates:
        index, question = questions[name]
        preds = json.loads(paths[agent].read_text(encoding="utf-8"))
        db = layout / "dev_databases" / space / f"{space}.sqlite"
        cases.append([preds[str(index)].split(BIRD_SEP)[0], question["SQL"], str(db)])
    (work / "bird_slow.json").write_text(json.dumps(cases), encoding="utf-8")
    (work / "bird_query_driver.py").write_text(BIRD_QUERY_DRIVER, encoding="utf-8")
    done = subprocess.run(
        [python, str(work / "bird_query_driver.py"), str(eval_dir / "evaluation"),
         str(work / "bird_slow.json"), str(CORES)],
        capture_output=True, text=True, check=True, cwd=eval_dir / "evaluation",
    )  # fmt: skip
    found: list[float | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def apart_copy(project: Path, work: Path) -> Path:
    """Where ``sqlbench_without`` lays out the copy of ``project`` it runs (the floor is
    measured on the same copy)."""
    return work / f"{project.name}-apart"


def sqlbench_without(project: Path, left_out: set[tuple[str, str]], work: Path) -> Timed:
    """``sqlbench run --agent '*'`` on a copy of ``project`` whose replay agents have no answer
    for ``left_out`` (agent, question name): each is graded at once (error: no recorded
    answer) instead of running into the timeout."""
    copy = apart_copy(project, work)
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".sqlbench"))
    for agent in {a for a, _ in left_out}:
        answers = copy / "agents" / f"{agent}.jsonl"
        kept = [
            line
            for line in answers.read_text(encoding="utf-8").splitlines(keepends=True)
            if (agent, json.loads(line)["name"]) not in left_out
        ]
        answers.write_text("".join(kept), encoding="utf-8")
    out = work / f"{project.name}-apart.json"
    return Timed(
        [*SQLBENCH, "run", "-C", str(copy), "--agent", "*", "--format", "json", "--output",
         str(out)]
    )  # fmt: skip


# ---- main ----------------------------------------------------------------------------------


def spider_rounds(
    args: argparse.Namespace,
    layout: Path,
    systems: list[tuple[Path, str, str]],
    work: Path,
    pairs: list[str],
    first: tuple[float, float],
) -> str:
    """``--rounds N``: sqlbench (a fresh ``init`` and ``run``) and the official evaluation.py
    alternated N times in all (the first pair included), and the ratio of their medians: on a
    machine where wall times move by 10% between runs, one pair decides nothing."""
    ours, theirs = [first[0]], [first[1]]
    for index in range(1, args.rounds):
        project = work / f"spider-project-{index}"
        init = Timed([*SQLBENCH, "init", str(project), "--from", "spider", str(layout), *pairs])
        run = Timed(
            [*SQLBENCH, "run", "-C", str(project), "--agent", "*", "--format", "json",
             "--output", str(work / f"spider-runs-{index}.json")]
        )  # fmt: skip
        ours.append(init.seconds + run.seconds)
        seconds, _, _, _ = run_spider_evaluation_py(
            Path(args.spider_eval), args.official_python, layout, systems, work
        )
        theirs.append(seconds)
    return alternated(f"{args.rounds} rounds alternated", ours, "official evaluation.py", theirs)


def sql_floor(project: Path) -> float:
    """The least wall seconds any typed grader of ``project`` must spend on this machine's
    cores (as many as the official BIRD evaluator's ``--num_cpus``), measured now by
    ``sql_floor.py --json``: each distinct query once by that many processes at once, the
    guard's parse of each agent text, and the imports of sqlglot, pyarrow, pandas, numpy,
    pydantic, PyYAML and click (its docstring)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("sql_floor.py")), "--project",
         str(project), "--cores", str(CORES), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds: float = json.loads(done.stdout.strip().splitlines()[-1])["typed_s"]
    return seconds


def floor_line(ours: list[float], theirs: list[float], floors: list[float]) -> str:
    """The floor measured after each alternated pair, and both tools' medians against its
    median: on a machine whose speed moves by a third within the hour, a floor measured at
    another time says nothing about a pair's ratio."""
    floor = statistics.median(floors)
    mine, their = statistics.median(ours), statistics.median(theirs)
    return (
        f"  the floor after each pair (sql_floor.py: each distinct query once on {CORES} "
        f"cores, the guard's parse, the imports): {', '.join(f'{v:.2f}' for v in floors)} s; "
        f"median {floor:.2f} s = {floor / their:.2f}x the official's median; sqlbench's median = "
        f"{mine / floor:.2f}x the floor, the official's {their / floor:.2f}x"
    )


def alternated(label: str, ours: list[float], official: str, theirs: list[float]) -> str:
    """The wall seconds of both tools' alternated runs and the ratio of their medians."""
    mine, their = statistics.median(ours), statistics.median(theirs)
    return (
        f"{label}: sqlbench init+run {', '.join(f'{v:.1f}' for v in ours)} s, {official} "
        f"{', '.join(f'{v:.1f}' for v in theirs)} s; medians {mine:.2f} s / {their:.2f} s = "
        f"{mine / their:.2f}x wall"
    )


def corpus_run(corpus: str, root: Path, work: Path, args: argparse.Namespace) -> list[str]:
    build = {"spider": spider_layout, "bird": bird_layout, "bird-dev": bird_dev_layout}[corpus]
    layout, systems = build(root, work)
    project = work / f"{corpus}-project"
    pairs = [a for path, name, _ in systems for a in ("--predictions", str(path), "--agent", name)]
    kind = corpus.split("-")[0]
    init = Timed([*SQLBENCH, "init", str(project), "--from", kind, str(layout), *pairs])
    out = work / f"{corpus}-runs.json"
    run = Timed(
        [*SQLBENCH, "run", "-C", str(project), "--agent", "*", "--format", "json", "--output",
         str(out)]
    )  # fmt: skip
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"]
    official = official_verdicts(root, corpus)
    answers = sum(len(r["results"]) for r in runs)
    lines = [
        f"## {corpus}: {len(runs)} systems, {answers} answers, one `sqlbench run --agent '*'`",
        "",
        "| system | sqlbench | official | agree |",
        "|---|---|---|---|",
    ]
    for r in runs:
        agent = r["run"]["agent"]["name"]
        ours = {x["name"]: x["verdict"] == "pass" for x in r["results"]}
        theirs = {n: official[(agent, n)] for n in ours if (agent, n) in official}
        agree = sum(ours[n] == v for n, v in theirs.items())
        ours_rate = 100 * sum(ours.values()) / len(ours)
        off_rate = 100 * sum(theirs.values()) / max(len(theirs), 1)
        lines.append(
            f"| {agent} | {ours_rate:.1f}% ({sum(ours.values())}/{len(ours)}) | "
            f"{off_rate:.1f}% ({sum(theirs.values())}/{len(theirs)}) | "
            f"{100 * agree / max(len(theirs), 1):.2f}% |"
        )
    lines += [
        "",
        f"sqlbench init --from {kind}: {init.seconds:.1f} s (CPU {init.cpu_seconds:.1f} s), "
        f"{memory(init.peak_mb, init.together_mb)}",
        f"sqlbench run --agent '*': {run.seconds:.1f} s (CPU {run.cpu_seconds:.1f} s), "
        f"{memory(run.peak_mb, run.together_mb)} ({1000 * run.seconds / answers:.1f} ms per "
        "answer)",
    ]
    timed_out = [
        (r["run"]["agent"]["name"], x)
        for r in runs
        for x in r["results"]
        if x["reason"].startswith("the agent's SQL timed out")
    ]
    if timed_out:
        waited = sum(x.get("timings_ms", {}).get("agent_sql", 0.0) for _, x in timed_out) / 1000
        lines.append(
            f"answers whose SQL ran into the query timeout: {len(timed_out)} (their query time: "
            f"{waited:.0f} s, spread over the run's concurrent queries; the official waits them "
            "out too)"
        )
    total = init.seconds + run.seconds
    total_cpu = init.cpu_seconds + run.cpu_seconds
    python = args.official_python
    if corpus == "spider" and args.spider_eval:
        eval_dir = Path(args.spider_eval)
        seconds, cpu, peak, rates = run_spider_evaluation_py(
            eval_dir, python, layout, systems, work
        )
        lines.append(
            f"official (test-suite-sql-eval evaluation.py --etype exec --keep_distinct, "
            f"{len(systems)} calls): {seconds:.1f} s (CPU {cpu:.1f} s), {memory(*peak)}; "
            f"sqlbench init+run / official = {total / seconds:.2f}x wall, "
            f"{total_cpu / cpu:.2f}x CPU"
        )
        lines.append(f"official execution accuracy per call: {', '.join(rates)}")
        if args.rounds > 1:
            lines.append(spider_rounds(args, layout, systems, work, pairs, (total, seconds)))
        core = run_spider_official(eval_dir, python, layout, systems, work)
        lines.append(
            f"official's execution core alone (eval_exec_match per answer from one driver "
            f"process, no parsing): {core.seconds:.1f} s (CPU {core.cpu_seconds:.1f} s), "
            f"{memory(core.peak_mb, core.together_mb)}; sqlbench init+run / that = "
            f"{total / core.seconds:.2f}x wall, {total_cpu / core.cpu_seconds:.2f}x CPU"
        )
    elif corpus.startswith("bird") and args.bird_eval:
        eval_dir = Path(args.bird_eval)
        seconds, cpu, peak = run_bird_official(eval_dir, python, layout, systems, work)
        lines.append(
            f"official (mini_dev evaluation_ex.py, {len(systems)} calls): {seconds:.1f} s "
            f"(CPU {cpu:.1f} s), {memory(*peak)}; sqlbench init+run / official = "
            f"{total / seconds:.2f}x wall, {total_cpu / cpu:.2f}x CPU"
        )
        slow = [
            (r["run"]["agent"]["name"], x)
            for r in runs
            for x in r["results"]
            if x["reason"].startswith("the agent's SQL timed out")
            or (x.get("timings_ms") or {}).get("agent_sql", 0.0) >= 1000 * SLOW_S
        ]
        candidates = [(agent, x["space"], x["name"]) for agent, x in slow]
        seconds_there = official_query_seconds(eval_dir, python, layout, systems, work, candidates)
        ran_out = {(a, x["name"]) for a, x in timed_out}
        apart_sets = [
            (
                "time out in both (the official's execute_sql under func_timeout 30 s)",
                {(a, n) for (a, _, n), t in zip(candidates, seconds_there, strict=True)
                 if t is None and (a, n) in ran_out},
            ),
            (
                f"run for at least {SLOW_S:.0f} s in the database in both tools or time out "
                "(the official's execute_sql, prediction then gold)",
                {(a, n) for (a, _, n), t in zip(candidates, seconds_there, strict=True)
                 if t is None or t >= SLOW_S},
            ),
        ]  # fmt: skip
        for what, both in apart_sets:
            if not both:
                lines.append(f"no answer's SQL would {what.split(' (')[0]}")
                continue
            # Both tools again, those answers left out of each: the ratio of what remains.
            apart = sqlbench_without(project, both, work)
            o_seconds, o_cpu, _ = run_bird_official(eval_dir, python, layout, systems, work, both)
            listed = ", ".join(f"{a}/{n}" for a, n in sorted(both))
            lines.append(
                f"apart from the {len(both)} answers whose SQL would {what} ({listed}): both "
                "tools run again with them left out (sqlbench: no recorded answer; official: not "
                f"in its files): sqlbench init+run {init.seconds + apart.seconds:.1f} s (CPU "
                f"{init.cpu_seconds + apart.cpu_seconds:.1f} s), official {o_seconds:.1f} s "
                f"(CPU {o_cpu:.1f} s) = {(init.seconds + apart.seconds) / o_seconds:.2f}x wall, "
                f"{(init.cpu_seconds + apart.cpu_seconds) / o_cpu:.2f}x CPU"
            )
            if args.rounds > 1:
                ours_s = [init.seconds + apart.seconds]
                theirs_s = [o_seconds]
                floors = [sql_floor(apart_copy(project, work))]
                for _ in range(1, args.rounds):
                    ours_s.append(init.seconds + sqlbench_without(project, both, work).seconds)
                    theirs_s.append(
                        run_bird_official(eval_dir, python, layout, systems, work, both)[0]
                    )
                    floors.append(sql_floor(apart_copy(project, work)))
                label = f"  {args.rounds} rounds alternated, apart from them"
                lines.append(alternated(label, ours_s, "official", theirs_s))
                lines.append(floor_line(ours_s, theirs_s, floors))
    else:
        lines.append(f"official evaluator for {corpus}: not given (see the module docstring)")
    return lines


def byte_compile(args: argparse.Namespace) -> str:
    """Byte-compile sqlbench's package and the official evaluators' folders, as ``pip
    install`` does for an installed package: where ``PYTHONDONTWRITEBYTECODE`` is set (this
    machine sets it), a package that was never compiled (an editable install) is compiled from
    source by every process, which times the compiler instead of the tool (about 0.1-0.3 s a
    ``sqlbench`` process here). Compiled files are still read with that variable set."""
    done = subprocess.run(
        [
            *SQLBENCH[:1],
            "-c",
            "import pathlib, sqlbench; print(pathlib.Path(sqlbench.__file__).parent)",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    folders = [(sys.executable, done.stdout.strip())]
    for official in (args.spider_eval, args.bird_eval):
        if official:
            folders.append((args.official_python, official))
    for python, folder in folders:
        subprocess.run([python, "-m", "compileall", "-q", folder], check=True, capture_output=True)
    return "byte-compiled first, as pip install does: " + ", ".join(f for _, f in folders)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--work", type=Path, default=None, help="default: a temporary folder")
    parser.add_argument("--corpus", default="spider,bird,bird-dev")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="alternate both tools this many times (Spider; BIRD apart from its slow answers)",
    )
    parser.add_argument("--spider-eval", default=os.environ.get("SQLBENCH_SPIDER_EVAL"))
    parser.add_argument("--bird-eval", default=os.environ.get("SQLBENCH_BIRD_EVAL"))
    parser.add_argument(
        "--official-python", default=os.environ.get("SQLBENCH_OFFICIAL_PYTHON", sys.executable)
    )
    args = parser.parse_args()
    if not (args.root / "spider").is_dir():
        raise SystemExit(f"no corpus at {args.root}: pass --root DIR")
    if args.bird_eval and not (Path(args.bird_eval) / "evaluation" / "evaluation_ex.py").is_file():
        raise SystemExit(
            f"--bird-eval {args.bird_eval} holds no evaluation/evaluation_ex.py: give the root of "
            "a mini_dev checkout"
        )
    if args.spider_eval and not (Path(args.spider_eval) / "evaluation.py").is_file():
        raise SystemExit(
            f"--spider-eval {args.spider_eval} holds no evaluation.py: give the root of a "
            "test-suite-sql-eval checkout"
        )
    own = args.work is None
    work = Path(tempfile.mkdtemp(prefix="sqlbench-corpus-")) if own else args.work
    work.mkdir(parents=True, exist_ok=True)
    taken = [c.strip() for c in args.corpus.split(",") if (work / c.strip()).exists()]
    if not own and taken:
        raise SystemExit(
            f"--work {work} already holds {', '.join(taken)} from an earlier invocation: give an "
            "empty or new folder"
        )
    print(byte_compile(args), flush=True)
    version = Timed([*SQLBENCH, "--version"])
    lines = [f"sqlbench --version: {version.seconds:.2f} s (a fresh process)", ""]
    print("\n".join(lines), flush=True)
    try:
        for corpus in args.corpus.split(","):
            lines = corpus_run(corpus.strip(), args.root, work / corpus.strip(), args)
            print("\n".join([*lines, ""]), flush=True)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
