"""A tiny library with one bug: the coding agent is asked to fix it."""


def add(a: int, b: int) -> int:
    """The sum of `a` and `b`."""
    return a - b


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values` (at least one)."""
    return sum(values) / len(values)
