"""Issue 26 item 5 (judge-trust.md §4): the opt-in calibration gate, `min_human_kappa` / `min_labels`.

A real run against a loopback judge, people's labels imported, then runs with the gate on: a
judge identity with too few effective labels or too low a kappa is `unavailable`
(`judge-uncalibrated`, the figures in its explanation) and so decides no gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


ENV = {"JK": "sk-test-calibrationKey0123456789abcdef"}
#: The judge says Y for c00–c10, N for c11–c17 (as in test_issue26_agreement).
JUDGE = {f"c{i:02d}": ("Y" if i <= 10 else "N") for i in range(18)}

EVALS = f'''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa


@define_eval(judge=True, cases={{c: c for c in {sorted(JUDGE)!r}}})
def answers(t, case):
    material = {{"input": "question " + case, "output": "answer-" + case}}
    t.check(material, closed_qa("Does it answer the question?").at_least(1)).gate().label("right")
'''

#: 20 effective pairs: tp 9, fp 2, fn 3, tn 6 → kappa 0.4898.
LABELS = [
    *((f"c{i:02d}", 1, "ada") for i in range(9)),
    ("c09", 0, "ada"), ("c10", 0, "ada"),
    *((f"c{i:02d}", 1, "ada") for i in (11, 12, 13)),
    *((f"c{i:02d}", 0, "ada") for i in (14, 15, 16, 17)),
    ("c14", 0, "bob"), ("c15", 0, "bob"),
]


def _config(proj: Project, judge: JudgeServer, gate: str) -> None:
    proj.write("niceeval.toml", f'''
        [judge]
        model = "judge-m"
        base_url = "{judge.base_url}"
        api_key_env = "JK"
        {gate}
    ''')


def _latest(proj: Project) -> list[dict[str, object]]:
    return proj.sql("SELECT a.case_id, a.state AS attempt_state, r.state, r.reason, r.measurement, r.explanation "
                    "FROM attempts a JOIN assertion_results r ON r.attempt_id = a.id "
                    "WHERE a.run_id = (SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1) "
                    "ORDER BY a.case_id")


def test_the_gate_holds_back_a_judge_with_too_few_labels_or_too_low_a_kappa(tmp_path: Path):
    proj = Project(tmp_path / "proj", in_process=True)
    with JudgeServer() as judge:
        for case, choice in JUDGE.items():
            judge.when(f"answer-{case}", Reply.tool(choice, f"says {choice}"))
        proj.write("evals/qa.py", EVALS)
        _config(proj, judge, "")
        assert proj.run(env=ENV).returncode == 1  # the judge fails c11–c17: a definite failure
        ids = {r["case_id"]: r["id"] for r in proj.sql("SELECT id, case_id FROM attempts")}
        file = tmp_path / "labels.jsonl"
        file.write_text("".join(json.dumps({"attempt_id": ids[c], "assertion_key": "right", "value": v,
                                            "author": a}) + "\n" for c, v, a in LABELS), encoding="utf-8")
        assert proj.cli("label", "import", str(file), env=ENV).returncode == 0

        # Kappa 0.4898 over 20 labels clears a 0.4 floor: the judge decides as before.
        _config(proj, judge, "min_human_kappa = 0.4")
        done = proj.run(env=ENV)
        assert done.returncode == 1, done.stdout + done.stderr
        rows = _latest(proj)
        assert len(rows) == 18 and {r["state"] for r in rows} == {"met", "below"}

        # A 0.6 floor: every judge result is unavailable, the figures in its explanation, the
        # measurement kept for labelling; nothing failed for certain, so exit 5.
        _config(proj, judge, "min_human_kappa = 0.6")
        done = proj.run(env=ENV)
        assert done.returncode == 5, done.stdout + done.stderr
        rows = _latest(proj)
        assert {(r["state"], r["reason"], r["attempt_state"]) for r in rows} == {
            ("unavailable", "judge-uncalibrated", "errored")}
        c00 = rows[0]
        assert c00["measurement"] == 1.0
        assert "kappa 0.4898 < min_human_kappa 0.6 over 20 effective human label(s)" in str(c00["explanation"])
        view = proj.cli("view", env=ENV)
        assert "judge-uncalibrated" in view.stdout, view.stdout

        # Enough kappa but too few labels: min_labels counts effective labels.
        _config(proj, judge, "min_human_kappa = 0.4\nmin_labels = 21")
        assert proj.run(env=ENV).returncode == 5
        assert "20 effective human label(s) < min_labels 21" in str(_latest(proj)[0]["explanation"])

        # Another criterion is another judge identity: unlabelled, so uncalibrated.
        proj.write("evals/qa.py", EVALS.replace("Does it answer the question?", "Is it right?"))
        _config(proj, judge, "min_human_kappa = 0.4")
        assert proj.run(env=ENV).returncode == 5
        assert "0 effective human label(s) < min_labels 20" in str(_latest(proj)[0]["explanation"])


def test_a_bad_gate_setting_is_a_configuration_error_naming_the_key(tmp_path: Path):
    proj = Project(tmp_path / "proj", in_process=True)
    proj.write("evals/qa.py", EVALS)
    for bad, says in (("min_human_kappa = 2", "min_human_kappa"), ("min_labels = 0", "min_labels")):
        proj.write("niceeval.toml", f'''
            [judge]
            model = "judge-m"
            {bad}
        ''')
        done = proj.run(env=ENV)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_results_decided_by_a_judge_that_no_longer_clears_the_gate_are_not_reused(tmp_path: Path):
    """The gate reads the labels in the store when a run starts: a pass decided while the judge
    cleared it stands only while it still does. A label that leaves the judge clearing it
    changes nothing; labels that show it disagrees with people run its evals again."""
    proj = Project(tmp_path / "proj", in_process=True)
    with JudgeServer() as judge:
        for case, choice in JUDGE.items():
            judge.when(f"answer-{case}", Reply.tool(choice, f"says {choice}"))
        proj.write("evals/qa.py", EVALS)
        _config(proj, judge, "")
        assert proj.run(env=ENV).returncode == 1
        ids = {r["case_id"]: r["id"] for r in proj.sql("SELECT id, case_id FROM attempts")}

        def label(rows: list[tuple[str, int, str]]) -> None:
            file = tmp_path / "labels.jsonl"
            file.write_text("".join(json.dumps({"attempt_id": ids[c], "assertion_key": "right", "value": v,
                                                "author": a}) + "\n" for c, v, a in rows), encoding="utf-8")
            assert proj.cli("label", "import", str(file), env=ENV).returncode == 0

        def plan() -> list[tuple[str, str, list[str]]]:
            done = proj.run("--dry", "--json", env=ENV)
            assert done.returncode == 0, done.stdout + done.stderr
            [event] = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
            return sorted({(s["decision"], s["plan_reason"], tuple(s["changed"])) for s in event["slots"]})

        label(LABELS)  # kappa 0.4898 over 20 labels
        _config(proj, judge, "min_human_kappa = 0.4")
        assert proj.run(env=ENV).returncode == 1  # the judge clears the gate: it decides
        assert plan() == [("reuse", "reused", ())]
        label([("c00", 1, "cyd")])  # one more label agreeing with the judge: it still clears the gate
        assert plan() == [("reuse", "reused", ())]
        assert proj.run(env=ENV).returncode == 1

        # cyd disagrees with the judge on every case: kappa falls below 0.4, and a run starting
        # now holds the judge back. Its earlier verdicts are not reused.
        label([(c, 0 if choice == "Y" else 1, "cyd") for c, choice in JUDGE.items()])
        assert plan() == [("execute", "fingerprint-changed", ("calibration",))]
        done = proj.run(env=ENV)
        assert done.returncode == 5, done.stdout + done.stderr
        assert {r["reason"] for r in _latest(proj)} == {"judge-uncalibrated"}
