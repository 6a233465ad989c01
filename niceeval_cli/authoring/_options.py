"""The options of `define_eval` / `define_score_eval` (authoring.md, datasets.md), and the one check
of each option that configuration precedence reads too.

Checked twice, by one rule: where the eval is defined (`_definition`, a DefinitionError naming the
call) and where its settings are resolved (`config`, a ConfigError naming the eval, for options
that reach it another way). Each caller words an `OptionProblem` its own way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeAlias, TypedDict

from .._bounds import MAX_ATTEMPTS
from .._sandbox_spec import SandboxSpec
from ..outcomes import PassRule, parse_pass_rule
from ._adapter import Adapter
from ._cases import Case, CaseIdRule

#: The judge fields an eval may set: the judge table's, but for `max_concurrency` (one client
#: serves the whole run). `config` reads them only when a run resolves an eval's options.
JUDGE_FIELDS = frozenset({"model", "base_url", "api_key_env", "timeout_ms", "max_retries", "headers",
                          "temperature", "seed", "samples", "min_agreement",
                          "min_human_kappa", "min_labels"})

#: `judge=`: True, or a mapping of judge fields overriding the configured judge for this eval.
JudgeOption: TypeAlias = bool | Mapping[str, object]

#: `cases=`: a mapping of case id → value, or a list of Cases or of values.
CasesOption: TypeAlias = Mapping[str, object] | Mapping[int, object] | Iterable[Case] | Iterable[object]


class EvalOptions(TypedDict, total=False):
    """The keyword options of `define_eval` / `define_score_eval` (authoring.md, datasets.md)."""

    description: str | None
    tags: list[str] | tuple[str, ...] | None
    judge: JudgeOption | None
    timeout_ms: int | None
    attempts: int | None
    pass_rule: PassRule | None
    name: str | None
    adapter: Adapter | None
    cases: CasesOption | None
    case_id: CaseIdRule | None
    sandbox: SandboxSpec | None


#: Every keyword `define_eval` takes, sorted (as an unknown option's message lists them).
OPTIONS = tuple(sorted([*EvalOptions.__annotations__, "test"]))
OPTION_NAMES = frozenset(OPTIONS)

JUDGE_MAX_CONCURRENCY = (
    "max_concurrency cannot be set on an eval: one judge client serves the whole run, so set it in "
    "[judge] or [experiments.<id>.judge] of niceeval.toml"
)

#: What each checked option takes, in the words an error message uses.
EXPECTED = {
    "attempts": f"an integer from 1 to {MAX_ATTEMPTS}",
    "timeout_ms": "a positive integer (milliseconds)",
    "pass_rule": '"any", "all" or a minimum pass rate in (0, 1] such as 0.8',
    "judge": "True or a mapping of judge fields",
    "sandbox": "local_sandbox(...) or docker_sandbox(...)",
}


class OptionProblem(ValueError):
    """An option's value its rule refuses: `expected` (what fits) when the value is of the wrong
    kind, else `problem` (the rule in words) or `unknown` (judge fields it does not know, as given)."""

    def __init__(self, option: str, value: object, *, expected: str | None = None, problem: str | None = None,
                 unknown: tuple[str, ...] = ()) -> None:
        super().__init__(f"{option}: {problem or (f'expected {expected}' if expected else 'unknown fields')}")
        self.option = option
        self.value = value
        self.expected = expected
        self.problem = problem
        self.unknown = unknown


def _positive_int(option: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionProblem(option, value, expected=EXPECTED[option])
    return value


def check_attempts(value: object) -> int | None:
    attempts = _positive_int("attempts", value)
    if attempts is not None and attempts > MAX_ATTEMPTS:
        raise OptionProblem("attempts", value, expected=EXPECTED["attempts"])
    return attempts


def check_timeout_ms(value: object) -> int | None:
    return _positive_int("timeout_ms", value)


def check_pass_rule(value: object) -> PassRule | None:
    if value is None:
        return None
    try:
        return parse_pass_rule(value)
    except ValueError:
        raise OptionProblem("pass_rule", value, expected=EXPECTED["pass_rule"]) from None


def check_judge(value: object) -> JudgeOption | None:
    """The field names only: the fields' values are the judge table's to check (`config`)."""
    if value is None or isinstance(value, bool):
        return value
    if not isinstance(value, Mapping):
        raise OptionProblem("judge", value, expected=EXPECTED["judge"])
    if "max_concurrency" in value:
        raise OptionProblem("judge", value, problem=JUDGE_MAX_CONCURRENCY)
    unknown = tuple(str(key) for key in value if key not in JUDGE_FIELDS)
    if unknown:
        raise OptionProblem("judge", value, unknown=unknown)
    return value


def check_sandbox(value: object) -> SandboxSpec | None:
    if value is None or isinstance(value, SandboxSpec):
        return value
    raise OptionProblem("sandbox", value, expected=EXPECTED["sandbox"])
