"""`niceeval.toml`: loading, validation, precedence and the frozen per-slot settings.

Run settings come only from the file, the eval's own options and CLI flags; the environment
carries credentials only (`load_credentials`). Every user mistake becomes a `ConfigError` whose
text names the file, the table and the key (and never repeats a value that looks like a key),
so the CLI can print it without a traceback.

One home each: `_schema` (the pydantic models and value checks), `_loading` (TOML and `.env`),
`_wording` and `_file_errors` (how errors read), `_precedence` (flag > eval > experiment >
project > default) and `_selection` (experiments, evals, tags).
"""

from __future__ import annotations

from ._loading import find_config, load_config, load_credentials
from ._precedence import (
    DEFAULT_TRACE_FLUSH_MS,
    EvalOptionsLike,
    RunOverrides,
    SlotSettings,
    resolve_max_concurrency,
    resolve_slot_settings,
)
from ._sandbox import resolve_sandbox
from ._schema import (
    CONFIG_FILE_NAME,
    DEFAULT_EVAL_ROOTS,
    DEFAULT_EXPERIMENT_ID,
    DEFAULT_STORE,
    ENV_FILE_NAME,
    ExperimentConfig,
    JudgeOverrides,
    JudgeSettings,
    PassRule,
    ProjectConfig,
    SandboxTable,
    adapter_names,
    check_pass_rule,
    eval_judge_fields,
)
from ._selection import experiment_selects_eval, explain_nothing_selected, select_experiments
from ._wording import LOOKS_LIKE_A_KEY, ConfigError, env_name_problem, looks_like_secret

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_EVAL_ROOTS",
    "DEFAULT_EXPERIMENT_ID",
    "DEFAULT_STORE",
    "DEFAULT_TRACE_FLUSH_MS",
    "ENV_FILE_NAME",
    "EVAL_JUDGE_FIELDS",
    "LOOKS_LIKE_A_KEY",
    "ConfigError",
    "EvalOptionsLike",
    "ExperimentConfig",
    "JudgeOverrides",
    "JudgeSettings",
    "PassRule",
    "ProjectConfig",
    "RunOverrides",
    "SandboxTable",
    "SlotSettings",
    "adapter_names",
    "check_pass_rule",
    "env_name_problem",
    "experiment_selects_eval",
    "explain_nothing_selected",
    "find_config",
    "load_config",
    "load_credentials",
    "looks_like_secret",
    "resolve_max_concurrency",
    "resolve_sandbox",
    "resolve_slot_settings",
    "select_experiments",
]


def __getattr__(name: str) -> object:
    """`EVAL_JUDGE_FIELDS`, made when first asked for (it reads authoring's rule: see
    `eval_judge_fields`)."""
    if name == "EVAL_JUDGE_FIELDS":
        return eval_judge_fields()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
