"""``sqlbench view``: the report pages served from the run store on 127.0.0.1."""

from sqlbench.view.server import ViewServer

__all__ = ["ViewServer"]
