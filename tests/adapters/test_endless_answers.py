"""An endpoint that never ends its answer (or nests it past what a parser can read) costs an
attempt, never the machine or the run.

A server that streams its body without end was read into memory until the machine ran out (24 GB,
then the kernel killed the run: a read that keeps getting data never times out), and one that
trickles it held the adapters' preflight forever (its timeout bounded each read, not the request).
Now a response body past 32 MiB fails its request naming the bound — the attempt `errored`, a
judge's assertion `unavailable` — and the preflight gives up on a request after its timeout, as
on a slow server. Each run is a real `niceeval` process against real loopback servers; it runs
under an address-space limit, so the old behaviour fails the test instead of the machine."""

from __future__ import annotations

import gzip
import json
import resource
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.support.endless import EndlessServer
from tests.support.loopback import Loopback
from tests.support.project import NICEEVAL, Project, base_env

pytestmark = pytest.mark.slow

#: Far above what a run needs (≈ 0.5 GiB of address space), far below what an unbounded read reaches.
ADDRESS_SPACE = 3 * 1024**3

CHAT_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval(timeout_ms=3000)
async def endless(t):
    turn = await t.send("hi")
    t.check(turn.message, includes("hi"))
"""

JUDGE_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa

@define_eval(judge=True)
def judged(t):
    t.check({"input": "2 + 2?", "output": "4"}, closed_qa("Is it correct?")).gate()
"""


def _limited(address_space: int = ADDRESS_SPACE) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))


def _run(proj: Project, env: dict[str, str | None], timeout: float = 90,
         address_space: int = ADDRESS_SPACE) -> tuple[int, str, float]:
    started = time.monotonic()
    process = proj.popen("run", env=env, preexec_fn=lambda: _limited(address_space))
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out + err, time.monotonic() - started


def _errored(proj: Project, code: int, output: str, reason: str = "adapter-error") -> dict[str, str]:
    """The run's one attempt, checked `errored` for `reason` (the run undecided: exit 5)."""
    assert code == 5, output
    (attempt,) = proj.sql("SELECT state, reason, error FROM attempts")
    assert (attempt["state"], attempt["reason"]) == ("errored", reason), attempt
    return attempt


def _chat_project(tmp_path: Path, base_url: str, timeout_ms: int = 2000) -> Project:
    proj = Project(tmp_path / "proj")
    proj.write("evals/endless.py", CHAT_EVAL)
    proj.write("niceeval.toml", f'[project]\n\n[experiments.chat]\nadapter = "openai-chat"\nmodel = "m"\n'
                                f'[experiments.chat.options]\nbase_url = "{base_url}/v1"\napi_key_env = "ENDLESS_KEY"\n'
                                f"timeout_ms = {timeout_ms}\n")
    return proj


def test_a_model_answer_that_never_ends_errors_the_attempt_at_32_mib(tmp_path: Path) -> None:
    with EndlessServer("flood") as server:
        proj = _chat_project(tmp_path, server.url)
        code, output, took = _run(proj, {"ENDLESS_KEY": "k"})
    attempt = _errored(proj, code, output)
    assert "the response body is over 32 MiB" in attempt["error"], attempt
    assert took < 60, took


def test_through_a_proxy_from_the_environment_the_same_bound_holds(tmp_path: Path) -> None:
    """A proxy in the environment sends the request through httpx's own client and pool: the
    same bound applies to what comes back through it (here the "proxy" is the endless server)."""
    with EndlessServer("flood") as proxy:
        proj = _chat_project(tmp_path, "http://127.0.0.1:9")  # never reached: the proxy answers
        code, output, took = _run(proj, {"ENDLESS_KEY": "k", "HTTP_PROXY": proxy.url, "http_proxy": proxy.url,
                                         "NO_PROXY": None, "no_proxy": None, "ALL_PROXY": None, "all_proxy": None})
        assert proxy.requests >= 1  # it did go through the proxy
    attempt = _errored(proj, code, output)
    assert "the response body is over 32 MiB" in attempt["error"], attempt
    assert took < 60, took


def test_a_model_that_trickles_its_answer_holds_neither_the_preflight_nor_the_attempt(tmp_path: Path) -> None:
    with EndlessServer("trickle") as server:
        # the preflight waits at most this; the attempt's 3 s deadline comes before a request's
        proj = _chat_project(tmp_path, server.url, timeout_ms=4000)
        code, output, took = _run(proj, {"ENDLESS_KEY": "k"})
    _errored(proj, code, output, reason="timeout")
    assert took < 30, took  # the preflight's 4 s and the attempt's 3 s, with start-up


def test_without_an_attempt_timeout_the_adapters_timeout_ms_bounds_a_trickled_request(tmp_path: Path) -> None:
    """`timeout_ms` of openai-chat (and http) is "per request", but it bounded each read: with no
    attempt deadline a model that trickles its answer held the attempt, and the run, for ever."""
    with EndlessServer("trickle") as server:
        proj = _chat_project(tmp_path, server.url, timeout_ms=1500)
        proj.write("evals/endless.py", CHAT_EVAL.replace("@define_eval(timeout_ms=3000)", "@define_eval()"))
        code, output, took = _run(proj, {"ENDLESS_KEY": "k"}, timeout=60)
    attempt = _errored(proj, code, output)
    assert "got no reply within timeout_ms=1500" in attempt["error"], attempt
    assert took < 30, took  # the preflight's 1.5 s and the request's 1.5 s (a timeout is not retried), start-up


def test_a_judge_answer_that_never_ends_leaves_the_assertion_unavailable(tmp_path: Path) -> None:
    with EndlessServer("flood") as judge:
        proj = Project(tmp_path / "proj")
        proj.write("evals/judged.py", JUDGE_EVAL)
        proj.write("niceeval.toml", f'[project]\n\n[judge]\nbase_url = "{judge.url}/v1"\nmodel = "judge-m"\n'
                                    'api_key_env = "ENDLESS_JUDGE_KEY"\nmax_retries = 1\n')
        code, output, took = _run(proj, {"ENDLESS_JUDGE_KEY": "k"})
    assert code == 5, output
    (result,) = proj.sql("SELECT state, reason, explanation FROM assertion_results")
    assert (result["state"], result["reason"]) == ("unavailable", "judge-transport-error"), result
    assert "the response body is over 32 MiB" in result["explanation"], result
    assert took < 60, took


def test_an_answer_nested_past_the_json_parsers_depth_errors_the_attempt_not_the_preflight(tmp_path: Path) -> None:
    """`[[[[…` 200 000 deep: json's RecursionError is no ValueError, so it escaped the adapters'
    "not JSON" handling — the preflight then failed the experiment as a setup error (exit 3)."""
    deep = b'{"choices": [{"message": {"role": "assistant", "content": "hi", "x": ' + b"[" * 200_000 + \
        b"]" * 200_000 + b"}}]}"
    with Loopback(lambda method, path, body: (200, deep, "application/json")) as server:
        proj = _chat_project(tmp_path, server.url)
        code, output, _ = _run(proj, {"ENDLESS_KEY": "k"})
    attempt = _errored(proj, code, output)  # the preflight found no cause in a listing it cannot read
    assert "answered something that is not a chat completion" in attempt["error"], attempt


def test_a_compressed_answer_is_decoded_up_to_the_same_bound(tmp_path: Path) -> None:
    """64 KB of gzip stand for 64 MiB: the 32 MiB bound counts what the body decodes to, not only
    what came over the wire (a 1 MB gzip reply took a run to 8 GB and three minutes). A gzip
    reply of an honest size is read as before."""
    reply = {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}
    honest = gzip.compress(json.dumps(reply).encode())
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024))
    assert len(bomb) < 128 * 1024
    for body, expected in ((honest, 0), (bomb, 5)):
        with Loopback(lambda method, path, _, body=body: (200, body, "application/json",
                                                           {"Content-Encoding": "gzip"})) as server:
            proj = _chat_project(tmp_path / str(expected), server.url)
            code, output, _ = _run(proj, {"ENDLESS_KEY": "k"})
        assert code == expected, output
    attempt = _errored(proj, code, output)
    assert "the response body is over 32 MiB once decoded" in attempt["error"], attempt


def _zeros(compressor: Any, gib: int) -> bytes:
    """`gib` GiB of zero bytes through `compressor` (a zlib or zstandard compressobj), 16 MiB at a time."""
    chunk = b"\0" * (16 * 1024 * 1024)
    return b"".join([compressor.compress(chunk) for _ in range(gib * 64)] + [compressor.flush()])


def test_a_body_that_decodes_to_gigabytes_in_one_piece_stops_at_the_bound(tmp_path: Path) -> None:
    """The bound counted a body's decoded bytes only after each piece was decoded whole: 128 KB of
    zstd (4 GiB of zeros, 2 GiB per 64 KB piece) or 2 KB of gzip inside gzip (1 GiB) took a run to
    4 GB and a MemoryError. Now decoding stops at the bound, within a small address space."""
    zstandard = pytest.importorskip("zstandard")
    zstd = _zeros(zstandard.ZstdCompressor(level=3).compressobj(), 4)
    twice = gzip.compress(_zeros(zlib.compressobj(9, zlib.DEFLATED, 31), 1), 9)
    assert len(zstd) < 256 * 1024 and len(twice) < 4 * 1024
    for name, body, encoding in (("zstd", zstd, "zstd"), ("twice", twice, "gzip, gzip")):
        with Loopback(lambda method, path, _, body=body, encoding=encoding: (
                200, body, "application/json", {"Content-Encoding": encoding})) as server:
            proj = _chat_project(tmp_path / name, server.url)
            code, output, took = _run(proj, {"ENDLESS_KEY": "k"}, address_space=1536 * 1024**2)
        attempt = _errored(proj, code, output)
        assert "the response body is over 32 MiB once decoded" in attempt["error"], (name, attempt)
        assert took < 30, (name, took)
    # An honest answer in the same encodings, and in gzip then zstd, is read as before.
    reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}).encode()
    compress = zstandard.ZstdCompressor().compress
    for name, body, encoding in (("zstd-ok", compress(reply), "zstd"), ("both-ok", compress(gzip.compress(reply)),
                                                                         "gzip, zstd")):
        with Loopback(lambda method, path, _, body=body, encoding=encoding: (
                200, body, "application/json", {"Content-Encoding": encoding})) as server:
            proj = _chat_project(tmp_path / name, server.url)
            code, output, _ = _run(proj, {"ENDLESS_KEY": "k"})
        assert code == 0, (name, output)


#: Runs `niceeval run` (argv) as its only child, under ADDRESS_SPACE, and prints the child's peak
#: resident memory (KiB) last on stderr: what the run itself held, whatever else this test process ran.
_PEAK = f"""
import resource, subprocess, sys
limit = lambda: resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE}))
done = subprocess.run(sys.argv[1:], preexec_fn=limit)
print("peak-kib", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(done.returncode)
"""


def _peak_of_run(proj: Project, timeout: float) -> int:
    """`niceeval run` in `proj` under the `_PEAK` wrapper: it must pass; its peak RSS in KiB."""
    process = subprocess.Popen([sys.executable, "-c", _PEAK, *NICEEVAL, "run"], cwd=proj.root, text=True,
                               env=base_env({"ENDLESS_KEY": "k"}), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, out + err
    return int(err.rsplit("peak-kib", 1)[1].split()[0])


LINGERING_EVAL = """
import asyncio
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval()
async def lingering(t):
    turn = await t.send("hi")
    await asyncio.sleep(4)  # the connection idles in its lane meanwhile
    t.check(turn.message, includes("hi"))
"""


def test_a_server_that_keeps_sending_on_an_idle_connection_does_not_fill_memory(tmp_path: Path) -> None:
    """The answer was whole (its Content-Length), so the connection was kept for the next request
    — and everything the server sent on it after was buffered: 8 GB in the 8 s an eval then
    waited. Now reading pauses past 1 MiB until a request reads (and the lane, seeing the
    connection is not idle, closes it)."""
    with EndlessServer("linger") as server:
        proj = _chat_project(tmp_path, server.url)
        proj.write("evals/endless.py", LINGERING_EVAL)
        peak_kib = _peak_of_run(proj, timeout=90)
    assert peak_kib < 400 * 1024, peak_kib  # a run is ≈ 60 MiB; the old one held gigabytes


def test_an_answer_in_one_byte_chunks_is_held_as_its_bytes(tmp_path: Path) -> None:
    """A 500 KB answer sent as 500 000 1-byte chunks was held as 500 000 objects (about 125 bytes
    each with their list: 32 MiB of them would be gigabytes) until it was joined; now as its bytes."""
    with EndlessServer("crumbs") as server:
        proj = _chat_project(tmp_path, server.url, timeout_ms=120_000)
        proj.write("evals/endless.py", CHAT_EVAL.replace("timeout_ms=3000", "timeout_ms=120_000"))
        peak_kib = _peak_of_run(proj, timeout=150)
    assert peak_kib < 90 * 1024, peak_kib  # a run is ≈ 60 MiB; the old one held ≈ 60 MiB more
