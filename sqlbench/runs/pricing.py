"""What an answer cost: its agent's and its judge's tokens priced with ``pricing:`` (dollars per
million tokens per model; none built in: prices change). docs/cost.md.

The agent's model is the answer's ``usage.model``, else the agent's ``model:`` key (for ``llm``
and ``auto`` agents, else the project's ``llm.model``). Cached input tokens are counted among
the input tokens (as OpenAI reports them) and priced at ``cached`` (``input`` when not given).
A model must be listed by its exact name: a near name (a dated variant) is another price, and
a guess would be a wrong number. Usage with no price leaves the cost in dollars unknown
(``usd: null``, the model named in ``unpriced``), never a partial sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlbench.project.files import ModelPrice
from sqlbench.records.run import CostRecord, TrialResult

UNNAMED_MODEL = "the agent's model (set model: on the agent)"
"""How ``unpriced`` names an agent model nothing named."""


def usd_of(
    price: ModelPrice, input_tokens: int, output_tokens: int, cached_tokens: int = 0
) -> float:
    """Dollars for one model's tokens.

    Example:
        >>> usd_of(ModelPrice(input=2.5, output=10, cached=1.25), 1_000_000, 100_000, 400_000)
        3.0
    """
    cached = min(max(cached_tokens, 0), input_tokens)
    cached_price = price.input if price.cached is None else price.cached
    return (
        (input_tokens - cached) * price.input + cached * cached_price + output_tokens * price.output
    ) / 1_000_000


def trial_cost(
    trial: TrialResult, pricing: Mapping[str, ModelPrice], agent_model: str | None
) -> CostRecord | None:
    """The cost of one answer (agent and judge), or None when it reported no usage at all."""
    usd = 0.0
    tokens = 0
    unpriced: list[str] = []
    reported = False
    model = trial.usage_model or agent_model
    if trial.input_tokens is not None or trial.output_tokens is not None:
        reported = True
        spent_in, spent_out = trial.input_tokens or 0, trial.output_tokens or 0
        tokens += spent_in + spent_out
        price = pricing.get(model) if model is not None else None
        if price is None:
            unpriced.append(model or UNNAMED_MODEL)
        else:
            usd += usd_of(price, spent_in, spent_out, trial.cached_tokens or 0)
    judge_usd = 0.0
    for metric in trial.metrics.values():
        if metric.judge_input_tokens is None and metric.judge_output_tokens is None:
            continue
        reported = True
        spent_in, spent_out = metric.judge_input_tokens or 0, metric.judge_output_tokens or 0
        tokens += spent_in + spent_out
        price = pricing.get(metric.judge_model) if metric.judge_model is not None else None
        if price is None:
            unpriced.append(f"judge {metric.judge_model or 'model'}")
        else:
            judge_usd += usd_of(price, spent_in, spent_out)
    if not reported:
        return None
    names = sorted(set(unpriced))
    return CostRecord(
        usd=None if names else round(usd + judge_usd, 10),
        tokens=tokens,
        model=model,
        judge_usd=None if names or not judge_usd else round(judge_usd, 10),
        unpriced=names,
    )


def priced(
    trial: TrialResult, pricing: Mapping[str, ModelPrice], agent_model: str | None
) -> TrialResult:
    """``trial`` with its ``cost`` (unchanged when it reported no usage)."""
    cost = trial_cost(trial, pricing, agent_model)
    if cost is None and trial.cost is None:
        return trial
    return trial.model_copy(update={"cost": cost})


def settings_model(agent_settings: Mapping[str, Any]) -> str | None:
    """The agent model a stored run's ``agent_settings`` name (its ``model:``, else for
    ``llm`` and ``auto`` agents the project's ``llm.model``), for pricing it again."""
    options = agent_settings.get("options")
    model = options.get("model") if isinstance(options, dict) else None
    if isinstance(model, str) and model.strip():
        return model.strip()
    llm = agent_settings.get("llm")
    if agent_settings.get("kind") in ("llm", "auto") and isinstance(llm, dict):
        found = llm.get("model")
        return found if isinstance(found, str) and found else None
    return None
