"""PlainTable draws what rich's Table draws, byte for byte, with and without colour."""

from __future__ import annotations

import io
import random

import pytest
from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from sqlbench.hygiene import SafeConsole
from sqlbench.report.plain_table import Cell, Column, PlainTable, print_table

WORDS = [
    "results",
    "match:",
    "1",
    "row",
    "x",
    "columns",
    "expected",
    "'CountryCode'",
    "(#1)",
    "has",
    "no",
    "partner",
    "a" * 37,  # longer than a narrow column: folded
    "near miss: would pass with",
    "  ",
    "é",
    "名前",  # two cells each
    "–",
    "x\x1by",  # control characters: rich drops some, SafeConsole shows the rest
    "tab\there",
    "line\nbreak",
    "bell\x07",
    "\u202eflip",
    "",
]


def _reason(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 14)))


def _columns(repeat: bool) -> list[Column]:
    columns = [Column("Question", no_wrap=True), Column("Verdict", no_wrap=True)]
    if repeat:
        columns.append(Column("Pass rate", justify="right", no_wrap=True))
    return [
        *columns,
        Column("Reason", overflow="fold", ratio=1),
        Column("Latency", justify="right", no_wrap=True),
    ]


def _rows(rng: random.Random, columns: list[Column], count: int) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for number in range(count):
        name = rng.choice(["db/q", "a_much_longer_database_name/dev_0", "名/q", "x\x1b/q"])
        row: list[Cell] = [
            f"{name}{number}",
            rng.choice([("pass", "green"), ("fail", "red"), ("review → pass (person)", "yellow")]),
        ]
        if len(columns) == 5:
            row.append(rng.choice(["", "67%", "100%"]))
        row += [_reason(rng), rng.choice(["", "0 ms", "12.3 s", " 5 ms  "])]
        rows.append(row)
    return rows


def _rich(columns: list[Column], rows: list[list[Cell]]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for c in columns:
        table.add_column(
            c.header, justify=c.justify, no_wrap=c.no_wrap, overflow=c.overflow, ratio=c.ratio
        )
    for row in rows:
        table.add_row(*(c if isinstance(c, str) else Text(c[0], style=c[1]) for c in row))
    return table


def _plain(columns: list[Column], rows: list[list[Cell]]) -> PlainTable:
    table = PlainTable(columns)
    for row in rows:
        table.add_row(*row)
    return table


def _draw(renderable: RenderableType, *, color: bool, width: int, fast: bool = False) -> str:
    """What ``console.print`` writes, or with ``fast`` what ``print_table`` writes."""
    buffer = io.StringIO()
    console = SafeConsole(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        width=width,
        highlight=False,
        soft_wrap=False,
    )
    if fast:
        assert isinstance(renderable, PlainTable)
        print_table(console, renderable)
    else:
        console.print(renderable)
    return buffer.getvalue()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("width", [12, 30, 61, 120, 200])
@pytest.mark.parametrize("color", [False, True])
def test_plain_table_draws_what_rich_draws(seed: int, width: int, color: bool) -> None:
    rng = random.Random(seed)
    columns = _columns(repeat=seed % 3 == 0)
    rows = _rows(rng, columns, rng.choice([0, 1, 5, 20]))
    expected = _draw(_rich(columns, rows), color=color, width=width)
    assert _draw(_plain(columns, rows), color=color, width=width) == expected
    assert _draw(_plain(columns, rows), color=color, width=width, fast=True) == expected


def test_print_table_leaves_a_line_wider_than_the_console_to_rich() -> None:
    """On a console narrower than the table's rule (4 columns: 3 cells), rich crops it: the
    table is printed as ``console.print`` prints it."""
    columns = _columns(repeat=False)
    rows: list[list[Cell]] = [["名前/q1", ("pass", "green"), "x 名前 y", "12.3 s"]]
    console = SafeConsole(file=io.StringIO(), no_color=True, width=2, soft_wrap=False)
    drawn = _plain(columns, rows).plain_lines(console, console.options)
    assert max(len(line) for line in drawn) > 2
    expected = _draw(_plain(columns, rows), color=False, width=2)
    assert max(len(line) for line in expected.splitlines()) <= 2
    assert _draw(_plain(columns, rows), color=False, width=2, fast=True) == expected


def test_plain_table_on_printable_ascii_never_calls_rich_per_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fast path is taken for ordinary rows (the speed this module exists for)."""
    import sqlbench.report.plain_table as plain_table

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cell went through rich")

    monkeypatch.setattr(plain_table, "_rich_lines", refuse)
    columns = _columns(repeat=False)
    rows: list[list[Cell]] = [
        ["db/q1", ("pass", "green"), "results match: 1 row x 1 column", "0 ms"],
        ["db/q2", ("fail", "red"), "the agent returned 3 columns, the ground truth 2 " * 4, ""],
    ]
    text = _draw(_plain(columns, rows), color=False, width=80, fast=True)
    assert text == _draw(_rich(columns, rows), color=False, width=80)
    assert text.count("\n") > 4  # the long reason wrapped


def test_a_row_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="a row of 1 cells in a table of 4"):
        _plain(_columns(repeat=False), [["only one"]])
