"""``sqlbench init --dbt`` (or ``init`` in a folder holding ``dbt_project.yml``): the sqlbench
files beside an existing dbt project (docs/dbt.md). Nothing is written into the dbt project's
own folders (``models/``, ``seeds/``, ...): only ``sqlbench.yml``, ``eval_questions/`` and
``agents/``."""

from __future__ import annotations

from pathlib import Path

import yaml

from sqlbench.errors import SqlbenchError
from sqlbench.project.scaffold import Scaffold, ensure_new_project

_GITIGNORE = ".sqlbench/\n"


def is_dbt_project(directory: Path) -> bool:
    """Whether ``directory`` holds a dbt project (``dbt_project.yml``)."""
    return (directory / "dbt_project.yml").is_file()


def scaffold_dbt_project(directory: Path | str) -> Scaffold:
    """Write sqlbench.yml (with ``dbt:``), one example question about one of the project's
    models and an agent answering it, beside the dbt project in ``directory``.

    Raises:
        SqlbenchError: no dbt_project.yml there, a sqlbench project already there (or around
            it), or a file to be written exists already (nothing is written then).
    """
    root = Path(directory)
    if not is_dbt_project(root):
        raise SqlbenchError(f"{root} holds no dbt_project.yml: `init --dbt` goes beside one")
    model = _first_model(root)
    settings = "# sqlbench beside this dbt project (docs/dbt.md): each evaluated ref's models are\n"
    settings += "# built with dbt into a DuckDB database of sqlbench's own under .sqlbench/dbt/.\n"
    settings += "dbt:\n  project_dir: .\n"
    if (root / "profiles.yml").is_file():
        settings += "  profiles_dir: .\n"
    settings += "default_agent: example\n"
    sql = f"SELECT count(*) AS row_count FROM {{{{ ref('{model}') }}}}"
    question = {
        "eval_questions": [
            {
                "name": f"{model}_row_count",
                "question": f"How many rows does {model} have?",
                "sql": sql,
            }
        ]
    }
    answers = f'{{"name": "{model}_row_count", "sql": "SELECT count(*) FROM {model}"}}\n'
    agent = {"agents": [{"name": "example", "kind": "replay", "path": "example_answers.jsonl"}]}
    files = {
        "sqlbench.yml": settings,
        "eval_questions/questions.yml": "# Questions about the dbt models, with ground truth.\n"
        + yaml.safe_dump(question, sort_keys=False, width=100),
        "agents/example.yml": "# A recorded agent; replace it with yours (README: agents).\n"
        + yaml.safe_dump(agent, sort_keys=False),
        "agents/example_answers.jsonl": answers,
    }
    ensure_new_project(root, list(files))
    created: list[str] = []
    notes: list[str] = []
    for rel, text in files.items():
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as err:
            raise SqlbenchError(f"cannot write {target}: {err.strerror or err}") from err
        created.append(rel)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_GITIGNORE, encoding="utf-8")
        created.append(".gitignore")
    elif ".sqlbench" not in ignore.read_text(encoding="utf-8", errors="replace"):
        notes.append("add `.sqlbench/` (sqlbench's runs and dbt builds) to .gitignore")
    return Scaffold(root, created, notes)


def _first_model(root: Path) -> str:
    """The name of the project's first model (by path), for the example question."""
    try:
        data = yaml.safe_load((root / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise SqlbenchError(f"cannot read {root / 'dbt_project.yml'}: {err}") from err
    folders = data.get("model-paths") or ["models"] if isinstance(data, dict) else ["models"]
    for folder in folders:
        found = sorted((root / str(folder)).rglob("*.sql"))
        if found:
            return found[0].stem
    raise SqlbenchError(
        f"the dbt project in {root} has no model (.sql file under {', '.join(map(str, folders))})"
        " to write an example question about"
    )
