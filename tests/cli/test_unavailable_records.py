"""A check recorded without deciding (no `.gate()` in a pass-style eval) that could not be measured
decides no verdict — and the run says so, instead of "everything passed" alone: a note counts them
by reason and names the query that lists them; `--json`'s `run.finished` carries the counts. Only
the attempts the run executed count (a reused attempt's were told by the run that made it)."""

from __future__ import annotations

import json

JUDGED = """
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, includes

@define_eval(judge=True)
def recorded(t):
    t.check("4", includes("4"))
    t.check({"input": "2 + 2?", "output": "4"}, closed_qa("Is it correct?"))
    t.check({"input": "3 + 3?", "output": "6"}, closed_qa("Is it correct?"))

@define_eval
def plain(t):
    t.check("4", includes("4"))
"""

#: The judge's key variable is left unset: each judge check comes back `judge-key-unresolved`.
TOML = '[project]\n\n[judge]\nmodel = "judge-m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "UNSET_JUDGE_KEY"\n'
NOTE = ("note: 2 results recorded without deciding could not be measured (judge-key-unresolved × 2); no verdict "
        "rests on them (`.gate()` makes a check decide): niceeval query assertions --state unavailable")


def test_a_run_that_passed_says_which_recorded_checks_could_not_be_measured(project) -> None:
    project.write("niceeval.toml", TOML)
    project.write("evals/judged.py", JUDGED)
    result = project.run(env={"UNSET_JUDGE_KEY": None, "COLUMNS": "400"})
    assert result.exit_code == 0, result.stdout + result.stderr  # nothing decided rests on the judge
    assert NOTE in result.stdout, result.stdout
    count_line = next(line for line in result.stdout.splitlines() if line.startswith("run "))
    assert count_line.endswith("2 evals: 2 passed · exit 0 (everything passed)")

    again = project.run("--json", env={"UNSET_JUDGE_KEY": None})  # all reused: nothing executed here
    finished = json.loads(again.stdout.splitlines()[-1])
    assert (finished["event"], finished["reused"], finished["unavailable_records"]) == ("run.finished", 2, {})
    assert "recorded without deciding" not in again.stderr

    fresh = project.run("--rerun-all", "--json", env={"UNSET_JUDGE_KEY": None})
    finished = json.loads(fresh.stdout.splitlines()[-1])
    assert finished["unavailable_records"] == {"judge-key-unresolved": 2}


def test_a_gated_check_that_could_not_be_measured_is_the_verdicts_business_not_the_notes(project) -> None:
    project.write("niceeval.toml", TOML)
    gated = JUDGED.replace('closed_qa("Is it correct?"))', 'closed_qa("Is it correct?").at_least(1)).gate()')
    project.write("evals/judged.py", gated)
    result = project.run(env={"UNSET_JUDGE_KEY": None, "COLUMNS": "400"})
    assert result.exit_code == 5, result.stdout + result.stderr  # undecided: the eval errored
    assert "recorded without deciding" not in result.stdout
    rows = project.sql("SELECT r.role, r.state, r.reason FROM assertion_results r WHERE r.match_name = 'closed_qa'")
    assert rows == [{"role": "gate", "state": "unavailable", "reason": "judge-key-unresolved"}] * 2, rows


# ── `niceeval view RUN` repeats the note: counted from the store, the run as a whole ───────────

MIXED = JUDGED.replace("import closed_qa, includes", "import closed_qa, includes, similarity").replace(
    "from niceeval_cli import define_eval", "from niceeval_cli import Fact, define_eval").replace(
    '    t.check({"input": "3 + 3?"',
    '    t.check(Fact.unavailable("log-truncated"), similarity("4"))\n    t.check({"input": "3 + 3?"')
VIEW_NOTE = ("note: 3 results recorded without deciding could not be measured (judge-key-unresolved × 2, "
             "log-truncated × 1); no verdict rests on them (`.gate()` makes a check decide): "
             "niceeval query assertions --run {run} --state unavailable")
WIDE = {"UNSET_JUDGE_KEY": None, "COLUMNS": "400"}
PLAIN = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval
def plain(t):
    t.check("4", includes("4"))
"""


def _run_id(project) -> str:
    return project.sql("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")[0]["id"]


def _view(project, *args: str) -> str:
    result = project.cli("view", *args, env=WIDE)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_view_repeats_the_runs_note_counted_by_reason_whatever_the_filters(project) -> None:
    project.write("niceeval.toml", TOML)
    project.write("evals/judged.py", MIXED)
    result = project.run(env=WIDE)
    assert result.exit_code == 0, result.stdout + result.stderr
    run = _run_id(project)
    note = VIEW_NOTE.format(run=run)
    assert note.replace(f" --run {run}", "") in result.stdout  # the summary's words, the same counts
    page = _view(project)
    assert note in page.splitlines(), page
    lines = page.splitlines()  # after the header, before the attempts
    assert lines.index(note) < next(i for i, text in enumerate(lines) if text.startswith("Passed, one line each"))
    assert note in _view(project, run, "--eval", "plain", "--state", "failed").splitlines()  # the run's, not the page's
    listed = project.assertions("--run", run, "--state", "unavailable")  # what the note points at
    assert sorted(r["reason"] for r in listed) == ["judge-key-unresolved", "judge-key-unresolved", "log-truncated"]


def test_view_of_a_run_that_reused_them_does_not_count_them_again(project) -> None:
    project.write("niceeval.toml", TOML)
    project.write("evals/judged.py", MIXED)
    project.run(env=WIDE)
    first = _run_id(project)
    again = project.run(env=WIDE)  # every attempt reused: this run measured nothing
    assert "recorded without deciding" not in again.stdout
    assert "reused" in _view(project) and "recorded without deciding" not in _view(project)
    assert VIEW_NOTE.format(run=first) in _view(project, first).splitlines()  # the first run's page still says so
    project.run("--rerun-all", env=WIDE)
    assert VIEW_NOTE.format(run=_run_id(project)) in _view(project).splitlines()


def test_view_of_a_run_with_nothing_unmeasured_or_only_gated_checks_unmeasured_has_no_note(project) -> None:
    project.write("niceeval.toml", TOML)
    project.write("evals/judged.py", PLAIN)
    assert project.run(env=WIDE).exit_code == 0
    assert "recorded without deciding" not in _view(project)

    gated = MIXED.replace('closed_qa("Is it correct?"))', 'closed_qa("Is it correct?").at_least(1)).gate()').replace(
        'similarity("4"))', 'similarity("4").at_least(0.5)).gate()')
    project.write("evals/judged.py", gated)
    assert project.run(env=WIDE).exit_code == 5
    rows = project.sql("SELECT r.role, r.state FROM assertion_results r JOIN attempts a ON a.id = r.attempt_id "
                       "WHERE a.run_id = ? AND r.state = 'unavailable'", [_run_id(project)])
    assert rows == [{"role": "gate", "state": "unavailable"}] * 3, rows
    assert "recorded without deciding" not in _view(project)


UNOBSERVED = """
from niceeval_cli import Fact, define_adapter
from niceeval_cli.expect import similarity

chat = define_adapter(name="chat", send=lambda ctx, message: "refunded")  # observes no tool calls

@chat.define_eval()
async def tools(t):
    await t.send("refund A1")
    t.called_tool("refund")
    t.check(Fact.unavailable("log-truncated"), similarity("4"))
"""


def test_an_ungated_boolean_check_that_could_not_be_measured_decides_and_is_not_in_the_note(project) -> None:
    """In a pass-style eval every Boolean assertion decides, gated or not: `called_tool` over turns
    that observed no tool calls errs the attempt (`evidence-unavailable`). The note said it too —
    "recorded without deciding … no verdict rests on them" — though the verdict rested on it."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/tools.py", UNOBSERVED)
    result = project.run(env=WIDE)
    assert result.exit_code == 5, result.stdout + result.stderr
    [attempt] = project.sql("SELECT state, reason FROM attempts")
    assert (attempt["state"], attempt["reason"]) == ("errored", "evidence-unavailable"), attempt
    note = ("note: 1 result recorded without deciding could not be measured (log-truncated × 1); no verdict rests "
            "on it (`.gate()` makes a check decide): niceeval query assertions{} --state unavailable")
    assert note.format("") in result.stdout, result.stdout  # the similarity alone: no verdict rests on it
    assert note.format(f" --run {_run_id(project)}") in _view(project).splitlines()


SHARDED = """
from niceeval_cli import Fact, define_eval
from niceeval_cli.expect import includes, similarity

@define_eval
def first(t):
    t.check("4", includes("4"))
    t.check(Fact.unavailable("log-truncated"), similarity("4"))

@define_eval
def second(t):
    t.check("4", includes("4"))
    t.check(Fact.unavailable("log-truncated"), similarity("4"))
"""


def test_view_of_a_shard_group_counts_every_members_attempts(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/sharded.py", SHARDED)
    for k in (1, 2):
        assert project.run("--shard", f"{k}/2", "--group", "g", "--attempts", "3", env=WIDE).exit_code == 0
    per_run = project.sql("SELECT a.run_id, count(*) AS n FROM attempts a JOIN assertion_results r "
                          "ON r.attempt_id = a.id WHERE r.state = 'unavailable' GROUP BY 1")
    assert len(per_run) == 2 and sum(r["n"] for r in per_run) == 6, per_run  # both shards measured some
    note = ("note: 6 results recorded without deciding could not be measured (log-truncated × 6); no verdict rests "
            "on them (`.gate()` makes a check decide): niceeval query assertions --run g --state unavailable")
    assert note in _view(project, "g").splitlines()
