"""What is stored for a case (datasets.md, "Reading the results"): `attempts.case_id` and the case
value's canonical JSON in `attempts.case_value` (trimmed at 64 KiB like evidence), and a slot
that crosses a process boundary carries its case."""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from niceeval_cli.config import load_config
from niceeval_cli.discovery import discover
from niceeval_cli.runner import RunRequest, execute_spec, plan
from niceeval_cli.runner._spec import SpecMaker, resolve_handles


def _run(project, *args: str):
    root = str(project.root.resolve())
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]
    return project.run(*args)


def as_json(value: object) -> object:
    """A JSON column as `query --format json` gives it: a JSON value (or its text, before 9.22)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # a JSON string, already decoded


def test_attempts_store_the_case_id_and_its_canonical_value(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refunds.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases={"r-1": {"q": "é", "n": [1, 2.5]}, "r-2": "text"})
        def refund(t, case):
            t.check(1, equals(1))

        @define_eval()
        def plain(t):
            t.check(1, equals(1))
    """)
    assert _run(project).exit_code == 0
    rows = {a["eval_id"]: (a["case_id"], as_json(a["case_value"])) for a in project.attempts()}
    assert rows == {
        "refunds/refund[r-1]": ("r-1", {"n": [1, 2.5], "q": "é"}),
        "refunds/refund[r-2]": ("r-2", "text"),
        "refunds/plain": (None, None),
    }


def test_a_large_case_value_is_stored_trimmed_but_fingerprinted_whole(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/big.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases={"big": {"text": "x" * 200_000, "tail": "end"}})
        def big(t, case):
            t.check(len(case["text"]), equals(200_000)).label("the test saw the whole value")
    """)
    assert _run(project).exit_code == 0
    [attempt] = project.attempts()
    stored = as_json(attempt["case_value"])
    assert stored["tail"] == "end"
    compact = json.dumps(stored, ensure_ascii=False, separators=(",", ":"))
    assert len(compact.encode()) <= 64 * 1024
    assert "trimmed" in stored["text"]
    [result] = project.assertions()
    assert result["state"] == "matched"


def test_a_secret_in_a_case_value_is_redacted_in_the_store(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/key.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases={"k": {"header": "Authorization: Bearer sk-abcdefghijklmnopqrstuvwx"}})
        def key(t, case):
            t.check(1, equals(1))
    """)
    assert _run(project).exit_code == 0
    [attempt] = project.attempts()
    assert "sk-abcdefghijklmnopqrstuvwx" not in json.dumps(as_json(attempt["case_value"]))


EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval(cases=[{"id": "a", "n": 1}, {"id": "b", "n": 2}])
def numbers(t, case):
    t.check([t.case_id, case["n"]], equals([t.case_id, case["n"]])).label(f"{t.case_id}={case['n']}")
"""


@pytest.fixture
def specs(project, monkeypatch):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/numbers.py", EVALS)
    monkeypatch.chdir(project.root)
    config = load_config(project.root / "niceeval.toml")
    slots = plan(RunRequest(project=config, evals=discover(config.eval_roots, config.root)), None)
    make = SpecMaker("run-1", config.root)
    return [make(slot) for slot in slots]


def test_the_slot_spec_carries_the_case_id_and_value(specs):
    assert [(s.eval_id, s.case_id, s.case_json) for s in specs] == [
        ("numbers[a]", "a", '{"id":"a","n":1}'),
        ("numbers[b]", "b", '{"id":"b","n":2}'),
    ]


def test_a_worker_rebuilds_the_case_from_the_re_imported_dataset(specs):
    handles = resolve_handles(specs[1])
    assert handles.case is not None and (handles.case.id, handles.case.value) == ("b", {"id": "b", "n": 2})


def test_a_worker_whose_dataset_changed_runs_the_planned_value(specs, project):
    project.write("evals/numbers.py", EVALS.replace('"n": 2', '"n": 20'))
    root = str(project.root.resolve())
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]
    handles = resolve_handles(specs[1])
    assert handles.case is not None and handles.case.value == {"id": "b", "n": 2}


def test_a_spec_run_in_another_process_passes_the_case_to_the_test(specs, project):
    worker = (
        "import asyncio, pickle, sys\n"
        "from niceeval_cli.runner import execute_spec\n"
        "spec = pickle.load(sys.stdin.buffer)\n"
        "sys.stdout.buffer.write(pickle.dumps(asyncio.run(execute_spec(spec))))\n"
    )
    done = subprocess.run([sys.executable, "-c", worker], input=pickle.dumps(specs[0]), capture_output=True,
                          cwd=project.root, check=True)
    sealed = pickle.loads(done.stdout)
    assert (sealed.attempt.eval_id, sealed.attempt.case_id) == ("numbers[a]", "a")
    assert sealed.attempt.case_value == '{"id":"a","n":1}'
    assert [r.label for r in sealed.results] == ["a=1"]


def test_execute_spec_in_process_gives_the_same_record(specs):
    sealed = asyncio.run(execute_spec(specs[1]))
    assert [r.label for r in sealed.results] == ["b=2"]
    assert Path(specs[1].eval_file).name == "numbers.py"


def test_case_metadata_is_stored_and_shown(project):
    project.write("niceeval.toml", "[project]\n")
    source = """
        from niceeval_cli import Case, define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases=[Case("a", 1, metadata={"source": "ticket %s"})])
        def meta(t, case):
            t.check(case, equals(1))
    """
    project.write("evals/meta.py", source % "12")
    assert _run(project).exit_code == 0
    [attempt] = project.attempts()
    assert as_json(attempt["case_metadata"]) == {"source": "ticket 12"}
    shown = project.cli("view", "@" + attempt["id"])
    assert "case metadata" in shown.stdout and "ticket 12" in shown.stdout
    assert "ticket" not in json.dumps(as_json(attempt["fingerprint_parts"]))  # never compared
