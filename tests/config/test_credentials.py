"""`.env` beside niceeval.toml supplies credentials without overriding the environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from niceeval_cli.config import load_credentials

SET = "NICEEVAL_TEST_ALREADY_SET_KEY"
UNSET = "NICEEVAL_TEST_UNSET_KEY"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Both variables restored after the test, whatever .env loading did to them."""
    monkeypatch.setenv(SET, "from-the-shell")
    monkeypatch.setenv(UNSET, "placeholder")
    monkeypatch.delenv(UNSET)
    return monkeypatch


def test_dotenv_loads_an_unset_variable_and_never_overrides_a_set_one(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text(f"{SET}=from-dotenv\n{UNSET}=sk-from-dotenv\n", encoding="utf-8")
    assert load_credentials(tmp_path) == tmp_path / ".env"
    assert os.environ[SET] == "from-the-shell"
    assert os.environ[UNSET] == "sk-from-dotenv"


def test_without_a_dotenv_file_nothing_is_loaded(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    assert load_credentials(tmp_path) is None
    assert UNSET not in os.environ
