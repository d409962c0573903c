"""sqlbench: an execution-based benchmark harness for text-to-SQL agents."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
