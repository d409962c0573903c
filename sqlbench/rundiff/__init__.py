"""Run-to-run comparison: pairing two runs, their statistics, the PR-check policy, shard merge.

``sqlbench.compare`` compares two *result sets*; this package compares two *runs*.
"""
