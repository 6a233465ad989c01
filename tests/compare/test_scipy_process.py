"""scipy's statistics from a helper process (app/scipy_helper.py; issue 25 item 8).

`niceeval compare` has scipy imported by a helper interpreter while it reads its folds, and asks
it for the tests. What must hold: the helper's numbers are scipy's own to the last bit (NaN
included); a helper that dies or answers an error is replaced by this process, with the same
numbers; and through the real CLI, a comparison done with the helper prints exactly what one
done without it (one core: scipy in the process) prints, and its process never imports scipy.
"""

from __future__ import annotations

import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scipy import stats

from niceeval_cli.app.scipy_helper import ScipyProcess, serve, start_helper
from niceeval_cli.stats import IN_PROCESS, computed_by, fisher_p, scipy_calls, t_interval, welch_p
from tests.support import unit_fold_store

pytestmark = pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy on equal samples

TABLES = [(3, 10, 5, 10), (0, 1, 1, 1), (10, 10, 0, 10), (0, 0, 0, 4), (7, 12, 7, 12), (250, 400, 310, 400)]
SAMPLES = [([0.1, 0.4, 0.35], [0.9, 0.8, 0.95, 0.7]), ([1.0, 1.0], [1.0, 1.0]), ([0.0, 1.0], [0.5, 0.5]),
           ([0.3333333333333333, 0.1], [0.2, 0.30000000000000004, 0.7])]
P_VALUES = [0.01, 0.04, 0.03, 0.5, 1.0, 0.2, 1e-12]
POINTS = [(0.975, 1), (0.975, 9), (0.995, 30), (0.9, 1000)]


def _same(found: list[float], wanted: list[float]) -> None:
    assert len(found) == len(wanted)
    for f, w in zip(found, wanted, strict=True):
        assert (math.isnan(f) and math.isnan(w)) or f == w, (found, wanted)


def _scipys() -> dict[str, list[float]]:
    """The values scipy gives in this process, called directly."""
    return {
        "fisher": [stats.fisher_exact([[sb, nb - sb], [sn, nn - sn]]).pvalue for sb, nb, sn, nn in TABLES],
        "welch": [stats.ttest_ind(b, n, equal_var=False).pvalue for b, n in SAMPLES],
        "bh": list(stats.false_discovery_control(P_VALUES, method="bh")),
        "t_ppf": [stats.t.ppf(p, df) for p, df in POINTS],
    }


@pytest.fixture
def helper() -> Iterator[ScipyProcess]:
    calls = start_helper()
    assert calls is not None
    try:
        yield calls
    finally:
        calls.close()


def test_the_helper_answers_with_scipys_own_values(helper: ScipyProcess) -> None:
    wanted = _scipys()
    assert any(math.isnan(p) for p in wanted["welch"])  # a NaN crosses the pipe as a NaN
    _same(helper.fisher(TABLES), wanted["fisher"])
    _same(helper.welch(SAMPLES), wanted["welch"])
    _same(helper.bh(P_VALUES), wanted["bh"])
    _same(helper.t_ppf(POINTS), wanted["t_ppf"])
    assert helper.pid is not None


def test_the_statistics_ask_whatever_computes_for_their_context(helper: ScipyProcess) -> None:
    fisher_p.cache_clear()
    with computed_by(helper):
        assert scipy_calls() is helper
        p = fisher_p(2, 9, 8, 9)
        welch = welch_p([0.1, 0.4, 0.35], [0.9, 0.8, 0.95, 0.7])
        interval = t_interval([0.2, 0.5, 0.9])
    assert scipy_calls() is IN_PROCESS
    fisher_p.cache_clear()
    assert p == fisher_p(2, 9, 8, 9)
    assert welch == welch_p([0.1, 0.4, 0.35], [0.9, 0.8, 0.95, 0.7])
    assert interval == t_interval([0.2, 0.5, 0.9])


def test_a_helper_that_died_is_replaced_by_this_process(helper: ScipyProcess) -> None:
    assert helper.pid is not None
    os.kill(helper.pid, signal.SIGKILL)
    _same(helper.fisher(TABLES), _scipys()["fisher"])
    assert helper.pid is None
    _same(helper.bh(P_VALUES), _scipys()["bh"])


def test_a_batch_the_helper_cannot_answer_is_computed_here_and_raises_here(helper: ScipyProcess) -> None:
    with pytest.raises(ValueError):  # scipy's own error for a negative count, raised in this process
        helper.fisher([(-1, 3, 2, 3)])
    assert helper.pid is None


def test_the_helpers_loop_answers_every_line_errors_included() -> None:
    requests = io.StringIO("\n".join([
        json.dumps(["fisher", [[3, 10, 5, 10]]]),
        json.dumps(["import os", []]),
        "not json",
        json.dumps(["bh", [0.01, 0.04]]),
    ]) + "\n")
    replies = io.StringIO()
    serve(requests, replies)
    answered = [json.loads(line) for line in replies.getvalue().splitlines()]
    assert len(answered) == 4
    assert answered[0] == {"ok": [stats.fisher_exact([[3, 7], [5, 5]]).pvalue]}
    assert "unknown operation" in answered[1]["error"] and "error" in answered[2]
    assert answered[3] == {"ok": [float(q) for q in stats.false_discovery_control([0.01, 0.04], method="bh")]}


DRIVER = """
import json, os, sys
if sys.argv[1] == "one-core":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from niceeval_cli.cli import main
sys.argv = ["niceeval", *sys.argv[2:]]
code = 0
try:
    main()
except SystemExit as done:
    code = done.code
sys.stdout.flush()
sys.stderr.write(json.dumps({"scipy here": "scipy.stats" in sys.modules, "code": code}))
"""


def _compare(cores: str, store: Path, *args: str) -> tuple[str, dict[str, object]]:
    done = subprocess.run([sys.executable, "-c", DRIVER, cores, "compare", *args, "--store", str(store)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: {0})(0)) < 2,
                    reason="the helper process is used with two cores or more; this machine gives one")
def test_a_comparison_prints_the_same_with_its_tests_from_a_helper(tmp_path: Path) -> None:
    store = tmp_path / "results.db"
    base, new = unit_fold_store.build(store, seed=4, units=60, finish="store")
    for args in (["--format", "json"], ["--fail-on", "significant-regression"]):
        helped, how = _compare("two-cores", store, base, new, *args)
        alone, alone_how = _compare("one-core", store, base, new, *args)
        assert how == {"scipy here": False, "code": alone_how["code"]}, (how, alone_how)
        assert alone_how["scipy here"] is True
        assert helped == alone
    pairs = json.loads(_compare("two-cores", store, base, new, "--format", "json")[0])["pairs"]
    assert any(p["p_value"] is not None for p in pairs)


def _helpers_marked(mark: str) -> list[int]:
    """Live processes started with NICEEVAL_TEST_MARK=mark whose command is the scipy helper."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"NICEEVAL_TEST_MARK={mark}".encode() in environ.split(b"\0") and b"scipy_helper" in command:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists() or len(getattr(os, "sched_getaffinity",
                    lambda _: {0})(0)) < 2, reason="needs /proc and two cores (the helper is used from two)")
def test_compare_leaves_no_helper_behind_when_done_or_interrupted(tmp_path: Path) -> None:
    store = tmp_path / "results.db"
    base, new = unit_fold_store.build(store, seed=7, units=40, finish="store")
    mark = f"{os.getpid()}-{tmp_path.name}"
    env = {**os.environ, "NO_COLOR": "1", "NICEEVAL_TEST_MARK": mark}
    argv = [sys.executable, "-m", "niceeval_cli.cli", "compare", base, new, "--store", str(store), "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode in (0, 1), done.stderr
    assert _helpers_marked(mark) == []
    # Ctrl-C while the helper is still importing scipy (it takes about a second)
    running = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while not _helpers_marked(mark) and time.monotonic() < deadline and running.poll() is None:
            time.sleep(0.01)
        assert _helpers_marked(mark), "compare started no helper"
        running.send_signal(signal.SIGINT)
        _, err = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
    # 130, or ended by SIGINT after saying so: when the interrupt lands in an import, CPython at
    # times still ends the process with its own kill(self, SIGINT) at exit although the interrupt
    # was handled (strace shows it; seen on compare before this helper existed too)
    assert running.returncode in (130, -signal.SIGINT), err
    assert "interrupted" in err
    # gone at once: stopped by compare, or (interrupted while compare was still starting it) ended by
    # its requests closing — never left to finish importing scipy, which takes about a second
    deadline = time.monotonic() + 0.3
    while _helpers_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _helpers_marked(mark) == []
