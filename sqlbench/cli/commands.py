"""The registered commands. A command module defines one click command; list it here."""

from __future__ import annotations

import click

ALL: list[click.Command] = []
