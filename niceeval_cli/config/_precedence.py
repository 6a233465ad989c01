"""Precedence: CLI flag > eval > experiment > project > default, frozen per (experiment, eval)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from pydantic import ValidationError

from .._bounds import MAX_ATTEMPTS
from .._sandbox_spec import SandboxSpec
from ._file_errors import expected_text, given
from ._sandbox import resolve_sandbox
from ._schema import (
    Attempts,
    ExperimentConfig,
    FrozenModel,
    JudgeOverrides,
    JudgeSettings,
    PassRule,
    PassRuleValue,
    PositiveMs,
    ProjectConfig,
    eval_judge_fields,
)
from ._wording import ConfigError, quoted, show, suggest


class EvalOptionsLike(Protocol):
    """The options an eval declares in code (`define_eval(...)`) that take part in precedence."""

    @property
    def id(self) -> str: ...

    @property
    def attempts(self) -> int | None: ...

    @property
    def timeout_ms(self) -> int | None: ...

    @property
    def pass_rule(self) -> object | None: ...

    @property
    def judge(self) -> bool | Mapping[str, object] | None: ...


@dataclass(frozen=True)
class RunOverrides:
    """Run settings given as CLI flags (`--attempts`, `--max-concurrency`, `--timeout`)."""

    attempts: int | None = None
    max_concurrency: int | None = None
    timeout_ms: int | None = None

    def __post_init__(self) -> None:
        for flag, value, maximum in (
            ("--attempts", self.attempts, MAX_ATTEMPTS),
            ("--max-concurrency", self.max_concurrency, None),
            ("--timeout", self.timeout_ms, None),
        ):
            valid = isinstance(value, int) and not isinstance(value, bool) and value >= 1 \
                and (maximum is None or value <= maximum)
            if value is not None and not valid:
                fits = "an integer ≥ 1" if maximum is None else f"an integer from 1 to {maximum}"
                raise ConfigError(f"{flag}: expected {fits}, got {show(value)}.")


#: How long a turn waits for spans still open after its send returned (`trace_flush_ms`).
DEFAULT_TRACE_FLUSH_MS = 2000


class SlotSettings(FrozenModel):
    """The settings one (experiment, eval) pair runs with, frozen before dispatch. A value: pairs
    that resolve alike may share one object (a run of 10 000 evals holds a handful)."""

    attempts: Attempts
    timeout_ms: PositiveMs | None  # None = no deadline
    pass_rule: PassRuleValue
    judge: JudgeSettings | None  # None when the eval does not declare judge
    sandbox: SandboxSpec | None = None  # resolved (eval > experiment > project); None: no sandbox
    traces: str | None = None  # the experiment's `traces` ("otel" | "otlp"); None: spans are not read
    trace_flush_ms: int = DEFAULT_TRACE_FLUSH_MS  # how long a turn waits for its spans after it ends


class _EvalOptions(NamedTuple):
    attempts: int | None
    timeout_ms: int | None
    pass_rule: PassRule | None


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def resolve_slot_settings(
    project: ProjectConfig,
    experiment: ExperimentConfig,
    eval_opts: EvalOptionsLike,
    overrides: RunOverrides | None = None,
) -> SlotSettings:
    """CLI flag > eval > experiment > project > default, for every field (judge and sandbox field
    by field)."""
    flags = overrides or RunOverrides()
    own = _eval_options(eval_opts)
    judge_overrides = _eval_judge(eval_opts)
    judge = None
    if judge_overrides is not None:
        fields: dict[str, object] = {}
        for layer in (project.judge, experiment.judge, judge_overrides):
            fields.update(layer.given())
        judge = JudgeSettings.model_validate(fields)
    return SlotSettings(
        attempts=_first(flags.attempts, own.attempts, experiment.attempts, project.attempts),
        timeout_ms=_first(flags.timeout_ms, own.timeout_ms, experiment.timeout_ms, project.timeout_ms),
        pass_rule=_first(own.pass_rule, experiment.pass_rule, project.pass_rule),
        judge=judge,
        sandbox=resolve_sandbox(project, experiment, _eval_sandbox(eval_opts), eval_opts.id),
        traces=experiment.traces,
        trace_flush_ms=experiment.trace_flush_ms or DEFAULT_TRACE_FLUSH_MS,
    )


def resolve_max_concurrency(
    project: ProjectConfig, experiment: ExperimentConfig, overrides: RunOverrides | None = None
) -> int:
    """Attempts in flight at once for this experiment: CLI flag > experiment > project."""
    flags = overrides or RunOverrides()
    value: int = _first(flags.max_concurrency, experiment.max_concurrency, project.max_concurrency)
    return value


def _eval_sandbox(eval_opts: EvalOptionsLike) -> SandboxSpec | None:
    # each option's one rule (issue 24.2); imported late: a command that only reads loads no authoring
    from ..authoring import _options as options

    declared = getattr(eval_opts, "sandbox", None)
    try:
        return options.check_sandbox(declared)
    except options.OptionProblem as problem:
        raise ConfigError(f"{_where(eval_opts)}: sandbox: expected {problem.expected}, got {show(declared)}.") from None


def _where(eval_opts: EvalOptionsLike) -> str:
    return f"eval {json.dumps(eval_opts.id, ensure_ascii=False)}"


def _eval_options(eval_opts: EvalOptionsLike) -> _EvalOptions:
    """The eval's attempts, timeout and pass rule, each checked by its one rule (`authoring`'s),
    every problem named at once."""
    # each option's one rule (issue 24.2); imported late: a command that only reads loads no authoring
    from ..authoring import _options as options

    checked: list[Any] = []
    problems: list[str] = []
    for check, value in ((options.check_attempts, eval_opts.attempts), (options.check_timeout_ms, eval_opts.timeout_ms),
                         (options.check_pass_rule, eval_opts.pass_rule)):
        try:
            checked.append(check(value))
        except options.OptionProblem as problem:
            problems.append(f"{problem.option}: expected {problem.expected}{given(value)}")
    if problems:
        raise ConfigError(f"{_where(eval_opts)}: {'; '.join(problems)}.")
    return _EvalOptions(*checked)


def _eval_judge(eval_opts: EvalOptionsLike) -> JudgeOverrides | None:
    """The eval's judge declaration as overrides; None when it declares no judge."""
    # each option's one rule (issue 24.2); imported late: a command that only reads loads no authoring
    from ..authoring import _options as options

    where = _where(eval_opts)
    try:
        declared = options.check_judge(eval_opts.judge)
    except options.OptionProblem as problem:
        if problem.expected is not None:
            raise ConfigError(f"{where}: judge: expected {problem.expected}, got {show(problem.value)}.") from None
        if problem.problem is not None:
            raise ConfigError(f"{where}: judge {problem.problem}.") from None
        unknown = problem.unknown[0]
        raise ConfigError(
            f"{where}: unknown judge field {quoted(unknown)}{suggest(unknown, eval_judge_fields())}; "
            f"allowed fields: {', '.join(eval_judge_fields())}."
        ) from None
    if declared is None or declared is False:
        return None
    if declared is True:
        return JudgeOverrides()
    try:
        return JudgeOverrides.model_validate({str(key): value for key, value in declared.items()})
    except ValidationError as error:
        problems = [
            f"judge {item['loc'][0]}: {expected_text(str(item['loc'][0]), item)}"
            f"{'' if item['loc'][0] == 'headers' else given(item['input'])}"
            for item in error.errors(include_url=False)
        ]
        raise ConfigError(f"{where}: {'; '.join(problems)}.") from None
