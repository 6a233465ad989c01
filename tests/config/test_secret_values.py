"""Issue 9.10: a configuration error never repeats a value that looks like a pasted key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from niceeval_cli.adapters import AdapterLoadError, load_adapter
from niceeval_cli.config import ConfigError, ExperimentConfig, load_config, looks_like_secret, resolve_slot_settings

#: The project root the adapters are loaded for (their relative paths start there).
ROOT = Path(__file__).parent

Write = Callable[[str], Path]

KEYS = [
    "sk-proj-Abc123def456GHI789jkl012MNO345pqr678",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "AKIAIOSFODNN7EXAMPLE",
    "q8Zr2LmX0vT7bN4kP9sW1yH6",
]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("table", ["judge", "experiments.a.judge"])
def test_a_key_pasted_as_api_key_env_is_refused_without_repeating_it(write_config: Write, key: str,
                                                                     table: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=write_config(f'[{table}]\napi_key_env = "{key}"\n'))
    message = str(caught.value)
    assert "this looks like a key, not the NAME of a variable" in message
    assert f"[{table}] api_key_env" in message
    assert key not in message and key[:10] not in message


@pytest.mark.parametrize("key", KEYS[:2])
def test_a_key_pasted_into_any_other_setting_is_not_repeated(write_config: Write, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=write_config(f'[judge]\nbase_url = "{key}"\n[project]\nstore = 3\n'))
    assert key[:10] not in str(caught.value)
    assert "[judge] base_url: expected an http:// or https:// URL" in str(caught.value)


def test_a_key_pasted_into_an_eval_judge_is_not_repeated(write_config: Write) -> None:
    @dataclass
    class Options:
        id: str = "e"
        attempts: int | None = None
        timeout_ms: int | None = None
        pass_rule: object | None = None
        judge: Mapping[str, object] | None = None

    project = load_config(cwd=write_config(""))
    with pytest.raises(ConfigError) as caught:
        resolve_slot_settings(project, ExperimentConfig(id="x"), Options(judge={"api_key_env": KEYS[0]}))
    assert "this looks like a key" in str(caught.value) and KEYS[0][:10] not in str(caught.value)


@pytest.mark.parametrize("key", KEYS)
def test_the_openai_chat_adapter_refuses_a_pasted_key_without_repeating_it(key: str) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("openai-chat", {"api_key_env": key}, "a", root=ROOT)
    assert "this looks like a key, not the NAME of a variable" in str(caught.value)
    assert key[:10] not in str(caught.value)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "MY_JUDGE_KEY_2", "staging_token", "AZURE_OPENAI_API_KEY_EASTUS2"])
def test_ordinary_variable_names_are_accepted(write_config: Write, name: str) -> None:
    assert not looks_like_secret(name)
    project = load_config(cwd=write_config(f'[judge]\napi_key_env = "{name}"\n'))
    assert project.judge.api_key_env == name


def test_a_name_that_is_not_an_identifier_is_still_shown(write_config: Write) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=write_config('[judge]\napi_key_env = "MY KEY"\n'))
    assert 'got "MY KEY"' in str(caught.value)


@pytest.mark.parametrize("header", ["X-Custom", "X-Team"])
def test_a_key_pasted_into_any_http_header_must_be_an_env_reference_and_is_not_repeated(header: str) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("http", {"url": "http://127.0.0.1:9/x", "headers": {header: KEYS[0]}}, "a", root=ROOT)
    message = str(caught.value)
    assert f"key 'headers.{header}'" in message and "env:VAR_NAME" in message
    assert KEYS[0][:10] not in message


def test_an_ordinary_header_value_is_kept() -> None:
    adapter = load_adapter("http", {"url": "http://127.0.0.1:9/x", "headers": {"X-Team": "evals"}}, "a", root=ROOT)
    assert adapter.secrets == []


@pytest.mark.parametrize("command", [["list"], ["run"]])
def test_the_cli_exits_2_without_printing_a_pasted_key(write_config: Write, command: list[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from niceeval_cli.cli import app
    from tests.support.cli_runner import CliRunner

    folder = write_config(f'[experiments.a.judge]\napi_key_env = "{KEYS[0]}"\n')
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2
    assert "this looks like a key, not the NAME of a variable" in result.output
    assert KEYS[0][:10] not in result.output
