"""Start-up time of the ``sqlbench`` command: ``--version`` and ``--help`` against ``python -c
pass`` (the interpreter alone), measured in one run; prints its figures.

Every command's imports (pandas, DuckDB, SQLAlchemy, sqlglot, pyarrow) load only when that
command runs (``sqlbench.cli.commands``), so ``--version`` and ``--help`` cost little more than
the interpreter. Target: under 0.3 s each. Also timed for reference: ``sqlbench run --help``
(one command loaded) and the heavy modules ``--version`` leaves out.

Usage: ``python benchmarks/cli_startup.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET_S = 0.3
HEAVY = ("pandas", "duckdb", "sqlalchemy", "sqlglot", "pyarrow", "numpy", "pydantic", "yaml")


def _best(argv: list[str], repeat: int) -> float:
    """Median wall time of ``argv`` over ``repeat`` runs (after one warm-up)."""
    subprocess.run(argv, capture_output=True, check=True)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _loaded_by_version() -> list[str]:
    code = (
        "import sys\n"
        "from sqlbench.cli.main import get_cli\n"
        "try:\n"
        "    get_cli().main(['--version'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("loaded:"))
    return [m for m in line.removeprefix("loaded:").split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "sqlbench"]
    base = _best([sys.executable, "-c", "pass"], args.repeat)
    print(f"python -c pass                {base:.3f} s")
    for label, extra in (
        ("sqlbench --version", ["--version"]),
        ("sqlbench --help", ["--help"]),
        ("sqlbench run --help", ["run", "--help"]),
    ):
        took = _best(cli + extra, args.repeat)
        verdict = ""
        if "run" not in extra:
            verdict = f"  (target < {TARGET_S} s: {'met' if took < TARGET_S else 'NOT met'})"
        print(f"{label:<28} {took:.3f} s  {took / base:5.1f}x python -c pass{verdict}")
    heavy = _loaded_by_version()
    print(f"heavy modules --version loads: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
