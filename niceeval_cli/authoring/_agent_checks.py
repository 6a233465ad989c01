"""Scoped agent assertions (agents.md): pure matches over a scope's turns, and the methods
that register them on a Turn, a session and `t`.

Three-valued over tool calls: calls reported by any turn are known to have happened; when some
turn in scope did not observe tool calls, more calls may exist, so a result that the known calls
do not already decide is `unavailable (tool-calls-unobserved)`. Calls are named `#n`, their
1-based position among the scope's tool calls; the sealed result's extras point at them as
`[turn_ordinal, seq]` pairs (seq: the event's 0-based position in its turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._states import AssertionState
from ..expect import BooleanMatch, Interval, MatchResult, equals, tool_match
from ..expect._json import to_jsonable  # engine helpers below are not in expect's pinned user API
from ..expect._tools import compared  # how tool_match compares one call: the scoped checks reuse it
from ..expect._values import RangeMatch, short  # the numeric match's type and its short display
from ._errors import AuthoringError
from ._turns import TOOL_CALLS_UNOBSERVED, ToolCall, Turn

#: How many calls an explanation lists by number before it says how many more there were.
SHOWN_CALLS = 20


@dataclass(frozen=True)
class CallRef:
    """One tool call of a scope: its number in the scope and where it lives in the attempt."""

    number: int  # 1-based position among the scope's tool calls
    turn: int  # the turn's ordinal (its position in the scope for a turn built by hand)
    seq: int  # the event's position in its turn
    call: ToolCall

    @property
    def pointer(self) -> list[int]:
        return [self.turn, self.seq]

    def shown(self) -> str:
        return f"#{self.number} {self.call.name}"


@dataclass(frozen=True)
class Scope:
    """The turns an assertion looks at, their tool calls, and whether coverage is complete."""

    turns: tuple[Turn, ...]
    calls: tuple[CallRef, ...]
    complete: bool

    @staticmethod
    def of(subject: object) -> Scope:
        turns: tuple[Any, ...] = (subject,) if isinstance(subject, Turn) else tuple(subject)  # type: ignore[call-overload,arg-type]
        for t in turns:
            if not isinstance(t, Turn):
                raise TypeError(f"an agent assertion's scope is a sequence of Turns, got {type(t).__name__}")
        calls: list[CallRef] = []
        for position, turn in enumerate(turns):
            ordinal = turn.ordinal if turn.ordinal is not None else position
            for seq, event in enumerate(turn.events):
                if isinstance(event, ToolCall):
                    calls.append(CallRef(len(calls) + 1, ordinal, seq, event))
        return Scope(turns, tuple(calls), all(t.observes("tool_calls") for t in turns))

    @property
    def unobserved_reason(self) -> str:
        """`trace-incomplete` when a turn's trace is what left it unobserved, else `tool-calls-unobserved`."""
        reasons = {t.unobserved_tool_calls_reason for t in self.turns if not t.observes("tool_calls")}
        return next(iter(reasons - {TOOL_CALLS_UNOBSERVED}), TOOL_CALLS_UNOBSERVED)

    def coverage(self) -> str:
        if self.complete:
            return f"{len(self.calls)} tool call(s) in {len(self.turns)} turn(s)"
        unobserved = sum(not t.observes("tool_calls") for t in self.turns)
        return (f"{len(self.calls)} tool call(s) reported in {len(self.turns)} turn(s), "
                f"{unobserved} of which did not observe tool calls")


def numbers(refs: Sequence[CallRef]) -> str:
    shown = ", ".join(f"#{r.number}" for r in refs[:SHOWN_CALLS])
    more = len(refs) - SHOWN_CALLS
    return shown + (f" (+{more} more)" if more > 0 else "")


def _input(value: Any) -> Any:
    try:
        return to_jsonable(value)
    except RecursionError:
        return "… [an input nested too deeply to show]"


def _evidence(scope: Scope) -> dict[str, Any]:
    return {
        "turns": [t.ordinal if t.ordinal is not None else i for i, t in enumerate(scope.turns)],
        "complete": scope.complete,
        "tool_calls": [
            {"n": r.number, "turn": r.turn, "seq": r.seq, "name": r.call.name,
             "input": _input(r.call.input), "status": r.call.status}
            for r in scope.calls
        ],
    }


class ScopeMatch(BooleanMatch):
    """A BooleanMatch whose candidate is a scope (a Turn or a sequence of Turns)."""

    def _evaluate(self, value: Any) -> MatchResult:
        scope = Scope.of(value)
        result, pointed = self.decide(scope)
        return result.with_evidence({**_evidence(scope), "pointed": [r.pointer for r in pointed]})

    def decide(self, scope: Scope) -> tuple[MatchResult, Sequence[CallRef]]:
        raise NotImplementedError

    @staticmethod
    def pointed(result: MatchResult) -> list[list[int]]:
        """The `[turn, seq]` pairs of the calls that decided `result` (for AssertionResult.extras)."""
        evidence = result.evidence if result.has_evidence else None
        if isinstance(evidence, dict):
            return list(evidence.get("pointed") or [])
        return []


def _unobserved(text: str, scope: Scope | None = None) -> MatchResult:
    reason = scope.unobserved_reason if scope is not None else TOOL_CALLS_UNOBSERVED
    return MatchResult.unavailable(reason, f"{text} ({reason})")


class Succeeded(ScopeMatch):
    def __init__(self) -> None:
        super().__init__("succeeded", {})

    def decide(self, scope: Scope) -> tuple[MatchResult, Sequence[CallRef]]:
        if not scope.turns:
            return MatchResult.mismatched("expected every turn completed, but the scope has no turn"), ()
        bad = [(i, t) for i, t in enumerate(scope.turns) if t.status != "completed"]
        if bad:
            shown = ", ".join(
                f"turn {t.ordinal if t.ordinal is not None else i} {t.status}" for i, t in bad
            )
            return MatchResult.mismatched(f"expected every turn completed; {shown}"), ()
        return MatchResult.matched(f"all {len(scope.turns)} turn(s) completed"), ()


def expected_count(aggregate: BooleanMatch, default: bool, what: str) -> str:
    """`exactly 1 call of X`, `at least 2 calls of X`, `no call of X`, ... for explanations."""
    if default:
        return f"at least 1 call of {what}"
    if isinstance(aggregate, RangeMatch):
        n = aggregate.config.get("value")
        words = {"equals": "exactly", "at_least": "at least", "at_most": "at most",
                 "greater_than": "more than", "less_than": "fewer than"}
        if aggregate.name == "equals" and aggregate.lo == 0:
            return f"no call of {what}"
        if aggregate.name in words:
            noun = "call" if aggregate.name != "less_than" and n == 1 else "calls"
            return f"{words[aggregate.name]} {short(n)} {noun} of {what}"
        if aggregate.name == "between":
            return f"between {short(aggregate.lo)} and {short(aggregate.hi)} calls of {what}"
    return f"a number of calls of {what} matching {aggregate.describe()}"


class CalledTool(ScopeMatch):
    def __init__(self, match: BooleanMatch, aggregate: BooleanMatch, default: bool) -> None:
        super().__init__("called_tool", {"match": match.describe(), "count": aggregate.describe()})
        self.match, self.aggregate = match, aggregate
        self.expected = expected_count(aggregate, default, match.describe())

    def describe(self) -> str:
        return f"called_tool({self.match.describe()}, {self.aggregate.describe()})"

    def decide(self, scope: Scope) -> tuple[MatchResult, Sequence[CallRef]]:
        matched: list[CallRef] = []
        unknown: list[tuple[CallRef, MatchResult]] = []
        missed: list[tuple[str, Any, MatchResult]] = []  # (#n, call, why): what the explanation compares
        for ref in scope.calls:
            r = self.match.evaluate(ref.call)
            if r.state == AssertionState.ERRORED:
                return r, (ref,)
            if r.state == AssertionState.MATCHED:
                matched.append(ref)
            elif r.state == AssertionState.UNAVAILABLE:
                unknown.append((ref, r))
            else:
                missed.append((f"#{ref.number}", ref.call, r))
        k, u = len(matched), len(unknown)
        hi = math.inf if not scope.complete else k + u
        count: int | Interval = k if hi == k else Interval(k, hi)
        verdict = self.aggregate.evaluate(count)
        counted = f"counted {k}" + (f": {numbers(matched)}" if matched else "")
        if u:
            counted += f", {u} unknown ({unknown[0][1].reason}: {numbers([ref for ref, _ in unknown])})"
        text = f"expected {self.expected}, {counted}"
        if verdict.state == AssertionState.MATCHED:
            return MatchResult.matched(text), matched
        if verdict.state == AssertionState.MISMATCHED:
            text += compared(self.match, missed)
            return MatchResult.mismatched(text + ("" if scope.complete else f"; {scope.coverage()}")), matched
        if not scope.complete:
            return _unobserved(f"{text}; {scope.coverage()}", scope), matched
        reason = unknown[0][1].reason if unknown else verdict.reason
        return MatchResult.unavailable(reason or "unavailable", text), matched


class ToolOrder(ScopeMatch):
    def __init__(self, matches: Sequence[BooleanMatch]) -> None:
        super().__init__("tool_order", {"matches": [m.describe() for m in matches]})
        self.matches = tuple(matches)

    def describe(self) -> str:
        return f"tool_order([{', '.join(m.describe() for m in self.matches)}])"

    def _greedy(self, scope: Scope, accept: Callable[[MatchResult], bool]) -> list[CallRef]:
        found: list[CallRef] = []
        for ref in scope.calls:
            if len(found) == len(self.matches):
                break
            if accept(self.matches[len(found)].evaluate(ref.call)):
                found.append(ref)
        return found

    def decide(self, scope: Scope) -> tuple[MatchResult, Sequence[CallRef]]:
        want = " → ".join(m.describe() for m in self.matches)
        sure = self._greedy(scope, lambda r: r.state == AssertionState.MATCHED)
        found = ", ".join(f"{m.describe()} as #{r.number}" for m, r in zip(self.matches, sure, strict=False))
        if len(sure) == len(self.matches):
            return MatchResult.matched(f"found {want} in order: {found}"), sure
        maybe = self._greedy(scope, lambda r: r.state in (AssertionState.MATCHED, AssertionState.UNAVAILABLE))
        missing = self.matches[len(sure)].describe()
        so_far = f"found {found}; " if sure else ""
        calls = ", ".join(r.shown() for r in scope.calls[:SHOWN_CALLS]) or "none"
        text = f"expected {want} in order; {so_far}no {missing} after that (calls: {calls})"
        if len(maybe) < len(self.matches) and scope.complete:
            return MatchResult.mismatched(text), sure
        if not scope.complete:
            return _unobserved(f"{text}; {scope.coverage()}", scope), sure
        return MatchResult.unavailable("unavailable", text), sure


class MaxToolCalls(ScopeMatch):
    def __init__(self, n: int) -> None:
        super().__init__("max_tool_calls", {"value": n})
        self.n = n

    def describe(self) -> str:
        return f"max_tool_calls({self.n})"

    def decide(self, scope: Scope) -> tuple[MatchResult, Sequence[CallRef]]:
        c = len(scope.calls)
        listed = f": {numbers(scope.calls)}" if scope.calls else ""
        text = f"expected at most {self.n} tool call(s), counted {c}{listed}"
        if c > self.n:
            return MatchResult.mismatched(text), scope.calls[self.n:]
        if not scope.complete:
            return _unobserved(f"{text}; {scope.coverage()}", scope), ()
        return MatchResult.matched(text), ()


class NoFailedActions(ScopeMatch):
    def __init__(self) -> None:
        super().__init__("no_failed_actions", {})

    def decide(self, scope: Scope) -> tuple[MatchResult, Sequence[CallRef]]:
        bad = [r for r in scope.calls if r.call.status in ("failed", "rejected")]
        if bad:
            shown = ", ".join(f"{r.shown()} {r.call.status}" for r in bad[:SHOWN_CALLS])
            return MatchResult.mismatched(f"expected no failed or rejected tool call, found {len(bad)}: {shown}"), bad
        text = f"no failed or rejected tool call among {len(scope.calls)}"
        if not scope.complete:
            return _unobserved(f"{text}; {scope.coverage()}", scope), ()
        return MatchResult.matched(text), ()


# -- factories (validate at the call, where an authoring mistake is reported) -------------------
def as_tool_match(m: object, where: str) -> BooleanMatch:
    if isinstance(m, str):
        return tool_match(m)
    if isinstance(m, BooleanMatch):
        return m
    raise TypeError(f"{where}: expected a tool name or a tool_match(...), got {m!r}")


def count_match(count: object) -> tuple[BooleanMatch, bool]:
    """(the numeric match on the count, whether it is the default `at least one`)."""
    if count is None:
        from ..expect import at_least

        return at_least(1), True
    if isinstance(count, bool) or (isinstance(count, int) and count < 0):
        raise TypeError(f"called_tool(count=...) expects a whole number ≥ 0 or a numeric match, got {count!r}")
    if isinstance(count, int):
        return equals(count), False
    if isinstance(count, BooleanMatch):
        return count, False
    raise TypeError(f"called_tool(count=...) expects a whole number ≥ 0 or a numeric match, got {count!r}")


def called_tool_match(m: object, count: object = None) -> ScopeMatch:
    aggregate, default = count_match(count)
    return CalledTool(as_tool_match(m, "called_tool"), aggregate, default)


def tool_order_match(matches: object) -> ScopeMatch:
    if isinstance(matches, (str, BooleanMatch)) or not isinstance(matches, (list, tuple)) or not matches:
        raise TypeError(f"tool_order expects a non-empty list of tool names or tool_match(...), got {matches!r}")
    return ToolOrder([as_tool_match(m, "tool_order") for m in matches])


def max_tool_calls_match(n: object) -> ScopeMatch:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise TypeError(f"max_tool_calls expects a whole number ≥ 0, got {n!r}")
    return MaxToolCalls(n)


class ScopedChecks:
    """The six agent assertions over one scope; `register(subject, match)` files them."""

    def __init__(self, turns: Callable[[], tuple[Turn, ...]],
                 register: Callable[[Any, BooleanMatch], Any], error: Callable[[str], Exception]) -> None:
        self._turns = turns
        self._register: Callable[[Any, BooleanMatch], Any] | None = register
        self._error = error

    def _file(self, build: Callable[[], ScopeMatch]) -> Any:
        if self._register is None:
            raise AuthoringError("an agent assertion was made after its attempt ended (it was sealed "
                                 "already); make it inside the test, before it returns")
        try:
            match = build()
        except TypeError as exc:
            raise self._error(str(exc)) from None
        return self._register(self._turns(), match)

    def close(self) -> None:
        """Its attempt ended: let go of the test context (the links back to it made every
        attempt's objects a reference cycle, freed only by the cyclic collector)."""
        self._turns = tuple
        self._register = None
        self._error = AuthoringError

    def succeeded(self) -> Any:
        return self._file(Succeeded)

    def called_tool(self, match: Any, count: Any = None) -> Any:
        return self._file(lambda: called_tool_match(match, count))

    def not_called_tool(self, match: Any) -> Any:
        return self._file(lambda: called_tool_match(match, 0))

    def tool_order(self, matches: Any) -> Any:
        return self._file(lambda: tool_order_match(matches))

    def max_tool_calls(self, n: Any) -> Any:
        return self._file(lambda: max_tool_calls_match(n))

    def no_failed_actions(self) -> Any:
        return self._file(NoFailedActions)


#: Names of the scoped assertions (reserved on `t`).
CHECK_NAMES = ("succeeded", "called_tool", "not_called_tool", "tool_order", "max_tool_calls",
               "no_failed_actions")

__all__ = [
    "CHECK_NAMES",
    "CallRef",
    "Scope",
    "ScopeMatch",
    "ScopedChecks",
    "called_tool_match",
    "max_tool_calls_match",
    "tool_order_match",
]
