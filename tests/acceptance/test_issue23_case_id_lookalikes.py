"""Issue 23, item 21: case ids that differ only by Unicode normalisation (NFC vs NFD) or a trailing
space print identically, so they are the duplicate-case-id error naming both — for `cases=` and
for a loaded dataset — never two cases that look the same."""

from __future__ import annotations

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


INLINE = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(cases={IDS})
def answers(t, case):
    t.check("yes", includes("y")).label("has y")
'''

LOADED = '''
from niceeval_cli import define_eval
from niceeval_cli.datasets import load_jsonl
from niceeval_cli.expect import includes


@define_eval(cases=load_jsonl("rows.jsonl"))
def answers(t, case):
    t.check("yes", includes("y")).label("has y")
'''


@pytest.mark.parametrize(("ids", "shown"), [
    ('{"caf\\u00e9": 1, "cafe\\u0301": 2}', ("'caf\\xe9'", "'cafe\\u0301'")),  # NFC, NFD
    ('[{"id": "r-01", "q": 1}, {"id": "r-01 ", "q": 2}]', ("'r-01'", "'r-01 '")),  # a trailing space
])
def test_lookalike_case_ids_are_the_duplicate_id_error(proj: Project, ids: str, shown: tuple[str, str]) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/ds.py", INLINE.replace("{IDS}", ids))
    for command in (("run",), ("list",)):
        res = proj.cli(*command)
        assert res.returncode == 2, res.stdout + res.stderr
        assert "Traceback" not in res.stderr
        assert "evals/ds.py" in res.stderr and "must be unique" in res.stderr, res.stderr
        assert shown[0] in res.stderr and shown[1] in res.stderr, res.stderr
    assert not proj.store.exists() or proj.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]


def test_lookalike_ids_in_a_loaded_dataset_name_both_rows(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/ds.py", LOADED)
    (proj.root / "evals" / "rows.jsonl").write_text(
        '{"id": "caf\\u00e9", "q": 1}\n{"id": "x", "q": 2}\n{"id": "cafe\\u0301", "q": 3}\n', encoding="utf-8")
    res = proj.run()
    assert res.returncode == 2, res.stdout + res.stderr
    assert "rows.jsonl:1" in res.stderr and "rows.jsonl:3" in res.stderr, res.stderr
    assert "'caf\\xe9'" in res.stderr and "'cafe\\u0301'" in res.stderr, res.stderr


def test_ids_that_only_look_close_stay_two_cases(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/ds.py", INLINE.replace("{IDS}", '{"r-01": 1, " r-01": 2, "R-01": 3}'))
    res = proj.run()
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(proj.sql("SELECT id FROM attempts")) == 3
