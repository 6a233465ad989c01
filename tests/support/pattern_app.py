"""The stand-in app of the statistics acceptance tests: it passes the first k of n attempts of each
message (k from `PASSES_<message>`), so every pass pattern is known in advance."""

from __future__ import annotations

from tests.support.project import Project

APP = """
import os
import threading
from collections import Counter

_seen = Counter()
_lock = threading.Lock()


def reply(message: str) -> str:
    with _lock:
        n = _seen[message]
        _seen[message] += 1
    return "yes" if n < int(os.environ["PASSES_" + message]) else "no"
"""


#: Two evals sending "e1" and "e2" to the app, each passing when it answers "yes".
TWO_EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def e1(t):
    turn = await t.send("e1")
    t.check(turn.message, equals("yes")).label("Says yes")


@define_eval()
async def e2(t):
    turn = await t.send("e2")
    t.check(turn.message, equals("yes")).label("Says yes")
"""


def write_pattern_project(proj: Project, evals: str, project: str) -> Project:
    """`proj` holding the stand-in app, `evals` as evals/pattern.py and experiment `local` calling
    the app; `project` is the `[project]` table's lines (e.g. `'attempts = 5\\npass_rule = 0.6\\n'`)."""
    proj.write("app.py", APP)
    proj.write("evals/pattern.py", evals)
    proj.write("niceeval.toml", f'[project]\n{project}\n[experiments.local]\nadapter = "python"\n'
               '[experiments.local.options]\ncallable = "app:reply"\n')
    return proj


def run_with_passes(proj: Project, **passes: int) -> str:
    """`niceeval run --rerun-all` with `PASSES_<message>` set for each keyword; the new run's id."""
    result = proj.run("--rerun-all", env={f"PASSES_{message}": str(k) for message, k in passes.items()})
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return str(proj.sql("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")[0]["id"])
