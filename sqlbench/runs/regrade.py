"""``sqlbench regrade``: grade a stored run's agent answers again, without asking the agent
(``runner.regrade_run`` runs it; this module holds what it replays).

A team that fixes a ground truth or a tolerance wants to see the effect at zero agent cost:
the stored answers (SQL, text, trace) are replayed, each executed and graded under the current
(or another ref's) ground truth, compare options and warehouse. The result is a new run that
names its source (``RunInfo.regraded_from``); the stored run is kept unchanged. Questions the
source never asked the agent (their ground truth failed then, or they were skipped), and
questions the project no longer has, are left out, and the notices say how many.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlbench.agents.base import Answer, Request, ToolCall, Usage
from sqlbench.records.run import RunInfo, TrialResult, TurnResult

Key = tuple[str, str]

REUSED_LABEL = "unaffected (reused)"
"""The words before the reason of a question an affected-only run took from the base run."""


@dataclass(frozen=True)
class Regrade:
    """What a regrade replays: the source run and its answers per question, in trial order."""

    source: RunInfo
    answers: Mapping[Key, tuple[Answer, ...]]
    left_out: int = 0
    """Questions of the source run whose agent was never asked (nothing to replay)."""
    turns: Mapping[Key, tuple[tuple[Answer, ...], ...]] = field(default_factory=dict)
    """A conversation's answers per trial, per turn (docs/conversations.md)."""


def regrade_source(info: RunInfo, trials: Iterable[TrialResult]) -> Regrade:
    """The answers a stored run's agent gave, per question, in trial order."""
    answers: dict[Key, list[Answer]] = {}
    turns: dict[Key, list[tuple[Answer, ...]]] = {}
    never_asked: set[Key] = set()
    for trial in sorted(trials, key=lambda t: (t.space, t.name, t.trial)):
        key = (trial.space, trial.name)
        if _asked(trial):
            answers.setdefault(key, []).append(stored_answer(trial))
            if trial.turns is not None:
                replayed = [_turn_answer(t) for t in trial.turns]
                if replayed and trial.not_asked:  # its last turn found the endpoint unreachable
                    replayed[-1] = replayed[-1].model_copy(
                        update={"unreachable": trial.endpoint_fault}
                    )
                turns.setdefault(key, []).append(tuple(replayed))
        else:
            never_asked.add(key)
    return Regrade(
        info,
        {key: tuple(found) for key, found in answers.items()},
        len(never_asked - answers.keys()),
        {key: tuple(found) for key, found in turns.items()},
    )


def _turn_answer(turn: TurnResult) -> Answer:
    usage = None
    if turn.input_tokens is not None or turn.output_tokens is not None:
        usage = Usage(input_tokens=turn.input_tokens or 0, output_tokens=turn.output_tokens or 0)
    return Answer(
        sql=turn.sql,
        answer=turn.answer,
        error=turn.agent_error,
        tool_calls=[ToolCall(**call.model_dump()) for call in turn.tool_calls],
        usage=usage,
    )


def stored_answer(trial: TrialResult) -> Answer:
    """The agent's answer as the run stored it (SQL, text answer, error, trace, tokens)."""
    usage = None
    if trial.input_tokens is not None or trial.output_tokens is not None:
        usage = Usage(
            input_tokens=trial.input_tokens or 0,
            output_tokens=trial.output_tokens or 0,
            cached_tokens=trial.cached_tokens or 0,
            model=trial.usage_model,
        )
    return Answer(
        sql=trial.agent_sql,
        answer=trial.answer,
        error=trial.agent_error,
        unreachable=trial.endpoint_fault,
        tool_calls=[ToolCall(**call.model_dump()) for call in trial.tool_calls],
        usage=usage,
    )


def _asked(trial: TrialResult) -> bool:
    """Whether the agent was asked for this trial: the run times the agent's SQL step only
    after asking (a failing ground truth or a skip stops before)."""
    return "agent_sql" in trial.timings_ms or any(
        value is not None for value in (trial.agent_sql, trial.answer, trial.agent_error)
    )


@dataclass
class ReplayedAgent:
    """An agent that answers each question with the stored answers, in trial order (the last
    one again if asked more often). Counts nothing as an agent call: it runs no agent."""

    answers: Mapping[Key, tuple[Answer, ...]]
    turns: Mapping[Key, tuple[tuple[Answer, ...], ...]] = field(default_factory=dict)
    """A conversation's stored answers per trial, per turn: each turn gets its own."""
    name: str = "regrade"
    answers_at_once: ClassVar[bool] = True
    """Stored answers are looked up: ``ask`` calls ``answer`` without a timing thread."""
    _next: dict[Key, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: Request) -> Answer:
        """The stored answer to ``request``'s question (to its turn, in a conversation)."""
        key = (request.space, request.name)
        if key in self.turns:
            return self._turn_answer(key, request.turn)
        found = self.answers[key]
        with self._lock:
            index = self._next.get(key, 0)
            self._next[key] = index + 1
        return found[min(index, len(found) - 1)]

    def _turn_answer(self, key: Key, turn: int) -> Answer:
        """Turn 1 starts the next stored trial of the conversation; later turns answer from
        the same trial."""
        trials = self.turns[key]
        with self._lock:
            if turn == 1:
                self._next[key] = self._next.get(key, -1) + 1
            index = max(self._next.get(key, 0), 0)
        stored = trials[min(index, len(trials) - 1)]
        if turn > len(stored):
            return Answer(
                error=f"the stored run has no answer for turn {turn} (it asked {len(stored)} "
                "turns): ask the agent again with `sqlbench run`"
            )
        return stored[turn - 1]


@dataclass(frozen=True)
class ReuseAnswers:
    """An affected-only run (``check --affected``, ``run --affected-by``): the base run whose
    answers the unaffected questions take, and those answers per question."""

    source: RunInfo
    answers: Mapping[Key, tuple[Answer, ...]]
    asked: int = 0
    """How many questions the agent is asked (for the notice)."""
    turns: Mapping[Key, tuple[tuple[Answer, ...], ...]] = field(default_factory=dict)
    """The reused conversations' answers per trial, per turn."""


@dataclass
class PartlyReplayedAgent:
    """Asks ``agent`` the questions ``replayed`` has no answer for; the others get their stored
    answers (no agent call)."""

    agent: Any
    replayed: ReplayedAgent
    name: str = "affected"

    def __post_init__(self) -> None:
        self.name = getattr(self.agent, "name", self.name)

    def answer(self, request: Request) -> Any:
        """The stored answer of an unaffected question, else the agent's."""
        if (request.space, request.name) in self.replayed.answers:
            return self.replayed.answer(request)
        return self.agent.answer(request)
