"""Issue 23, item 16: the crash file of an internal error (exit 4) was unredacted, world-readable,
at a predictable name (`niceeval-crash-<pid>.txt` in the temporary folder) and written through a
symbolic link planted there. Now it is redacted, mode 0600, at an unpredictable name, and never
opens what someone planted.

The bug is forced from the outside: the eval module (imported by the real `niceeval run`)
replaces the summary printer with one that raises quoting the run's secrets; a link to a victim
file waits at the old predictable name of the very process (`exec` keeps the shell's pid)."""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import subprocess
from pathlib import Path

from tests.support.loopback import Loopback
from tests.support.project import NICEEVAL, Project, base_env

# The http adapter's header secret, in a variable whose name says nothing: only the run knows it.
HEADER_SECRET = "hdr/Value+7Hq2Zx9Lm4Pw"
# A credential-named variable the run never reads: the crash report knows it by its name.
TOKEN_SECRET = "tok-8Jd3Kq0Vn5Rt2Wy6"

EVALS = """
import os
import niceeval_cli.reports.run_output as run_output
from niceeval_cli import define_eval


def _bug(*args, **kwargs):  # a bug in NiceEval, as it would quote what it held
    raise RuntimeError("summary failed: header " + os.environ["APP_HEADER_VALUE"]
                       + " escaped " + os.environ["APP_HEADER_VALUE"].replace("/", "\\\\/")
                       + " staging " + os.environ["STAGING_TOKEN"])


run_output.print_summary = _bug


@define_eval()
async def asks(t):
    await t.send("hello")
"""


def _answer(method: str, path: str, body: bytes) -> tuple[int, bytes, str]:
    if method == "POST":
        return 200, json.dumps({"message": "hi"}).encode(), "application/json"
    return 204, b"", "text/plain"


def test_a_crash_file_is_redacted_private_unpredictable_and_never_follows_a_planted_link(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own content\n")
    proj = Project(tmp_path / "proj")
    with Loopback(_answer) as server:
        proj.write("niceeval.toml", f"""
            [project]
            [experiments.app]
            adapter = "http"
            [experiments.app.options]
            url = "{server.url}/chat"
            headers = {{ Authorization = "Bearer {{env:APP_HEADER_VALUE}}" }}
        """)
        proj.write("evals/e.py", EVALS)
        env = base_env({"TMPDIR": str(tmp), "APP_HEADER_VALUE": HEADER_SECRET, "STAGING_TOKEN": TOKEN_SECRET,
                        "NO_COLOR": "1"})
        done = subprocess.run(
            ["bash", "-c", 'ln -s "$VICTIM" "$TMPDIR/niceeval-crash-$$.txt" && exec "$@"', "bash", *NICEEVAL, "run"],
            cwd=proj.root, env={**env, "VICTIM": str(victim)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "internal error" in done.stderr and "RuntimeError" in done.stderr
    assert HEADER_SECRET not in done.stderr and TOKEN_SECRET not in done.stderr and "[redacted]" in done.stderr

    # The planted link and its target are untouched.
    [planted] = [p for p in tmp.iterdir() if p.is_symlink()]
    assert re.fullmatch(r"niceeval-crash-\d+\.txt", planted.name) and planted.resolve() == victim.resolve()
    assert victim.read_text() == "the victim's own content\n"

    # The report is a new private file, named unpredictably, where the message says.
    where = re.search(r"the traceback is in (\S+?\.txt)", done.stderr)
    assert where, done.stderr
    crash = Path(where.group(1))
    assert crash.parent == tmp and crash != planted
    assert re.fullmatch(r"niceeval-crash-\w{6,}\.txt", crash.name) and not re.fullmatch(r"niceeval-crash-\d+\.txt",
                                                                                         crash.name)
    info = os.lstat(crash)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    text = crash.read_text(encoding="utf-8")
    assert "Traceback" in text and "RuntimeError: summary failed" in text
    for secret in (HEADER_SECRET, TOKEN_SECRET):
        assert secret not in text and secret.replace("/", "\\/") not in text
        assert base64.b64encode(secret.encode()).decode()[:12] not in text
    assert text.count("[redacted]") >= 3
