"""Fixtures for the judge engine tests: a key in the environment, settings aimed at the
loopback server, and a service with a tiny backoff so retry tests stay fast."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from niceeval_cli.config import JudgeSettings
from niceeval_cli.judge import Backoff, JudgeService

KEY_ENV = "NICEEVAL_TEST_JUDGE_KEY"
KEY_VALUE = "test-judge-key-Zq81vX"


@pytest.fixture
def judge_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY_VALUE)
    return KEY_VALUE


@pytest.fixture
def make_settings(judge_server: Any, judge_key: str) -> Callable[..., JudgeSettings]:
    def make(**fields: Any) -> JudgeSettings:
        values: dict[str, Any] = {"model": "judge-test", "base_url": judge_server.base_url,
                                  "api_key_env": KEY_ENV, "timeout_ms": 5000, "max_retries": 3}
        values.update(fields)
        return JudgeSettings(**values)

    return make


@pytest.fixture
async def service() -> AsyncIterator[JudgeService]:
    svc = JudgeService(backoff=Backoff(base_s=0.01, cap_s=0.05))
    yield svc
    await svc.aclose()
