"""Issue 26 item 5 (judge-trust.md §4): `niceeval judge agreement` figures per judge identity.

A real run against a loopback judge that answers each case as scripted, human labels imported
with `niceeval label import`, the figures read from `judge agreement` and compared with values
computed by hand (kappa to four decimals)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

ENV = {"JK": "sk-test-agreementKey0123456789abcdef"}
#: The judge's answer per case: Y for c00–c10, N for c11–c17.
JUDGE = {f"c{i:02d}": ("Y" if i <= 10 else "N") for i in range(18)}

EVALS = f'''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals, factuality

CASES = {sorted(JUDGE)!r}


@define_eval(judge=True, cases={{c: c for c in CASES}})
def answers(t, case):
    material = {{"input": "question " + case, "output": "answer-" + case}}
    t.check(material, closed_qa("Does it answer the question?").at_least(1)).label("right")
    t.check(material, factuality("REF-FACTS: the reference facts."), ).label("facts")
    t.check(case, equals(case)).label("same")
'''


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    proj = Project(tmp_path_factory.mktemp("agreement") / "proj", in_process=True)
    with JudgeServer() as judge:
        judge.when("REF-FACTS", Reply.tool("A", "a consistent subset"))  # factuality: 0.4 everywhere
        for case, choice in JUDGE.items():
            judge.when(f"answer-{case}", Reply.tool(choice, f"says {choice}"))
        proj.write("niceeval.toml", f'''
            [judge]
            model = "judge-m"
            base_url = "{judge.base_url}"
            api_key_env = "JK"
        ''')
        proj.write("evals/qa.py", EVALS)
        done = proj.run(env=ENV)
        assert done.returncode in (0, 1), done.stdout + done.stderr
    yield proj.root


@pytest.fixture
def proj(judged: Path, tmp_path: Path) -> Project:
    shutil.copytree(judged, tmp_path / "proj")
    return Project(tmp_path / "proj", in_process=True)


def _attempts(proj: Project) -> dict[str, str]:
    return {r["case_id"]: r["id"] for r in proj.sql("SELECT id, case_id FROM attempts")}


def _import(proj: Project, tmp_path: Path, rows: list[tuple[str, str | None, float, str]]) -> None:
    ids = _attempts(proj)
    file = tmp_path / "labels.jsonl"
    file.write_text("".join(json.dumps({"attempt_id": ids[case], "assertion_key": key, "value": value,
                                        "author": author}) + "\n" for case, key, value, author in rows),
                    encoding="utf-8")
    done = proj.cli("label", "import", str(file), env=ENV)
    assert done.returncode == 0, done.stderr


#: 20 effective pairs on `right`: tp 9, fp 2, fn 3, tn 4 + 2 (bob) — and ada's first, wrong label
#: on c00 superseded by her later one.
RIGHT = [
    ("c00", "right", 0, "ada"),  # superseded below
    *((f"c{i:02d}", "right", 1, "ada") for i in range(9)),  # judge Y, human pass: tp 9
    ("c09", "right", 0, "ada"), ("c10", "right", 0, "ada"),  # judge Y, human fail: fp 2
    *((f"c{i:02d}", "right", 1, "ada") for i in (11, 12, 13)),  # judge N, human pass: fn 3
    *((f"c{i:02d}", "right", 0, "ada") for i in (14, 15, 16, 17)),  # judge N, human fail: tn 4
    ("c14", "right", 0, "bob"), ("c15", "right", 0, "bob"),  # a second author: two more pairs, tn 6
]
#: factuality (unthresholded, the judge says 0.4 everywhere): one exact match, one pass it missed.
FACTS = [("c00", "facts", 0.4, "ada"), ("c01", "facts", 0.6, "ada")]
#: Neither a non-judge assertion nor a whole attempt has a judge identity: not counted.
OTHERS = [("c02", "same", 1, "ada"), ("c03", None, 0, "ada")]


def test_agreement_per_judge_identity_matches_the_figures_computed_by_hand(proj: Project, tmp_path: Path):
    _import(proj, tmp_path, RIGHT + FACTS + OTHERS)
    done = proj.cli("judge", "agreement", "--format", "json", env=ENV)
    assert done.returncode == 0, done.stderr
    rows = {r["factory"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {"closed_qa", "factuality"}
    right = rows["closed_qa"]
    assert (right["model"], right["version"], right["criterion"]) == (
        "judge-m", "prompt-1/scale-1", "Does it answer the question?")
    import hashlib
    assert right["criterion_sha256"] == hashlib.sha256(b"Does it answer the question?").hexdigest()[:12]
    assert (right["labels"], right["tp"], right["fp"], right["fn"], right["tn"]) == (20, 9, 2, 3, 6)
    # p_o = 15/20; p_e = (11·12 + 9·8) / 400 = 0.51; kappa = 0.24 / 0.49
    assert (right["accuracy"], round(right["kappa"], 4)) == (0.75, 0.4898)
    assert (round(right["accuracy_low"], 4), round(right["accuracy_high"], 4)) == (0.5313, 0.8881)
    assert (right["tpr"], right["tnr"]) == (0.75, 0.75)
    assert right["exact"] is None  # thresholded: decisions only
    facts = rows["factuality"]
    assert (facts["labels"], facts["tp"], facts["fp"], facts["fn"], facts["tn"]) == (2, 0, 0, 1, 1)
    assert (facts["kappa"], facts["tpr"], facts["tnr"], facts["exact"], facts["exact_n"]) == (0.0, 0.0, 1.0, 0.5, 2)

    table = proj.cli("judge", "agreement", env=ENV)
    assert table.returncode == 0, table.stderr
    assert "0.4898" in table.stdout and "0.7500 [0.5313, 0.8881]" in table.stdout and "9/2/3/6" in table.stdout
    assert right["criterion_sha256"] + "  Does it answer the question?" in table.stdout
    csv = proj.cli("judge", "agreement", "--format", "csv", env=ENV)
    assert csv.stdout.splitlines()[0].startswith("model,factory,version,criterion_sha256,criterion,labels,accuracy")


def test_a_run_scope_counts_only_that_runs_attempts_and_an_unlabelled_store_says_so(proj: Project, tmp_path: Path):
    empty = proj.cli("judge", "agreement", env=ENV)
    assert empty.returncode == 0 and "No labelled judge results" in empty.stdout
    assert json.loads(proj.cli("judge", "agreement", "--format", "json", env=ENV).stdout) == []
    _import(proj, tmp_path, RIGHT)
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    scoped = json.loads(proj.cli("judge", "agreement", "--run", run_id, "--format", "json", env=ENV).stdout)
    assert [(r["factory"], r["labels"]) for r in scoped] == [("closed_qa", 20)]
    unknown = proj.cli("judge", "agreement", "--run", "NOSUCHRUN", env=ENV)
    assert unknown.returncode == 2 and "NOSUCHRUN" in unknown.stderr
    bad = proj.cli("judge", "agreement", "--format", "xml", env=ENV)
    assert bad.returncode == 2 and "--format" in bad.stderr


def test_a_judge_result_without_a_measurement_is_counted_apart(tmp_path: Path):
    proj = Project(tmp_path / "proj", in_process=True)
    with JudgeServer() as judge:
        judge.when("answer-c00", Reply.tool("Y"))
        judge.when("answer-c01", Reply.error(503))  # unavailable: no measurement to set against the label
        judge.when("answer-c02", Reply.tool("N"))
        proj.write("niceeval.toml", f'''
            [judge]
            model = "judge-m"
            base_url = "{judge.base_url}"
            api_key_env = "JK"
            max_retries = 0
        ''')
        proj.write("evals/qa.py", EVALS.replace(repr(sorted(JUDGE)), repr(["c00", "c01", "c02"])))
        proj.run(env=ENV)
    _import(proj, tmp_path, [("c00", "right", 1, "ada"), ("c01", "right", 1, "ada"), ("c02", "right", 1, "ada")])
    row = json.loads(proj.cli("judge", "agreement", "--format", "json", env=ENV).stdout)[0]
    assert (row["labels"], row["tp"], row["fn"], row["unmeasured"]) == (2, 1, 1, 1)
    assert "+1 unmeasured" in proj.cli("judge", "agreement", env=ENV).stdout


def test_between_two_runs_pairs_results_by_original_attempt_and_key(proj: Project):
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    done = proj.cli("judge", "agreement", "--between", run_id, run_id, "--format", "json", env=ENV)
    assert done.returncode == 0, done.stderr
    rows = {r["factory"]: r for r in json.loads(done.stdout)}
    right = rows["closed_qa"]
    assert (right["pairs"], right["tp"], right["tn"], right["kappa"]) == (18, 11, 7, 1.0)
    assert right["reference_model"] == "judge-m"
    assert rows["factuality"]["exact"] == 1.0
    both = proj.cli("judge", "agreement", "--between", run_id, run_id, "--run", run_id, env=ENV)
    assert both.returncode == 2


def test_the_report_has_a_judges_section_only_once_labels_exist(proj: Project, tmp_path: Path):
    before = tmp_path / "before.html"
    assert proj.cli("report", "--out", str(before), env=ENV).returncode == 0
    assert 'id="judges"' not in before.read_text(encoding="utf-8")
    _import(proj, tmp_path, [*RIGHT, ("c00", "facts", 0.4, "ada")])
    after = tmp_path / "after.html"
    done = proj.cli("report", "--out", str(after), env=ENV)
    assert done.returncode == 0, done.stderr
    page = after.read_text(encoding="utf-8")
    section = page[page.index('<section id="judges"'):]
    section = section[:section.index("</section>")]
    assert "Judges" in section and "judge-m · closed_qa · prompt-1/scale-1" in section
    assert "Does it answer the question?" in section and "0.4898" in section and "9/2/3/6" in section
    assert "0.7500 [0.5313, 0.8881]" in section
