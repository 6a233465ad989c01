"""`define_eval` / `define_score_eval`: what an eval module declares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._states import EvalKind
from ..outcomes import parse_pass_rule
from ._adapter import Adapter
from ._errors import AuthoringError, SourceLocation, caller_location

_JUDGE_FIELDS = frozenset({"model", "base_url", "api_key_env", "timeout_ms", "max_retries"})


@dataclass(frozen=True)
class EvalDefinition:
    """One eval: its test function and options. Module-level instances are discovered."""

    test: Callable[..., Any]
    kind: EvalKind
    name: str
    description: str | None = None
    tags: tuple[str, ...] = ()
    judge: bool | Mapping[str, Any] | None = None
    timeout_ms: int | None = None
    attempts: int | None = None
    pass_rule: Any = None
    adapter: Adapter | None = None
    defined_at: SourceLocation = field(default_factory=lambda: SourceLocation(None, None))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.test(*args, **kwargs)


def _validate(where: SourceLocation, **options: Any) -> None:
    tags = options["tags"]
    if not all(isinstance(t, str) for t in tags):
        raise AuthoringError(f"tags must be strings, got {list(tags)!r}", where)
    for field_name in ("attempts", "timeout_ms"):
        value = options[field_name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise AuthoringError(f"{field_name} must be a positive integer, got {value!r}", where)
    judge = options["judge"]
    if judge is not None and not isinstance(judge, (bool, Mapping)):
        raise AuthoringError(f"judge must be True or a mapping of judge fields, got {judge!r}", where)
    if isinstance(judge, Mapping):
        unknown = sorted(set(judge) - _JUDGE_FIELDS)
        if unknown:
            raise AuthoringError(
                f"judge={{...}} has unknown field(s) {', '.join(map(str, unknown))}; "
                f"allowed: {', '.join(sorted(_JUDGE_FIELDS))} (max_concurrency is set per experiment "
                "or project)",
                where,
            )
    rule = options["pass_rule"]
    if rule is not None:
        try:
            parse_pass_rule(rule)  # the one pass-rule check (config and the fold use it too)
        except ValueError:
            raise AuthoringError(
                f"pass_rule must be 'any', 'all' or a pass rate in (0, 1], got {rule!r}", where
            ) from None


def _make(kind: EvalKind, test: Callable[..., Any] | None, options: dict[str, Any]) -> Any:
    where = caller_location()
    tags = tuple(options.pop("tags", None) or ())
    name = options.pop("name", None)
    adapter = options.pop("adapter", None)
    known = {"description", "judge", "timeout_ms", "attempts", "pass_rule"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise AuthoringError(
            f"define_{'score_' if kind is EvalKind.SCORE else ''}eval got unknown option(s) "
            f"{', '.join(unknown)}; allowed: adapter, attempts, description, judge, name, pass_rule, "
            "tags, test, timeout_ms",
            where,
        )
    if adapter is not None and not isinstance(adapter, Adapter):
        raise AuthoringError(f"adapter must come from define_adapter, got {adapter!r}", where)
    opts = {k: options.get(k) for k in known}
    _validate(where, tags=tags, **opts)

    def build(fn: Callable[..., Any]) -> EvalDefinition:
        if not callable(fn):
            raise AuthoringError(f"test must be a function taking t, got {fn!r}", where)
        return EvalDefinition(
            test=fn,
            kind=kind,
            name=str(name) if name is not None else getattr(fn, "__name__", "eval"),
            tags=tags,
            adapter=adapter,
            defined_at=where,
            **opts,
        )

    return build(test) if test is not None else build


def define_eval(test: Callable[..., Any] | None = None, **options: Any) -> Any:
    """A pass-style eval (verdict passed / failed / errored). Decorator, or `test=` given."""
    test = options.pop("test", test)
    return _make(EvalKind.PASS, test, options)


def define_score_eval(test: Callable[..., Any] | None = None, **options: Any) -> Any:
    """A score-style eval (scored / unrankable / errored, with a score and a gate)."""
    test = options.pop("test", test)
    return _make(EvalKind.SCORE, test, options)
