"""What an agent is built with: the project around it and the LLM endpoint it may use.

Environment variables are read in exactly one place: the ``env`` mapping an ``AgentContext``
carries (the CLI passes ``os.environ``; tests pass a dict). Everything below resolves
``${VAR}`` references and the ``SQLBENCH_LLM_*`` variables from that mapping only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlbench import secrets
from sqlbench.errors import AgentError, EnvVarError
from sqlbench.project import envvars
from sqlbench.project.files import AgentConfig, CertifiedQuery, LlmSettings, RunSettings

if TYPE_CHECKING:
    from sqlbench.engines.base import Engine

ENV_BASE_URL = "SQLBENCH_LLM_BASE_URL"
ENV_MODEL = "SQLBENCH_LLM_MODEL"
ENV_API_KEY = "SQLBENCH_LLM_API_KEY"


@dataclass(frozen=True)
class AgentContext:
    """Everything a kind may need to build an agent for one run of one project version."""

    project_root: Path
    """Folder holding the project files (the checkout, or a ref's extraction)."""
    certified_queries: Mapping[str, CertifiedQuery] = field(default_factory=dict)
    """Certified queries by name: examples for ``llm``, routing targets for ``auto``."""
    llm: LlmSettings = field(default_factory=LlmSettings)
    """``llm:`` from sqlbench.yml, unresolved; merged with ``env`` by ``resolve_llm``."""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    """Environment variables: the only place agents read them (default: a snapshot of
    ``os.environ`` taken when the context is made)."""
    engine: Engine | None = None
    """The set-up warehouse: the ``llm`` agent's schema and ``run_sql`` tool."""
    run: RunSettings = field(default_factory=lambda: RunSettings.model_validate({}))
    """``run:`` settings: ``max_rows`` and ``query_timeout_s`` for ``run_sql``, default timeouts."""
    dialect: str = "duckdb"
    """sqlglot dialect agent SQL must be written in (the warehouse's)."""
    agents: Mapping[str, AgentConfig] = field(default_factory=dict)
    """The project's agents by name, so ``build_agent("name", context)`` can find them."""
    warehouse_for: Callable[[str, str], tuple[Engine, RunSettings]] | None = None
    """In a project with several warehouses (``warehouses:``): the engine and ``run:`` settings
    of the question ``(space, name)``, for the ``llm`` agent's schema and ``run_sql``; None:
    ``engine`` and ``run`` serve every question."""


@dataclass(frozen=True)
class LlmEndpoint:
    """A resolved OpenAI-compatible chat-completions endpoint. Never stored or printed whole."""

    base_url: str
    """Base URL, e.g. ``https://api.openai.com/v1``; ``/chat/completions`` is appended."""
    model: str
    api_key: str | None = field(default=None, repr=False)
    """The key itself (from the environment); sent as a bearer token, never recorded."""

    @property
    def chat_url(self) -> str:
        """The chat-completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"


def resolve_env_refs(text: str, env: Mapping[str, str], where: str) -> str:
    """Resolve ``${VAR}`` references (``sqlbench.project.envvars`` syntax) from ``env``.

    Args:
        text: A string that may hold ``${VAR}`` references.
        env: The environment to read.
        where: What the string is, for the error message (``headers of agent 'x'``).

    Raises:
        AgentError: A reference is malformed or names a variable that is not set.

    Example:
        >>> resolve_env_refs("Bearer ${T}", {"T": "abc"}, "a header")
        'Bearer abc'
    """
    try:
        return envvars.resolve(text, env, where=where)
    except EnvVarError as err:
        raise AgentError(str(err)) from err


def _pick(value: str | None, env: Mapping[str, str], where: str) -> str | None:
    if value is None or not value.strip():
        return None
    return resolve_env_refs(value, env, where)


def resolve_llm(
    settings: LlmSettings,
    env: Mapping[str, str],
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
) -> LlmEndpoint | None:
    """Merge an agent's own keys, the ``SQLBENCH_LLM_*`` variables and ``llm:`` settings.

    Precedence, highest first: the agent's keys (``base_url``, ``model``, ``api_key_env``),
    then ``SQLBENCH_LLM_BASE_URL`` / ``SQLBENCH_LLM_MODEL`` / ``SQLBENCH_LLM_API_KEY``, then
    sqlbench.yml's ``llm:``. No key at all is allowed (local servers without authentication).

    Returns:
        The endpoint, or None when no base URL is configured anywhere.

    Raises:
        AgentError: A base URL without a model, or an ``api_key_env`` naming an unset variable.
    """
    url = (
        _pick(base_url, env, "the agent's base_url")
        or _pick(env.get(ENV_BASE_URL), env, ENV_BASE_URL)
        or _pick(settings.base_url, env, "llm.base_url")
    )
    if url is None:
        return None
    chosen_model = (
        _pick(model, env, "the agent's model")
        or _pick(env.get(ENV_MODEL), env, ENV_MODEL)
        or _pick(settings.model, env, "llm.model")
    )
    if chosen_model is None:
        raise AgentError(
            f"an LLM endpoint is configured ({url}) but no model: set `llm.model` in "
            f"sqlbench.yml or {ENV_MODEL}"
        )
    return LlmEndpoint(url, chosen_model, _api_key(settings, env, api_key_env))


def _api_key(
    settings: LlmSettings, env: Mapping[str, str], agent_key_env: str | None
) -> str | None:
    name: str | None = None
    if agent_key_env:
        if agent_key_env not in env:
            raise AgentError(f"the agent's api_key_env names {agent_key_env}, which is not set")
        name = agent_key_env
    elif env.get(ENV_API_KEY):
        name = ENV_API_KEY
    elif settings.api_key_env:
        if settings.api_key_env not in env:
            raise AgentError(
                f"llm.api_key_env in sqlbench.yml names {settings.api_key_env}, which is not set"
            )
        name = settings.api_key_env
    if name is None:
        return None
    secrets.register(env[name], f"${{{name}}}")
    return env[name]
