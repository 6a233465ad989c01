"""Issue 9, items 12 and 22: machine formats keep stored text unchanged when piped but make control
characters visible on a terminal (a real pty), and nest JSON columns as JSON values in
`--format json|ndjson` and `run --json` events (CSV keeps them as text).

The CLI runs in process where its output goes to a pipe (the stored run, what a pipe reads); on a
terminal it is the real `niceeval` writing to a real pty."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.support.project import NICEEVAL, Project, base_env
from tests.support.terminal import on_a_terminal

HOSTILE = "red\x1b[31mRED osc52\x1b]52;c;ZXZpbA==\x07 title\x1b]0;pwned\x07 c1\x9b2J bidi\u202eevil"
RAW_FORMS = ["\x1b[31m", "\x1b]52", "\x1b]0;", "\x07", "\x9b", "\u202e"]

EVALS = f'''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
async def hostile(t):
    t.check({HOSTILE!r}, includes("nothing")).label("L " + {HOSTILE!r})
'''


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, list[dict]]:
    proj = Project(tmp_path_factory.mktemp("formats") / "proj", in_process=True)
    proj.write("evals/hostile.py", EVALS)
    res = proj.run("--json")
    assert res.returncode == 1, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    return proj, events


def _on_a_tty(proj: Project, *args: str) -> str:
    code, shown, _ = on_a_terminal([*NICEEVAL, *args], proj.root, base_env({"TERM": "xterm"}))
    assert code == 0, shown
    return shown


@pytest.mark.parametrize("fmt", ["csv", "ndjson"])
def test_machine_formats_carry_stored_text_unchanged_when_piped(stored, fmt: str) -> None:
    proj, _ = stored
    res = proj.cli("query", "assertions", "--format", fmt)
    assert res.returncode == 0, res.stderr
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(res.stdout)))
    elif fmt == "json":
        rows = json.loads(res.stdout)
    else:
        rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert rows[0]["label"] == "L " + HOSTILE
    evidence = rows[0]["evidence"]
    assert (json.loads(evidence) if fmt == "csv" else evidence) == HOSTILE


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "table"])
def test_on_a_terminal_every_format_makes_control_characters_visible(stored, fmt: str) -> None:
    proj, _ = stored
    out = _on_a_tty(proj, "query", "assertions", "--format", fmt)
    # (the table's own styling uses SGR codes; what came from the store never reaches the terminal raw)
    for raw in RAW_FORMS if fmt != "table" else RAW_FORMS[1:]:
        assert raw not in out, (fmt, repr(raw))
    if fmt != "table":  # the table trims wide columns
        assert "\\x1b" in out or "\\u001b" in out, out[:500]


@pytest.mark.slow
def test_json_columns_are_json_values_in_json_ndjson_and_run_events(stored) -> None:
    proj, events = stored
    runs = proj.query_json("runs")
    assert isinstance(runs[0]["argv"], list) and isinstance(runs[0]["experiments"], list)
    attempt = proj.query_json("attempts")[0]
    assert isinstance(attempt["fingerprint_parts"], dict), attempt["fingerprint_parts"]
    result = proj.query_json("assertions")[0]
    assert isinstance(result["match_config"], dict) and result["evidence"] == HOSTILE
    nd = [json.loads(line) for line in proj.cli("query", "attempts", "--format", "ndjson").stdout.splitlines()]
    assert isinstance(nd[0]["fingerprint_parts"], dict)
    sealed = next(e for e in events if e["event"] == "attempt.sealed")
    assert isinstance(sealed["attempt"]["fingerprint_parts"], dict)
    assert isinstance(sealed["assertions"][0]["match_config"], dict)
    assert sealed["assertions"][0]["evidence"] == HOSTILE
    planned = next(e for e in events if e["event"] == "run.planned")
    assert not isinstance(planned["slots"][0]["changed"], str)


def test_csv_keeps_json_columns_as_json_text(stored) -> None:
    proj, _ = stored
    rows = list(csv.DictReader(io.StringIO(proj.cli("query", "attempts", "--format", "csv").stdout)))
    assert isinstance(json.loads(rows[0]["fingerprint_parts"]), dict)
