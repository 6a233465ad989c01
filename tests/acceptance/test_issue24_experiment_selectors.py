"""Issue 24, item 2 (experiment prefix matching with one meaning).

`run -e` and the readers' `--experiment` (`view`, `query`, the run listing) decide alike: an exact
id selects that experiment alone, a selector ending in `/` selects the group of ids starting
with it (docs/cli.md, "Selecting experiments"). Before, `run -e models` also ran `models/a` and
`modelsz`, while `query --experiment models` read `models` alone.
"""

from __future__ import annotations

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


EVAL = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
def hello(t):
    t.check("hello", includes("h")).label("says hello")
'''

CONFIG = '''
[project]

[experiments.models]
[experiments."models/a"]
[experiments."models/b"]
[experiments.modelsz]
'''


def _experiments_of_latest_run(proj: Project) -> list[str]:
    """What the latest run planned (its slots, run or reused), read straight from the file."""
    rows = proj.sql("SELECT DISTINCT experiment_id FROM run_slots "
                    "WHERE run_id = (SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1) ORDER BY 1")
    return [row["experiment_id"] for row in rows]


def test_run_and_the_readers_select_the_same_experiments(proj: Project) -> None:
    proj.write("niceeval.toml", CONFIG)
    proj.write("evals/hello.py", EVAL)

    group = proj.run("-e", "models/")
    assert group.returncode == 0, group.stdout + group.stderr
    assert _experiments_of_latest_run(proj) == ["models/a", "models/b"]
    read = proj.query_json("attempts", "--experiment", "models/")
    assert sorted(r["experiment_id"] for r in read) == ["models/a", "models/b"]
    view = proj.cli("view", "--experiment", "models/")
    assert view.returncode == 0, view.stdout + view.stderr
    assert "models/a" in view.stdout and "models/b" in view.stdout and "modelsz" not in view.stdout

    one = proj.run("-e", "models")
    assert one.returncode == 0, one.stdout + one.stderr
    assert _experiments_of_latest_run(proj) == ["models"]  # not models/a, models/b nor modelsz
    assert [r["experiment_id"] for r in proj.query_json("attempts", "--experiment", "models", "--run", "all")] == [
        "models"]

    every = proj.run()
    assert every.returncode == 0, every.stdout + every.stderr
    assert sorted(r["experiment_id"] for r in proj.query_json("attempts", "--experiment", "models")) == ["models"]
    assert sorted(r["experiment_id"] for r in proj.query_json("attempts", "--experiment", "models/",
                                                              "--experiment", "modelsz")) == [
        "models/a", "models/b", "modelsz"]
    runs = proj.query_json("runs", "--experiment", "models/")
    assert len(runs) == 2  # the `-e models/` run and the run of every experiment, not the `-e models` one


def test_a_selector_that_selects_nothing_is_a_clear_error(proj: Project) -> None:
    proj.write("niceeval.toml", CONFIG.replace("[experiments.models]\n", ""))
    proj.write("evals/hello.py", EVAL)

    short = proj.run("-e", "mod")
    assert short.returncode == 2, short.stdout + short.stderr
    assert 'no experiment matches "mod"' in short.stderr and "models/a" in short.stderr
    assert "Traceback" not in short.stderr

    bare = proj.run("-e", "models")
    assert bare.returncode == 2, bare.stdout + bare.stderr
    assert 'no experiment matches "models"' in bare.stderr and '"models/" selects the group' in bare.stderr
    assert "Traceback" not in bare.stderr
    assert not proj.store.exists() or proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"] == 0


def test_view_with_an_experiment_the_run_does_not_have_is_an_error_as_query(proj: Project) -> None:
    """docs/cli.md ("Selecting experiments"): a reader's `--experiment` the run read does not have
    is an error. `view --experiment modles` printed "No attempts match these filters" and exited 0,
    which reads as "that experiment ran and sealed nothing"."""
    proj.write("niceeval.toml", CONFIG)
    proj.write("evals/hello.py", EVAL)
    assert proj.run("-e", "models/").returncode == 0

    for selector in ("modles", "modelsz", "other/"):  # a typo, an experiment of another run, an empty group
        typo = proj.cli("view", "--experiment", selector)
        assert typo.returncode == 2, typo.stdout + typo.stderr
        assert f"no experiment {selector!r}" in typo.stderr and "models/a, models/b" in typo.stderr, typo.stderr
        assert "Traceback" not in typo.stderr and typo.stdout == ""
        query = proj.cli("query", "--experiment", selector)
        assert query.returncode == 2, query.stdout + query.stderr  # the same rule as query

    both = proj.cli("view", "--experiment", "models/a", "--experiment", "modles")  # each selector must select
    assert both.returncode == 2 and "'modles'" in both.stderr, both.stdout + both.stderr
    fine = proj.cli("view", "--experiment", "models/a")
    assert fine.returncode == 0 and "models/a" in fine.stdout, fine.stdout + fine.stderr
