"""The config package keeps every name other modules import from `niceeval_cli.config`."""

from __future__ import annotations

import niceeval_cli.config as config

IMPORTED_ELSEWHERE = {
    "CONFIG_FILE_NAME", "DEFAULT_STORE", "ConfigError", "ExperimentConfig", "JudgeOverrides", "JudgeSettings",
    "PassRule", "ProjectConfig", "RunOverrides", "SlotSettings", "EvalOptionsLike", "experiment_selects_eval",
    "find_config", "load_config", "load_credentials", "resolve_max_concurrency", "resolve_slot_settings",
    "select_experiments",
}


def test_every_name_imported_elsewhere_is_exported() -> None:
    assert IMPORTED_ELSEWHERE <= set(config.__all__)
    assert all(hasattr(config, name) for name in config.__all__)
