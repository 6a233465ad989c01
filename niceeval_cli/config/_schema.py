"""The pydantic models of `niceeval.toml` and of the resolved project, with their value types."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    field_serializer,
    field_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .. import outcomes
from .._bounds import MAX_ATTEMPTS, MAX_JUDGE_SAMPLES, MAX_PRICE_PER_MTOK
from .._gateway import header_problem, resolve_headers
from .._registry import ADAPTERS, SANDBOXES
from ._values import freeze, json_problem, thaw
from ._wording import env_name_problem

CONFIG_FILE_NAME = "niceeval.toml"
ENV_FILE_NAME = ".env"
DEFAULT_EXPERIMENT_ID = "default"
DEFAULT_EVAL_ROOTS = ("evals",)
DEFAULT_STORE = ".niceeval/results.db"

PassRule = outcomes.PassRule
PASS_RULE_EXPECTED = '"any", "all" or a minimum pass rate in (0, 1] such as 0.8'
_MODULE_ATTR = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def adapter_names() -> tuple[str, ...]:
    """The built-in adapter names, as registered by `niceeval_cli.adapters`."""
    from .. import adapters  # noqa: F401  (registers the built-ins; imported late: adapters import config)

    return ADAPTERS.names()


def adapter_expected() -> str:
    return f'"module:attr" or a built-in adapter ({", ".join(adapter_names())})'


def check_pass_rule(value: object) -> PassRule:
    """The one pass-rule check (`outcomes.parse_pass_rule`), worded as a configuration error."""
    try:
        return outcomes.parse_pass_rule(value)
    except ValueError:
        raise ValueError(f"expected {PASS_RULE_EXPECTED}") from None


def _check_env_name(value: str) -> str:
    problem = env_name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _check_base_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return value.rstrip("/")


def _check_adapter(value: str) -> str:
    if value in adapter_names() or _MODULE_ATTR.fullmatch(value):
        return value
    raise ValueError(f"expected {adapter_expected()}")


def _check_input_glob(value: str) -> str:
    """An `inputs` glob: relative to the project root and staying inside it."""
    path = value.replace("\\", "/")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path) or path.startswith("~"):
        raise ValueError('expected a glob relative to the project root, such as "app/**/*.py"')
    if ".." in path.split("/"):
        raise ValueError('expected a glob that stays inside the project root (without "..")')
    return value


def _pass_rule_out(rule: PassRule) -> str | float:
    """As a slot stores it: an interval rule (`run --until-decided`) as its text."""
    return str(rule) if isinstance(rule, outcomes.IntervalRule) else rule


PassRuleValue = Annotated[PassRule, PlainValidator(check_pass_rule), PlainSerializer(_pass_rule_out)]
AtLeastOne = Annotated[int, Field(ge=1)]
Attempts = Annotated[int, Field(ge=1, le=MAX_ATTEMPTS)]  # a typo must not plan a hundred million slots
Samples = Annotated[int, Field(ge=1, le=MAX_JUDGE_SAMPLES)]
PositiveMs = Annotated[int, Field(gt=0)]
NonNegative = Annotated[int, Field(ge=0)]
Text = Annotated[str, Field(min_length=1)]


def _check_traces(value: str) -> str:
    """`traces = "otel" | "otlp"` needs the `otel` extra: said at configuration time (exit 2)."""
    if value not in ("otel", "otlp"):
        raise ValueError(f'expected "otel" (spans started in NiceEval\'s process) or "otlp" (spans received '
                         f"over OTLP/HTTP from another process), got {value!r}")
    from importlib.util import find_spec

    try:
        present = all(find_spec(name) is not None for name in ("opentelemetry.sdk", "opentelemetry.proto"))
    except (ImportError, ValueError):
        present = False
    if not present:
        raise ValueError(
            f'traces = "{value}" needs the OpenTelemetry SDK and opentelemetry-proto; install the extra: '
            "pip install 'niceeval-cli[otel]'"
        )
    return value


#: `[experiments.<id>] traces`: where the turns' spans come from (docs/integrations.md)
TracesMode = Annotated[str, AfterValidator(_check_traces)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
BaseUrl = Annotated[str, AfterValidator(_check_base_url)]
AdapterRef = Annotated[str, AfterValidator(_check_adapter)]


def _check_headers(value: object) -> tuple[tuple[str, str], ...]:
    """A table of extra request headers → sorted (name, value) pairs (hashable, frozen). Values
    stay as written (`env:NAME` references are read only when a request is made)."""
    if isinstance(value, Mapping):
        pairs: Any = list(value.items())
    elif isinstance(value, (list, tuple)):
        pairs = value
    else:
        raise ValueError('expected a table of header names to text, e.g. { X-Team = "evals", '
                         'Authorization = "Bearer {env:GATEWAY_KEY}" }')
    checked: dict[str, str] = {}
    for item in pairs:
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str):
            raise ValueError("expected a table of header names to text")
        name, text = item
        problem = header_problem(name, text)
        if problem is not None:
            raise ValueError(f"header {name}: {problem}")
        checked[name] = text
    return tuple(sorted(checked.items()))


def _dump_headers(value: Any, info: Any) -> Any:
    pairs = [(str(name), str(text)) for name, text in value]
    return [list(pair) for pair in pairs] if info.mode_is_json() else tuple(pairs)


Headers = Annotated[tuple[tuple[str, str], ...], PlainValidator(_check_headers),
                    PlainSerializer(_dump_headers)]
Temperature = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Agreement = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Kappa = Annotated[float, Field(ge=-1, le=1, allow_inf_nan=False)]
InputGlob = Annotated[str, Field(min_length=1), AfterValidator(_check_input_glob)]


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StrictTable(BaseModel):
    """A table of the file: no coercion (`attempts = "3"` is an error, not 3)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


# --- judge settings ----------------------------------------------------------------------------


class JudgeOverrides(StrictTable):
    """A partial judge table (`[judge]`, `[experiments.X.judge]`, an eval's `judge={...}`)."""

    model: Text | None = None
    base_url: BaseUrl | None = None
    api_key_env: EnvName | None = None
    timeout_ms: PositiveMs | None = None
    max_concurrency: AtLeastOne | None = None
    max_retries: NonNegative | None = None
    headers: Headers | None = None
    temperature: Temperature | None = None
    seed: int | None = None
    samples: Samples | None = None
    min_agreement: Agreement | None = None
    min_human_kappa: Kappa | None = None
    min_labels: AtLeastOne | None = None

    def given(self) -> dict[str, object]:
        """Only the fields this table sets."""
        return self.model_dump(exclude_none=True)


class JudgeSettings(FrozenModel):
    """The judge configuration resolved once per (experiment, eval). Holds the key's NAME only."""

    model: Text | None = None
    base_url: BaseUrl = "https://api.openai.com/v1"
    api_key_env: EnvName = "OPENAI_API_KEY"
    timeout_ms: PositiveMs = 180_000
    max_concurrency: AtLeastOne = 8
    max_retries: NonNegative = 3
    headers: Headers = ()
    temperature: Temperature | None = None
    seed: int | None = None
    samples: Samples = 1  # grading requests per judge assertion (judge-trust.md)
    min_agreement: Agreement | None = None  # below it, a sampled assertion is `judge-inconsistent`
    #: The calibration gate (judge-trust.md §4), on when set: a judge identity with fewer than
    #: `min_labels` effective human labels, or a lower Cohen's kappa, is `judge-uncalibrated`.
    min_human_kappa: Kappa | None = None
    min_labels: AtLeastOne = 20

    def fingerprint_view(self) -> dict[str, object]:
        """What can change a judged result; concurrency cannot, and no secret is held here:
        header values are kept as written (`env:NAME`), never as read. Unset newer fields (and
        `samples = 1`, the gate's fields while it is off) are left out, so settings that do not use
        them keep their earlier fingerprint."""
        view = self.model_dump(exclude={"max_concurrency", "headers", "temperature", "seed", "samples",
                                        "min_agreement", "min_human_kappa", "min_labels"})
        if self.headers:
            view["headers"] = dict(self.headers)
        for name in ("temperature", "seed", "min_agreement"):
            if getattr(self, name) is not None:
                view[name] = getattr(self, name)
        if self.samples != 1:
            view["samples"] = self.samples
        if self.min_human_kappa is not None:  # the gate on: its floor and its label count decide
            view["min_human_kappa"], view["min_labels"] = self.min_human_kappa, self.min_labels
        return view

    def read_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key value from the environment, or None when unset or empty."""
        value = (os.environ if environ is None else environ).get(self.api_key_env)
        return value or None

    def secret_values(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """What this judge reads from the environment and must never be stored or printed: the key
        and the values of its `env:NAME` headers. A run and a regrade redact the same set."""
        key = self.read_key(environ)
        return [*([key] if key else []), *resolve_headers(self.headers, environ).secrets]


#: The judge fields an eval may set (`define_eval(judge={...})`): authoring's list, in table order.
def eval_judge_fields() -> tuple[str, ...]:
    """The judge fields an eval may set, in table order: authoring's rule (`JUDGE_FIELDS`), read
    when a run resolves an eval's options, so a command that only reads the store never loads
    the authoring package."""
    from ..authoring import JUDGE_FIELDS  # the rule's one home: authoring/_options.py

    return tuple(name for name in JudgeOverrides.model_fields if name in JUDGE_FIELDS)


# --- sandbox settings --------------------------------------------------------------------------

def _check_prepare(value: object) -> tuple[str | tuple[str, ...], ...]:
    if not isinstance(value, (list, tuple)):
        raise ValueError("expected a list of commands, each a shell string or a non-empty list of strings")
    commands: list[str | tuple[str, ...]] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            commands.append(item)
        elif isinstance(item, (list, tuple)) and item and all(isinstance(word, str) and word for word in item):
            commands.append(tuple(item))
        else:
            raise ValueError(f"item {index} is neither a non-empty shell string nor a non-empty list of strings")
    return tuple(commands)


def sandbox_kinds() -> tuple[str, ...]:
    """The sandbox kinds, as registered by `niceeval_cli.sandbox`."""
    from .. import sandbox  # noqa: F401  (registers the built-in kinds)

    return SANDBOXES.names()


def _check_sandbox_kind(value: str) -> str:
    if value in sandbox_kinds():
        return value
    raise ValueError("expected " + " or ".join(f'"{name}"' for name in sandbox_kinds()))


#: The keys only a docker sandbox takes.
DOCKER_ONLY_KEYS = ("image", "network", "cpus", "memory", "user", "workdir")


class SandboxTable(StrictTable):
    """A partial sandbox table (`[sandbox]`, `[experiments.X.sandbox]`); merged field by field."""

    kind: Annotated[str, AfterValidator(_check_sandbox_kind)] | None = None
    template: Text | None = None  # relative to the project root
    prepare: Annotated[tuple[str | tuple[str, ...], ...], PlainValidator(_check_prepare)] | None = None
    image: Text | None = None
    network: Text | None = None
    cpus: Annotated[float, Field(gt=0)] | None = None
    memory: Text | None = None
    user: Text | None = None
    workdir: Text | None = None

    def given(self) -> dict[str, object]:
        """Only the fields this table sets."""
        return self.model_dump(exclude_none=True)


# --- the file's tables -------------------------------------------------------------------------


class ProjectTable(StrictTable):
    evals: Annotated[list[Text], Field(min_length=1)] = list(DEFAULT_EVAL_ROOTS)
    store: Text = DEFAULT_STORE
    attempts: Attempts = 1
    max_concurrency: AtLeastOne = 4
    timeout_ms: PositiveMs | None = None
    pass_rule: PassRuleValue = "any"


class RunTable(StrictTable):
    """`[run]`: where attempts run (scale.md); `--executor` / `--ray-address` override it."""

    executor: Text | None = None
    ray_address: Text | None = None
    max_attempts: Attempts = 20  # `run --until-decided`'s cap per unit (statistics.md); --max-attempts


Probability = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]


class StatsTable(StrictTable):
    """`[stats]` (statistics.md): the confidence of every interval and the α of every test;
    `--confidence` / `--alpha` override them on the reading commands."""

    confidence: Probability = 0.95
    alpha: Probability = 0.05


class ExperimentTable(StrictTable):
    description: str | None = None
    adapter: AdapterRef | None = None
    model: Text | None = None
    evals: Annotated[list[Text], Field(min_length=1)] | None = None
    tags: list[Text] | None = None
    attempts: Attempts | None = None
    pass_rule: PassRuleValue | None = None
    timeout_ms: PositiveMs | None = None
    max_concurrency: AtLeastOne | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    judge: JudgeOverrides = JudgeOverrides()
    sandbox: SandboxTable | None = None
    # The system under test's identity beyond what NiceEval sees (config.md): files, a version
    # string, a command whose output is hashed.
    inputs: Annotated[list[InputGlob], Field(min_length=1)] | None = None
    version: Text | None = None
    version_command: Text | None = None
    traces: TracesMode | None = None
    trace_flush_ms: PositiveMs | None = None


PricePerMtok = Annotated[float, Field(ge=0, le=MAX_PRICE_PER_MTOK, allow_inf_nan=False)]


class PriceTable(StrictTable):
    """`[prices."MODEL"]`: USD per million tokens, for estimated cost (never mixed with reported)."""

    input_per_mtok: PricePerMtok
    output_per_mtok: PricePerMtok
    cache_read_per_mtok: PricePerMtok | None = None


class FileSettings(BaseSettings):
    """The whole file. Its only source is the parsed TOML handed in: no env, no dotenv."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid")

    project: ProjectTable = ProjectTable()
    judge: JudgeOverrides = JudgeOverrides()
    sandbox: SandboxTable | None = None
    run: RunTable = RunTable()
    stats: StatsTable = StatsTable()
    experiments: dict[str, ExperimentTable] = Field(default_factory=dict)
    prices: dict[str, PriceTable] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


TABLE_MODELS: dict[str, type[BaseModel]] = {
    "project": ProjectTable,
    "judge": JudgeOverrides,
    "run": RunTable,
    "stats": StatsTable,
    "experiment": ExperimentTable,
    "sandbox": SandboxTable,
    "price": PriceTable,
}


# --- the resolved project ----------------------------------------------------------------------


class ExperimentConfig(FrozenModel):
    """One experiment as written; None fields inherit from the project."""

    id: Text
    description: str | None = None
    adapter: AdapterRef | None = None
    model: Text | None = None
    evals: tuple[Text, ...] | None = None  # eval id prefixes; None = all
    tags: tuple[Text, ...] | None = None  # None = no tag filter
    attempts: Attempts | None = None
    pass_rule: PassRuleValue | None = None
    timeout_ms: PositiveMs | None = None
    max_concurrency: AtLeastOne | None = None
    options: Mapping[str, Any] = Field(default_factory=dict, validate_default=True)
    judge: JudgeOverrides = JudgeOverrides()
    sandbox: SandboxTable | None = None  # template already absolute
    inputs: tuple[InputGlob, ...] | None = None  # globs relative to the project root
    version: Text | None = None
    version_command: Text | None = None  # run once per run in the project root; its stdout is hashed
    traces: TracesMode | None = None  # "otel" | "otlp": spans become the turns' tool calls and usage
    trace_flush_ms: PositiveMs | None = None  # how long a turn waits for its spans (default 2000)

    @field_validator("options", mode="after")
    @classmethod
    def _read_only_json(cls, value: Mapping[str, Any]) -> Mapping[str, Any]:
        problem = json_problem(value, "")
        if problem:
            raise ValueError(problem)
        frozen = freeze(value)
        assert isinstance(frozen, MappingProxyType)
        return frozen

    @field_serializer("options")
    def _plain_options(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return self.options_dict()

    def options_dict(self) -> dict[str, Any]:
        """A plain, mutable copy of `options` (tables as dicts, arrays as lists)."""
        plain = thaw(self.options)
        assert isinstance(plain, dict)
        return plain


class ProjectConfig(FrozenModel):
    """The loaded `niceeval.toml` (or the defaults when there is none)."""

    file: Path | None
    root: Path
    eval_roots: tuple[Path, ...]
    store: Path
    attempts: Attempts = 1
    max_concurrency: AtLeastOne = 4
    timeout_ms: PositiveMs | None = None
    pass_rule: PassRuleValue = "any"
    judge: JudgeOverrides = JudgeOverrides()
    sandbox: SandboxTable | None = None  # `[sandbox]`, template already absolute
    experiments: Mapping[str, ExperimentConfig]
    executor: str | None = None  # [run] executor; None: in-process
    ray_address: str | None = None  # [run] ray_address
    max_attempts: Attempts = 20  # [run] max_attempts: the cap of `run --until-decided`
    prices: Mapping[str, PriceTable] = Field(default_factory=dict)  # model → price
    stats: StatsTable = StatsTable()  # [stats] confidence and alpha

    @field_validator("experiments", mode="after")
    @classmethod
    def _ordered_read_only(cls, value: Mapping[str, ExperimentConfig]) -> Mapping[str, ExperimentConfig]:
        for key, experiment in value.items():
            if key != experiment.id:
                raise ValueError(f"experiment key {key!r} differs from its id {experiment.id!r}")
        if not value:
            raise ValueError("a project has at least one experiment")
        return MappingProxyType(dict(value))

    @field_serializer("experiments")
    def _plain_experiments(self, value: Mapping[str, ExperimentConfig]) -> dict[str, Any]:
        return {key: experiment.model_dump() for key, experiment in value.items()}
