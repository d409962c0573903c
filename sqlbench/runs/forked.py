"""Grading a batch of runs in several processes (``run.processes``; ``batch.Batch``).

Grading replayed answers is bound by the interpreter lock: 8 threads in one process use about
1.2 cores. When it is safe and worth it, the batch forks worker processes once its runs are
prepared (agents built, run rows created) and before any thread starts. Each takes groups of
the questions, in order, from a counter the processes share, whenever it runs out of work
(every agent's answer to a question in one group, and the questions with one ground truth
together, so the sharing of agent SQL, results and ground truth works as in one process; a
process held up by slow queries takes fewer groups), grades them with one worker (each
ground truth run when an answer first needs it; a stand-in thread grades the next answers while
the worker is held up by a slow query), records each result in the run store through
its own connection (the children take one shared lock around each write, which the kernel
releases if its holder is killed), and sends its events
to the parent over a pipe. The parent prints
progress, keeps the heartbeat and finishes the runs.

Safe: Linux (``os.fork``), no other thread running, every warehouse a SQLite file (DuckDB and
the query processes of server warehouses are not fork-safe), every agent a replay of recorded
answers, no data variants, no judge. Worth it (``auto``): at least ``MIN_ANSWERS`` answers and
more than one idle core. A child never outlives its parent: it asks the kernel to kill it when
the parent dies (``PR_SET_PDEATHSIG``) and exits when the pipe to the parent breaks; it exits
with ``os._exit``, so nothing of the parent's (exit handlers, buffered output) runs twice.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from typing import Any, Literal

if sys.platform != "win32":  # POSIX: SharedLock, made on Linux only (shared_lock)
    import fcntl

MIN_ANSWERS = 500
"""Answers a batch needs before ``auto`` forks: below it the fork and each process's own
connections cost about what they save (180 and 405 Spider answers graded in 0.2 and 0.4 s in
one process, 0.3-0.4 and 0.5-1.0 s in two; docs/performance.md, "Public benchmarks beside the
official evaluators")."""
MAX_AUTO = 4
"""Most processes ``auto`` uses."""
_PR_SET_PDEATHSIG = 1


def cores() -> int:
    """Cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


IDLE_WINDOW_S = 0.1
"""The least time ``idle_cores`` watches the machine's CPUs over."""
IDLE_WATCH_MAX_AGE_S = 10.0
"""A watch begun longer ago than this says too little about now: ``idle_cores`` starts anew."""


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) CPU time of the whole machine since boot, from ``/proc/stat``, in clock
    ticks."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


@dataclass(frozen=True)
class IdleWatch:
    """The machine's CPU time and this process's own, at one moment (``watch_idle``)."""

    at: float
    """``time.monotonic()`` then."""
    jiffies: tuple[int, int] | None
    """``_cpu_jiffies()`` then."""
    own_cpu: float
    """``time.process_time()`` then: this process's CPU, all its threads."""


def watch_idle() -> IdleWatch:
    """Begin watching how idle the machine is. ``idle_cores(since=...)`` ends the watch: the
    time a run spends importing, loading the project and planning is the window, instead of a
    sleep of its own before the processes are forked."""
    return IdleWatch(time.monotonic(), _cpu_jiffies(), time.process_time())


_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def idle_cores(window_s: float = IDLE_WINDOW_S, *, since: IdleWatch | None = None) -> int:
    """Cores the machine leaves idle now (at least 1: this process's own): the share of all
    CPUs' time that went idle, or went to this process itself, over the last ``window_s``
    seconds or more. ``since``: a watch begun earlier (``watch_idle``); this process's own CPU
    time since then counts as idle, as it is the work the forked processes take over. Without
    one, or when it began under ``window_s`` or over ``IDLE_WATCH_MAX_AGE_S`` ago, this process
    sleeps until ``window_s`` has passed since the watch began. (The load average would not do:
    it trails by a minute and counts every runnable thread, so the last run's own worker
    threads made the next run look like a busy machine.)"""
    if since is None or time.monotonic() - since.at > IDLE_WATCH_MAX_AGE_S:
        since = watch_idle()
    time.sleep(max(0.0, window_s - (time.monotonic() - since.at)))
    before = since.jiffies
    after = _cpu_jiffies()
    if before is None or after is None or after[1] <= before[1]:
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
        return max(1, cores() - int(load))
    own = (time.process_time() - since.own_cpu) * _TICKS_PER_S
    others = max(0.0, after[0] - before[0] - own)
    busy = others / (after[1] - before[1])
    return max(1, round(cores() * (1.0 - busy)))


_since_import: IdleWatch | None = watch_idle()
"""Begun when this module is imported, among a run's imports: the first batch of the process
that asks (``_idle_now``) measures over the imports, the project's load and the planning
instead of sleeping ``IDLE_WINDOW_S`` before it forks."""


def _idle_now() -> int:
    """``idle_cores`` over the watch begun at import the first time, then over a sleep (a later
    batch's window would hold the earlier batch's own processes)."""
    global _since_import
    since, _since_import = _since_import, None
    return idle_cores(since=since)


def process_count(
    setting: int | Literal["auto"],
    *,
    answers: int,
    questions: int,
    refusal: Callable[[], str | None],
    idle: Callable[[], int] = _idle_now,
) -> tuple[int, str | None]:
    """How many processes grade a batch, and the notice to give when the user asked for more
    than one and it cannot be (``refusal()`` says why it is not safe, or None).

    ``auto``: one per idle core (``idle()``), at most ``MAX_AUTO``, for ``MIN_ANSWERS`` answers
    or more; else one. On a machine whose cores are busy already, more processes only share
    them: they cost CPU (each one's own connections, caches, copied pages) for no shorter wall
    time. A number: that many (never more than the questions) when it is safe."""
    if setting == 1 or questions < 2:
        return 1, None
    if setting == "auto":
        if answers < MIN_ANSWERS:
            return 1, None
        wanted = min(idle(), MAX_AUTO, questions)
        if wanted < 2:
            return 1, None
        return (1, None) if refusal() is not None else (wanted, None)
    why = refusal()
    if why is not None:
        return 1, f"run.processes is {setting}, but this batch is graded in one process: {why}"
    return min(setting, questions), None


def fork_refusal() -> str | None:
    """Why this process cannot fork worker processes right now, or None."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return "grading in several processes needs Linux"
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if others:
        return f"another thread is running ({', '.join(sorted(others))})"
    return None


class SharedLock:
    """A lock the processes forked after it is made share, which the kernel releases when the
    process holding it dies: ``flock`` on an unlinked temporary file that each process opens
    afresh (through ``/proc/self/fd``, so every process has its own open file description and
    the locks of two processes exclude each other), and a thread lock for the threads of one
    process. A semaphore in shared memory stays taken when its holder is killed
    (``kill -9``, the out-of-memory killer) and every other process then waits on it forever:
    a child killed while it wrote a record left the batch hung instead of failed."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed with this lock)
        self._path = f"/proc/self/fd/{self._file.fileno()}"
        self._fd = [os.open(self._path, os.O_RDWR | os.O_CLOEXEC)]
        """This process's own description (a list: the finalizer closes what it holds)."""
        self._threads = threading.Lock()
        weakref.finalize(self, _close, self._fd, self._file)
        _LOCKS.add(self)

    def _forked(self) -> None:
        """In a new child (one thread, the forking one): its own file description and an
        unheld thread lock."""
        with contextlib.suppress(OSError):
            os.close(self._fd[0])
        self._fd[0] = os.open(self._path, os.O_RDWR | os.O_CLOEXEC)
        self._threads = threading.Lock()

    def __enter__(self) -> SharedLock:
        self._threads.acquire()
        try:
            fcntl.flock(self._fd[0], fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.flock(self._fd[0], fcntl.LOCK_UN)
        finally:
            self._threads.release()


_LOCKS: weakref.WeakSet[SharedLock] = weakref.WeakSet()
"""Every ``SharedLock`` alive in this process."""


def _reopen_locks() -> None:
    """After a fork, in the child: its own description of each ``SharedLock``."""
    for lock in list(_LOCKS):
        lock._forked()


if hasattr(os, "register_at_fork"):  # not on Windows, where nothing forks
    os.register_at_fork(after_in_child=_reopen_locks)


def _close(fd: list[int], file: Any) -> None:
    with contextlib.suppress(OSError):
        os.close(fd[0])
    file.close()


def shared_lock() -> SharedLock | None:
    """A lock the processes forked after it share (``SharedLock``); None where the system
    has none to give (the writes then meet on SQLite's own lock)."""
    if sys.platform != "linux":
        return None
    try:
        return SharedLock()
    except OSError:
        return None


class SharedCounter:
    """A whole number, from 0, that the processes forked after it share: an integer in shared
    memory under a ``SharedLock`` (a killed process never leaves it taken)."""

    def __init__(self) -> None:
        self._value = multiprocessing.get_context("fork").RawValue("q", 0)
        self._lock = SharedLock()

    def take_below(self, limit: int) -> int:
        """The number, counted up by one when it is below ``limit`` (each number under it is
        taken once, by one process)."""
        with self._lock:
            value = int(self._value.value)
            if value < limit:
                self._value.value = value + 1
            return value


def shared_counter() -> SharedCounter | None:
    """A counter the processes forked after it share (``SharedCounter``); None where the
    system has none to give."""
    if sys.platform != "linux":
        return None
    try:
        return SharedCounter()
    except (OSError, ImportError):
        return None


@dataclass
class Child:
    """One forked grading process, seen from the parent."""

    index: int
    pid: int
    conn: Connection
    done: bool = False
    """It said it graded its whole share."""
    reaped: bool = False
    status: int = 0
    """Its wait status, once reaped."""


def fork_children(
    count: int, body: Callable[[int, Connection], None], children: list[Child]
) -> list[Child]:
    """Fork ``count`` processes, each appended to ``children`` as soon as it exists (the
    caller stops them, ``stop_children``, however it ends: a Ctrl-C held back during the forks
    may arrive right after); child ``i`` runs ``body(i, conn)`` with its end of a pipe to this
    process and exits with ``os._exit`` (0 when ``body`` returns). SIGINT and SIGTERM are
    blocked around the forks; children ignore SIGINT (Ctrl-C stops them through this
    process) and die on SIGTERM.

    Raises:
        OSError: A fork failed; the children forked before it are killed and reaped.
    """
    parent = os.getpid()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    blocked = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    # The children's garbage collections leave what exists now alone: they neither walk the
    # parent's objects again nor copy their pages (copy-on-write) by touching them. Left
    # frozen here too in the sqlbench process, which froze what it loaded already
    # (``gcpolicy.long_lived``); a library caller's process is left as it was.
    frozen = gc.get_freeze_count()
    gc.freeze()
    try:
        for index in range(count):
            ours, theirs = Pipe()
            try:
                pid = os.fork()
            except OSError:
                ours.close()
                theirs.close()
                stop_children(children)
                raise
            if pid == 0:  # the child
                code = 1
                try:
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    signal.pthread_sigmask(signal.SIG_SETMASK, old)
                    _die_with(parent)
                    ours.close()
                    for earlier in children:
                        earlier.conn.close()
                    body(index, theirs)
                    code = 0
                except BaseException:  # nothing of a child reaches the parent's code
                    code = 1
                finally:
                    os._exit(code)
            theirs.close()
            children.append(Child(index, pid, ours))
    finally:
        if not frozen:
            gc.unfreeze()
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return children


def _die_with(parent: int) -> None:
    """Ask the kernel to kill this process when its parent dies; exit now if it already has."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def reap(child: Child, *, block: bool) -> bool:
    """Collect ``child``'s exit status; whether it has exited."""
    if child.reaped:
        return True
    try:
        pid, status = os.waitpid(child.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        child.reaped = True
        return True
    if pid == 0:
        return False
    child.reaped, child.status = True, status
    return True


def stop_children(children: Sequence[Child], *, kill: bool = True) -> None:
    """Kill every child still running (``kill``; else wait for each to exit) and reap them
    all: once this returns, no child records anything more."""
    for child in children:
        if kill and not child.reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
    for child in children:
        reap(child, block=True)
        with contextlib.suppress(OSError):
            child.conn.close()


def stopped_on_request(child: Child) -> bool:
    """Whether ``child`` was stopped by SIGTERM or SIGINT (someone stopping the batch)."""
    status = child.status
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGTERM, signal.SIGINT)


def how_it_ended(child: Child) -> str:
    """How a child that stopped early ended, as the end of a sentence."""
    status = child.status
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}"
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)}"
    return "stopped"


SEND_EVERY_S = 0.05
"""How long a forked process gathers graded records before sending them to the parent."""


class Outbox:
    """A forked process's messages to its parent, in order: graded records gathered for up to
    ``SEND_EVERY_S`` by a thread of their own and sent as one message, anything else at once
    (after the records given before it).

    One message a record woke the parent for each and cost a pipe write and read, a selector
    and a pickle each way (Spider: 8,748 messages); gathered, a run of quick answers is one
    message, and a record still reaches the parent within ``SEND_EVERY_S`` when the next
    answer is slow. The thread sleeps while nothing is gathered.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._records: list[Any] = []
        self._closed = False
        self._thread = threading.Thread(target=self._gather, daemon=True, name="sqlbench-outbox")
        self._thread.start()

    def record(self, item: Any) -> None:
        """Send ``item`` within ``SEND_EVERY_S``, with the others given meanwhile, as
        ``("graded", None, [item, ...])``."""
        with self._cond:
            self._records.append(item)
            if len(self._records) == 1:
                self._cond.notify()

    def send(self, message: Any) -> None:
        """Send ``message`` now, after every record given before it."""
        with self._send_lock:
            self._flush()
            send(self._conn, message)

    def close(self) -> None:
        """Send what is gathered and stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        with self._send_lock:
            self._flush()

    def _gather(self) -> None:
        while True:
            with self._cond:
                while not self._records and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                self._cond.wait(SEND_EVERY_S)  # the next records join these; close() ends it
                if self._closed:
                    return
            with self._send_lock:
                self._flush()

    def _flush(self) -> None:
        """Send the records gathered (the caller holds ``_send_lock``)."""
        with self._cond:
            records, self._records = self._records, []
        if records:
            send(self._conn, ("graded", None, records))


def send(conn: Connection, message: Any) -> None:
    """Send ``message`` to the parent; a broken pipe (the parent is gone) ends this process."""
    try:
        conn.send(message)
    except (OSError, ValueError):
        os._exit(1)
