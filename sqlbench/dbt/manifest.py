"""A dbt project's manifest as sqlbench needs it: each seed, model and snapshot with what
decides its build (body checksum, config, relation, the macros it calls), the build key, and
lineage between two refs (dbt's ``state:modified`` and everything downstream).

The summary is kept in ``.sqlbench/dbt/parsed/`` under a hash of the files dbt reads (its
project folders, packages and profile, the vars, dbt's and the adapter's versions, and the
values of the environment variables the project reads with ``env_var()``), so a ref whose dbt
files did not change is not parsed again, in this process or the next.

Environment variables: the names a project reads are found in its files (``env_var('X')`` in
its SQL, YAML and Python, packages included) and in what dbt's parse recorded; their values are
hashed into the build key (a change rebuilds), never stored. ``DBT_ENV_SECRET_*`` variables
(dbt's secrets, for credentials) and the profile's own are left out.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlbench.dbt.invoke import run_dbt, versions
from sqlbench.dbt.profile import (
    DbtProject,
    database_stem,
    parse_schema,
    profile_key,
    profiles_yml,
    read_project,
)
from sqlbench.errors import DbtError
from sqlbench.project.files import DbtSettings

_BUILT_TYPES = frozenset({"seed", "model", "snapshot"})
_SUMMARY_VERSION = 5
_CHUNK = 1 << 20
_ENV_VAR = re.compile(r"""env_var\(\s*(['"])([^'"]+)\1""")
_SCANNED = frozenset({".sql", ".yml", ".yaml", ".py", ".jinja", ".j2"})
"""Files searched for ``env_var('X')`` (not seeds: a CSV holds no Jinja)."""
_SECRET_ENV = "DBT_ENV_SECRET_"


_PARSED: dict[str, Parsed] = {}
"""Projects parsed by this process, by the hash of their inputs: a ref's identity and its
build read the same parse (an extracted ref's folder holds no cache that outlives it)."""


@dataclass(frozen=True)
class Node:
    """One seed, model or snapshot of the manifest."""

    unique_id: str
    name: str
    resource_type: str
    checksum: str
    """dbt's checksum of its body (a seed's file)."""
    config: str
    """Hash of its config (materialization, schema, alias, ...)."""
    macros: str
    """Hash of the macros it depends on (their SQL)."""
    depends_on: tuple[str, ...]
    """Unique ids of the nodes it reads."""
    schema: str
    alias: str
    """The relation's name in the warehouse."""
    sources: str = ""
    """Hash of the relations the dbt sources it reads name (empty: it reads none). A source's
    table is named in its YAML, not in the node: pointing it elsewhere changes no checksum, yet
    changes what the node builds."""


@dataclass(frozen=True)
class Parsed:
    """A dbt project parsed at one ref."""

    key: str
    """The build key: what a build of it reads (see the module docstring)."""
    nodes: dict[str, Node]
    project: str = ""
    """Hash of dbt_project.yml (its vars and configs reach every node's compiled SQL): when it
    differs between two refs, every node counts as modified."""
    env_vars: tuple[str, ...] = ()
    """The environment variables the project reads (names only)."""
    env: str = ""
    """Hash of their values when it was parsed (``env_hash``): part of ``key``."""
    sources: tuple[str, ...] = ()
    """The relations of the sources its nodes read, as dbt names them (``relation_name``,
    ``"db"."schema"."table"``): in ``key`` through each node's ``sources``; their data is
    checked when a kept server build is reused (``dbt.sources``)."""

    def relations(self) -> dict[str, str]:
        """Model, seed and snapshot name -> the relation as sqlbench's warehouse names it
        (``"schema"."alias"``).

        Example:
            >>> n = Node("model.p.o", "orders", "model", "c", "f", "m", (), "main", "orders")
            >>> Parsed("k", {n.unique_id: n}).relations()
            {'orders': '"main"."orders"'}
        """
        return {n.name: f'"{n.schema}"."{n.alias}"' for n in self.nodes.values()}


def parse_ref(settings: DbtSettings, root: Path, cache_dir: Path | None = None) -> Parsed:
    """The dbt project of ``settings`` at ``root`` (a ref's files), parsed by dbt, or read from
    ``cache_dir`` when its files did not change since.

    Every dbt invocation on a ref's project starts here (a build parses first), so this is
    where a ref that is not trusted is refused (``DbtSettings.untrusted``).

    Raises:
        DbtError: the ref is not trusted, dbt is not installed, or the project does not parse
            (missing ``dbt deps`` packages: one sentence saying so).
    """
    if settings.untrusted is not None:
        raise DbtError(settings.untrusted)
    project = read_project(settings, root)
    inputs, env_vars = _inputs_hash(project, settings)
    cached = _PARSED.get(inputs) or _read_cached(cache_dir, inputs)
    if cached is not None and cached.env == env_hash(cached.env_vars):
        _PARSED[inputs] = cached
        return cached
    work = Path(tempfile.mkdtemp(prefix="sqlbench-dbt-parse-"))
    try:
        if project.on_server:
            # A server project is parsed into a placeholder schema (see profile.PARSE_SUFFIX).
            text = profiles_yml(project, schema=parse_schema(project))
        else:
            # The database file dbt never opens while parsing; only the path's stem matters.
            text = profiles_yml(project, work / f"{database_stem(project)}.duckdb")
        (work / "profiles.yml").write_text(text, encoding="utf-8")
        outcome = run_dbt(
            "parse",
            project.project_dir,
            work,
            work,
            _vars_args(settings),
            log_dir=work / "logs",
            adapter=project.adapter,
        )
        if cache_dir is not None:
            _keep_log(work / "logs" / "dbt.log", cache_dir.parent / "logs" / f"parse-{inputs}.log")
        if not outcome.success or outcome.result is None:
            raise DbtError(parse_failure(project, outcome.exception, root))
        recorded = getattr(outcome.result, "env_vars", None) or {}
        parsed = _summary(outcome.result, project, settings, env_vars | set(recorded))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if project.on_server:
        _check_schemas(parsed, parse_schema(project))
    _write_cached(cache_dir, inputs, parsed)
    _PARSED[inputs] = parsed
    return parsed


def _keep_log(log: Path, kept: Path) -> None:
    """Keep dbt's log of a parse beside the builds' (``.sqlbench/dbt/logs/parse-*.log``)."""
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, kept)
    except OSError:
        return  # a log that cannot be kept costs nothing else


def env_hash(names: Iterable[str]) -> str:
    """Hash of the current values of the environment variables ``names`` (unset ones too):
    what a build key holds of them, never the values themselves."""
    return _hash({name: os.environ.get(name) for name in sorted(names)})


def _check_schemas(parsed: Parsed, parsed_with: str) -> None:
    """Every node of a server project must land in a schema of sqlbench's own: the parse
    schema itself, or one starting with it (dbt's ``generate_schema_name`` puts a custom
    schema after the target's, ``<schema>_<custom>``).

    Raises:
        DbtError: a node would be built into another schema (one sentence naming it).
    """
    for node in sorted(parsed.nodes.values(), key=lambda n: n.unique_id):
        if not node.schema.startswith(parsed_with):
            raise DbtError(
                f"dbt: {node.resource_type} {node.name!r} is built into schema "
                f"{node.schema!r}, which does not start with the target's schema: sqlbench "
                f"builds each ref into schemas of its own ('{parsed_with[: -len('_ref')]}_<key>"
                "...') and writes no other, so a generate_schema_name macro must keep "
                "target.schema first"
            )


def parse_failure(project: DbtProject, exception: BaseException | None, root: Path) -> str:
    """One sentence for a dbt project that does not parse."""
    text = " ".join(str(exception or "dbt stopped without saying why").split())
    shown = project.project_dir.relative_to(root).as_posix() if project.project_dir != root else "."
    if "dbt deps" in text or "dbt_packages" in text:
        return (
            f"dbt: the project in {shown!r} needs packages that are not installed: run "
            f"`dbt deps` there first ({text[:300]})"
        )
    return f"dbt cannot parse the project in {shown!r}: {text[:500]}"


def _vars_args(settings: DbtSettings) -> list[str]:
    return ["--vars", json.dumps(settings.vars, sort_keys=True)] if settings.vars else []


def build_args(settings: DbtSettings) -> list[str]:
    """The ``dbt build`` options ``dbt:`` asks for (selection, vars, tests)."""
    args = _vars_args(settings)
    if settings.select:
        args += ["--select", *settings.select]
    if settings.exclude:
        args += ["--exclude", *settings.exclude]
    if not settings.test:
        args += ["--resource-type", "seed", "--resource-type", "model"]
        args += ["--resource-type", "snapshot"]
    return args


def _summary(
    manifest: Any, project: DbtProject, settings: DbtSettings, env_vars: Iterable[str]
) -> Parsed:
    macros: dict[str, str] = {
        uid: hashlib.sha256(str(macro.macro_sql).encode()).hexdigest()[:16]
        for uid, macro in manifest.macros.items()
    }
    nodes: dict[str, Node] = {}
    for uid, node in manifest.nodes.items():
        kind = str(node.resource_type)
        if kind not in _BUILT_TYPES:
            continue
        called = _macro_closure(node.depends_on.macros, manifest.macros)
        parents = tuple(sorted(getattr(node.depends_on, "nodes", ())))
        read_sources = [
            _source_relation(manifest.sources[p]) for p in parents if p in manifest.sources
        ]
        nodes[uid] = Node(
            unique_id=uid,
            name=str(node.name),
            resource_type=kind,
            checksum=str(node.checksum.checksum),
            config=_hash(node.config.to_dict()),
            macros=_hash([(m, macros.get(m, "")) for m in called]),
            depends_on=parents,
            schema=str(node.schema),
            alias=str(node.alias or node.name),
            sources=_hash(sorted(read_sources)) if read_sources else "",
        )
    project_file = project.project_dir / "dbt_project.yml"
    project_hash = hashlib.sha256(project_file.read_bytes()).hexdigest()[:16]
    names = tuple(sorted(n for n in set(env_vars) if not n.startswith(_SECRET_ENV)))
    env = env_hash(names)
    read = {parent for node in nodes.values() for parent in node.depends_on}
    sources = tuple(
        sorted(_source_relation(source) for uid, source in manifest.sources.items() if uid in read)
    )
    parts = {
        "nodes": {uid: asdict(node) for uid, node in sorted(nodes.items())},
        "project": project_hash,
        "profile": profile_key(project),
        "vars": settings.vars,
        "select": settings.select,
        "exclude": settings.exclude,
        "test": settings.test,
        "versions": versions(project.adapter),
    }
    if names:
        parts["env"] = env  # left out when none is read: keys made before stay the same
    return Parsed(_hash(parts), nodes, project_hash, names, env, sources)


def _source_relation(source: Any) -> str:
    """The relation a dbt source names, as dbt renders it (``"db"."schema"."table"``)."""
    return str(source.relation_name or f'"{source.schema}"."{source.identifier}"')


def _macro_closure(direct: Iterable[str], macros: Mapping[str, Any]) -> list[str]:
    """The macros a node calls, and the ones those call, transitively (a change to a macro
    two calls away changes the node's SQL too)."""
    found: set[str] = set()
    todo = list(direct)
    while todo:
        uid = todo.pop()
        if uid in found:
            continue
        found.add(uid)
        macro = macros.get(uid)
        if macro is not None:
            todo.extend(getattr(macro.depends_on, "macros", ()))
    return sorted(found)


def modified(base: Parsed, head: Parsed) -> set[str]:
    """Unique ids of head's nodes that dbt's ``state:modified`` selects against base: new, or
    changed in body, config, relation, the macros they call or the tables
    their sources name.

    Example:
        >>> a = Node("model.p.a", "a", "model", "1", "c", "m", (), "main", "a")
        >>> b = Node("model.p.b", "b", "model", "1", "c", "m", ("model.p.a",), "main", "b")
        >>> changed = Node("model.p.a", "a", "model", "2", "c", "m", (), "main", "a")
        >>> sorted(modified(Parsed("1", {"model.p.a": a, "model.p.b": b}),
        ...                 Parsed("2", {"model.p.a": changed, "model.p.b": b})))
        ['model.p.a']
        >>> sorted(modified(Parsed("1", {"model.p.a": a}, "x"), Parsed("1", {"model.p.a": a}, "y")))
        ['model.p.a']
    """
    if base.project != head.project:
        return set(head.nodes)  # dbt_project.yml changed: any node's SQL may have
    found = set()
    for uid, node in head.nodes.items():
        before = base.nodes.get(uid)
        if before is None or _state(before) != _state(node):
            found.add(uid)
    return found


def _state(node: Node) -> tuple[str, ...]:
    return (node.checksum, node.config, node.macros, node.schema, node.alias, node.sources)


def downstream(start: Iterable[str], nodes: Mapping[str, Node]) -> set[str]:
    """``start`` and every node that reads one of them, transitively."""
    readers: dict[str, set[str]] = {}
    for uid, node in nodes.items():
        for parent in node.depends_on:
            readers.setdefault(parent, set()).add(uid)
    found = set(start)
    todo = list(found)
    while todo:
        for child in readers.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def changed_between(base: Parsed, head: Parsed) -> dict[str, str]:
    """The relations a change from ``base`` to ``head`` can have touched: each modified node
    (or one removed from head) and everything downstream of it, as relation name (lower case)
    -> the model it comes from and why."""
    start = modified(base, head)
    touched = downstream(start, head.nodes)
    found: dict[str, str] = {}
    for uid in sorted(touched):
        node = head.nodes[uid]
        why = "changed" if uid in start else "downstream of a changed model"
        found[node.alias.lower()] = f"{node.resource_type} {node.name} ({why})"
        found.setdefault(node.name.lower(), found[node.alias.lower()])
    for uid, node in base.nodes.items():
        if uid not in head.nodes:
            found.setdefault(node.alias.lower(), f"{node.resource_type} {node.name} (removed)")
    return found


def file_fingerprint(path: Path) -> str:
    """SHA-256 of a file's content (a DuckDB warehouse a build starts from)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _inputs_hash(project: DbtProject, settings: DbtSettings) -> tuple[str, set[str]]:
    """The hash of what a parse reads (see the module docstring), and the environment
    variables the project's files name with ``env_var()``."""
    digest = hashlib.sha256()
    parts = {
        "version": _SUMMARY_VERSION,
        "settings": settings.model_dump(mode="json", exclude={"keep_schemas"}),
        "profile": profile_key(project),
        "versions": versions(project.adapter),
    }
    if project.on_server:
        # The schema it is parsed into (its nodes' schemas follow) as rendered: a profile's
        # `{{ env_var() }}` is not among the variables found below.
        parts["schema"] = parse_schema(project)
    digest.update(json.dumps(parts, sort_keys=True, default=str).encode())
    names: set[str] = set()
    for path in project.inputs:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            digest.update(file.relative_to(project.project_dir).as_posix().encode() + b"\0")
            if file.suffix.lower() in _SCANNED:
                data = file.read_bytes()
                digest.update(data)
                if b"env_var" in data:
                    text = data.decode("utf-8", errors="replace")
                    names.update(m.group(2) for m in _ENV_VAR.finditer(text))
            else:
                with file.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
            digest.update(b"\0")
    names = {n for n in names if not n.startswith(_SECRET_ENV)}
    digest.update(env_hash(names).encode())
    return digest.hexdigest()[:32], names


def _read_cached(cache_dir: Path | None, inputs: str) -> Parsed | None:
    if cache_dir is None:
        return None
    file = cache_dir / f"{inputs}.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        nodes = {
            uid: Node(**{**node, "depends_on": tuple(node["depends_on"])})
            for uid, node in data["nodes"].items()
        }
        names = tuple(str(n) for n in data["env_vars"])
        sources = tuple(str(s) for s in data["sources"])
        return Parsed(
            str(data["key"]), nodes, str(data["project"]), names, str(data["env"]), sources
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not cached (or written by another version): parse again


def _write_cached(cache_dir: Path | None, inputs: str, parsed: Parsed) -> None:
    if cache_dir is None:
        return
    data = {
        "key": parsed.key,
        "nodes": {uid: asdict(n) for uid, n in parsed.nodes.items()},
        "project": parsed.project,
        "env_vars": list(parsed.env_vars),
        "env": parsed.env,
        "sources": list(parsed.sources),
    }
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = cache_dir / f"{inputs}.json.{id(parsed)}.partial"
        partial.write_text(json.dumps(data), encoding="utf-8")
        partial.replace(cache_dir / f"{inputs}.json")
    except OSError:
        return  # a cache that cannot be written costs a parse next time, nothing else
