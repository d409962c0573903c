"""Where a ``command`` agent runs: a working folder of its own and an allow-listed environment
(docs/security.md, "The answer key out of reach").

The working folder is a private temporary folder holding copies of the agent's files -- the
folder of its agent file and every project file or folder its command names by a relative
path -- and never the question files, the certified queries or the run store. The environment
holds only what programs commonly need (``PATH``, ``HOME``, locale, time zone, temporary
folder, proxies, CA bundles), less any value naming the project's folder, plus the variables
the agent's ``env:`` names. sqlbench's own variables (``SQLBENCH_*``: the signing key, the
judge's and the LLM's keys, store URLs) cannot be named there.
"""

from __future__ import annotations

import atexit
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from sqlbench.errors import AgentError
from sqlbench.project.gitfs import STORE_DIR
from sqlbench.tempdirs import make_temp

ANSWER_KEY_FOLDERS = ("eval_questions", "certified_queries", STORE_DIR)
"""The project folders an agent must not see: questions, certified queries, the run store."""
SQLBENCH_PREFIX = "SQLBENCH_"
"""sqlbench's own variables: never passed to an agent, not even when named in ``env:``."""
PASSED_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "TMPDIR",
        "TEMP",
        "TMP",
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
        "WINDIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
    }
)
"""Variables every command agent gets (when set), besides ``LC_*``."""


def agent_env(
    env: Mapping[str, str], named: Sequence[str], *, project_root: Path, folder: Path
) -> dict[str, str]:
    """The environment of a command agent: the allow-list and ``named`` from ``env``, with
    ``PWD`` its working folder. ``PATH`` loses its entries inside the project; any other
    allow-listed value naming the project's folder is left out.

    Example:
        >>> sorted(agent_env({"PATH": "/p/.venv/bin:/usr/bin", "SQLBENCH_SIGNING_KEY": "k",
        ...                   "OPENAI_API_KEY": "o", "LC_ALL": "C", "OLDPWD": "/p"}, [],
        ...                  project_root=Path("/p"), folder=Path("/tmp/w")).items())
        [('LC_ALL', 'C'), ('PATH', '/usr/bin'), ('PWD', '/tmp/w')]
    """
    root = str(project_root)
    passed: dict[str, str] = {}
    for key, value in env.items():
        if key.startswith(SQLBENCH_PREFIX):
            continue
        if key in named:
            passed[key] = value
        elif key in PASSED_ENV or key.startswith("LC_"):
            if key == "PATH":
                value = os.pathsep.join(
                    entry for entry in value.split(os.pathsep) if not _inside(entry, root)
                )
            elif root in value:
                continue
            passed[key] = value
    passed["PWD"] = str(folder)
    return passed


def forbidden_env_names(named: Iterable[str], secret_names: Iterable[str] = ()) -> list[str]:
    """The names of ``named`` that may not be passed to an agent: sqlbench's own variables and
    the variables holding its secrets (the LLM endpoint's key).

    Example:
        >>> forbidden_env_names(["DB_URL", "SQLBENCH_SIGNING_KEY", "OPENAI_KEY"], ["OPENAI_KEY"])
        ['SQLBENCH_SIGNING_KEY', 'OPENAI_KEY']
    """
    secrets = set(secret_names)
    return [n for n in named if n.startswith(SQLBENCH_PREFIX) or n in secrets]


def working_folder(name: str, project_root: Path, agent_dir: Path, argv: list[str]) -> Path:
    """A new working folder for agent ``name`` holding its files (see the module docstring);
    removed when sqlbench exits.

    Raises:
        AgentError: A file could not be copied.
    """
    folder = make_temp("agent", name)
    atexit.register(shutil.rmtree, folder, True)
    root = project_root.resolve()
    wanted: list[Path] = []
    agent_dir = agent_dir.resolve()
    if agent_dir != root and _inside(str(agent_dir), str(root)):
        wanted.append(agent_dir)
    for arg in argv:
        if not arg or arg.startswith("-") or Path(arg).is_absolute():
            continue
        candidate = root / arg
        try:
            if not candidate.exists():
                continue
            resolved = candidate.resolve()
        except (OSError, ValueError):
            continue
        if resolved != root and _inside(str(resolved), str(root)):
            wanted.append(resolved)
    for path in wanted:
        relative = path.relative_to(root)
        if _answer_key(relative.parts):
            continue
        target = folder / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                shutil.copytree(
                    path, target, ignore=_ignored(root), symlinks=False, dirs_exist_ok=True
                )
            else:
                shutil.copy2(path, target)
        except (OSError, shutil.Error) as err:
            raise AgentError(
                f"agent '{name}': cannot copy {relative} into its working folder: {err}"
            ) from err
    return folder


def program_path(argv: list[str], env: Mapping[str, str], project_root: Path) -> list[str]:
    """``argv`` with a bare program name found on ``PATH`` inside the project (a project's
    virtualenv) made absolute, since the agent's ``PATH`` leaves the project out."""
    program = argv[0]
    if "/" in program or os.sep in program:
        return argv
    found = shutil.which(program, path=env.get("PATH"))
    if found is not None and _inside(found, str(project_root.resolve())):
        return [found, *argv[1:]]
    return argv


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _answer_key(parts: Sequence[str]) -> bool:
    return bool(parts) and parts[0] in ANSWER_KEY_FOLDERS


def _ignored(root: Path) -> Callable[[str, list[str]], set[str]]:
    """A ``copytree`` filter leaving out the answer key (by name, or a link resolving there)
    and Python's byte-code caches."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        left_out = set()
        for name in names:
            if name == "__pycache__" or name in ANSWER_KEY_FOLDERS:
                left_out.add(name)
                continue
            try:
                resolved = (Path(folder) / name).resolve()
                relative = resolved.relative_to(root)
            except (OSError, ValueError):
                continue
            if _answer_key(relative.parts):
                left_out.add(name)
        return left_out

    return ignore
