"""Maximum bipartite matching (Hopcroft-Karp), for pairing rows within tolerance.

Only used where sorted pairing cannot decide: two or more numeric columns compared with
tolerance, inside one group of otherwise-equal rows, on a path that already failed.
"""

from __future__ import annotations

from collections import deque


def max_matching(adjacency: list[list[int]], right_count: int) -> tuple[list[int], list[int]]:
    """A maximum matching of a bipartite graph.

    Args:
        adjacency: for each left vertex, the right vertices it may pair with.
        right_count: number of right vertices.

    Returns:
        (partner of each left vertex or -1, partner of each right vertex or -1).

    Example:
        >>> max_matching([[0, 1], [0]], 2)
        ([1, 0], [1, 0])
    """
    left_count = len(adjacency)
    match_l = [-1] * left_count
    match_r = [-1] * right_count
    infinity = left_count + 1
    while True:
        dist = _layers(adjacency, match_l, match_r, infinity)
        if dist is None:
            break
        for u in range(left_count):
            if match_l[u] == -1:
                _augment(u, adjacency, match_l, match_r, dist, infinity)
    return match_l, match_r


def _layers(
    adjacency: list[list[int]], match_l: list[int], match_r: list[int], infinity: int
) -> list[int] | None:
    """Breadth-first layering from free left vertices; None when no augmenting path exists."""
    dist = [infinity] * len(adjacency)
    queue: deque[int] = deque()
    for u, partner in enumerate(match_l):
        if partner == -1:
            dist[u] = 0
            queue.append(u)
    found = False
    while queue:
        u = queue.popleft()
        for v in adjacency[u]:
            w = match_r[v]
            if w == -1:
                found = True
            elif dist[w] == infinity:
                dist[w] = dist[u] + 1
                queue.append(w)
    return dist if found else None


def _augment(
    root: int,
    adjacency: list[list[int]],
    match_l: list[int],
    match_r: list[int],
    dist: list[int],
    infinity: int,
) -> bool:
    """Iterative depth-first search for one augmenting path along the layers."""
    stack: list[tuple[int, int]] = [(root, 0)]
    path: list[tuple[int, int]] = []
    while stack:
        u, i = stack.pop()
        edges = adjacency[u]
        while i < len(edges):
            v = edges[i]
            w = match_r[v]
            if w == -1:
                path.append((u, v))
                for pu, pv in path:
                    match_l[pu] = pv
                    match_r[pv] = pu
                return True
            if dist[w] == dist[u] + 1:
                stack.append((u, i + 1))
                path.append((u, v))
                stack.append((w, 0))
                break
            i += 1
        else:
            dist[u] = infinity
            if path:
                path.pop()
    return False
