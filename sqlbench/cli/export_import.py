"""``sqlbench export RUN`` / ``sqlbench import FILE``: move runs between stores as JSON files.

A base run made on the main branch's CI can be exported as an artifact and imported by a pull
request's CI, so the PR check reuses it instead of running the base again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from sqlbench import secrets
from sqlbench.cli.options import needs_project, note, output_option, run_name_option, write_output
from sqlbench.errors import SqlbenchError
from sqlbench.exitcodes import ExitCode
from sqlbench.records import provenance
from sqlbench.runs.foreign import foreign_questions_note
from sqlbench.runs.locate import open_project_store
from sqlbench.text import one_line


@click.command("export")
@needs_project
@click.argument("run_ref", metavar="RUN")
@output_option
@click.pass_context
def export_command(
    ctx: click.Context, project_dir: Path, run_ref: str, output: Path | None
) -> None:
    """Print a run and all its results as JSON (with schema_version): `sqlbench export RUN >
    run.json`. Secrets stay in their ${ENV_VAR} form."""
    with open_project_store(project_dir) as store:
        document = store.export_run(run_ref)
    key = _signing_key()
    if key:
        document = provenance.sign(document, key)
    write_output(json.dumps(document, indent=2, ensure_ascii=False), output)
    ctx.exit(ExitCode.OK)


@click.command("import")
@needs_project
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@run_name_option("Store the run under another name (when its name is taken here).")
@click.pass_context
def import_command(ctx: click.Context, project_dir: Path, file: Path, run_name: str | None) -> None:
    """Store a run exported by `sqlbench export` (`-` reads standard input). A run already in
    this store, or an export of a newer schema version, is refused."""
    raw = _read_capped(file)
    try:
        document = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, RecursionError) as err:
        where = f":{err.lineno}" if isinstance(err, json.JSONDecodeError) else ""
        detail = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
        raise SqlbenchError(f"{file}{where}: not JSON ({detail})") from err
    except UnicodeDecodeError as err:
        raise SqlbenchError(f"cannot read {file}: it is not UTF-8 text") from err
    except ValueError as err:  # an integer of more than 4,300 digits
        raise SqlbenchError(f"{file}: not a run export ({one_line(str(err), 100)})") from err
    key = _signing_key()
    refused = provenance.verify(document, key) if isinstance(document, dict) else None
    if refused:
        raise SqlbenchError(f"cannot import {file}: {refused}")
    origin = provenance.ImportOrigin(
        sha256=hashlib.sha256(raw).hexdigest(),
        imported_at=datetime.now(UTC),
        source=str(file),
        signed=bool(key),
    )
    with open_project_store(project_dir) as store:
        info = store.import_run(document, name=run_name, origin=origin)
        foreign = foreign_questions_note(project_dir, store.trials(info.id))
    click.echo(
        f"Imported run {info.name} ({info.source_label}, agent {info.agent_name}, "
        f"{info.question_count} questions)"
    )
    if foreign is not None:
        note(f"{foreign}.")
    ctx.exit(ExitCode.OK)


MAX_IMPORT_BYTES = 256 * 2**20
"""The largest run export ``import`` reads (an export of 10,000 answers with previews is a few
tens of MB); a bigger file, or an endless one (``/dev/zero``), is refused before it is held."""
_CHUNK = 2**20


def _read_capped(file: Path) -> bytes:
    """The file's bytes (``-``: standard input), read a chunk at a time and refused past
    ``MAX_IMPORT_BYTES``, or at once when the first bytes cannot begin a JSON object.

    Raises:
        SqlbenchError: one sentence naming the file.
    """
    chunks: list[bytes] = []
    held = 0
    try:
        # sys.stdin, not click.get_text_stream (deprecated in click 8.3, untyped since).
        with contextlib.ExitStack() as stack:
            stream = sys.stdin.buffer if str(file) == "-" else stack.enter_context(file.open("rb"))
            started = False
            while chunk := stream.read(_CHUNK):
                head = chunk.lstrip(b" \t\r\n\xef\xbb\xbf")
                if not started and head:
                    started = True
                    if head[0] < 0x80 and not head.startswith(b"{"):
                        raise SqlbenchError(
                            f"{file}: not a run export (it does not begin with a JSON object)"
                        )
                chunks.append(chunk)
                held += len(chunk)
                if held > MAX_IMPORT_BYTES:
                    raise SqlbenchError(
                        f"{file} is over {MAX_IMPORT_BYTES // 2**20} MB, more than a run export "
                        "sqlbench imports; it was not read further"
                    )
    except OSError as err:
        raise SqlbenchError(f"cannot read {file}: {err.strerror or err}") from err
    return b"".join(chunks)


def _signing_key() -> str | None:
    """``SQLBENCH_SIGNING_KEY`` (a secret: redacted wherever it could appear)."""
    key = os.environ.get(provenance.SIGNING_ENV) or None
    secrets.register(key, f"${{{provenance.SIGNING_ENV}}}")
    return key
