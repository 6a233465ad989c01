"""The one registry of pluggable kinds: register by name, a helpful error for an unknown name."""

from __future__ import annotations

import pytest

from niceeval_cli._errors import ExitCode, NiceEvalError
from niceeval_cli._registry import ADAPTERS, EXECUTORS, OUTPUT_FORMATS, SANDBOXES, Registry, UnknownName
from niceeval_cli.adapters import AdapterLoadError
from niceeval_cli.config import ConfigError, adapter_names
from niceeval_cli.discovery import DiscoveryError


def test_names_are_kept_in_registration_order() -> None:
    registry: Registry[int] = Registry("number")
    registry.register("two", 2)
    registry.register("one", 1)
    assert registry.names() == ("two", "one")
    assert registry.get("one") == 1
    assert "two" in registry and "three" not in registry


def test_an_unknown_name_lists_the_known_ones_and_the_closest() -> None:
    registry: Registry[int] = Registry("sandbox")
    registry.register("docker", 1)
    registry.register("local", 2)
    with pytest.raises(UnknownName) as caught:
        registry.get("dockr")
    assert str(caught.value) == "unknown sandbox 'dockr' (did you mean 'docker'?); known: docker, local"


def test_registering_a_taken_name_twice_is_refused_unless_replacing() -> None:
    registry: Registry[int] = Registry("executor")
    registry.register("asyncio", 1)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("asyncio", 2)
    registry.register("asyncio", 2, replace=True)
    assert registry.get("asyncio") == 2


def test_the_decorator_registers_the_decorated_object() -> None:
    registry: Registry[type] = Registry("output format")

    @registry.decorator("json")
    class Json:
        pass

    assert registry.get("json") is Json


def test_the_builtin_adapters_register_themselves_and_config_asks_the_registry() -> None:
    assert ADAPTERS.names()[:4] == ("python", "command", "http", "openai-chat")
    assert adapter_names() == ADAPTERS.names()


def test_the_other_kinds_have_their_registries() -> None:
    assert {SANDBOXES.kind, EXECUTORS.kind, OUTPUT_FORMATS.kind} == {"sandbox", "executor", "output format"}


@pytest.mark.parametrize("error", [ConfigError, DiscoveryError, AdapterLoadError])
def test_user_errors_are_niceeval_errors_with_the_usage_exit_code(error: type[Exception]) -> None:
    assert issubclass(error, NiceEvalError)
    assert error("x").exit_code is ExitCode.USAGE  # type: ignore[attr-defined]
