"""Issue 28 items 1-2: the agent-path benchmark runs the tool-using workload through the CLI
against its raw-client floor, and the `openai-chat` adapter shares the judge's lanes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from niceeval_cli._httpx import httpx
from niceeval_cli._lanes import LaneTransport, lane_client

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_agent_benchmark_prints_both_sides_and_the_targets() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "agent_path.py"), "--cases", "12",
                          "--concurrency", "4", "--latency-ms", "5"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode in (0, 2), out.stdout + out.stderr  # 2: a target missed on a busy box
    text = out.stdout
    for row in ("wall (s)", "model window (s)", "mean in flight", "CPU user+sys (s)", "CPU per request (ms)"):
        assert re.search(rf"^{re.escape(row)}\s+[\d.]+\s+[\d.]+\s+[\d.]+×$", text, re.M), (row, text)
    # every case ran its two requests (3 tool calls, then the reply) on both sides
    assert re.search(r"^chat requests\s+24\s+24$", text, re.M), text
    connections = re.search(r"^connections opened\s+(\d+)\s+(\d+)$", text, re.M)
    # the run's lanes (≤ concurrency) and the preflight's own GET /models
    assert connections and 2 <= int(connections.group(1)) <= 4 + 1, text
    assert len(re.findall(r"^target: .*: (met|MISSED)$", text, re.M)) == 4, text


async def test_an_adapter_client_runs_on_lanes_unless_a_proxy_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    client = lane_client("https://api.example.com/v1/chat/completions", 5.0)
    assert isinstance(client._transport, LaneTransport)
    await client.aclose()
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = lane_client("https://api.example.com/v1/chat/completions", 5.0)
    assert isinstance(client._transport, httpx.AsyncHTTPTransport)  # httpx's pool, which honours the proxy
    await client.aclose()
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    client = lane_client("https://api.example.com/v1/chat/completions", 5.0)
    assert isinstance(client._transport, LaneTransport)
    await client.aclose()
