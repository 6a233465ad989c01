"""`niceeval.toml`: loading, validation, precedence and the frozen per-slot settings.

Run settings come only from the file, the eval's own options and CLI flags; the environment
carries credentials only (`load_credentials`). Every user mistake becomes a `ConfigError` whose
text names the file, the table and the key, so the CLI can print it without a traceback.
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal, Protocol

from dotenv import load_dotenv
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    field_serializer,
    field_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE_NAME = "niceeval.toml"
ENV_FILE_NAME = ".env"
DEFAULT_EXPERIMENT_ID = "default"
DEFAULT_EVAL_ROOTS = ("evals",)
DEFAULT_STORE = ".niceeval/results.db"
BUILTIN_ADAPTERS = ("python", "command", "http", "openai-chat")


class ConfigError(Exception):
    """A user's configuration mistake; `str(e)` is the whole one-paragraph message (exit code 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


# --- value types shared by the file tables and the resolved models -----------------------------

PassRule = Literal["any", "all"] | float
_PASS_RULE_EXPECTED = '"any", "all" or a minimum pass rate in (0, 1] such as 0.8'
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MODULE_ATTR = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def _check_pass_rule(value: object) -> str | float:
    if isinstance(value, str) and value in ("any", "all"):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if math.isfinite(value) and 0 < value <= 1:
            return float(value)
    raise ValueError(f"expected {_PASS_RULE_EXPECTED}")


def _check_env_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value):
        raise ValueError("expected the NAME of an environment variable (letters, digits, _), not a key")
    return value


def _check_base_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return value.rstrip("/")


def _check_adapter(value: str) -> str:
    if value in BUILTIN_ADAPTERS or _MODULE_ATTR.fullmatch(value):
        return value
    raise ValueError(f'expected "module:attr" or a built-in adapter ({", ".join(BUILTIN_ADAPTERS)})')


PassRuleValue = Annotated[PassRule, PlainValidator(_check_pass_rule)]
AtLeastOne = Annotated[int, Field(ge=1)]
PositiveMs = Annotated[int, Field(gt=0)]
NonNegative = Annotated[int, Field(ge=0)]
Text = Annotated[str, Field(min_length=1)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
BaseUrl = Annotated[str, AfterValidator(_check_base_url)]
AdapterRef = Annotated[str, AfterValidator(_check_adapter)]

# What each key expects, in the words an error message uses.
_EXPECTED = {
    "attempts": "an integer ≥ 1",
    "max_concurrency": "an integer ≥ 1",
    "timeout_ms": "a positive integer (milliseconds)",
    "max_retries": "an integer ≥ 0",
    "pass_rule": _PASS_RULE_EXPECTED,
    "evals": "a non-empty list of strings",
    "tags": "a list of strings",
    "store": "a path (string)",
    "description": "a string",
    "model": "a non-empty string",
    "adapter": f'"module:attr" or a built-in adapter ({", ".join(BUILTIN_ADAPTERS)})',
    "api_key_env": "the NAME of an environment variable (letters, digits, _), not a key",
    "base_url": "an http:// or https:// URL",
    "options": "a table",
    "judge": "a table",
}


def _freeze(value: object) -> object:
    """A read-only deep copy: tables become mappingproxies, arrays tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: object) -> object:
    """A plain, mutable, JSON-ready copy of a frozen value."""
    if isinstance(value, Mapping):
        return {str(k): _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def _json_problem(value: object, path: str) -> str | None:
    """Where `value` stops being plain JSON (TOML dates and nan/inf are not), or None."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            problem = _json_problem(v, f"{path}.{k}" if path else str(k))
            if problem:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            problem = _json_problem(v, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if value is None or isinstance(value, (bool, int, str)):
        return None
    if isinstance(value, float) and math.isfinite(value):
        return None
    return f"{path or 'value'} is {_show(value)}, which is not JSON (use a string or a finite number)"


# --- judge settings ----------------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _StrictTable(BaseModel):
    """A table of the file: no coercion (`attempts = "3"` is an error, not 3)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class JudgeOverrides(_StrictTable):
    """A partial judge table (`[judge]`, `[experiments.X.judge]`, an eval's `judge={...}`)."""

    model: Text | None = None
    base_url: BaseUrl | None = None
    api_key_env: EnvName | None = None
    timeout_ms: PositiveMs | None = None
    max_concurrency: AtLeastOne | None = None
    max_retries: NonNegative | None = None

    def given(self) -> dict[str, object]:
        """Only the fields this table sets."""
        return self.model_dump(exclude_none=True)


class JudgeSettings(_Frozen):
    """The judge configuration resolved once per (experiment, eval). Holds the key's NAME only."""

    model: Text | None = None
    base_url: BaseUrl = "https://api.openai.com/v1"
    api_key_env: EnvName = "OPENAI_API_KEY"
    timeout_ms: PositiveMs = 180_000
    max_concurrency: AtLeastOne = 8
    max_retries: NonNegative = 3

    def fingerprint_view(self) -> dict[str, object]:
        """What can change a judged result; concurrency cannot, and no secret is held here."""
        return self.model_dump(exclude={"max_concurrency"})

    def read_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key value from the environment, or None when unset or empty."""
        value = (os.environ if environ is None else environ).get(self.api_key_env)
        return value or None


_EVAL_JUDGE_FIELDS = tuple(name for name in JudgeOverrides.model_fields if name != "max_concurrency")


# --- the file's tables -------------------------------------------------------------------------


class _ProjectTable(_StrictTable):
    evals: Annotated[list[Text], Field(min_length=1)] = list(DEFAULT_EVAL_ROOTS)
    store: Text = DEFAULT_STORE
    attempts: AtLeastOne = 1
    max_concurrency: AtLeastOne = 4
    timeout_ms: PositiveMs | None = None
    pass_rule: PassRuleValue = "any"


class _ExperimentTable(_StrictTable):
    description: str | None = None
    adapter: AdapterRef | None = None
    model: Text | None = None
    evals: Annotated[list[Text], Field(min_length=1)] | None = None
    tags: list[Text] | None = None
    attempts: AtLeastOne | None = None
    pass_rule: PassRuleValue | None = None
    timeout_ms: PositiveMs | None = None
    max_concurrency: AtLeastOne | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    judge: JudgeOverrides = JudgeOverrides()


class _FileSettings(BaseSettings):
    """The whole file. Its only source is the parsed TOML handed in: no env, no dotenv."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid")

    project: _ProjectTable = _ProjectTable()
    judge: JudgeOverrides = JudgeOverrides()
    experiments: dict[str, _ExperimentTable] = Field(default_factory=dict)

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


_TABLE_MODELS: dict[str, type[BaseModel]] = {
    "project": _ProjectTable,
    "judge": JudgeOverrides,
    "experiment": _ExperimentTable,
}


# --- the resolved project ----------------------------------------------------------------------


class ExperimentConfig(_Frozen):
    """One experiment as written; None fields inherit from the project."""

    id: Text
    description: str | None = None
    adapter: AdapterRef | None = None
    model: Text | None = None
    evals: tuple[Text, ...] | None = None  # eval id prefixes; None = all
    tags: tuple[Text, ...] | None = None  # None = no tag filter
    attempts: AtLeastOne | None = None
    pass_rule: PassRuleValue | None = None
    timeout_ms: PositiveMs | None = None
    max_concurrency: AtLeastOne | None = None
    options: Mapping[str, Any] = Field(default_factory=dict, validate_default=True)
    judge: JudgeOverrides = JudgeOverrides()

    @field_validator("options", mode="after")
    @classmethod
    def _read_only_json(cls, value: Mapping[str, Any]) -> Mapping[str, Any]:
        problem = _json_problem(value, "")
        if problem:
            raise ValueError(problem)
        frozen = _freeze(value)
        assert isinstance(frozen, MappingProxyType)
        return frozen

    @field_serializer("options")
    def _plain_options(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return self.options_dict()

    def options_dict(self) -> dict[str, Any]:
        """A plain, mutable copy of `options` (tables as dicts, arrays as lists)."""
        plain = _thaw(self.options)
        assert isinstance(plain, dict)
        return plain


class ProjectConfig(_Frozen):
    """The loaded `niceeval.toml` (or the defaults when there is none)."""

    file: Path | None
    root: Path
    eval_roots: tuple[Path, ...]
    store: Path
    attempts: AtLeastOne = 1
    max_concurrency: AtLeastOne = 4
    timeout_ms: PositiveMs | None = None
    pass_rule: PassRuleValue = "any"
    judge: JudgeOverrides = JudgeOverrides()
    experiments: Mapping[str, ExperimentConfig]

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


# --- finding and loading -----------------------------------------------------------------------


def find_config(start: Path) -> Path | None:
    """The nearest `niceeval.toml` in `start` or any folder above it."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def load_credentials(root: Path) -> Path | None:
    """Load `root/.env` without overriding variables already set; the file loaded, or None."""
    env_file = root / ENV_FILE_NAME
    if not env_file.is_file():
        return None
    load_dotenv(env_file, override=False)
    return env_file


def load_config(path: Path | None = None, cwd: Path | None = None) -> ProjectConfig:
    """Load and validate the project configuration; no file at all gives the defaults at `cwd`."""
    base = (cwd or Path.cwd()).resolve()
    if path is None:
        path = find_config(base)
        if path is None:
            return _build(None, base, _FileSettings())
    else:
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise ConfigError(f"{path}: configuration file not found.")
    path = path.resolve()
    raw = _read_toml(path)
    private = [key for key in raw if key.startswith("_")]  # never settings parameters
    if private:
        raise ConfigError(f"{path}: {_unknown_top_level(private[0], raw[private[0]])}")
    try:
        settings = _FileSettings(**raw)
    except ValidationError as error:
        raise ConfigError(_file_errors(path, error, raw)) from None
    return _build(path, path.parent, settings)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the configuration file ({error.strerror}).") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: the configuration file is not valid UTF-8 text.") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML {_toml_position(error)}.") from None


def _toml_position(error: Exception) -> str:
    text = str(error)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", text)
    if found:
        detail = text[: found.start()]
        return f"at line {found.group(1)}, column {found.group(2)}: {detail}"
    found = re.search(r"\s*\(at end of document\)$", text)
    if found:
        return f"at the end of the file: {text[: found.start()]}"
    return f": {text}"


def _build(path: Path | None, root: Path, settings: _FileSettings) -> ProjectConfig:
    where = str(path) if path else CONFIG_FILE_NAME
    experiments: dict[str, ExperimentConfig] = {}
    for experiment_id, table in settings.experiments.items():
        problem = _experiment_id_problem(experiment_id)
        if problem:
            raise ConfigError(f"{where}: [{_table_name(('experiments', experiment_id))}] {problem}.")
        try:
            experiments[experiment_id] = ExperimentConfig(id=experiment_id, **table.model_dump())
        except ValidationError as error:  # only `options` can still fail here
            details = "; ".join(_strip_value_error(e["msg"]) for e in error.errors())
            table_name = _table_name(("experiments", experiment_id, "options"))
            raise ConfigError(f"{where}: [{table_name}] {details}.") from None
    if not experiments:
        experiments[DEFAULT_EXPERIMENT_ID] = ExperimentConfig(id=DEFAULT_EXPERIMENT_ID)
    project = settings.project
    return ProjectConfig(
        file=path,
        root=root,
        eval_roots=tuple(_under(root, entry) for entry in project.evals),
        store=_under(root, project.store),
        attempts=project.attempts,
        max_concurrency=project.max_concurrency,
        timeout_ms=project.timeout_ms,
        pass_rule=project.pass_rule,
        judge=settings.judge,
        experiments=experiments,
    )


def _under(root: Path, entry: str) -> Path:
    candidate = Path(entry).expanduser()
    return candidate if candidate.is_absolute() else root / candidate


def _experiment_id_problem(experiment_id: str) -> str | None:
    if not experiment_id.strip():
        return "an experiment id must not be empty"
    if experiment_id != experiment_id.strip():
        return "an experiment id must not start or end with spaces"
    if any(not part for part in experiment_id.split("/")):
        return 'an experiment id must not start or end with "/" or contain "//"'
    return None


# --- error messages ----------------------------------------------------------------------------


def _file_errors(path: Path, error: ValidationError, raw: Mapping[str, Any]) -> str:
    problems: list[str] = []
    for item in error.errors(include_url=False):
        problem = _file_problem(tuple(item["loc"]), item, raw)
        if problem not in problems:
            problems.append(problem)
    return f"{path}: " + " ".join(problems)


def _file_problem(loc: tuple[Any, ...], item: Any, raw: Mapping[str, Any]) -> str:
    table, kind, key, rest = _split_loc(loc)
    if kind is None:  # the top level of the file
        if key is None:
            return "the file must contain TOML tables."
        return _unknown_top_level(str(key), raw.get(str(key)))
    shown_table = f"[{_table_name(table)}]"
    if key is None:
        return f"{shown_table} must be a table, got {_show(item['input'])}."
    if item["type"] == "extra_forbidden" and not rest:
        allowed = list(_TABLE_MODELS[kind].model_fields)
        return f"{shown_table}: unknown key {json.dumps(key)}{_suggest(key, allowed)}; " + (
            f"allowed keys: {', '.join(allowed)}."
        )
    expected = _expected(key, item, element=bool(rest))
    return f"{shown_table} {_key_path(key, rest)}: {expected}, got {_show(item['input'])}."


def _split_loc(loc: tuple[Any, ...]) -> tuple[tuple[str, ...], str | None, str | None, tuple[Any, ...]]:
    """(table path, table kind, key, index path below the key) of a validation error."""
    if not loc or loc[0] not in ("project", "judge", "experiments"):
        return (), None, (str(loc[0]) if loc else None), ()
    head = str(loc[0])
    if head in ("project", "judge"):
        return (head,), head, (str(loc[1]) if len(loc) > 1 else None), tuple(loc[2:])
    if len(loc) < 2:
        return ("experiments",), "experiment", None, ()
    experiment = ("experiments", str(loc[1]))
    if len(loc) < 3:
        return experiment, "experiment", None, ()
    if loc[2] == "judge" and len(loc) > 3:
        return (*experiment, "judge"), "judge", str(loc[3]), tuple(loc[4:])
    return experiment, "experiment", str(loc[2]), tuple(loc[3:])


def _unknown_top_level(key: str, value: object) -> str:
    tables = ["project", "judge", "experiments"]
    allowed = "allowed tables: [project], [judge], [experiments.<id>]"
    if isinstance(value, Mapping):
        hint = _suggest(key, tables, quote=lambda name: f"[{name}]")
        return f"unknown top-level table [{_toml_key(key)}]{hint}; {allowed}."
    if key in _ProjectTable.model_fields:
        return f"unknown top-level key {json.dumps(key)} (it belongs in [project]); {allowed}."
    return f"unknown top-level key {json.dumps(key)}; {allowed}."


def _suggest(key: str, allowed: Sequence[str], quote: Any = json.dumps) -> str:
    folded = {name.lower(): name for name in allowed}
    close = [folded[key.lower()]] if key.lower() in folded else difflib.get_close_matches(key, allowed, n=1)
    return f" (did you mean {quote(close[0])}?)" if close else ""


def _expected(key: str, item: Any, *, element: bool = False) -> str:
    """`expected ...` for one validation error; `element` when it is about one array item."""
    if item["type"] == "value_error":
        return _strip_value_error(item["msg"])
    if element and item["type"] in _ELEMENT_EXPECTED:
        return f"expected {_ELEMENT_EXPECTED[item['type']]}"
    if key in _EXPECTED:
        return f"expected {_EXPECTED[key]}"
    return f"expected a valid value ({_strip_value_error(item['msg']).lower()})"


_ELEMENT_EXPECTED = {"string_type": "a string", "string_too_short": "a non-empty string"}


def _strip_value_error(message: str) -> str:
    return message.removeprefix("Value error, ")


def _key_path(key: str, rest: tuple[Any, ...]) -> str:
    return key + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest)


def _toml_key(part: str) -> str:
    return part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part, ensure_ascii=False)


def _table_name(parts: tuple[str, ...]) -> str:
    return ".".join(_toml_key(part) for part in parts)


def _show(value: object) -> str:
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (datetime.date, datetime.time)):
        return f"the TOML date/time {value.isoformat()}"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- precedence --------------------------------------------------------------------------------


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
        for flag, value, minimum in (
            ("--attempts", self.attempts, 1),
            ("--max-concurrency", self.max_concurrency, 1),
            ("--timeout", self.timeout_ms, 1),
        ):
            valid = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
            if value is not None and not valid:
                raise ConfigError(f"{flag}: expected an integer ≥ {minimum}, got {_show(value)}.")


class SlotSettings(_Frozen):
    """The settings one (experiment, eval) pair runs with, frozen before dispatch. A value: pairs
    that resolve alike may share one object (a run of 10 000 evals holds a handful)."""

    attempts: AtLeastOne
    timeout_ms: PositiveMs | None  # None = no deadline
    pass_rule: PassRuleValue
    judge: JudgeSettings | None  # None when the eval does not declare judge


class _EvalOptions(_StrictTable):
    attempts: AtLeastOne | None = None
    timeout_ms: PositiveMs | None = None
    pass_rule: PassRuleValue | None = None


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def resolve_slot_settings(
    project: ProjectConfig,
    experiment: ExperimentConfig,
    eval_opts: EvalOptionsLike,
    overrides: RunOverrides | None = None,
) -> SlotSettings:
    """CLI flag > eval > experiment > project > default, for every field (judge field by field)."""
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
    )


def resolve_max_concurrency(
    project: ProjectConfig, experiment: ExperimentConfig, overrides: RunOverrides | None = None
) -> int:
    """Attempts in flight at once for this experiment: CLI flag > experiment > project."""
    flags = overrides or RunOverrides()
    value: int = _first(flags.max_concurrency, experiment.max_concurrency, project.max_concurrency)
    return value


def _eval_options(eval_opts: EvalOptionsLike) -> _EvalOptions:
    values = {
        "attempts": eval_opts.attempts,
        "timeout_ms": eval_opts.timeout_ms,
        "pass_rule": eval_opts.pass_rule,
    }
    try:
        return _EvalOptions.model_validate(values)
    except ValidationError as error:
        problems = [
            f"{item['loc'][0]}: {_expected(str(item['loc'][0]), item)}, got {_show(item['input'])}"
            for item in error.errors(include_url=False)
        ]
        where = f"eval {json.dumps(eval_opts.id, ensure_ascii=False)}"
        raise ConfigError(f"{where}: {'; '.join(problems)}.") from None


def _eval_judge(eval_opts: EvalOptionsLike) -> JudgeOverrides | None:
    """The eval's judge declaration as overrides; None when it declares no judge."""
    declared = eval_opts.judge
    where = f"eval {json.dumps(eval_opts.id, ensure_ascii=False)}"
    if declared is None or declared is False:
        return None
    if declared is True:
        return JudgeOverrides()
    if not isinstance(declared, Mapping):
        expected = "expected True or a mapping of judge fields"
        raise ConfigError(f"{where}: judge: {expected}, got {_show(declared)}.")
    if "max_concurrency" in declared:
        raise ConfigError(
            f"{where}: judge max_concurrency cannot be set on an eval: one judge client serves the "
            "whole run, so set it in [judge] or [experiments.<id>.judge] of niceeval.toml."
        )
    unknown = [str(key) for key in declared if key not in _EVAL_JUDGE_FIELDS]
    if unknown:
        hint = _suggest(unknown[0], _EVAL_JUDGE_FIELDS)
        raise ConfigError(
            f"{where}: unknown judge field {json.dumps(unknown[0])}{hint}; "
            f"allowed fields: {', '.join(_EVAL_JUDGE_FIELDS)}."
        )
    try:
        return JudgeOverrides.model_validate({str(key): value for key, value in declared.items()})
    except ValidationError as error:
        problems = [
            f"judge {item['loc'][0]}: {_expected(str(item['loc'][0]), item)}, got {_show(item['input'])}"
            for item in error.errors(include_url=False)
        ]
        raise ConfigError(f"{where}: {'; '.join(problems)}.") from None


# --- selection ---------------------------------------------------------------------------------


def select_experiments(project: ProjectConfig, patterns: Sequence[str]) -> list[ExperimentConfig]:
    """Experiments named by `-e` patterns (an id, or an id prefix such as "models/"); none = all."""
    if not patterns:
        return list(project.experiments.values())
    chosen: set[str] = set()
    for pattern in patterns:
        matched = [eid for eid in project.experiments if eid == pattern or eid.startswith(pattern)]
        if not matched:
            known = ", ".join(project.experiments)
            raise ConfigError(f"no experiment matches {json.dumps(pattern)}; known experiments: {known}.")
        chosen.update(matched)
    return [experiment for eid, experiment in project.experiments.items() if eid in chosen]


def experiment_selects_eval(experiment: ExperimentConfig, eval_id: str, tags: Sequence[str]) -> bool:
    """Whether the experiment covers the eval: an id prefix matches and it carries one of the tags."""
    from ._selectors import matches_any

    if experiment.evals is not None and not matches_any(experiment.evals, eval_id):
        return False
    return experiment.tags is None or any(tag in experiment.tags for tag in tags)


__all__ = [
    "BUILTIN_ADAPTERS",
    "CONFIG_FILE_NAME",
    "DEFAULT_EXPERIMENT_ID",
    "ConfigError",
    "EvalOptionsLike",
    "ExperimentConfig",
    "JudgeOverrides",
    "JudgeSettings",
    "PassRule",
    "ProjectConfig",
    "RunOverrides",
    "SlotSettings",
    "experiment_selects_eval",
    "find_config",
    "load_config",
    "load_credentials",
    "resolve_max_concurrency",
    "resolve_slot_settings",
    "select_experiments",
]
