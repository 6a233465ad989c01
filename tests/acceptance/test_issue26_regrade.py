"""Issue 26 items 2 and 8 (judge-trust.md §2): judge inputs stored at sealing, and `niceeval regrade`.

The real `niceeval` in subprocesses against real loopback servers: a judge that grades by model
(it counts the grading requests each model got) and a system under test the eval code calls (it
must get no request while a run is regraded). Stored rows are read with sqlite3."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Loopback, Reply
from tests.support.project import Project as Proj

ENV = {"JK": "sk-test-regradeKey0123456789abcdef"}
FIXTURES = Path(__file__).parent / "fixtures"

EVALS = '''
import pathlib
import urllib.request

from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals

SUT = "{sut}"
RAN = pathlib.Path(__file__).with_name("ran.log")


@define_eval(judge=True)
async def capital(t):
    with RAN.open("a") as log:  # eval code ran: regrade must never add a line
        log.write("capital\\n")
    answer = urllib.request.urlopen(SUT + "/answer").read().decode()
    t.check(answer, equals("Paris.")).label("exact")
    await t.check({{"input": "What is the capital of France?", "output": answer}},
                  closed_qa("Does it name the capital?").at_least(1)).gate().label("capital").or_stop()
    t.check({{"input": "Is it polite?", "output": answer}}, closed_qa("Is the answer polite?")).label("polite")
'''


class Judges:
    """The loopback judge: model `judge-a` says Y to everything, `judge-b` says N to the capital
    question; `counts()` is the grading requests per model."""

    def __init__(self) -> None:
        self.server = JudgeServer().start()
        self.server.default = Reply.tool("Y", "judge-a agrees")
        self.server.when("judge-b", Reply.tool("N", "judge-b disagrees"))

    def counts(self) -> dict[str, int]:
        seen: dict[str, int] = {}
        for request in self.server.grading_requests:
            model = str(request.json["model"])  # type: ignore[index]
            seen[model] = seen.get(model, 0) + 1
        return seen


@pytest.fixture
def judges() -> Iterator[Judges]:
    made = Judges()
    try:
        yield made
    finally:
        made.server.stop()


@pytest.fixture
def sut() -> Iterator[Loopback]:
    server = Loopback(lambda method, path, body: (200, b"Paris.", "text/plain"))
    try:
        yield server
    finally:
        server.stop()


def _project(proj: Proj, judges: Judges, sut: Loopback, *, attempts: int = 2, extra: str = "") -> None:
    proj.write("niceeval.toml", f'''
        [project]
        attempts = {attempts}

        [judge]
        model = "judge-a"
        base_url = "{judges.server.base_url}"
        api_key_env = "JK"
        max_retries = 0
        {extra}
    ''')
    proj.write("evals/capital.py", EVALS.format(sut=sut.url))


def _ran(proj: Proj) -> int:
    log = proj.root / "evals" / "ran.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


# ── judge inputs, sealed by `run` ───────────────────────────────────────────────────────────


def test_run_stores_each_distinct_judge_input_once_and_every_judge_result_points_at_it(
        proj: Proj, judges: Judges, sut: Loopback):
    _project(proj, judges, sut)
    done = proj.run(env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    inputs = proj.sql("SELECT sha256, content FROM judge_inputs ORDER BY content")
    assert len(inputs) == 2  # two attempts × two judges, the same two inputs each time
    for row in inputs:
        assert hashlib.sha256(row["content"].encode()).hexdigest() == row["sha256"]
    capital = json.loads(inputs[0]["content"])
    assert capital == {
        "factory": "closed_qa", "question": "Does it name the capital?", "choices": {"Y": 1.0, "N": 0.0},
        "scale_version": "1", "max_material_bytes": 256 * 1024, "max_audit_bytes": 1024 * 1024,
        "subject": {"input": "What is the capital of France?", "output": "Paris."},
    }
    results = proj.sql("SELECT label, judge_input FROM assertion_results ORDER BY label")
    assert {r["label"] for r in results if r["judge_input"] is None} == {"exact"}  # not a judge
    assert {r["judge_input"] for r in results if r["judge_input"]} == {r["sha256"] for r in inputs}
    (run,) = proj.sql("SELECT kind, regrade_of FROM runs")
    assert (run["kind"], run["regrade_of"]) == ("run", None)
    assert [a["regraded_from"] for a in proj.sql("SELECT regraded_from FROM attempts")] == [None, None]


def test_a_judge_input_is_stored_redacted(proj: Proj, judges: Judges, sut: Loopback):
    proj.write("niceeval.toml", f'''
        [judge]
        model = "judge-a"
        base_url = "{judges.server.base_url}"
        api_key_env = "JK"
    ''')
    proj.write("evals/leak.py", '''
        import os
        from niceeval_cli import define_eval
        from niceeval_cli.expect import closed_qa

        @define_eval(judge=True)
        def leak(t):
            t.check({"input": "key?", "output": "the key is " + os.environ["JK"]}, closed_qa("Is it secret?"))
    ''')
    assert proj.run(env=ENV).returncode == 0
    (row,) = proj.sql("SELECT content FROM judge_inputs")
    assert ENV["JK"] not in row["content"] and "[redacted]" in row["content"]


def test_the_file_keeps_judge_inputs_insert_only(proj: Proj, judges: Judges, sut: Loopback):
    _project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    con = sqlite3.connect(proj.store)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="insert-only"):
            con.execute("UPDATE judge_inputs SET content = '{}'")
        with pytest.raises(sqlite3.DatabaseError, match="insert-only"):
            con.execute("DELETE FROM judge_inputs")
        sha = con.execute("SELECT sha256 FROM judge_inputs LIMIT 1").fetchone()[0]
        con.execute("INSERT OR REPLACE INTO judge_inputs VALUES (?, 'forged')", [sha])  # skipped, not replaced
        assert con.execute("SELECT content FROM judge_inputs WHERE sha256 = ?", [sha]).fetchone()[0] != "forged"
    finally:
        con.close()


# ── a store from the previous schema ────────────────────────────────────────────────────────


def _schema8_store(proj: Proj) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.store.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(proj.store)
    con.executescript((FIXTURES / "issue26_schema8_store.sql").read_text())
    con.close()


def _all_rows(store: Path) -> dict[str, list[tuple[object, ...]]]:
    con = sqlite3.connect(store)
    try:
        tables = ("runs", "attempts", "assertion_results", "run_slots", "labels")
        return {t: sorted(map(tuple, con.execute(f"SELECT * FROM {t}").fetchall()), key=repr) for t in tables}
    finally:
        con.close()


def test_a_schema_8_store_is_upgraded_keeping_every_earlier_row(proj: Proj):
    _schema8_store(proj)
    before = _all_rows(proj.store)
    assert proj.cli("view", env=ENV).returncode == 0  # a reader upgrades the file
    after = _all_rows(proj.store)
    assert sqlite3.connect(proj.store).execute("PRAGMA user_version").fetchone()[0] == 9
    for table, rows in before.items():  # each earlier row, with NULL in the new columns
        assert len(after[table]) == len(rows), table
        assert sorted(r[:len(rows[0])] for r in after[table]) == sorted(rows), table
    assert proj.sql("SELECT count(*) AS n FROM judge_inputs")[0]["n"] == 0
    assert {r["judge_input"] for r in proj.sql("SELECT judge_input FROM assertion_results")} == {None}


def test_merge_brings_a_stores_judge_inputs_once(proj: Proj, judges: Judges, sut: Loopback, tmp_path: Path):
    _project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    target = tmp_path / "merged.db"
    for _ in range(2):  # merging twice changes nothing
        done = proj.cli("merge", str(proj.store), "--into", str(target), env=ENV)
        assert done.returncode == 0, done.stdout + done.stderr
    assert proj.sql("SELECT count(*) AS n FROM judge_inputs", store=target)[0]["n"] == 2
    assert "2 judge input(s)" in proj.cli("merge", str(proj.store), "--into", str(tmp_path / "m2.db"), env=ENV).stdout
