"""A plain `niceeval run` imports what it uses and no more (issue 16: memory and start-up).

Every module a command imports stays for the whole run, so a judge-less run of trivial evals
must not pay for the judge's HTTP client. (Typer's own coercion of the options is typer's: the
command no longer patches its classes to defer it, issue 24.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from niceeval_cli._collector import ATTEMPTS_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]

_WRAPPER = """\
import json, sys
sys.argv = ['niceeval', *sys.argv[1:]]
from niceeval_cli.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
sys.stderr.write('\\n__MODULES__ ' + json.dumps(sorted(sys.modules)) + '\\n')
sys.exit(code)
"""

_EVAL = """\
from niceeval_cli import define_eval

for i in range(3):
    globals()[f"case_{i}"] = define_eval(test=lambda t: None, name=f"case_{i}")
"""


def _run(tmp_path: Path, *args: str) -> tuple[int, set[str], str]:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals" / "cases.py").write_text(_EVAL)
    (tmp_path / "niceeval.toml").write_text("[project]\n")
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, "run", *args], cwd=tmp_path, capture_output=True, text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("__MODULES__ ")]
    assert lines, done.stderr
    return done.returncode, set(json.loads(lines[-1].split(" ", 1)[1])), done.stdout + done.stderr


def test_a_judge_less_run_imports_no_http_client(tmp_path):
    code, modules, output = _run(tmp_path)
    assert code == 0, output
    assert "3 evals: 3 passed" in output
    assert "niceeval_cli.runner" in modules  # the wrapper did see a real run
    for absent in ("httpx", "httpcore", "tarfile", "niceeval_cli.runner._ray", "sqlite_utils",
                   "html"):
        assert absent not in modules, f"{absent} was imported by a plain run"


def test_an_option_given_is_still_coerced_and_checked_by_typer(tmp_path):
    code, _modules, output = _run(tmp_path, "--attempts", "2")
    assert code == 0, output
    assert "attempts  6 of 6 passed" in output  # --attempts 2 reached the run: 3 evals × 2

    code, _modules, output = _run(tmp_path, "--attempts", "0")
    assert code == 2
    assert "Invalid value for '--attempts'" in output


_GC_EVAL = """\
import gc
from pathlib import Path
from niceeval_cli import define_eval

Path("defined.txt").write_text(f"{gc.isenabled()} {gc.get_threshold()[0]}")


def probe(t):
    Path("attempt.txt").write_text(f"{gc.isenabled()} {gc.get_threshold()[0]}")


probe_eval = define_eval(test=probe, name="probe")
"""


def test_the_collector_rests_while_the_run_is_planned_and_runs_again_for_its_attempts(tmp_path):
    """Defining and planning 20 000 evals makes almost no cyclic garbage, and a sealed attempt
    leaves none either (its test context lets go of its turns and sessions), so from the run's
    release point what attempts leave is collected at the attempts' threshold (what was planned
    is frozen: cheap to skip). One policy: `niceeval_cli/_collector.py`."""
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "probe.py").write_text(_GC_EVAL)
    (tmp_path / "niceeval.toml").write_text("[project]\n")
    done = subprocess.run(
        [sys.executable, "-c", "from niceeval_cli.cli import main; main()", "run"], cwd=tmp_path,
        capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "defined.txt").read_text() == "True 20000"
    assert (tmp_path / "attempt.txt").read_text() == f"True {ATTEMPTS_THRESHOLD}"
