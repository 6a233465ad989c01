"""Which docker sandboxes ask the daemon over its socket (`_engine`), and which keep the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from niceeval_cli.sandbox import _engine


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("NICEEVAL_DOCKER", "DOCKER_HOST", "DOCKER_CONTEXT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    monkeypatch.setattr(_engine, "_known", {})
    return tmp_path


@pytest.mark.parametrize("name, value", [
    ("NICEEVAL_DOCKER", "/opt/bin/docker"),     # another binary: every call through it
    ("DOCKER_CONTEXT", "remote"),               # a context the CLI resolves
    ("DOCKER_HOST", "tcp://10.0.0.5:2376"),     # TCP / TLS
    ("DOCKER_HOST", "ssh://me@box"),
])
def test_anything_but_a_local_unix_socket_keeps_the_cli(fresh, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert _engine.engine_socket() is None


def test_a_current_context_in_the_docker_config_keeps_the_cli(fresh):
    (fresh / "config.json").write_text(json.dumps({"currentContext": "colima"}))
    assert _engine.engine_socket() is None


def test_a_socket_that_does_not_answer_keeps_the_cli(fresh, monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing-here.sock")
    assert _engine.engine_socket() is None


def test_memory_is_read_as_the_cli_reads_it():
    assert _engine.memory_bytes("512m") == 512 << 20
    assert _engine.memory_bytes("2g") == 2 << 30
    assert _engine.memory_bytes("1.5GiB") == int(1.5 * (1 << 30))
    assert _engine.memory_bytes("1024") == 1024
    assert _engine.memory_bytes("lots") is None  # the CLI then says what is wrong
