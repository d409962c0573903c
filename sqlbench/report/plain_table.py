"""A long table of plain-text cells, drawn exactly as rich draws
``Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)``, without rich's per-cell work.

rich measures and renders every cell through a padding, a text, lines and segments; for a
corpus run (9 runs x 972 questions) that was 2.8 s of CPU after the grading ended, on the
main thread. Here a cell of printable ASCII (nearly every cell) is measured and wrapped with
string operations; any other cell (non-ASCII, control characters, a line that must be cut
with an ellipsis) is rendered by rich itself, one cell at a time. The column widths come from
rich's own width rule, applied to a table of the few cells that decide it (each column's
widest cell), so widths, wrapping, padding, styles and
their escape codes are byte for byte rich's (``tests/report/test_plain_table.py`` renders
both ways over many shapes and widths).

On a console without a colour system (output to a file or a pipe, as ``run`` prints its tables)
each line is drawn as one string, without a segment per cell.

Cells are plain text, never markup (as ``hygiene.SafeConsole`` prints them); a cell may carry
one rich style for the whole cell (``("pass", "green")``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from rich import box
from rich._wrap import divide_line
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from sqlbench.hygiene import SafeConsole, visible

Cell = str | tuple[str, str]
"""A cell's text, or its text and one rich style for all of it."""


@dataclass(frozen=True)
class Column:
    """One column, with the meaning of rich's ``Table.add_column`` arguments of that name."""

    header: str
    justify: Literal["left", "right"] = "left"
    no_wrap: bool = False
    overflow: Literal["fold", "ellipsis"] = "ellipsis"
    ratio: int | None = None


def _simple(text: str) -> bool:
    """Printable ASCII only: one character is one cell, no control code, no line break."""
    return text.isascii() and text.isprintable()


class PlainTable:
    """Rows of plain-text cells under bold headers (see the module docstring)."""

    def __init__(self, columns: Sequence[Column]) -> None:
        self.columns = list(columns)
        self.rows: list[tuple[Cell, ...]] = []

    def add_row(self, *cells: Cell) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)}")
        self.rows.append(cells)

    # --- widths ---------------------------------------------------------------------------

    def _pads(self, index: int) -> tuple[int, int]:
        """(left, right) padding of a column: 1 each, none on the table's outer edges."""
        return (0 if index == 0 else 1), (0 if index == len(self.columns) - 1 else 1)

    def _widths(self, console: Console, options: ConsoleOptions) -> list[int]:
        """Each column's width with its padding, by rich's rule, from the deciding cells."""
        proxy = _rich_table(self.columns)
        if self.rows:  # rich's rule reads each column's widest cell and nothing else
            proxy.add_row(
                *(
                    max((_text(row[index]) for row in self.rows), key=lambda t: _width(console, t))
                    for index in range(len(self.columns))
                )
            )
        inner = options.update_width(options.max_width - proxy._extra_width)
        return proxy._calculate_column_widths(console, inner)

    # --- drawing --------------------------------------------------------------------------

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self._widths(console, options)
        rule = box.SIMPLE_HEAD.substitute(options, safe=console.safe_box)
        if console.color_system is None:  # no escape codes: each line drawn as one string
            new_line = Segment.line()
            for line in self.plain_lines(console, options):
                yield Segment(line)
                yield new_line
            return
        bold = console.get_style("table.header")
        header = tuple((c.header, Style.null()) for c in self.columns)
        yield from self._row(console, options, widths, header, bold, header_row=True)
        yield Segment(rule.get_row(widths, "head", edge=False))
        yield Segment.line()
        for row in self.rows:
            cells = tuple(
                (c, Style.null()) if isinstance(c, str) else (c[0], console.get_style(c[1]))
                for c in row
            )
            yield from self._row(console, options, widths, cells, Style.null())

    def plain_lines(self, console: Console, options: ConsoleOptions) -> list[str]:
        """The table's lines (no line breaks) as ``console`` draws them when it has no colour
        system: the text of each line's segments."""
        widths = self._widths(console, options)
        rule = box.SIMPLE_HEAD.substitute(options, safe=console.safe_box)
        headers = tuple(c.header for c in self.columns)
        lines = self._plain_row(console, options, widths, headers, header=True)
        lines.append(rule.get_row(widths, "head", edge=False))
        for row in self.rows:
            lines += self._plain_row(console, options, widths, row)
        return lines

    def _plain_row(
        self,
        console: Console,
        options: ConsoleOptions,
        widths: list[int],
        row: tuple[Cell, ...],
        *,
        header: bool = False,
    ) -> list[str]:
        """A row's lines as text, for a console without a colour system: ``_row``'s segments
        joined, without their styles (a style changes no character)."""
        rendered = [
            self._plain_cell(console, options, index, width, _text(cell))
            for index, (width, cell) in enumerate(zip(widths, row, strict=True))
        ]
        if all(len(lines) == 1 for lines in rendered):
            return [" ".join(lines[0] for lines in rendered)]
        height = max(len(lines) for lines in rendered)
        for index, lines in enumerate(rendered):
            if len(lines) < height:  # rich aligns a header at the bottom, a row at the top
                blank = [" " * widths[index]] * (height - len(lines))
                rendered[index] = blank + lines if header else lines + blank
        return [" ".join(lines[line_no] for lines in rendered) for line_no in range(height)]

    def _plain_cell(
        self, console: Console, options: ConsoleOptions, index: int, width: int, text: str
    ) -> list[str]:
        """A cell's lines as text (``_cell`` without styles)."""
        column = self.columns[index]
        left, right = self._pads(index)
        inner = width - left - right
        lines = _fast_lines(text, inner, column) if inner > 0 and _simple(text) else None
        if lines is None:
            null = Style.null()
            rich_lines = _rich_lines(
                console, options, column, width, (left, right), text, null, null
            )
            return ["".join(segment.text for segment in line) for line in rich_lines]
        if left or right:
            return [f"{' ' * left}{line}{' ' * right}" for line in lines]
        return lines

    def _row(
        self,
        console: Console,
        options: ConsoleOptions,
        widths: list[int],
        cells: tuple[tuple[str, Style], ...],
        cell_style: Style,
        *,
        header_row: bool = False,
    ) -> Iterator[Segment]:
        rendered = [
            self._cell(console, options, index, width, text, cell_style, style)
            for index, (width, (text, style)) in enumerate(zip(widths, cells, strict=True))
        ]
        height = max(len(lines) for lines in rendered)
        for index, lines in enumerate(rendered):
            if len(lines) < height:  # rich aligns a header at the bottom, a row at the top
                blank = [[Segment(" " * widths[index], cell_style)]] * (height - len(lines))
                rendered[index] = blank + lines if header_row else lines + blank
        divider = Segment(" ")
        for line_no in range(height):
            segments: list[Segment] = []
            for index, lines in enumerate(rendered):
                if index:
                    segments.append(divider)
                segments += lines[line_no]
            yield from segments
            yield Segment.line()

    def _cell(
        self,
        console: Console,
        options: ConsoleOptions,
        index: int,
        width: int,
        text: str,
        cell_style: Style,
        text_style: Style,
    ) -> list[list[Segment]]:
        """A cell's lines, each a list of segments ``width`` cells wide."""
        column = self.columns[index]
        left, right = self._pads(index)
        inner = width - left - right
        lines = _fast_lines(text, inner, column) if inner > 0 and _simple(text) else None
        if lines is None:
            return _rich_lines(
                console, options, column, width, (left, right), text, cell_style, text_style
            )
        content_style = cell_style + text_style
        out = []
        for line in lines:
            segments = [Segment(" " * left, cell_style)] if left else []
            segments.append(Segment(line, content_style))
            if right:
                segments.append(Segment(" " * right, cell_style))
            out.append(segments)
        return out


def print_table(console: SafeConsole, table: PlainTable) -> None:
    """``console.print(table)``. On a console without a colour system, the table's lines go to
    ``console.file`` as drawn, shown as ``SafeConsole`` shows text (``hygiene.visible``), without
    rich's splitting, measuring and joining of each line, unless a line is wider than the
    console (rich would crop it: the table is printed by rich then). For a console that writes
    each print to its file at once (not inside ``with console:`` or a capture), as
    ``run_text``'s do; one that records, is quiet or shows in Jupyter prints through rich."""
    if console.color_system is not None or console.record or console.quiet or console.is_jupyter:
        console.print(table)
        return
    # The options console.print renders with when given no option.
    options = console.options.update(
        justify=None, overflow=None, height=None, no_wrap=None, markup=None, highlight=None
    )
    lines = table.plain_lines(console, options)
    width = console.width  # an ASCII line's cells are at most its characters
    if not all((ln.isascii() and len(ln) <= width) or cell_len(ln) <= width for ln in lines):
        console.print(table)
        return
    console.file.write(visible("\n".join(lines) + "\n"))


def _text(cell: Cell) -> str:
    return cell if isinstance(cell, str) else cell[0]


def _rich_table(columns: Sequence[Column]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(
            column.header,
            justify=column.justify,
            no_wrap=column.no_wrap,
            overflow=column.overflow,
            ratio=column.ratio,
        )
    return table


def _width(console: Console, text: str) -> int:
    """A text's longest line in cells, as rich measures it (``Text`` drops some control
    codes; wide characters take two cells)."""
    if _simple(text):
        return len(text)
    return Text(text).__rich_measure__(console, console.options).maximum


def _fast_lines(text: str, width: int, column: Column) -> list[str] | None:
    """The lines of a printable-ASCII cell ``width`` wide, as ``Text.wrap`` makes them; None
    for a line rich would cut with an ellipsis (left to rich)."""
    if len(text) <= width:
        pieces = [text]
    elif column.no_wrap or column.overflow != "fold":
        return None
    else:
        offsets = [0, *divide_line(text, width, fold=True), len(text)]
        pieces = []
        for start, end in pairwise(offsets):
            piece = text[start:end]
            if len(piece) > width:  # Text.rstrip_end: trailing spaces past the width go
                spaces = len(piece) - len(piece.rstrip())
                piece = piece[: len(piece) - min(spaces, len(piece) - width)]
            pieces.append(piece)
    if column.justify == "right":  # Lines.justify: strip, cut, then pad on the left
        return [piece.rstrip()[:width].rjust(width) for piece in pieces]
    return [piece[:width].ljust(width) for piece in pieces]


def _rich_lines(
    console: Console,
    options: ConsoleOptions,
    column: Column,
    width: int,
    pads: tuple[int, int],
    text: str,
    cell_style: Style,
    text_style: Style,
) -> list[list[Segment]]:
    """One cell rendered by rich, as ``Table`` renders it."""
    render_options = options.update(
        width=width,
        justify=column.justify,
        no_wrap=column.no_wrap,
        overflow=column.overflow,
        height=None,
    )
    cell = Padding(Text(text, style=text_style), (0, pads[1], 0, pads[0]))
    return console.render_lines(cell, render_options, style=cell_style)
