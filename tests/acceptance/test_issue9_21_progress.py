"""Issue 9, item 21: on an 80-column terminal (a real pty) the live progress lines fit 80 columns
without cutting the counts, and an experiment that has not started says "waiting"."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from tests.support.project import NICEEVAL, Project, base_env
from tests.support.terminal import on_a_terminal

EVALS = '''
import asyncio

from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=60)
async def good(t):
    await asyncio.sleep(0.01)
    t.check("yes", includes("y")).label("y")


@define_eval(attempts=60)
async def bad(t):
    await asyncio.sleep(0.01)
    t.check("no", includes("y")).label("y")


@define_eval(attempts=60)
async def broken(t):
    await asyncio.sleep(0.01)
    raise RuntimeError("broken")
'''

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def _run_on_a_pty(proj: Project, columns: int) -> tuple[int, str]:
    code, shown, _ = on_a_terminal([*NICEEVAL, "run"], proj.root, base_env({"TERM": "xterm-256color"}),
                                   columns=columns, stdin=True)
    return code, shown


@pytest.mark.slow
def test_live_progress_fits_80_columns_and_says_waiting_for_experiments_not_started(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 1\n[experiments.first]\n[experiments.second]\n")
    proj.write("evals/mixed.py", EVALS)
    rc, raw = _run_on_a_pty(proj, 80)
    assert rc == 1, raw[-2000:]
    lines = [line for line in re.split(r"\r\n|\r|\n", _CONTROL.sub("", raw)) if line.strip()]
    progress = [line for line in lines if "━" in line or "waiting" in line]
    assert progress, raw[:2000]
    assert any("second" in line and "waiting" in line for line in progress), progress[:5]
    for line in progress:
        assert cell_len(line) <= 80, line
        assert not line.rstrip().endswith("…"), line
    final_first = [line for line in progress if "first" in line and "180/180" in line]
    assert final_first and all(w in final_first[-1] for w in ("60 passed", "60 failed", "60 errored")), final_first
