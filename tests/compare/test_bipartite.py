"""Maximum bipartite matching against brute force on small random graphs."""

from __future__ import annotations

import itertools
import random

from sqlbench.compare.bipartite import max_matching


def _brute_force(adjacency: list[list[int]], right: int) -> int:
    best = 0
    left = len(adjacency)
    for size in range(min(left, right), 0, -1):
        for chosen in itertools.combinations(range(left), size):
            for targets in itertools.permutations(range(right), size):
                if all(t in adjacency[u] for u, t in zip(chosen, targets, strict=True)):
                    return size
    return best


def test_matches_brute_force() -> None:
    rng = random.Random(11)
    for _ in range(300):
        left, right = rng.randint(0, 5), rng.randint(0, 5)
        adjacency = [[v for v in range(right) if rng.random() < 0.4] for _ in range(left)]
        match_l, match_r = max_matching(adjacency, right)
        size = sum(m >= 0 for m in match_l)
        assert size == _brute_force(adjacency, right)
        for u, v in enumerate(match_l):
            if v >= 0:
                assert v in adjacency[u] and match_r[v] == u
        assert sum(m >= 0 for m in match_r) == size


def test_long_augmenting_chain() -> None:
    count = 2000
    adjacency = [[u, u + 1] if u + 1 < count else [u] for u in range(count)]
    adjacency[0] = [0]
    match_l, _ = max_matching(adjacency, count)
    assert all(m >= 0 for m in match_l)
