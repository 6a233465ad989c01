"""Reuse by fingerprint (config.md, "Reuse"; cli.md, `run_slots`): which earlier attempts a run
adopts as references, which slots execute and why, `--rerun`, `--rerun-all` and `--dry`."""

from __future__ import annotations

import json

import pytest

EVALS = """
from pathlib import Path
from niceeval_cli import Fact, NumericMaterial, define_eval, define_score_eval
from niceeval_cli.expect import equals

LOG = Path(__file__).resolve().parent.parent / "executions.log"


def ran(name):
    with LOG.open("a") as f:
        f.write(name + "\\n")


@define_eval()
def passes(t):
    ran("passes")
    t.check(1, equals(1))


@define_eval()
def fails(t):
    ran("fails")
    t.check(1, equals(2))


@define_eval()
def errors(t):
    ran("errors")
    raise RuntimeError("boom")


@define_score_eval()
def scored(t):
    ran("scored")
    t.check(1, equals(1)).score(1)


@define_score_eval()
def gate_failed(t):
    ran("gate_failed")
    t.check(1, equals(1)).score(1)
    t.check(1, equals(2)).gate()


@define_score_eval()
def unrankable(t):
    ran("unrankable")
    t.score(NumericMaterial.unavailable("unknown"), weight=1)


@define_score_eval()
def gate_unavailable(t):
    ran("gate_unavailable")
    t.check(1, equals(1)).score(1)
    t.check(Fact.unavailable("unknown"), equals(1)).gate()
"""

ALL = {"passes", "fails", "errors", "scored", "gate_failed", "unrankable", "gate_unavailable"}


def executions(project) -> list[str]:
    log = project.root / "executions.log"
    if not log.exists():
        return []
    names = log.read_text().split()
    log.unlink()
    return sorted(names)


def latest_run_id(project) -> str:
    return project.query("runs", "--limit", "1")[0]["id"]


def slots(project, run_id: str | None = None) -> dict[str, dict]:
    """run_slots rows of a run (default: the latest), by eval name."""
    run_id = run_id or latest_run_id(project)
    result = project.cli(
        "query", "--format", "json", "--sql",
        f"SELECT eval_id, ordinal, attempt_id, relation, plan_reason FROM run_slots WHERE run_id = '{run_id}'",
    )
    assert result.exit_code == 0, result.stderr
    return {row["eval_id"].rsplit("/", 1)[-1]: row for row in json.loads(result.stdout)}


@pytest.fixture
def seeded(project):
    """A project whose first run sealed one attempt in every state."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/states.py", EVALS)
    assert project.run().exit_code == 1
    assert executions(project) == sorted(ALL)
    first = {a["eval_id"].rsplit("/", 1)[-1]: a for a in project.attempts()}
    assert {name: (a["state"], a["gate"]) for name, a in first.items()} == {
        "passes": ("passed", None),
        "fails": ("failed", None),
        "errors": ("errored", None),
        "scored": ("scored", "none"),
        "gate_failed": ("scored", "failed"),
        "unrankable": ("unrankable", "none"),
        "gate_unavailable": ("scored", "unavailable"),
    }
    assert {s["plan_reason"] for s in slots(project).values()} == {"new"}
    return first


def test_default_run_adopts_passed_failed_and_scored_attempts(project, seeded):
    result = project.run()
    assert result.exit_code == 1  # the adopted failure still decides the run
    assert executions(project) == sorted(["errors", "unrankable", "gate_unavailable"])
    planned = slots(project)
    for name in ("passes", "fails", "scored", "gate_failed"):
        assert planned[name]["relation"] == "reference"
        assert planned[name]["plan_reason"] == "reused"
        assert planned[name]["attempt_id"] == seeded[name]["id"]
    assert planned["errors"]["plan_reason"] == "previous-errored"
    assert planned["unrankable"]["plan_reason"] == "previous-unrankable"
    for name in ("errors", "unrankable", "gate_unavailable"):
        assert planned[name]["relation"] == "origin"
        assert planned[name]["attempt_id"] != seeded[name]["id"]
    assert "4" in result.stdout and "reused" in result.stdout
    assert "--rerun" in result.stdout


def test_reused_attempts_appear_under_the_new_run_as_references(project, seeded):
    project.run()
    new_run = latest_run_id(project)
    rows = {a["eval_id"].rsplit("/", 1)[-1]: a for a in project.attempts()}
    assert set(rows) == ALL
    assert rows["passes"]["relation"] == "reference"
    assert rows["passes"]["id"] == seeded["passes"]["id"]
    assert rows["passes"]["run_id"] == seeded["passes"]["run_id"] != new_run
    assert rows["errors"]["relation"] == "origin"
    assert rows["errors"]["run_id"] == new_run
    reused_results = [r for r in project.assertions() if r["eval_id"].endswith("/fails")]
    assert [r["state"] for r in reused_results] == ["mismatched"]
    assert reused_results[0]["relation"] == "reference"


def test_rerun_adopts_only_passed_and_scored_with_gate_passed_or_none(project, seeded):
    assert project.run("--rerun").exit_code == 1
    assert executions(project) == sorted(["fails", "errors", "gate_failed", "unrankable", "gate_unavailable"])
    planned = slots(project)
    assert planned["passes"]["relation"] == planned["scored"]["relation"] == "reference"
    assert planned["fails"]["plan_reason"] == "rerun"
    assert planned["gate_failed"]["plan_reason"] == "rerun"
    assert planned["fails"]["relation"] == "origin"


def test_rerun_all_executes_everything(project, seeded):
    assert project.run("--rerun-all").exit_code == 1
    assert executions(project) == sorted(ALL)
    planned = slots(project)
    assert {s["relation"] for s in planned.values()} == {"origin"}
    assert {s["plan_reason"] for s in planned.values()} == {"rerun"}


def test_rerun_and_rerun_all_exclude_each_other(project, seeded):
    result = project.run("--rerun", "--rerun-all")
    assert result.exit_code == 2
    assert executions(project) == []


def test_the_latest_sealed_attempt_of_a_slot_is_the_one_adopted(project, seeded):
    project.run("--rerun")
    rerun_fails = slots(project)["fails"]["attempt_id"]
    executions(project)
    project.run()
    assert slots(project)["fails"]["attempt_id"] == rerun_fails
    assert slots(project)["fails"]["relation"] == "reference"


def test_dry_prints_the_plan_and_runs_nothing(project, seeded):
    runs_before = len(project.query("runs"))
    result = project.run("--dry")
    assert result.exit_code == 0
    assert executions(project) == []
    assert len(project.query("runs")) == runs_before
    for name in ALL:
        assert f"states/{name}" in result.stdout
    assert seeded["passes"]["id"] in result.stdout  # reuse: which attempt
    assert "previous-errored" in result.stdout  # execute: why


def test_dry_json_emits_the_plan_as_an_event(project, seeded):
    result = project.run("--dry", "--json")
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    planned = [e for e in events if e["event"] == "run.planned"]
    assert len(planned) == 1
    assert executions(project) == []
    assert "run_id" in planned[0]


def test_changing_the_eval_source_changes_the_fingerprint_and_dry_names_it(project, seeded):
    source = project.root / "evals/states.py"
    source.write_text(source.read_text() + "\n# an edit\n")
    dry = project.run("--dry")
    assert dry.exit_code == 0
    assert "fingerprint-changed" in dry.stdout
    assert "source" in dry.stdout
    assert executions(project) == []
    project.run()
    planned = slots(project)
    assert {s["plan_reason"] for s in planned.values()} == {"fingerprint-changed"}
    assert {s["relation"] for s in planned.values()} == {"origin"}
    new = {a["eval_id"]: a["fingerprint"] for a in project.attempts()}
    assert all(new[a["eval_id"]] != a["fingerprint"] for a in seeded.values())


def test_changing_the_experiment_model_changes_the_fingerprint(project):
    project.write("niceeval.toml", '[experiments.local]\nmodel = "m-1"\n')
    project.write("evals/one.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def one(t):
            pass
    """)
    assert project.run().exit_code == 0
    project.write("niceeval.toml", '[experiments.local]\nmodel = "m-2"\n')
    dry = project.run("--dry")
    assert "fingerprint-changed" in dry.stdout and "model" in dry.stdout
    project.run()
    assert slots(project)["one"]["plan_reason"] == "fingerprint-changed"


def test_concurrency_and_description_do_not_change_the_fingerprint(project):
    project.write("niceeval.toml", '[experiments.local]\ndescription = "first"\n')
    project.write("evals/one.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def one(t):
            pass
    """)
    assert project.run().exit_code == 0
    project.write("niceeval.toml", '[project]\nmax_concurrency = 1\n[experiments.local]\ndescription = "second"\n')
    assert project.run("--max-concurrency", "2").exit_code == 0
    assert slots(project)["one"]["relation"] == "reference"


def test_an_attempt_longer_than_the_current_timeout_is_not_adopted(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/slowish.py", """
        import asyncio
        from niceeval_cli import define_eval

        @define_eval()
        async def slowish(t):
            await asyncio.sleep(0.3)
    """)
    assert project.run().exit_code == 0
    assert project.run("--timeout", "5000").exit_code == 0
    assert slots(project)["slowish"]["relation"] == "reference"
    project.run("--timeout", "100")
    slot = slots(project)["slowish"]
    assert slot["relation"] == "origin"
    assert slot["plan_reason"] == "timeout-changed"


def test_a_new_attempt_ordinal_is_planned_new(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/grow.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def grow(t):
            pass
    """)
    project.run()
    project.run("--attempts", "2")
    result = project.cli(
        "query", "--format", "json", "--sql",
        "SELECT ordinal, relation, plan_reason FROM run_slots WHERE run_id = "
        "(SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1) ORDER BY ordinal",
    )
    assert json.loads(result.stdout) == [
        {"ordinal": 0, "relation": "reference", "plan_reason": "reused"},
        {"ordinal": 1, "relation": "origin", "plan_reason": "new"},
    ]


def test_changing_the_adapter_version_changes_the_fingerprint(project):
    import sys

    project.write("niceeval.toml", "[project]\n")
    app = """
        from niceeval_cli import define_adapter

        adapter = define_adapter(name="app", version="{version}", create=lambda ctx: None)
    """
    project.write("versioned_app.py", app.replace("{version}", "1"))
    project.write("evals/versioned.py", """
        from versioned_app import adapter

        @adapter.define_eval()
        def versioned(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert project.run().exit_code == 0
    assert slots(project)["versioned"]["relation"] == "reference"
    project.write("versioned_app.py", app.replace("{version}", "2"))
    for name in ("versioned_app", "evals.versioned", "evals"):  # a new process would import afresh
        sys.modules.pop(name, None)
    dry = project.run("--dry")
    assert "fingerprint-changed" in dry.stdout and "adapter" in dry.stdout
    project.run()
    assert slots(project)["versioned"]["plan_reason"] == "fingerprint-changed"


def test_json_plan_event_names_each_slots_decision(project, seeded):
    result = project.run("--json")
    planned = json.loads(result.stdout.splitlines()[0])
    assert planned["event"] == "run.planned"
    by_eval = {s["eval_id"].rsplit("/", 1)[-1]: s for s in planned["slots"]}
    assert set(by_eval) == ALL
    assert by_eval["passes"]["decision"] == "reuse"
    assert by_eval["passes"]["attempt_id"] == seeded["passes"]["id"]
    assert by_eval["errors"]["decision"] == "execute"
    assert by_eval["errors"]["plan_reason"] == "previous-errored"
    finished = json.loads(result.stdout.splitlines()[-1])
    assert finished["event"] == "run.finished"
    assert finished["exit_code"] == 1
    sealed = [json.loads(line) for line in result.stdout.splitlines() if '"attempt.sealed"' in line]
    assert sorted(e["attempt"]["eval_id"].rsplit("/", 1)[-1] for e in sealed) == sorted(
        ["errors", "unrankable", "gate_unavailable"]
    )


def test_json_plan_fingerprints_are_the_ones_the_attempts_store(project, seeded):
    """A reused slot's fingerprint is its attempt's; an executed slot's is hashed only when its
    attempt is made (the plan holds none), and is the one that attempt stores."""
    first_run = latest_run_id(project)
    result = project.run("--json")
    planned = {s["eval_id"].rsplit("/", 1)[-1]: s for s in json.loads(result.stdout.splitlines()[0])["slots"]}
    now = {a["eval_id"].rsplit("/", 1)[-1]: a for a in project.attempts()}
    for name, slot in planned.items():
        assert slot["fingerprint"] == now[name]["fingerprint"], name
        if slot["decision"] == "reuse":
            assert (slot["attempt_id"], slot["from_run_id"]) == (seeded[name]["id"], first_run)
            assert now[name]["fingerprint"] == seeded[name]["fingerprint"]
        else:
            assert slot["attempt_id"] is None and slot["from_run_id"] is None and slot["changed"] == []
    assert {n for n, s in planned.items() if s["decision"] == "execute"} == {"errors", "unrankable", "gate_unavailable"}


def _sql(project, statement: str) -> list[dict]:
    result = project.cli("query", "--format", "json", "--sql", statement)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_reusing_runs_plan_is_its_executed_slots_plus_its_reference_slots(project, seeded):
    """Schema 4: the plan does not repeat adopted slots, yet it reads whole and nothing is `not run`."""
    project.run()
    run_id = latest_run_id(project)
    planned = _sql(project, f"SELECT eval_id FROM run_plan WHERE run_id = '{run_id}'")
    assert sorted(r["eval_id"].rsplit("/", 1)[-1] for r in planned) == ["errors", "gate_unavailable", "unrankable"]
    from niceeval_cli.store import Store

    with Store.open(project.root / ".niceeval" / "results.db", readonly=True) as store:
        assert sorted(p.eval_id.rsplit("/", 1)[-1] for p in store.run_plan(run_id)) == sorted(ALL)
        assert store.not_run(run_id) == []
    assert project.query("runs", "--limit", "1")[0]["not_run"] == 0


def test_a_run_that_reuses_everything_writes_no_plan_rows_and_counts_nothing_not_run(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", "from niceeval_cli import define_eval\n\n\n"
                  "@define_eval()\ndef one(t):\n    pass\n\n\n@define_eval()\ndef two(t):\n    pass\n")
    assert project.run().exit_code == 0
    assert project.run().exit_code == 0
    run_id = latest_run_id(project)
    assert _sql(project, f"SELECT count(*) AS n FROM run_plan WHERE run_id = '{run_id}'") == [{"n": 0}]
    assert {s["relation"] for s in slots(project, run_id).values()} == {"reference"}
    row = project.query("runs", "--limit", "1")[0]
    assert (row["id"], row["not_run"], row["planned_total"]) == (run_id, 0, 2)
    assert "not run" not in project.cli("view").stdout


def test_previous_attempts_looked_up_in_batches_are_each_adopted_once(project, monkeypatch):
    """Planning asks the store for a batch of evals at a time: every slot of every batch (and of
    a last, partial one) still finds its own previous attempt."""
    from niceeval_cli.runner import _plan

    monkeypatch.setattr(_plan, "_LOOKUP_BATCH", 2)
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/many.py", "from niceeval_cli import define_eval\n\nfor i in range(5):\n"
                  "    globals()[f'e{i}'] = define_eval(name=f'e{i}', test=lambda t: None, attempts=2)\n")
    assert project.run().exit_code == 0
    first = {(a["eval_id"], a["ordinal"]): a["id"] for a in project.attempts()}
    assert len(first) == 10
    assert project.run().exit_code == 0
    again = _sql(project, "SELECT eval_id, ordinal, attempt_id, relation FROM run_slots "
                                     f"WHERE run_id = '{latest_run_id(project)}'")
    assert {(r["eval_id"], r["ordinal"]): r["attempt_id"] for r in again} == first
    assert {r["relation"] for r in again} == {"reference"}


def test_a_re_run_of_many_reused_slots_names_each_ones_attempt(project):
    """Reused slots hold their attempts' ids in blocks of 256 (`ReusedSlot.pack`): 300 slots
    cross a block, and each still names its own attempt and run."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/many.py", """
        from niceeval_cli import define_eval

        def _test(t):
            pass

        for i in range(300):
            globals()[f"e{i:03d}"] = define_eval(test=_test, name=f"e{i:03d}")
    """)
    assert project.run().exit_code == 0
    first_run = latest_run_id(project)
    sealed = {a["eval_id"]: a["id"] for a in project.attempts()}
    result = project.run("--dry", "--json")
    [event] = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(event["slots"]) == 300
    assert {s["eval_id"]: s["attempt_id"] for s in event["slots"]} == sealed
    assert {s["from_run_id"] for s in event["slots"]} == {first_run}


def test_a_reused_slot_reads_back_the_attempt_it_reuses_whatever_its_id_looks_like():
    from niceeval_cli.runner._plan import ReusedSlot

    prior = ("run", "passed", None)
    ids = ["old-0", f"{1:026d}", "a-much-longer-id-than-any-niceeval-makes-0123456789"]
    slots = [ReusedSlot(None, None, i, None, ids[i], prior) for i in range(3)]  # type: ignore[arg-type]
    assert [(s.reuse_attempt_id, s.reuse_run_id, s.reuse_state, s.reuse_gate) for s in slots] == [
        (i, "run", "passed", None) for i in ids]
