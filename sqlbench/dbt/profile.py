"""The dbt project a ``dbt:`` key names, and the profile sqlbench builds it with (docs/dbt.md).

sqlbench never builds into the database or schema a user's profile names: it writes a
profiles.yml of its own, in a folder of its own, holding the user's target with ``path``
pointing at sqlbench's DuckDB database for the ref (a ``duckdb`` target), or ``schema`` at the
ref's schema of its own (a ``postgres`` target: ``<schema>_sqlb_<key>``). The user's profile is
found as dbt finds it: ``profiles_dir`` from sqlbench.yml, else ``project_dir``, else
``DBT_PROFILES_DIR``, else ``~/.dbt``. Without any profile, a plain DuckDB target is used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from sqlbench.errors import DbtError
from sqlbench.project.confine import outside_project
from sqlbench.project.files import DbtSettings

_DEFAULT_PATHS = {
    "model-paths": ["models"],
    "seed-paths": ["seeds"],
    "snapshot-paths": ["snapshots"],
    "macro-paths": ["macros"],
    "analysis-paths": ["analyses"],
    "test-paths": ["tests"],
}
_OTHER_FILES = ("dbt_project.yml", "packages.yml", "dependencies.yml", "selectors.yml")
_RESERVED_CATALOGS = frozenset({"memory", "system", "temp", "main"})
_SECRET_KEYS = frozenset(
    {"password", "pass", "token", "private_key", "private_key_passphrase", "keyfile_json"}
)
PROFILE_NAME = "sqlbench"
"""The profile name in sqlbench's generated profiles.yml (``--profile``)."""
ADAPTERS = {"duckdb": "dbt-duckdb", "postgres": "dbt-postgres"}
"""The profile target types sqlbench builds with, and the adapter package each needs."""
SERVER_ADAPTERS = frozenset({"postgres"})
"""Target types that build into a server warehouse, each ref into schemas of its own."""
SCHEMA_MARK = "_sqlb_"
"""What every schema sqlbench builds carries after the target's schema: ``_sqlb_<key>``."""
PARSE_SUFFIX = f"{SCHEMA_MARK}ref"
"""A server project is parsed with ``<schema>_sqlb_ref`` as its schema (the build key is not
known before the parse); each build replaces it with ``_sqlb_<key>``."""


class DbtProject(NamedTuple):
    """A dbt project as ``dbt:`` names it at one ref."""

    project_dir: Path
    name: str
    """``name:`` in dbt_project.yml."""
    profile: dict[str, Any]
    """The target's output as written in the user's profiles.yml (Jinja kept), or a plain
    DuckDB one; ``path`` is set per build by ``profiles_yml``."""
    target: str
    profile_source: str
    """Where the profile came from, for messages and the build key."""
    inputs: tuple[Path, ...]
    """The files and folders dbt reads to build it (hashed to know whether it changed)."""
    packages_dir: Path
    """Where ``dbt deps`` installs packages (``packages-install-path``)."""

    @property
    def adapter(self) -> str:
        """The target's type: ``duckdb`` or ``postgres`` (``ADAPTERS``)."""
        return str(self.profile.get("type") or "duckdb")

    @property
    def on_server(self) -> bool:
        """Whether the target builds into a server warehouse (``SERVER_ADAPTERS``)."""
        return self.adapter in SERVER_ADAPTERS


def project_dir(settings: DbtSettings, root: Path) -> Path:
    """The dbt project folder (``dbt: project_dir``) inside the sqlbench project at ``root``.

    Raises:
        DbtError: it leaves the project or holds no dbt_project.yml.
    """
    folder = root / settings.project_dir
    if outside_project(root, folder):
        raise DbtError(f"dbt: project_dir {settings.project_dir!r} is outside the project")
    if not (folder / "dbt_project.yml").is_file():
        raise DbtError(
            f"dbt: no dbt_project.yml in {settings.project_dir!r} (sqlbench.yml `dbt: "
            "project_dir` names the folder of the dbt project)"
        )
    return folder


def read_project(settings: DbtSettings, root: Path) -> DbtProject:
    """The dbt project at ``root`` with the profile target it is built with.

    Raises:
        DbtError: no dbt_project.yml, an unreadable one, or a profile or target that is missing
            or not a DuckDB one.
    """
    folder = project_dir(settings, root)
    data = _yaml(folder / "dbt_project.yml")
    name = str(data.get("name") or "")
    profile_name = str(data.get("profile") or name)
    inputs = [folder / f for f in _OTHER_FILES if (folder / f).is_file()]
    for key, default in _DEFAULT_PATHS.items():
        for rel in data.get(key) or default:
            path = folder / str(rel)
            if path.exists() and not outside_project(root, path):
                inputs.append(path)
    packages_dir = folder / str(data.get("packages-install-path") or "dbt_packages")
    if packages_dir.is_dir():
        inputs.append(packages_dir)
    profile, target, source = _profile(settings, root, folder, profile_name)
    return DbtProject(folder, name, profile, target, source, tuple(inputs), packages_dir)


def profiles_dirs(settings: DbtSettings, root: Path, folder: Path) -> list[Path]:
    """Where the user's profiles.yml is looked for, in order."""
    if settings.profiles_dir is not None:
        return [root / settings.profiles_dir]
    found = [folder]
    if os.environ.get("DBT_PROFILES_DIR"):
        found.append(Path(os.environ["DBT_PROFILES_DIR"]).expanduser())
    found.append(Path.home() / ".dbt")
    return found


def _profile(
    settings: DbtSettings, root: Path, folder: Path, profile_name: str
) -> tuple[dict[str, Any], str, str]:
    for directory in profiles_dirs(settings, root, folder):
        file = directory / "profiles.yml"
        if not file.is_file():
            continue
        shown = _shown(file, root)
        profiles = _yaml(file)
        profile = profiles.get(profile_name)
        if not isinstance(profile, Mapping):
            raise DbtError(f"dbt: {shown} has no profile {profile_name!r} (dbt_project.yml)")
        outputs = profile.get("outputs")
        target = settings.target or str(profile.get("target") or "")
        if not isinstance(outputs, Mapping) or not isinstance(outputs.get(target), Mapping):
            known = ", ".join(sorted(outputs)) if isinstance(outputs, Mapping) else "none"
            raise DbtError(
                f"dbt: profile {profile_name!r} in {shown} has no target {target!r} "
                f"(its targets: {known})"
            )
        output = dict(outputs[target])
        kind = str(output.get("type", ""))
        if kind not in ADAPTERS:
            raise DbtError(
                f"dbt: target {target!r} of profile {profile_name!r} in {shown} is a {kind} "
                "target; sqlbench builds dbt projects on DuckDB (the embedded warehouse or a "
                "DuckDB file) and PostgreSQL: use a duckdb or postgres target (`dbt: target`)"
            )
        return output, target, f"{shown}#{profile_name}.{target}"
    if settings.profiles_dir is not None:
        raise DbtError(f"dbt: no profiles.yml in profiles_dir {settings.profiles_dir!r}")
    target = settings.target or "sqlbench"
    return {"type": "duckdb", "threads": 4}, target, "a plain DuckDB target (no profiles.yml)"


def profiles_yml(
    project: DbtProject, database: Path | None = None, *, schema: str | None = None
) -> str:
    """The profiles.yml sqlbench builds with: the user's target, its ``path`` replaced by
    ``database`` (a duckdb target) or its ``schema`` by ``schema`` (a server target), so the
    user's own database or schema is never written."""
    output = dict(project.profile)
    if project.on_server:
        assert schema is not None, "a server target is built into a schema of sqlbench's own"
        output["schema"] = schema
    else:
        assert database is not None, "a duckdb target is built into a file of sqlbench's own"
        output["path"] = str(database)
    profile = {PROFILE_NAME: {"target": project.target, "outputs": {project.target: output}}}
    return str(yaml.safe_dump(profile, sort_keys=True))


def rendered_profile(project: DbtProject) -> dict[str, Any]:
    """The target's output with its Jinja rendered as dbt renders it (``{{ env_var('X') }}``
    from the environment): the values a server target connects with. Secrets stay in memory.

    Raises:
        DbtError: dbt is not installed, or a value does not render (an unset variable).
    """
    if not any("{" in str(v) for v in project.profile.values()):
        return dict(project.profile)  # no Jinja: nothing to render (nor dbt to import)
    import contextvars

    try:
        from dbt.config.renderer import ProfileRenderer
        from dbt_common.context import set_invocation_context
    except ImportError as err:
        raise DbtError(f"sqlbench.yml has `dbt:` but dbt-core is not installed: {err}") from err

    def render() -> dict[str, Any]:
        set_invocation_context(dict(os.environ))
        rendered = ProfileRenderer({}).render_data(dict(project.profile))
        return dict(rendered)

    try:
        return contextvars.copy_context().run(render)
    except Exception as err:  # dbt's CompilationError: an unset env_var, bad Jinja
        message = " ".join(str(err).split())
        raise DbtError(f"dbt: cannot read target {project.target!r}: {message[:300]}") from err


def target_schema(project: DbtProject) -> str:
    """A server target's own ``schema`` (rendered), which sqlbench's schemas start with.

    Raises:
        DbtError: the target names no schema.
    """
    schema = str(rendered_profile(project).get("schema") or "")
    if not schema:
        raise DbtError(f"dbt: target {project.target!r} of {project.profile_source} has no schema")
    return schema


def parse_schema(project: DbtProject) -> str:
    """The schema a server project is parsed with (``PARSE_SUFFIX``)."""
    return f"{target_schema(project)}{PARSE_SUFFIX}"


def built_schema(schema: str, parsed_with: str, key: str) -> str:
    """Where a node the parse placed in ``schema`` is built for the build ``key``:
    ``parsed_with`` (``<schema>_sqlb_ref``) replaced by ``<schema>_sqlb_<key[:12]>``.

    Example:
        >>> built_schema("shop_sqlb_ref_marts", "shop_sqlb_ref", "0123456789abcdef")
        'shop_sqlb_0123456789ab_marts'
    """
    assert schema.startswith(parsed_with)
    stem = parsed_with[: -len(PARSE_SUFFIX)]
    return f"{stem}{SCHEMA_MARK}{key[:12]}{schema[len(parsed_with) :]}"


def database_stem(project: DbtProject) -> str:
    """The file name (without ``.duckdb``) of every database sqlbench builds for this project:
    the stem of the profile's own ``path`` (dbt-duckdb names the catalog after it, and sources
    and views refer to it), else ``dbt``.

    Example:
        >>> p = DbtProject(Path("."), "shop", {"path": "dev.duckdb"}, "dev", "", (), Path("."))
        >>> database_stem(p), database_stem(p._replace(profile={"type": "duckdb"}))
        ('dev', 'dbt')
    """
    path = str(project.profile.get("path") or "")
    stem = Path(path).stem if path and "{" not in path and path != ":memory:" else ""
    return stem if stem and stem.lower() not in _RESERVED_CATALOGS else "dbt"


def profile_key(project: DbtProject) -> dict[str, Any]:
    """What of the profile decides a build: ``path`` left out (sqlbench sets it), and
    credentials (a password never enters a build key).

    Example:
        >>> p = DbtProject(Path("."), "shop", {"type": "postgres", "password": "pw",
        ...                "schema": "s"}, "dev", "", (), Path("."))
        >>> profile_key(p)
        {'type': 'postgres', 'schema': 's', 'target': 'dev'}
    """
    kept = {k: v for k, v in project.profile.items() if k != "path" and k not in _SECRET_KEYS}
    return kept | {"target": project.target}


def _yaml(file: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise DbtError(f"dbt: cannot read {file.name}: {_first_line(str(err))}") from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DbtError(f"dbt: {file.name} is not a YAML mapping")
    return data


def _shown(file: Path, root: Path) -> str:
    return file.relative_to(root).as_posix() if file.is_relative_to(root) else str(file)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
