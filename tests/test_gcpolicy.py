"""sqlbench.gcpolicy: the collector paused around bulk work, frozen only in the sqlbench process."""

from __future__ import annotations

import gc
import subprocess
import sys

from sqlbench import gcpolicy


def test_paused_blocks_nest_and_enable_the_collector_again() -> None:
    assert gc.isenabled()
    with gcpolicy.paused():
        assert not gc.isenabled()
        with gcpolicy.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block disabled it: still off
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    try:
        with gcpolicy.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_long_lived_freezes_only_in_the_sqlbench_process() -> None:
    before = gc.get_freeze_count()
    with gcpolicy.long_lived():
        kept = [[n] for n in range(1000)]
    assert gc.get_freeze_count() == before  # a library caller, or a test: nothing frozen
    assert len(kept) == 1000


def _after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return next(ln for ln in out.stdout.splitlines() if ln.startswith("gc:")).split()[1:]


def test_the_command_freezes_its_imports_and_leaves_the_collector_on() -> None:
    code = (
        "import gc, sys\n"
        "from sqlbench.cli.main import main\n"
        "sys.argv = ['sqlbench', 'run', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('gc:', gc.get_freeze_count() > 10000, gc.isenabled())\n"
    )
    assert _after(code) == ["True", "True"]


def test_the_group_driven_in_process_freezes_nothing() -> None:
    code = (
        "import gc\n"
        "from sqlbench.cli.main import get_cli\n"
        "try:\n"
        "    get_cli().main(['run', '--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('gc:', gc.get_freeze_count(), gc.isenabled())\n"
    )
    assert _after(code) == ["0", "True"]
