"""`define_eval` / `define_score_eval`: what an eval module declares, checked where it is declared."""

from __future__ import annotations

import difflib
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import FrameType, FunctionType
from typing import TYPE_CHECKING, Any, TypeAlias, cast, overload

from .._states import EvalKind
from ..outcomes import PassRule
from ..sandbox import SandboxSpec
from ._adapter import Adapter
from ._cases import Case, CaseIdRule, CaseProblem, CaseSet, check_tags, resolve_cases, show
from ._context import TestContext
from ._definition_errors import DefinitionError
from ._errors import NOWHERE, SourceLocation, caller_location
from ._options import (
    JUDGE_FIELDS,
    OPTION_NAMES,
    OPTIONS,
    EvalOptions,
    OptionProblem,
    check_attempts,
    check_judge,
    check_pass_rule,
    check_sandbox,
    check_timeout_ms,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: A test function: `test(t)`, or `test(t, case)` for an eval with cases; plain or async.
TestFunction: TypeAlias = Callable[[TestContext], object] | Callable[[TestContext, Any], object]


@dataclass(frozen=True, slots=True)
class EvalDefinition:
    """One eval: its test function and options. Module-level instances are discovered."""

    test: Callable[..., object]  # arity checked at definition: (t), or (t, case) with cases
    kind: EvalKind
    name: str
    description: str | None = None
    tags: tuple[str, ...] = ()
    judge: bool | Mapping[str, object] | None = None
    timeout_ms: int | None = None
    attempts: int | None = None
    pass_rule: PassRule | None = None
    adapter: Adapter | None = None
    sandbox: SandboxSpec | None = None  # local_sandbox(...) / docker_sandbox(...) (docs/sandbox.md)
    defined_at: SourceLocation = NOWHERE
    cases: tuple[Case, ...] | None = field(default=None, repr=False)  # None: an eval without cases
    positional_case_ids: bool = False  # the case ids are row positions (`niceeval list` warns)

    def __call__(self, *args: Any, **kwargs: Any) -> object:
        return self.test(*args, **kwargs)


class _Options:
    """Words each option's problem (`_options`) as a DefinitionError naming the option and the eval."""

    def __init__(self, function: str, eval_name: str, where: SourceLocation) -> None:
        self._function = function
        self._eval = eval_name
        self._where = where

    def error(self, option: str, problem: str) -> DefinitionError:
        return DefinitionError(f"eval {self._eval!r}: {self._function}({option}=...): {problem}", self._where)

    def expect(self, option: str, value: object, expected: str) -> DefinitionError:
        return self.error(option, f"expected {expected}, got {show(value)}")

    def problem(self, problem: OptionProblem) -> DefinitionError:
        if problem.expected is not None:
            return self.expect(problem.option, problem.value, problem.expected)
        if problem.problem is not None:
            return self.error(problem.option, problem.problem)
        unknown = sorted(problem.unknown)
        return self.error(
            problem.option,
            f"unknown judge field(s) {', '.join(unknown)}{_suggest(unknown[0], JUDGE_FIELDS)}; "
            f"allowed: {', '.join(sorted(JUDGE_FIELDS))}",
        )


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _positional_params(fn: Callable[..., object]) -> tuple[int, int | None] | None:
    """(required, most) positional parameters of `fn` (most None with *args); None if unknown.

    A plain function's counts come from its code object, as `inspect.signature` computes them
    (which is slow for tens of thousands of evals and leaves an `__annotations__` dict on every
    test function); anything
    else (partials, wrapped functions, methods, callable objects, builtins) goes through
    `inspect.signature`."""
    if type(fn) is FunctionType and not (  # the attributes inspect.signature looks through first
        hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__") or hasattr(fn, "_partialmethod")
    ):
        code = fn.__code__
        count = code.co_argcount
        defaults = len(fn.__defaults__ or ())
        if defaults <= count:
            return count - defaults, None if code.co_flags & inspect.CO_VARARGS else count
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        most = None
    else:
        most = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    required = sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params
    )
    return required, most


def _check_test_arity(check: _Options, fn: Callable[..., object], has_cases: bool) -> None:
    found = _positional_params(fn)
    if found is None:
        return
    required, most = found
    wanted = 2 if has_cases else 1
    if required <= wanted and (most is None or most >= wanted):
        return
    name = getattr(fn, "__name__", "test")
    if has_cases:
        raise check.error(
            "cases",
            f"with cases, the test takes a second parameter, the case's value: def {name}(t, case) "
            f"({name} takes {_count(required, most)})",
        )
    raise check.error(
        "test",
        f"the test takes one parameter, the test context: def {name}(t) ({name} takes "
        f"{_count(required, most)}); a second parameter needs cases=",
    )


def _count(required: int, most: int | None) -> str:
    if most == required:
        return f"{required} positional parameter{'s' if required != 1 else ''}"
    return f"{required} to {'any number of' if most is None else most} positional parameters"


def _build(kind: EvalKind, fn: object, options: Mapping[str, object], where: SourceLocation) -> EvalDefinition:
    """Check every option, then build the definition. Kept cheap for the options left out (no
    call for absent tags or cases): a project may define tens of thousands of evals in a loop."""
    function = "define_score_eval" if kind is EvalKind.SCORE else "define_eval"
    get = options.get
    raw_name = get("name")
    if isinstance(raw_name, str) and raw_name:
        eval_name = raw_name
    else:
        fallback = getattr(fn, "__name__", None)
        eval_name = str(fallback or "?")
    check = _Options(function, eval_name, where)
    if not OPTION_NAMES.issuperset(options):
        unknown = sorted(options.keys() - OPTION_NAMES)
        raise check.error(
            unknown[0],
            f"unknown option {unknown[0]!r}{_suggest(unknown[0], OPTIONS)}; allowed: {', '.join(OPTIONS)}",
        )
    if not callable(fn):
        raise check.expect("test", fn, "a function taking t")
    if raw_name is not None and (not isinstance(raw_name, str) or not raw_name):
        raise check.expect("name", raw_name, "a non-empty string")
    description = get("description")
    if description is not None and not isinstance(description, str):
        raise check.expect("description", description, "a string")
    raw_tags = get("tags")
    try:
        tags = check_tags(raw_tags) if raw_tags is not None else ()
    except CaseProblem as problem:
        raise check.error("tags", str(problem).removeprefix("tags: ")) from None
    adapter = get("adapter")
    if adapter is not None and not isinstance(adapter, Adapter):
        raise check.expect("adapter", adapter, "an adapter made by define_adapter")
    try:
        sandbox = check_sandbox(get("sandbox"))
        judge = check_judge(get("judge"))
        timeout_ms = check_timeout_ms(get("timeout_ms"))
        attempts = check_attempts(get("attempts"))
        pass_rule = check_pass_rule(get("pass_rule"))
    except OptionProblem as problem:
        raise check.problem(problem) from None
    case_set = _cases(check, options) if "cases" in options or "case_id" in options else None
    _check_test_arity(check, fn, case_set is not None)
    # Positional, in the order of the constructor's parameters (cheaper than keywords).
    return EvalDefinition(
        fn,
        kind,
        eval_name,
        description,
        tags,
        judge,
        timeout_ms,
        attempts,
        pass_rule,
        adapter,
        sandbox,
        where,
        case_set.cases if case_set is not None else None,
        case_set.positional if case_set is not None else False,
    )


def _cases(check: _Options, options: Mapping[str, object]) -> CaseSet | None:
    cases, rule = options.get("cases"), options.get("case_id")
    if cases is None:
        if rule is not None:
            raise check.error("case_id", "case_id= names the ids of cases=, and this eval has no cases")
        return None
    if rule is not None and not isinstance(rule, str) and not callable(rule):
        raise check.expect("case_id", rule, "a field name or a function of the case's value")
    try:
        return resolve_cases(cases, cast("CaseIdRule | None", rule))
    except CaseProblem as problem:
        raise check.error("cases", str(problem)) from None


def _define(
    kind: EvalKind, test: TestFunction | None, options: Mapping[str, object]
) -> EvalDefinition | Callable[[TestFunction], EvalDefinition]:
    where = caller_location()
    if test is not None:
        return _build(kind, test, options, where)

    def decorate(fn: TestFunction) -> EvalDefinition:
        _refuse_rebinding(fn, where, sys._getframe(1))
        return _build(kind, fn, options, where)

    return decorate


def _refuse_rebinding(fn: object, where: SourceLocation, frame: FrameType) -> None:
    """`@define_eval() async def a` twice in one module: the second `def` rebinds the name, and
    discovery, which reads the module's names, would never see the first eval — a pasted eval
    left unrenamed silently lost. Refused here, at the second's line: nothing later can tell the
    first was there. (The same line again is the module run twice, not two definitions.)"""
    if frame.f_globals is not frame.f_locals:  # inside a function or class: not the module's names
        return
    name = getattr(fn, "__name__", None)
    earlier = frame.f_globals.get(name) if isinstance(name, str) else None
    if (isinstance(earlier, EvalDefinition) and earlier.defined_at.file == where.file
            and earlier.defined_at.line != where.line):
        raise DefinitionError(
            f"{name!r} is defined twice in this module (lines {earlier.defined_at.line} and {where.line}): "
            f"the second `def {name}` replaces the first, whose eval would never run; rename one",
            where,
        )


def define_through_adapter(
    kind: EvalKind, adapter: Adapter, test: TestFunction | None, options: Mapping[str, object]
) -> EvalDefinition | Callable[[TestFunction], EvalDefinition]:
    """`adapter.define_eval(...)` / `adapter.define_score_eval(...)`: the eval uses that adapter."""
    if "adapter" in options:
        function = "define_score_eval" if kind is EvalKind.SCORE else "define_eval"
        raise DefinitionError(
            f"adapter.{function}(adapter=...): this eval already uses adapter {adapter.name!r}; to use "
            f"another, call {function}(adapter=...) itself",
            caller_location(),
        )
    return _define(kind, test, {**options, "adapter": adapter})


@overload
def define_eval(test: TestFunction, **options: Unpack[EvalOptions]) -> EvalDefinition: ...
@overload
def define_eval(test: None = None, **options: Unpack[EvalOptions]) -> Callable[[TestFunction], EvalDefinition]: ...
def define_eval(
    test: TestFunction | None = None, **options: Unpack[EvalOptions]
) -> EvalDefinition | Callable[[TestFunction], EvalDefinition]:
    """A pass-style eval (verdict passed / failed / errored). Decorator, or `test=` given."""
    return _define(EvalKind.PASS, test, options)


@overload
def define_score_eval(test: TestFunction, **options: Unpack[EvalOptions]) -> EvalDefinition: ...
@overload
def define_score_eval(
    test: None = None, **options: Unpack[EvalOptions]
) -> Callable[[TestFunction], EvalDefinition]: ...
def define_score_eval(
    test: TestFunction | None = None, **options: Unpack[EvalOptions]
) -> EvalDefinition | Callable[[TestFunction], EvalDefinition]:
    """A score-style eval (scored / unrankable / errored, with a score and a gate)."""
    return _define(EvalKind.SCORE, test, options)
