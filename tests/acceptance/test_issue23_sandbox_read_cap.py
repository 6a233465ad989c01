"""Issue 23, item 17 (the sandbox half): `read_text` of a 500 MB file peaked at 1.0 GB (local)
and 1.8 GB (docker). A read is capped (64 MiB unless the call asks for more with `max_bytes=`):
over it the attempt errors naming the file, its size and the cap, and nothing is held.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.project import NICEEVAL, Project, base_env
from tests.support.sandbox import KINDS, attempts, env_for, kind_of, sandbox_project

pytestmark = pytest.mark.slow

@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return kind_of(request)

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
async def huge(t):
    await t.send("make a huge file")
    await t.sandbox.read_text("huge.txt")

@define_eval()
async def small(t):
    await t.send("make a huge file")
    t.check(await t.sandbox.read_text("small.txt"), equals("small\\n")).label("small")

@define_eval()
async def asked_for_more(t):
    await t.send("make a huge file and a medium one")
    data = await t.sandbox.read_bytes("medium.bin", max_bytes=80 << 20)
    t.check(len(data), equals(70 << 20)).label("medium")
"""

_MEASURED = ("import json, resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
             "print(json.dumps([done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")


def test_reading_a_500mb_file_is_refused_without_holding_it(proj: Project, kind: str, tmp_path):
    # Every workspace holds the 500 MB file (sparse) and the small one; the 70 MiB file is written
    # only where it is read: 140 MiB less to write per run.
    agent = ('read task; truncate -s 500M huge.txt && echo small > small.txt && case "$task" in '
             '*medium*) head -c 73400320 /dev/zero > medium.bin;; esac && echo done')
    sandbox_project(proj, kind, agent, EVALS, timeout_ms=120_000)
    env = base_env(env_for(tmp_path / "tmp"))
    measured = subprocess.run([sys.executable, "-c", _MEASURED, *NICEEVAL, "run", "--max-concurrency", "1"],
                              cwd=proj.root, env=env, capture_output=True, text=True, timeout=600)
    code, peak_kib = json.loads(measured.stdout.strip().splitlines()[-1])
    assert code != 0, measured.stderr
    states = {a["eval_id"].split("/")[-1]: a for a in attempts(proj)}
    huge = states["huge"]
    assert huge["state"] == "errored", huge
    assert "huge.txt: 524288000 bytes is over the 67108864 bytes t.sandbox reads at once" in huge["error"]
    assert "max_bytes=" in huge["error"]
    assert states["small"]["state"] == "passed", states["small"]
    assert states["asked_for_more"]["state"] == "passed", states["asked_for_more"]
    assert peak_kib < 400_000, f"peak {peak_kib // 1024} MiB"
