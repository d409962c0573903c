"""The ``command`` kind: a program run per question, JSON request on stdin, answer on stdout.

The program runs in a working folder of its own holding the agent's files but not the answer
key, with an allow-listed environment (``sqlbench.agents.workdir``; docs/security.md), in its
own process group (session), so that a timeout kills it and everything it started. A non-zero
exit is an agent error that keeps the tail of stderr; stdout holds a JSON answer object or bare
SQL text.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated

from pydantic import Field

from sqlbench.agents.base import Answer, Request
from sqlbench.agents.call import parse_output_text, time_left
from sqlbench.agents.context import AgentContext
from sqlbench.agents.kinds import AgentKind, KindOptions, problem, project_root_of
from sqlbench.agents.traces import TraceFormat
from sqlbench.agents.workdir import agent_env, forbidden_env_names, program_path, working_folder
from sqlbench.errors import AgentError, Problem, Severity
from sqlbench.project.files import AgentConfig

_STDERR_TAIL_LINES = 5
_STDERR_TAIL_CHARS = 400
_DRAIN_AFTER_KILL_S = 2.0
_CHUNK_BYTES = 64 * 1024
_STDERR_KEEP_BYTES = 64 * 1024
MAX_OUTPUT_BYTES = 16 * 2**20
"""The most a command may print on stdout for one answer; more is an agent error, so that a
runaway program cannot fill memory (and the run store) with megabytes of "SQL"."""


class CommandOptions(KindOptions):
    """Keys of a ``command`` agent."""

    command: str | list[str] = Field(min_length=1)
    """The program and its arguments: one string split like a shell, or a list."""
    trace_format: TraceFormat = TraceFormat.SQLBENCH
    """The shape of the printed answer (``sqlbench.agents.traces``)."""
    env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = Field(
        default_factory=list
    )
    """Environment variables passed to the program by name, beside the allow-list every
    command agent gets (sqlbench's own ``SQLBENCH_*`` variables cannot be named)."""


def command_argv(command: str | list[str]) -> list[str]:
    """The argument vector of a ``command`` key.

    Raises:
        ValueError: The string cannot be split (unbalanced quotes) or is empty.

    Example:
        >>> command_argv("python agents/run.py --model 'gpt 4'")
        ['python', 'agents/run.py', '--model', 'gpt 4']
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv or not argv[0]:
        raise ValueError("the command is empty")
    return argv


def stderr_tail(stderr: str) -> str:
    """The last few non-empty lines of stderr, their line breaks kept.

    Example:
        >>> stderr_tail("warn\\n\\nTraceback...\\nValueError: boom\\n")
        'warn\\nTraceback...\\nValueError: boom'
    """
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    tail = "\n".join(lines[-_STDERR_TAIL_LINES:])
    return tail if len(tail) <= _STDERR_TAIL_CHARS else "…" + tail[-_STDERR_TAIL_CHARS:]


class CommandAgent:
    """Runs ``argv`` per question in ``cwd``; see the module docstring."""

    notice: str | None = None

    def __init__(
        self,
        name: str,
        argv: list[str],
        cwd: Path,
        env: Mapping[str, str],
        default_timeout_s: float,
        trace_format: TraceFormat = TraceFormat.SQLBENCH,
    ) -> None:
        self.name = name
        self.argv = argv
        self.cwd = cwd
        self.env = dict(env)
        self.default_timeout_s = default_timeout_s
        self.trace_format = trace_format

    def answer(self, request: Request) -> Answer:
        """Run the program once and parse what it printed."""
        left = time_left()
        timeout_s = self.default_timeout_s if left is None else left
        try:
            process = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as err:
            raise AgentError(
                f"cannot start {self.argv[0]!r} in {self.cwd}: {err.strerror or err}"
            ) from err
        _LIVE.add(process)
        pipes = _Pipes(process, request.model_dump_json().encode(), MAX_OUTPUT_BYTES)
        try:
            finished = pipes.wait(timeout_s)
            if pipes.overflowed:
                _kill_tree(process)
                _reap(process)
                raise AgentError(
                    f"the command printed more than {MAX_OUTPUT_BYTES // 2**20} MB on stdout "
                    "and was killed (an answer is SQL text or a JSON answer object)"
                )
            if not finished:
                _kill_tree(process)
                _reap(process)
                tail = stderr_tail(pipes.stderr(_DRAIN_AFTER_KILL_S).decode("utf-8", "replace"))
                raise AgentError(
                    f"the command did not answer within {timeout_s:.3g}s and was killed"
                    + (f"; stderr:\n{tail}" if tail else "")
                )
        finally:
            _LIVE.discard(process)
        stderr = pipes.stderr(_DRAIN_AFTER_KILL_S).decode("utf-8", "replace")
        if process.returncode != 0:
            tail = stderr_tail(stderr)
            status = _status(process.returncode)
            raise AgentError(
                f"the command {status}" + (f"; stderr:\n{tail}" if tail else " (stderr was empty)")
            )
        try:
            return parse_output_text(pipes.stdout().decode("utf-8"), self.trace_format)
        except UnicodeDecodeError as err:
            raise AgentError(f"the command's output is not UTF-8 text ({err.reason})") from err


class _Pipes:
    """Feeds a process's stdin and drains its stdout and stderr on daemon threads.

    Unlike ``Popen.communicate``, memory stays bounded whatever the program prints: stdout is
    read up to ``limit`` bytes (past it, ``overflowed`` is set and reading stops, so the caller
    kills the program), and only the last ``_STDERR_KEEP_BYTES`` of stderr are kept.
    """

    def __init__(self, process: subprocess.Popen[bytes], data: bytes, limit: int) -> None:
        self._process = process
        self._data = data
        self._limit = limit
        self._out = bytearray()
        self._err = bytearray()
        self.overflowed = False
        self._out_reader = _daemon(self._read_out, "out")
        self._err_reader = _daemon(self._read_err, "err")
        _daemon(self._feed, "in")

    def wait(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) until stdout is drained and the program has exited.

        Returns:
            True when both happened, or stdout overflowed (see ``overflowed``); False on timeout.
        """
        deadline = time.monotonic() + timeout_s
        self._out_reader.join(timeout_s)
        if self.overflowed:
            return True
        if self._out_reader.is_alive():
            return False
        try:
            self._process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        return True

    def stdout(self) -> bytes:
        """What the program printed on stdout (call after ``wait`` returned True)."""
        return bytes(self._out)

    def stderr(self, wait_s: float) -> bytes:
        """The tail of stderr, after waiting up to ``wait_s`` for it to close (a program's
        background child may keep it open)."""
        self._err_reader.join(wait_s)
        return bytes(self._err)

    def _feed(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        # A program may exit or close stdin without reading it: its exit status then says why.
        with contextlib.suppress(OSError):
            stdin.write(self._data)
        with contextlib.suppress(OSError):
            stdin.close()

    def _read_out(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        with stdout:  # each reader closes its own pipe when done, so no descriptor leaks
            while chunk := os.read(stdout.fileno(), _CHUNK_BYTES):
                if len(self._out) + len(chunk) > self._limit:
                    self.overflowed = True
                    return
                self._out.extend(chunk)

    def _read_err(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        with stderr:
            while chunk := os.read(stderr.fileno(), _CHUNK_BYTES):
                self._err.extend(chunk)
                if len(self._err) > _STDERR_KEEP_BYTES:
                    del self._err[:-_STDERR_KEEP_BYTES]


def _daemon(target: Callable[[], None], name: str) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True, name=f"sqlbench-command-{name}")
    thread.start()
    return thread


def _status(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _kill_tree(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and every process in its session (it leads its own group)."""
    if os.name == "posix":
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            return  # the whole group is already gone
    else:
        process.kill()


def _reap(process: subprocess.Popen[bytes]) -> None:
    """Collect the killed program's exit status, so it does not linger as a zombie."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_DRAIN_AFTER_KILL_S)


class _LiveProcesses:
    """Command processes still running, killed when the interpreter exits (Ctrl-C mid-run):
    they run in their own sessions, so the terminal's interrupt does not reach them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen[bytes]] = set()

    def add(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.add(process)

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.discard(process)

    def kill_all(self) -> None:
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            if process.poll() is None:
                _kill_tree(process)


_LIVE = _LiveProcesses()
atexit.register(_LIVE.kill_all)


def _check(config: AgentConfig, options: CommandOptions) -> list[Problem]:
    try:
        argv = command_argv(options.command)
    except ValueError as err:
        return [problem(config, f"`command` cannot be split like a shell command: {err}")]
    forbidden = forbidden_env_names(options.env)
    if forbidden:
        return [problem(config, _forbidden_sentence(forbidden))]
    program = argv[0]
    root = project_root_of(config)
    script = _script_argument(argv)
    if script is not None and root is not None and not (Path(root) / script).exists():
        return [
            problem(
                config,
                f"the script {script!r} that `command` runs does not exist in the project "
                "folder (commands run there; write the path from the project folder)",
            )
        ]
    if "/" in program or os.sep in program:
        if root is not None and not (Path(root) / program).exists():
            return [
                problem(
                    config,
                    f"the program {program!r} does not exist in the project folder (it is "
                    "copied from there into the agent's working folder)",
                    Severity.WARNING,
                )
            ]
    elif shutil.which(program) is None:
        instead = next(
            (name for name in _PROGRAM_ALTERNATIVES.get(program, ()) if shutil.which(name)), None
        )
        hint = f"; did you mean {instead!r}?" if instead else ""
        return [
            problem(
                config,
                f"the program {program!r} is not on PATH on this machine{hint}",
                Severity.WARNING,
            )
        ]
    return []


_INTERPRETERS = re.compile(r"^(python[0-9.]*|node|ruby|perl|bash|sh|zsh|Rscript|deno|bun)$")
"""Programs whose first argument that is no option is a script file they run."""

_PROGRAM_ALTERNATIVES = {"python": ("python3",), "python3": ("python",)}
"""What to suggest for an interpreter missing from PATH (Debian has no ``python``)."""


def _script_argument(argv: list[str]) -> str | None:
    """The script an interpreter runs (``python3 agents/a.py``: ``agents/a.py``), or None
    when the command runs no script file (``python3 -m pkg``, ``python3 -c ...``, a program).

    Example:
        >>> _script_argument(["python3", "-u", "agents/a.py", "--fast"])
        'agents/a.py'
        >>> _script_argument(["python3", "-m", "my_agent"]) is None
        True
    """
    if not _INTERPRETERS.match(Path(argv[0]).name):
        return None
    for argument in argv[1:]:
        if argument in ("-m", "-c", "-e", "--eval", "-"):
            return None
        if not argument.startswith("-"):
            return argument
    return None


def _build(config: AgentConfig, options: CommandOptions, context: AgentContext) -> CommandAgent:
    try:
        argv = command_argv(options.command)
    except ValueError as err:
        raise AgentError(f"agent '{config.name}': `command` is not usable: {err}") from err
    forbidden = forbidden_env_names(options.env, [n for n in [context.llm.api_key_env] if n])
    if forbidden:
        raise AgentError(f"agent '{config.name}': {_forbidden_sentence(forbidden)}")
    root = context.project_root
    folder = working_folder(config.name, root, config.base_dir, argv)
    return CommandAgent(
        config.name,
        program_path(argv, context.env, root),
        folder,
        agent_env(context.env, options.env, project_root=root.resolve(), folder=folder),
        context.run.agent_timeout_s,
        options.trace_format,
    )


def _forbidden_sentence(names: list[str]) -> str:
    return (
        f"`env` names {', '.join(names)}: sqlbench's own variables and the keys of its LLM "
        "endpoint and judge are never passed to an agent (docs/security.md); give the agent "
        "a variable of its own"
    )


KIND = AgentKind(
    "command",
    CommandOptions,
    _build,
    _check,
    "a program per question: JSON request on stdin, answer on stdout",
)
