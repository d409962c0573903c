"""Grading on generated data variants (docs/verdicts.md, ``variants``): catches the passes that
are luck of the data (test-suite accuracy)."""
