"""Issue 9, item 3: a reader that closes stdout early (`| head`) never stops the run: it executes and
seals every slot, ends `finished`, and the process exits with the run's real code (seen through
`set -o pipefail` / PIPESTATUS), with no traceback on stderr."""

from __future__ import annotations

import pytest

from tests.support.project import Project

EVALS = '''
import asyncio

from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=150)
async def good(t):
    await asyncio.sleep(0.002)
    t.check("yes", includes("y")).label("has y")


@define_eval(attempts=50)
async def bad(t):
    await asyncio.sleep(0.002)
    t.check("no", includes("y")).label("has y")
'''


@pytest.fixture
def big(proj: Project) -> Project:
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 8\n")
    proj.write("evals/many.py", EVALS)
    return proj


def _check_whole_run(proj: Project, store: str, stderr: str) -> None:
    assert "Traceback" not in stderr and "Task exception" not in stderr and "BrokenPipe" not in stderr, stderr
    runs = proj.sql("SELECT status, exit_code FROM runs", store=proj.root / store)
    assert runs == [{"status": "finished", "exit_code": 1}]
    assert proj.sql("SELECT count(*) AS n FROM attempts", store=proj.root / store) == [{"n": 200}]


@pytest.mark.slow
@pytest.mark.parametrize(("reader", "flags"), [("head -3", ""), ("head -1", "--json")],
                         ids=["head-3", "json-head-1"])
def test_a_closed_stdout_never_stops_the_run_and_the_real_exit_code_comes_through_pipefail(
        big: Project, reader: str, flags: str) -> None:
    store = f"s-{reader.replace(' ', '')}{flags}.db"
    res = big.shell(f"set -o pipefail\nniceeval run {flags} --store {store} 2>err.txt | {reader}\n"
                    "echo \"pipeline=$? niceeval=${PIPESTATUS[0]}\"")
    assert res.stdout.strip().splitlines()[-1] == "pipeline=1 niceeval=1", res.stdout + res.stderr
    assert len(res.stdout.strip().splitlines()) == int(reader.split("-")[1]) + 1
    _check_whole_run(big, store, (big.root / "err.txt").read_text())


@pytest.mark.slow
def test_a_reader_that_closes_the_pipe_after_three_lines_gets_the_real_exit_code(big: Project) -> None:
    proc = big.popen("run", "--store", "closed.db")
    assert proc.stdout is not None and proc.stderr is not None
    lines = [proc.stdout.readline() for _ in range(3)]
    assert all(lines), lines
    proc.stdout.close()  # the reader goes away; the run must carry on
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 1, stderr
    _check_whole_run(big, "closed.db", stderr)
