"""Bad input (cli.md exit codes; config.md): each mistake is one clear message naming what to fix,
exit code 2, no traceback — and nothing sealed earlier is lost."""

from __future__ import annotations

import sqlite3

import pytest

PASSING = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def ok(t):
    t.check(1, equals(1)).label("kept")
"""



@pytest.fixture
def sealed_once(project):
    """A project with one finished run; returns its attempt rows."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", PASSING)
    assert project.run().exit_code == 0
    return project.attempts()


def assert_clear_usage_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    text = result.stdout + result.stderr
    assert "Traceback" not in text
    assert "internal error" not in text
    for fragment in fragments:
        assert fragment in text, (fragment, text)


def assert_nothing_lost(project, before) -> None:
    project.write("niceeval.toml", "[project]\n")  # reading needs a valid config again
    assert project.attempts("--run", "all") == before
    assert [r["label"] for r in project.assertions("--run", "all")] == ["kept"]


# ── niceeval.toml ─────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("toml", "table", "key"),
    [
        ("[project]\nmax_concurency = 2\n", "[project]", "max_concurency"),
        ('[experiments.local]\nmodle = "x"\n', "[experiments.local]", "modle"),
        ('[judge]\nbase_ulr = "http://x"\n', "[judge]", "base_ulr"),
        ('[experiments.local.judge]\nmodell = "x"\n', "judge", "modell"),
    ],
)
def test_misspelt_config_key_names_file_table_and_key(project, sealed_once, toml, table, key):
    project.write("niceeval.toml", toml)
    result = project.run()
    assert_clear_usage_error(result, "niceeval.toml", table, key)
    assert "allowed" in result.stderr
    assert_nothing_lost(project, sealed_once)


def test_misspelt_table_is_named(project, sealed_once):
    project.write("niceeval.toml", "[projet]\nattempts = 2\n")
    assert_clear_usage_error(project.run(), "niceeval.toml", "projet")
    assert_nothing_lost(project, sealed_once)


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('[project]\nattempts = "3"\n', "attempts"),
        ("[project]\nmax_concurrency = 0\n", "max_concurrency"),
        ("[project]\ntimeout_ms = -1\n", "timeout_ms"),
        ('[project]\nevals = "evals"\n', "evals"),
        ('[experiments.local]\npass_rule = "most"\n', "pass_rule"),
        ("[experiments.local]\npass_rule = 1.5\n", "pass_rule"),
        ('[experiments.local]\noptions = "fast"\n', "options"),
    ],
)
def test_wrong_type_or_bad_value_names_the_key(project, sealed_once, toml, key):
    project.write("niceeval.toml", toml)
    assert_clear_usage_error(project.run(), "niceeval.toml", key)
    assert_nothing_lost(project, sealed_once)


def test_invalid_toml_syntax_names_the_file_and_line(project, sealed_once):
    project.write("niceeval.toml", "[project]\nattempts = \n")
    assert_clear_usage_error(project.run(), "niceeval.toml", "line 2")
    assert_nothing_lost(project, sealed_once)


def test_missing_config_file_given_by_flag(project, sealed_once):
    assert_clear_usage_error(project.run("--config", "nowhere.toml"), "nowhere.toml")


def test_unknown_adapter_reference_is_a_configuration_error(project, sealed_once):
    project.write("niceeval.toml", '[experiments.local]\nadapter = "no_such_module:adapter"\n')
    assert_clear_usage_error(project.run(), "no_such_module")
    assert_nothing_lost(project, sealed_once)


# ── flags ─────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "args",
    [("run", "--bogus"), ("query", "--bogus"), ("run", "--attempts"), ("query", "attempts", "--limit", "x")],
)
def test_unknown_flags_and_missing_values_are_usage_errors(project, sealed_once, args):
    result = project.cli(*args)
    assert result.exit_code == 2
    assert "Traceback" not in result.stdout + result.stderr
    assert_nothing_lost(project, sealed_once)


def test_unknown_command_is_a_usage_error(project):
    assert project.cli("frobnicate").exit_code == 2


# ── eval modules ──────────────────────────────────────────────────────────────────────────


def test_import_error_in_an_eval_module_keeps_earlier_results(project, sealed_once):
    project.write("evals/later.py", "from niceeval_cli import define_eval\nimport missing_dependency_abc\n")
    assert_clear_usage_error(project.run(), "later.py", ":2", "missing_dependency_abc")
    assert_nothing_lost(project, sealed_once)


def test_syntax_error_in_an_eval_module_keeps_earlier_results(project, sealed_once):
    project.write("evals/later.py", "def broken(:\n    pass\n")
    assert_clear_usage_error(project.run(), "later.py:1")
    assert_nothing_lost(project, sealed_once)


def test_eval_id_clash_is_a_usage_error_naming_both_files(project, sealed_once):
    project.write("niceeval.toml", '[project]\nevals = ["evals", "more"]\n')
    project.write("evals/dup.py", """
        from niceeval_cli import define_eval

        @define_eval(name="x")
        def a(t):
            pass

        @define_eval(name="y")
        def b(t):
            pass
    """)
    project.write("more/dup/x.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def x(t):
            pass
    """)
    assert_clear_usage_error(project.run(), "dup/x", "evals/dup.py", "more/dup/x.py")
    assert_nothing_lost(project, sealed_once)


def test_missing_eval_root_is_a_usage_error(project):
    project.write("niceeval.toml", '[project]\nevals = ["nowhere"]\n')
    assert_clear_usage_error(project.run(), "nowhere")


def test_nothing_selected_is_a_usage_error(project, sealed_once):
    assert_clear_usage_error(project.run("no/such/prefix"), "nothing selected")
    assert_nothing_lost(project, sealed_once)


# ── the store ─────────────────────────────────────────────────────────────────────────────


def test_store_path_under_a_regular_file_is_a_clear_error(project, sealed_once):
    project.write("blocker", "not a directory")
    result = project.run("--store", "blocker/results.db")
    assert_clear_usage_error(result, "blocker")
    assert_nothing_lost(project, sealed_once)


def test_store_path_that_is_a_directory_is_a_clear_error(project, sealed_once):
    (project.root / "a-directory").mkdir()
    assert_clear_usage_error(project.run("--store", "a-directory"), "a-directory")


def test_unwritable_store_location_is_a_clear_error(project, sealed_once):
    project.write("niceeval.toml", '[project]\nstore = "/proc/niceeval-test/results.db"\n')
    assert_clear_usage_error(project.run(), "/proc/niceeval-test/results.db")
    project.write("niceeval.toml", "[project]\n")
    assert_nothing_lost(project, sealed_once)


def test_a_file_that_is_not_a_database_is_a_clear_error_and_is_left_untouched(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", PASSING)
    store = project.write(".niceeval/results.db", "these are my notes, not a database\n" * 20)
    before = store.read_bytes()
    assert_clear_usage_error(project.run(), "results.db")
    assert_clear_usage_error(project.cli("query", "attempts", "--format", "json"), "results.db")
    assert store.read_bytes() == before


def test_a_damaged_database_is_a_clear_error(project, sealed_once):
    store = project.root / ".niceeval/results.db"
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    data = bytearray(store.read_bytes())
    for i in range(4096, len(data), 97):
        data[i] = 0xAB
    store.write_bytes(bytes(data))
    for args in (("run", "--rerun-all"), ("query", "attempts", "--format", "json")):
        assert_clear_usage_error(project.cli(*args), "results.db")


def test_a_store_from_a_newer_niceeval_is_a_clear_error(project, sealed_once):
    store = project.root / ".niceeval/results.db"
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA user_version = 9999")
    conn.close()
    assert_clear_usage_error(project.run("--rerun-all"), "results.db")
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT count(*) FROM attempts").fetchone()[0] == 1
    conn.close()


def test_query_before_any_run_is_a_clear_error(project):
    project.write("niceeval.toml", "[project]\n")
    assert_clear_usage_error(project.cli("query", "attempts", "--format", "json"))


@pytest.mark.parametrize("args", [
    ("view", "@01\udcff"), ("report", "\udcff"), ("compare", "\udcff"), ("query", "attempts", "--eval", "\udcff"),
    ("label", "export", "--run", "\udcff"), ("judge", "agreement", "--run", "\udcff"), ("review", "\udcff"),
], ids=["view", "report", "compare", "query", "label-export", "judge-agreement", "review"])
def test_an_argument_that_is_not_utf8_exits_2_naming_it(sealed_once, project, args):
    """Bytes that are not UTF-8 on a shell's command line (`$'\\xff'`) reach the store as lone surrogates."""
    from tests.support.project import Project

    done = Project(project.root).cli(*args)  # the real console script: its argv holds the byte 0xff
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "\\udcff" in done.stderr and "not UTF-8" in done.stderr and "internal error" not in done.stderr
