"""A ref's ``command`` and ``python`` agents run only when the ref is trusted (docs/security.md).

``require_trusted_agent`` is called before an agent is built for a run: an agent of a kind that
runs the tree's code, in a project loaded from another ref, runs only when
``sqlbench.project.reftrust.ref_trust`` says the ref is trusted. Its files are the project's
``agents/`` folder on both sides (a script added, removed or changed there counts) and the
files its definition names: a ``command``'s arguments that are files of the tree, a ``python``
agent's module (its file or package folder).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from sqlbench.errors import AgentError
from sqlbench.project.files import AgentConfig, Project
from sqlbench.project.reftrust import ref_trust, tree_files, untrusted_sentence

CODE_KINDS = frozenset({"command", "python"})
"""Agent kinds that run code from the project's tree."""


def require_trusted_agent(
    project: Project, config: AgentConfig, trusted_refs: Sequence[str] = ()
) -> None:
    """Refuse, with one sentence, to run a ``command``/``python`` agent from an untrusted ref.

    Raises:
        AgentError: the agent's ref is not trusted; the sentence names the agent and
            ``--trust-ref REF``.
    """
    if project.checkout is None or config.kind not in CODE_KINDS:
        return
    decision = ref_trust(
        project.checkout,
        project.source.commit,
        trusted_refs=trusted_refs,
        ref_root=project.root,
        files=agent_files(project, config),
    )
    if not decision.trusted:
        raise AgentError(
            untrusted_sentence(f"agent '{config.name}' ({config.kind})", project.source.branch)
        )


def agent_files(project: Project, config: AgentConfig) -> list[str]:
    """Project-relative paths whose bytes decide what ``config`` runs, on either side."""
    root = project.root
    paths = set(tree_files(root, "agents"))
    if project.checkout is not None:
        paths |= set(tree_files(project.checkout, "agents"))
    base = _relative(config.base_dir, root)
    if config.kind == "command":
        command = config.options.get("command")
        try:
            argv = shlex.split(command) if isinstance(command, str) else list(command or [])
        except ValueError:
            argv = []
        for arg in argv:
            for candidate in (Path(str(arg)), base / str(arg)):
                if not candidate.is_absolute() and ".." not in candidate.parts:
                    paths.add(candidate.as_posix())
    elif config.kind == "python":
        function = str(config.options.get("function", ""))
        module = function.partition(":")[0]
        if module:
            top = module.split(".")[0]
            paths.add(module.replace(".", "/") + ".py")
            paths.add(f"{top}/__init__.py")
            paths |= set(tree_files(root, top))
            if project.checkout is not None:
                paths |= set(tree_files(project.checkout, top))
    return sorted(paths)


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return Path(".")
