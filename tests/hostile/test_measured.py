"""How the red-team tests add up the memory of sqlbench and its processes (`run_measured`)."""

from __future__ import annotations

from corpus import Status, resident_kb

JVM = ("4200000 kB", "1213440 kB", "3900000 kB", "132 kB", "2900 kB")


def test_a_child_sharing_its_parents_address_space_is_counted_once() -> None:
    """A JVM starting a helper with vfork: until the helper execs, it reports the JVM's own
    figures (a Spark run measured 1,185 MB twice, 2,584 MB in all)."""
    statuses = {
        10: Status("sqlbench", 1, 200_000, 220_000, ("900000 kB", "200000 kB", "1", "2", "3")),
        11: Status("java", 10, 1_213_440, 1_213_440, JVM),
        12: Status("Thread-3", 11, 1_213_440, 1_213_440, JVM),
    }
    assert resident_kb(statuses) == 200_000 + 1_213_440


def test_children_with_their_own_memory_all_count() -> None:
    diverged = (JVM[0], "1213444 kB", *JVM[2:])
    statuses = {
        11: Status("java", 10, 1_213_440, 1_213_440, JVM),
        12: Status("jspawnhelper", 11, 1_213_444, 1_213_444, diverged),
        13: Status("python", 10, 50_000, 50_000, ("1", "2", "3", "4", "5")),
    }
    assert resident_kb(statuses) == 1_213_440 + 1_213_444 + 50_000
    unread = {12: Status("gone", 11, 300, 300, ("", "", "", "", ""))}  # no figures: counted
    assert resident_kb({11: statuses[11], **unread}) == 1_213_440 + 300
