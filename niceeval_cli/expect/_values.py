"""Value matches: comparisons on one candidate value, and user-defined value/score matches.

Numeric matches are ranges of accepted numbers, which lets each of them also answer for an
`Interval` of possible values (matched if the interval lies inside the range, mismatched if
it lies outside, else unavailable) — what makes `count_where` three-valued.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from numbers import Real
from typing import Any

from .._states import UnavailableReason
from ._core import BooleanMatch, Interval, MatchError, MatchResult, ScoreMatch, check_measurement
from ._facts import Fact, FactUnavailable, NumericMaterial
from ._json import JSON, callable_name, to_jsonable

_MAX_SHOWN = 120


def short(value: object) -> str:
    """A candidate as shown inside an explanation (display only; evidence is never shortened)."""
    text = str(value) if isinstance(value, Interval) else repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def is_number(value: object) -> bool:
    """A real number; bools are not numbers here (`True` is not a count of 1)."""
    return isinstance(value, (Real, Decimal)) and not isinstance(value, bool)


def unavailable_from(result: object) -> str | None:
    """The reason when a user function returned an unavailable Fact / NumericMaterial."""
    if isinstance(result, (Fact, NumericMaterial)) and result.state != "available":
        return result.reason or "unavailable"
    return None


def fact_unavailable(exc: FactUnavailable, where: str) -> MatchResult:
    """A user function read `.value` of an unavailable Fact: the evaluation is unknown."""
    return MatchResult.unavailable(exc.reason, f"{where}: read an unavailable fact ({exc.reason})")


class ValueMatch(BooleanMatch):
    """A BooleanMatch whose decision is a function of the unwrapped candidate."""

    def __init__(
        self, name: str, config: dict[str, JSON], decide: Callable[[Any], MatchResult],
        shown: str | None = None,
    ) -> None:
        super().__init__(name, config)
        self._decide = decide
        self._shown = shown

    def describe(self) -> str:
        return self._shown or super().describe()

    def _evaluate(self, value: Any) -> MatchResult:
        return self._decide(value)


class RangeMatch(BooleanMatch):
    """The numbers between `lo` and `hi` (each bound open or closed; ±inf allowed)."""

    accepts_interval = True

    def __init__(
        self, name: str, config: dict[str, JSON], lo: float, hi: float, lo_closed: bool, hi_closed: bool,
    ) -> None:
        super().__init__(name, config)
        self.lo, self.hi, self.lo_closed, self.hi_closed = lo, hi, lo_closed, hi_closed

    def contains(self, v: Any) -> bool:
        above = v > self.lo or (self.lo_closed and v == self.lo)
        below = v < self.hi or (self.hi_closed and v == self.hi)
        return bool(above and below)

    def _evaluate(self, value: Any) -> MatchResult:
        if isinstance(value, Interval):
            return self._interval(value)
        if not is_number(value):
            return MatchResult.mismatched(
                f"expected {self.describe()}, got {short(value)} ({type(value).__name__}, not a number)"
            )
        return MatchResult.of(self.contains(value), f"expected {self.describe()}, got {short(value)}")

    def _interval(self, iv: Interval) -> MatchResult:
        top = self.contains(iv.hi) if math.isfinite(iv.hi) else self.hi == math.inf
        every = self.contains(iv.lo) and top
        if every:
            return MatchResult.matched(f"{self.describe()} holds for every value in {iv}")
        disjoint = (
            iv.hi < self.lo or (iv.hi == self.lo and not self.lo_closed)
            or iv.lo > self.hi or (iv.lo == self.hi and not self.hi_closed)
        )
        if disjoint:
            return MatchResult.mismatched(f"expected {self.describe()}, but every possible value is in {iv}")
        return MatchResult.unavailable(
            UnavailableReason.COUNT_UNCERTAIN,
            f"value only known to lie in {iv}; {self.describe()} holds for some of it only",
        )


def _threshold(factory: str, x: object) -> float:
    if not is_number(x) or (isinstance(x, float) and math.isnan(x)):
        raise TypeError(f"{factory}({x!r}): expected a number")
    return x  # type: ignore[return-value]


def equals(x: object) -> BooleanMatch:
    """Equal to `x`; on a number also answers for intervals. `True` never equals `1`."""
    if is_number(x):
        n = _threshold("equals", x)
        return RangeMatch("equals", {"value": to_jsonable(x)}, n, n, True, True)

    def decide(v: Any) -> MatchResult:
        same = isinstance(v, bool) == isinstance(x, bool) and v == x
        return MatchResult.of(bool(same), f"expected equals({short(x)}), got {short(v)}")

    return ValueMatch("equals", {"value": to_jsonable(x)}, decide, f"equals({short(x)})")


def greater_than(x: float) -> BooleanMatch:
    n = _threshold("greater_than", x)
    return RangeMatch("greater_than", {"value": to_jsonable(x)}, n, math.inf, False, True)


def less_than(x: float) -> BooleanMatch:
    n = _threshold("less_than", x)
    return RangeMatch("less_than", {"value": to_jsonable(x)}, -math.inf, n, True, False)


def at_least(x: float) -> BooleanMatch:
    """≥ x."""
    n = _threshold("at_least", x)
    return RangeMatch("at_least", {"value": to_jsonable(x)}, n, math.inf, True, True)


def at_most(x: float) -> BooleanMatch:
    """≤ x."""
    n = _threshold("at_most", x)
    return RangeMatch("at_most", {"value": to_jsonable(x)}, -math.inf, n, True, True)


def between(lo: float, hi: float) -> BooleanMatch:
    """lo ≤ value ≤ hi."""
    a, b = _threshold("between", lo), _threshold("between", hi)
    if a > b:
        raise ValueError(f"between({lo!r}, {hi!r}): lo must not exceed hi")
    return RangeMatch("between", {"lo": to_jsonable(lo), "hi": to_jsonable(hi)}, a, b, True, True)


def _text_match(name: str, text: str, case_sensitive: bool, want: bool) -> BooleanMatch:
    if not isinstance(text, str):
        raise TypeError(f"{name}({text!r}): expected text")
    config: dict[str, JSON] = {"value": text, "case_sensitive": case_sensitive}
    shown = f"{name}({text!r})" if case_sensitive else f"{name}({text!r}, case_sensitive=False)"

    def decide(v: Any) -> MatchResult:
        if not isinstance(v, str):
            return MatchResult.mismatched(f"expected {shown}, got {short(v)} ({type(v).__name__}, not text)")
        found = text in v if case_sensitive else text.casefold() in v.casefold()
        return MatchResult.of(found == want, f"expected {shown}, got {short(v)}")

    return ValueMatch(name, config, decide, shown)


def includes(text: str, case_sensitive: bool = True) -> BooleanMatch:
    return _text_match("includes", text, case_sensitive, True)


def excludes(text: str, case_sensitive: bool = True) -> BooleanMatch:
    return _text_match("excludes", text, case_sensitive, False)


def pattern(regex: str | re.Pattern[str]) -> BooleanMatch:
    """`re.search` finds `regex` in the text."""
    compiled = re.compile(regex)
    config: dict[str, JSON] = {"value": compiled.pattern}
    if compiled.flags & ~re.UNICODE:
        config["flags"] = compiled.flags
    shown = f"pattern({compiled.pattern!r})"

    def decide(v: Any) -> MatchResult:
        if not isinstance(v, str):
            return MatchResult.mismatched(f"expected {shown}, got {short(v)} ({type(v).__name__}, not text)")
        return MatchResult.of(compiled.search(v) is not None, f"expected {shown}, got {short(v)}")

    return ValueMatch("pattern", config, decide, shown)


def is_defined() -> BooleanMatch:
    """The (available) value is not None."""
    return ValueMatch(
        "is_defined", {}, lambda v: MatchResult.of(v is not None, f"expected is_defined(), got {short(v)}"),
    )


def is_true() -> BooleanMatch:
    """The value is the bool `True` (truthy values are not enough)."""
    return ValueMatch(
        "is_true", {}, lambda v: MatchResult.of(v is True, f"expected is_true(), got {short(v)}"),
    )


def is_false() -> BooleanMatch:
    """The value is the bool `False` (falsy values are not enough)."""
    return ValueMatch(
        "is_false", {}, lambda v: MatchResult.of(v is False, f"expected is_false(), got {short(v)}"),
    )


def matches(schema: Any) -> BooleanMatch:
    """The value validates against a pydantic model or any type (pydantic `TypeAdapter`)."""
    from pydantic import TypeAdapter, ValidationError  # lazy: keeps `import niceeval_cli` light

    adapter: TypeAdapter[Any] = TypeAdapter(schema)
    label = schema.__qualname__ if isinstance(schema, type) else repr(schema)
    shown = f"matches({label})"

    def decide(v: Any) -> MatchResult:
        try:
            adapter.validate_python(v)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:3]
            )
            more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
            return MatchResult.mismatched(f"expected {shown}, got {short(v)}: {problems}{more}")
        return MatchResult.matched(f"{short(v)} validates as {label}")

    return ValueMatch("matches", {"value": label}, decide, shown)


def _user_verdict(shown: str, fn: Callable[[Any], object], v: Any) -> MatchResult:
    try:
        out = fn(v)
    except FactUnavailable as exc:
        return fact_unavailable(exc, shown)
    if out is True:
        return MatchResult.matched(f"{shown} holds for {short(v)}")
    if out is False:
        return MatchResult.mismatched(f"expected {shown}, got {short(v)}")
    reason = unavailable_from(out)
    if reason is not None:
        return MatchResult.unavailable(reason, f"{shown}: unknown for {short(v)} ({reason})")
    raise MatchError(f"{shown} returned {short(out)}; expected True, False or an unavailable Fact")


def _check_name(factory: str, name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{factory}: name must be non-empty text, got {name!r}")
    return name


def satisfies(label: str, predicate: Callable[[Any], object]) -> BooleanMatch:
    """`predicate(value)` is True (a bool; an unavailable Fact means unknown)."""
    label = _check_name("satisfies", label)
    shown = f"satisfies({label!r})"
    config: dict[str, JSON] = {"label": label, "predicate": callable_name(predicate)}
    return ValueMatch("satisfies", config, lambda v: _user_verdict(shown, predicate, v), shown)


def define_value_match(*, name: str, evaluate: Callable[[Any], object]) -> BooleanMatch:
    """A named BooleanMatch from `evaluate(value)` → True / False / unavailable Fact."""
    name = _check_name("define_value_match", name)
    shown = f"{name}()"
    config: dict[str, JSON] = {"evaluate": callable_name(evaluate)}
    return ValueMatch(name, config, lambda v: _user_verdict(shown, evaluate, v), shown)


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one character each)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


class _Similarity(ScoreMatch):
    def __init__(self, expected: str) -> None:
        super().__init__("similarity", {"value": expected})
        self.expected = expected

    def _measure(self, value: Any) -> MatchResult:
        if not isinstance(value, str):
            raise MatchError(f"{self.describe()} compares text; got {type(value).__name__} {short(value)}")
        longest = max(len(value), len(self.expected))
        m = 1.0 if longest == 0 else 1 - levenshtein(value, self.expected) / longest
        text = f"similarity {m:.2f} between {short(value)} and {short(self.expected)}"
        return MatchResult.measured(m, text)


def similarity(expected: str) -> ScoreMatch:
    """Normalised Levenshtein similarity: 1 - distance / longer length (1.0 for two empty texts)."""
    if not isinstance(expected, str):
        raise TypeError(f"similarity({expected!r}): expected text")
    return _Similarity(expected)


class _UserScore(ScoreMatch):
    def __init__(self, name: str, score: Callable[[Any], object]) -> None:
        super().__init__(name, {"score": callable_name(score)})
        self._score = score

    def describe(self) -> str:
        return f"{self.name}()"

    def _measure(self, value: Any) -> MatchResult:
        try:
            out = self._score(value)
        except FactUnavailable as exc:
            return fact_unavailable(exc, self.describe())
        reason = unavailable_from(out)
        if reason is not None:
            text = f"{self.describe()}: unknown for {short(value)} ({reason})"
            return MatchResult.unavailable(reason, text)
        m = check_measurement(out, self.name)
        return MatchResult.measured(m, f"{self.describe()} measured {m:.2f} for {short(value)}")


def define_score_match(*, name: str, score: Callable[[Any], object]) -> ScoreMatch:
    """A named ScoreMatch from `score(value)` → finite number in [0, 1] / unavailable Fact."""
    return _UserScore(_check_name("define_score_match", name), score)
