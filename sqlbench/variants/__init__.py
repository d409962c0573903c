"""Grading on generated data variants (SPEC section 4, ``variants``): catches the passes that
are luck of the data (test-suite accuracy)."""
