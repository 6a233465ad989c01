"""Issue 27, item 4 against LiteLLM's real proxy (`litellm[proxy]`, its own venv; `.ci/run`
installs it): the proxy on 127.0.0.1 routes its model to a loopback fake OpenAI server of the
test (nothing leaves the machine: local cost map, no telemetry). NiceEval reads the proxy's
`x-litellm-response-cost` as the attempt's reported cost, and a model name the proxy does not
serve is one setup error (exit 3) before dispatch."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.support.components import need_litellm
from tests.support.loopback import GATEWAY_EVALS as EVALS
from tests.support.loopback import Gateway, free_port
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


pytestmark = pytest.mark.slow
MASTER = "sk-litellm-master-for-tests-0001"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Gateway]]:
    """One proxy for the module (it takes seconds of CPU to start); each check counts the
    upstream requests its own run made."""
    binary = need_litellm()
    tmp_path = tmp_path_factory.mktemp("litellm")
    upstream = Gateway(listed=None)
    port = free_port()
    config = tmp_path / "litellm.yaml"
    config.write_text(f"""
model_list:
  - model_name: gw-model
    litellm_params:
      model: openai/upstream-model
      api_base: {upstream.url}
      api_key: upstream-key
      input_cost_per_token: 0.001
      output_cost_per_token: 0.002
litellm_settings:
  telemetry: false
general_settings:
  master_key: {MASTER}
""")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
           "LITELLM_LOG": "ERROR", "DISABLE_SCHEMA_UPDATE": "true", "NO_DOCS": "True"}
    log = (tmp_path / "litellm.log").open("w")
    proc = subprocess.Popen([binary, "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
                             "--telemetry", "False"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health/liveliness", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the LiteLLM proxy did not start: {(tmp_path / 'litellm.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield base, upstream
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()
        upstream.stop()


def _project(proj: Project, base: str, model: str) -> None:
    proj.write("niceeval.toml", f'''
        [experiments.gw]
        adapter = "openai-chat"
        model = "{model}"
        [experiments.gw.options]
        base_url = "{base}/v1"
        api_key_env = "LITELLM_KEY"
    ''')
    proj.write("evals/chat.py", EVALS)


def test_litellm_cost_header_is_the_reported_cost(proj: Project, proxy: tuple[str, Gateway]) -> None:
    base, upstream = proxy
    upstream.script.append((200, {}, {
        "id": "c", "object": "chat.completion", "created": 0, "model": "upstream-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi there"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}))
    _project(proj, base, "gw-model")
    res = proj.run(env={"LITELLM_KEY": MASTER, "NO_COLOR": "1"})
    assert res.returncode == 0, (res.stdout[-1500:], res.stderr[-1500:])
    rows = proj.sql("SELECT state, cost_usd, input_tokens, output_tokens FROM attempts")
    assert rows[0]["state"] == "passed"
    assert rows[0]["cost_usd"] == pytest.approx(10 * 0.001 + 3 * 0.002), rows  # the proxy's own figure
    assert MASTER not in res.stdout + res.stderr


def test_litellm_unknown_model_is_one_setup_error(proj: Project, proxy: tuple[str, Gateway]) -> None:
    base, upstream = proxy
    _project(proj, base, "gpt-typo")
    posted = upstream.posts()
    res = proj.run(env={"LITELLM_KEY": MASTER, "NO_COLOR": "1"})
    out = res.stdout + res.stderr
    assert res.returncode == 3, out[-2000:]
    assert "gpt-typo" in out and "Traceback" not in out
    assert proj.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]
    assert upstream.posts() == posted  # nothing reached the upstream model
