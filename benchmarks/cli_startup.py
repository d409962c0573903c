"""Start-up time of the ``sqlbench`` command: ``--version`` and ``--help`` against ``python -c
pass`` (the interpreter alone), measured in one run; prints its figures.

Every command's imports (pandas, DuckDB, SQLAlchemy, sqlglot, pyarrow) load only when that
command runs (``sqlbench.cli.commands``), so ``--version`` and ``--help`` cost little more than
the interpreter. Target: under 0.3 s each. Also timed for reference: ``sqlbench run --help``
(one command loaded), the imports of ``run`` and of ``init --from``, and the heavy modules
``--version`` and ``init --from`` leave out.

Usage: ``python benchmarks/cli_startup.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

TARGET_S = 0.3
HEAVY = ("pandas", "duckdb", "sqlalchemy", "sqlglot", "pyarrow", "numpy", "pydantic", "yaml")


def _best(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of ``argv`` over ``repeat`` runs
    (after one warm-up)."""
    subprocess.run(argv, capture_output=True, check=True)
    times = []
    cpus = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), statistics.median(cpus)


def _has_gcpolicy() -> bool:
    """Whether this install has ``sqlbench.gcpolicy`` (an older one, timed for comparison,
    does not)."""
    code = "import importlib.util; print(importlib.util.find_spec('sqlbench.gcpolicy') is not None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def _loaded_by_version() -> list[str]:
    return _loaded_by(
        "from sqlbench.cli.main import get_cli\n"
        "try:\n"
        "    get_cli().main(['--version'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
    )


def _loaded_by(code: str) -> list[str]:
    """Which of ``HEAVY`` a fresh interpreter has imported once it ran ``code``."""
    code = (
        "import sys\n"
        + code
        + f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("loaded:"))
    return [m for m in line.removeprefix("loaded:").split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "sqlbench"]
    base, base_cpu = _best([sys.executable, "-c", "pass"], args.repeat)
    print(f"python -c pass                {base:.3f} s (CPU {base_cpu:.3f} s)")
    # What `sqlbench run` imports before it reads anything (the command's modules and the ones
    # its body imports on use), in a process that starts as the command does.
    run_imports = (
        "import sys\n"
        "from sqlbench import gcpolicy\n"
        "from sqlbench.cli.main import get_cli\n"
        "gcpolicy.own_process()\n"
        "get_cli().get_command(None, 'run')\n"
        "with gcpolicy.long_lived():\n"
        "    import sqlbench.runs.runner\n"
    )
    if not _has_gcpolicy():
        run_imports = "import sqlbench.cli.run, sqlbench.rundiff.refs, sqlbench.runs.runner\n"
    # What `sqlbench init --from spider|bird` imports: the command, the readers, the YAML writer.
    init_imports = (
        "from sqlbench.cli.main import get_cli\n"
        "get_cli().get_command(None, 'init')\n"
        "import sqlbench.public, sqlbench.public.bird, sqlbench.public.spider\n"
    )
    for label, argv in (
        ("sqlbench --version", [*cli, "--version"]),
        ("sqlbench --help", [*cli, "--help"]),
        ("sqlbench run --help", [*cli, "run", "--help"]),
        ("imports of sqlbench run", [sys.executable, "-c", run_imports]),
        ("imports of init --from", [sys.executable, "-c", init_imports]),
    ):
        took, cpu = _best(argv, args.repeat)
        verdict = ""
        if "run" not in label and "init" not in label:
            verdict = f"  (target < {TARGET_S} s: {'met' if took < TARGET_S else 'NOT met'})"
        print(
            f"{label:<28} {took:.3f} s (CPU {cpu:.3f} s) {took / base:5.1f}x python -c pass"
            f"{verdict}"
        )
    heavy = _loaded_by_version()
    print(f"heavy modules --version loads: {', '.join(heavy) or 'none'}")
    heavy = _loaded_by(init_imports)
    print(f"heavy modules init --from loads: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
