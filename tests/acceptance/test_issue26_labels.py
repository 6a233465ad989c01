"""Issue 26 item 3 (judge-trust.md §3): the insert-only `labels` table, `niceeval label`,
`label import` (all or nothing, errors name file and line) and `label export`.

The CLI (in process) against a real loopback judge; rows read with sqlite3."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

ENV = {"JK": "sk-test-labelsKey0123456789abcdef"}
SCHEMA_5_DUMP = Path(__file__).resolve().parents[1] / "store" / "data" / "schema5_judged.sql"

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals, factuality

QA = {"input": "What is the capital of France?", "output": "Paris."}


@define_eval(judge=True)
def capital(t):
    t.check(QA, closed_qa("Does it name the capital?").at_least(1)).gate().label("capital")
    t.check(QA, factuality("Paris is the capital of France.")).label("facts")
    t.check("x", equals("x")).label("exact")
'''


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One project with one sealed run (a closed_qa, a factuality and an equals result)."""
    proj = Project(tmp_path_factory.mktemp("labels") / "proj", in_process=True)
    with JudgeServer() as judge:
        judge.when("Paris is the capital", Reply.tool("A", "a subset"))
        proj.write("niceeval.toml", f'''
            [judge]
            model = "judge-m"
            base_url = "{judge.base_url}"
            api_key_env = "JK"
        ''')
        proj.write("evals/e.py", EVALS)
        done = proj.run(env=ENV)
        assert done.returncode == 0, done.stdout + done.stderr
    yield proj.root


@pytest.fixture
def proj(judged: Path, tmp_path: Path) -> Project:
    shutil.copytree(judged, tmp_path / "proj")
    return Project(tmp_path / "proj", in_process=True)


def _attempt(proj: Project) -> str:
    return str(proj.sql("SELECT id FROM attempts")[0]["id"])


def _labels(proj: Project) -> list[dict[str, object]]:
    return proj.sql("SELECT * FROM labels ORDER BY created_at, id")


def _git_author(tmp: Path, name: str | None) -> dict[str, str | None]:
    """An environment whose `git config user.name` is `name` (None: unset)."""
    config = tmp / "gitconfig"
    config.write_text(f"[user]\n\tname = {name}\n" if name else "", encoding="utf-8")
    return {**ENV, "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp)}


def test_label_inserts_one_row_per_call_and_a_later_one_supersedes_without_erasing(proj: Project, tmp_path: Path):
    attempt = _attempt(proj)
    env = _git_author(tmp_path, "Ada Lovelace")
    first = proj.cli("label", f"@{attempt[:10]}", "capital", "--value", "0", "--comment", "names no city", env=env)
    assert first.returncode == 0, first.stderr
    assert "capital" in first.stdout and attempt in first.stdout
    again = proj.cli("label", f"@{attempt}", "capital", "--value", "1", env=env)
    assert again.returncode == 0, again.stderr
    whole = proj.cli("label", f"@{attempt}", "--value", "1", "--author", "Grace", env=env)
    assert whole.returncode == 0, whole.stderr
    facts = proj.cli("label", f"@{attempt}", "facts", "--value", "0.40", env=env)
    assert facts.returncode == 0, facts.stderr
    rows = _labels(proj)
    assert [(r["attempt_id"], r["assertion_key"], r["value"], r["author"], r["comment"]) for r in rows] == [
        (attempt, "capital", 0.0, "Ada Lovelace", "names no city"),
        (attempt, "capital", 1.0, "Ada Lovelace", None),
        (attempt, None, 1.0, "Grace", None),
        (attempt, "facts", 0.4, "Ada Lovelace", None),
    ]
    assert all(r["id"] and r["created_at"] for r in rows)


def test_author_defaults_to_git_user_name_then_the_login_name(proj: Project, tmp_path: Path):
    import getpass

    attempt = _attempt(proj)
    assert proj.cli("label", f"@{attempt}", "exact", "--value", "1", env=_git_author(tmp_path, "Ada")).returncode == 0
    no_git = _git_author(tmp_path, None)
    assert proj.cli("label", f"@{attempt}", "exact", "--value", "1", env=no_git).returncode == 0
    assert [r["author"] for r in _labels(proj)] == ["Ada", getpass.getuser()]


@pytest.mark.parametrize(("args", "named"), [
    (["@NOSUCHATTEMPT", "capital", "--value", "1"], "NOSUCHATTEMPT"),
    (["@{a}", "nokey", "--value", "1"], "'nokey'"),
    (["@{a}", "capital", "--value", "0.5"], "0.5"),  # closed_qa is 0 or 1
    (["@{a}", "facts", "--value", "0.5"], "0, 0.4, 0.6, 1"),  # factuality's four values
    (["@{a}", "exact", "--value", "0.4"], "0, 1"),  # a non-judge assertion is pass / fail
    (["@{a}", "--value", "2"], "whole attempt"),
    (["@{a}", "capital", "--value", "yes"], "'yes'"),
])
def test_an_unknown_attempt_or_key_or_a_value_off_the_scale_exits_2_naming_it(proj: Project, args, named):
    attempt = _attempt(proj)
    done = proj.cli("label", *(a.format(a=attempt) for a in args), env=ENV)
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in done.stderr and "Traceback" not in done.stderr
    assert _labels(proj) == []


def test_labels_are_insert_only_in_the_file_itself(proj: Project):
    attempt = _attempt(proj)
    assert proj.cli("label", f"@{attempt}", "capital", "--value", "1", env=ENV).returncode == 0
    conn = sqlite3.connect(proj.store)
    try:
        for statement in ("UPDATE labels SET value = 0", "DELETE FROM labels",
                          "INSERT OR REPLACE INTO labels SELECT * FROM labels"):
            with pytest.raises(sqlite3.DatabaseError, match="insert-only"):
                conn.execute(statement)
    finally:
        conn.close()
    assert [r["value"] for r in _labels(proj)] == [1.0]


def test_import_writes_every_row_and_export_prints_them_back_in_the_same_shape(proj: Project, tmp_path: Path):
    attempt = _attempt(proj)
    rows = [
        {"attempt_id": attempt, "assertion_key": "capital", "value": 1, "author": "Ada", "comment": "right city"},
        {"attempt_id": attempt, "assertion_key": "facts", "value": 0.6, "author": "Ada"},
        {"attempt_id": attempt, "assertion_key": None, "value": 0},
    ]
    file = tmp_path / "labels.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    done = proj.cli("label", "import", str(file), "--author", "Grace", env=ENV)
    assert done.returncode == 0, done.stderr
    assert "3" in done.stdout
    exported = proj.cli("label", "export", env=ENV)
    assert exported.returncode == 0, exported.stderr
    back = [json.loads(line) for line in exported.stdout.splitlines()]
    made = [r["created_at"] for r in _labels(proj)]
    assert back == [
        {"attempt_id": attempt, "assertion_key": "capital", "value": 1.0, "author": "Ada", "comment": "right city",
         "created_at": made[0]},
        {"attempt_id": attempt, "assertion_key": "facts", "value": 0.6, "author": "Ada", "comment": None,
         "created_at": made[1]},
        {"attempt_id": attempt, "assertion_key": None, "value": 0.0, "author": "Grace", "comment": None,
         "created_at": made[2]},
    ]
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    by_run = proj.cli("label", "export", "--run", run_id, env=ENV)
    assert by_run.stdout == exported.stdout
    # The export is the import's shape, times included: importing it into the store it came from
    # adds nothing (every label is there already), however often.
    again = tmp_path / "again.jsonl"
    again.write_text(exported.stdout, encoding="utf-8")
    for _ in range(2):
        done = proj.cli("label", "import", str(again), env=ENV)
        assert done.returncode == 0, done.stderr
        assert "imported 0 label(s)" in done.stdout and "3 already stored" in done.stdout
    assert len(_labels(proj)) == 3
    # A row without its time is a new label, dated when it is imported (as a label made by hand).
    undated = tmp_path / "undated.jsonl"
    undated.write_text(json.dumps({k: v for k, v in back[0].items() if k != "created_at"}) + "\n", encoding="utf-8")
    assert "imported 1 label(s)" in proj.cli("label", "import", str(undated), env=ENV).stdout
    assert len(_labels(proj)) == 4


def test_an_old_export_imported_again_never_undoes_a_later_correction(proj: Project, tmp_path: Path):
    """Ada labels, the labels are exported, Ada corrects one; importing the old export again (here,
    or in a store that has the correction too) must leave the correction effective: the imported
    label keeps the time it was made, so the later one still supersedes it."""
    attempt = _attempt(proj)
    env = _git_author(tmp_path, "Ada")
    assert proj.cli("label", f"@{attempt}", "capital", "--value", "0", env=env).returncode == 0
    old = tmp_path / "old.jsonl"
    old.write_text(proj.cli("label", "export", env=ENV).stdout, encoding="utf-8")
    shutil.copytree(proj.root, tmp_path / "elsewhere")  # a second store holding the run and that label
    elsewhere = Project(tmp_path / "elsewhere", in_process=True)
    for store in (proj, elsewhere):
        assert store.cli("label", f"@{attempt}", "capital", "--value", "1", env=env).returncode == 0
        done = store.cli("label", "import", str(old), env=ENV)
        assert done.returncode == 0, done.stderr
        figures = json.loads(store.cli("judge", "agreement", "--format", "json", env=ENV).stdout)
        (closed_qa,) = [r for r in figures if r["factory"] == "closed_qa"]
        # The judge passed the answer; the effective label is the correction (1): one agreeing pair.
        assert (closed_qa["labels"], closed_qa["tp"], closed_qa["fn"]) == (1, 1, 0)


@pytest.mark.parametrize(("created_at", "says"), [
    ("2026-01-31T09:30:00", "has no time zone"),
    ("2999-01-01T00:00:00Z", "is in the future"),
    ("yesterday", "must be an ISO 8601 time"),
    (1700000000, "must be text"),
])
def test_a_label_time_that_cannot_be_kept_exits_2_naming_file_and_line(proj: Project, tmp_path: Path,
                                                                      created_at: object, says: str):
    attempt = _attempt(proj)
    file = tmp_path / "labels.jsonl"
    good = {"attempt_id": attempt, "assertion_key": "capital", "value": 1, "author": "Ada"}
    file.write_text(json.dumps(good) + "\n" + json.dumps({**good, "created_at": created_at}) + "\n",
                    encoding="utf-8")
    done = proj.cli("label", "import", str(file), env=ENV)
    assert done.returncode == 2
    assert f"{file}, line 2" in done.stderr and says in done.stderr
    assert _labels(proj) == []


def test_export_of_a_run_without_labels_prints_nothing(proj: Project, tmp_path: Path):
    done = proj.cli("label", "export", "--run", proj.sql("SELECT id FROM runs")[0]["id"], env=ENV)
    assert (done.returncode, done.stdout) == (0, "")
    unknown = proj.cli("label", "export", "--run", "NOSUCHRUN", env=ENV)
    assert unknown.returncode == 2 and "NOSUCHRUN" in unknown.stderr


@pytest.mark.parametrize(("bad", "says"), [
    ("{not json", "not JSON"),
    ('{"attempt_id": "{a}", "value": 1}', "missing field 'assertion_key'"),
    ('{"attempt_id": "{a}", "assertion_key": "capital"}', "missing field 'value'"),
    ('{"attempt_id": "NOSUCHATTEMPT", "assertion_key": null, "value": 1}', "NOSUCHATTEMPT"),
    ('{"attempt_id": "{a}", "assertion_key": "nokey", "value": 1}', "'nokey'"),
    ('{"attempt_id": "{a}", "assertion_key": "capital", "value": 0.6}', "0.6"),
    ('{"attempt_id": "{a}", "assertion_key": "capital", "value": true}', "value must be a number"),
    ('[1, 2]', "expected a JSON object"),
])
def test_a_bad_row_in_an_import_exits_2_naming_file_and_line_and_writes_nothing(
        proj: Project, tmp_path: Path, bad: str, says: str):
    attempt = _attempt(proj)
    good = json.dumps({"attempt_id": attempt, "assertion_key": "capital", "value": 1})
    file = tmp_path / "some labels.jsonl"
    file.write_text("\n".join([good, good, bad.replace("{a}", attempt), good]) + "\n", encoding="utf-8")
    done = proj.cli("label", "import", str(file), env=ENV)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{file}, line 3" in done.stderr and says in done.stderr, done.stderr
    assert "Nothing" in done.stderr and "Traceback" not in done.stderr
    assert _labels(proj) == []


def test_a_store_from_schema_5_keeps_every_row_and_gains_the_labels_table(tmp_path: Path):
    proj = Project(tmp_path / "proj", in_process=True)
    store = proj.root / "results.db"
    with sqlite3.connect(store) as conn:
        conn.executescript(SCHEMA_5_DUMP.read_text(encoding="utf-8"))
    tables = ("runs", "attempts", "assertion_results", "run_slots", "run_plan", "turns", "events")
    before = {t: proj.sql(f"SELECT * FROM {t} ORDER BY 1, 2", store=store) for t in tables}
    assert before["assertion_results"], "the dump holds judged results"
    attempt = str(before["attempts"][0]["id"])
    done = proj.cli("label", f"@{attempt}", "capital", "--value", "0", "--author", "Ada", "--store", str(store))
    assert done.returncode == 0, done.stderr
    for table in tables:
        after = [{k: v for k, v in row.items() if k in before[table][0]} if before[table] else row
                 for row in proj.sql(f"SELECT * FROM {table} ORDER BY 1, 2", store=store)]
        assert after == before[table], table
    assert [(r["assertion_key"], r["value"]) for r in proj.sql("SELECT * FROM labels", store=store)] == [("capital", 0)]


@pytest.mark.parametrize("args", [
    ("--comment", "bad \udcff byte"),  # bytes that are not UTF-8 on the command line
    ("--author", "\udcff"),
    ("capital-\udcff",),  # a key
], ids=["comment", "author", "key"])
def test_text_that_is_not_utf8_on_the_command_line_exits_2_naming_it_and_writes_nothing(proj: Project, args):
    # The real console script: its argv holds the bytes, as a shell would pass them.
    cli = Project(proj.root)
    done = cli.cli("label", f"@{_attempt(proj)}", *([] if args[0].startswith("-") else args), "--value", "1",
                   *(args if args[0].startswith("-") else []), env=ENV)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not valid Unicode" in done.stderr and "internal error" not in done.stderr, done.stderr
    assert _labels(proj) == []


@pytest.mark.parametrize("field", ["comment", "author"])
def test_a_lone_surrogate_in_an_import_row_exits_2_naming_file_and_line_and_writes_nothing(
        proj: Project, tmp_path: Path, field: str):
    attempt = _attempt(proj)
    good = json.dumps({"attempt_id": attempt, "assertion_key": "capital", "value": 1})
    bad = json.dumps({"attempt_id": attempt, "assertion_key": "capital", "value": 1, field: "x\ud800"})
    file = tmp_path / "labels.jsonl"
    file.write_text(f"{good}\n{bad}\n", encoding="utf-8")  # json.dumps writes the surrogate as \ud800
    done = proj.cli("label", "import", str(file), env=ENV)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{file}, line 2: the {field} is not valid Unicode" in done.stderr, done.stderr
    assert _labels(proj) == []


def test_an_export_holding_line_separators_and_hostile_text_imports_back_exactly(proj: Project, tmp_path: Path):
    """JSON leaves U+2028, U+2029 and U+0085 unescaped: the import cuts rows at "\\n" only."""
    attempt = _attempt(proj)
    comment = "one\u2028two\u2029three\u0085four </script>\u202e\t\"q\" \x1c end"
    shutil.copytree(proj.root, tmp_path / "other")  # another store holding the run (not the label)
    assert proj.cli("label", f"@{attempt}", "capital", "--value", "0", "--comment", comment, "--author",
                    "Ada <b>", env=ENV).returncode == 0
    exported = proj.cli("label", "export", env=ENV)
    file = tmp_path / "labels.jsonl"
    file.write_text(exported.stdout, encoding="utf-8")
    other = Project(tmp_path / "other", in_process=True)
    done = other.cli("label", "import", str(file), env=ENV)
    assert done.returncode == 0, done.stderr
    rows = [(r["author"], r["comment"], r["created_at"]) for r in _labels(other)]
    assert rows == [(r["author"], r["comment"], r["created_at"]) for r in _labels(proj)]
    assert rows[0][:2] == ("Ada <b>", comment)


def test_a_file_with_a_byte_order_mark_and_crlf_lines_imports(proj: Project, tmp_path: Path):
    """As a spreadsheet or a Windows editor saves it."""
    attempt = _attempt(proj)
    rows = [json.dumps({"attempt_id": attempt, "assertion_key": k, "value": 1, "author": "Ada"})
            for k in ("capital", "exact")]
    file = tmp_path / "labels.jsonl"
    file.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(rows).encode() + b"\r\n")
    done = proj.cli("label", "import", str(file), env=ENV)
    assert done.returncode == 0, done.stderr
    assert [r["assertion_key"] for r in _labels(proj)] == ["capital", "exact"]
