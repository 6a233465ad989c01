"""`niceeval_cli.datasets` (datasets.md, "Loaders"): JSONL, JSON and CSV files become Cases in file
order; relative paths follow the calling module; every problem names the file and line."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from niceeval_cli import Case, define_eval
from niceeval_cli.authoring import DatasetError, DefinitionError
from niceeval_cli.datasets import load_csv, load_json, load_jsonl

Write = Callable[[str, str | bytes], Path]


@pytest.fixture
def write(tmp_path: Path) -> Write:
    def go(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return go


def summary(cases: list[Case]) -> list[tuple[str, object]]:
    return [(case.id, case.value) for case in cases]


def problem(load: Callable[[], object]) -> str:
    with pytest.raises(DatasetError) as caught:
        load()
    message = str(caught.value)
    assert "\n" not in message
    assert "test_loaders.py:" in message  # the loader's call site
    assert caught.value.exit_code == 2
    return message


# --- JSON Lines ------------------------------------------------------------------------------


def test_jsonl_rows_with_an_id_field_are_named_by_it_in_file_order(write):
    path = write("refunds.jsonl", '{"id": "r-2", "q": "b"}\n\n{"id": "r-1", "q": "a"}\n')
    cases = load_jsonl(path)
    assert summary(cases) == [("r-2", {"id": "r-2", "q": "b"}), ("r-1", {"id": "r-1", "q": "a"})]
    assert [c.origin for c in cases] == [f"{path}:1", f"{path}:3"]


def test_jsonl_id_names_another_field_or_a_function(write):
    path = write("q.jsonl", '{"qid": 7, "q": "a"}\n{"qid": 8, "q": "b"}\n')
    assert [c.id for c in load_jsonl(path, id="qid")] == ["7", "8"]
    assert [c.id for c in load_jsonl(path, id=lambda row: f"q{row['qid']}")] == ["q7", "q8"]


def test_jsonl_without_ids_uses_positions_and_marks_them(write):
    path = write("q.jsonl", '"first"\n"second"\n')
    cases = load_jsonl(path)
    assert summary(cases) == [("0", "first"), ("1", "second")]
    definition = define_eval(test=lambda t, case: None, cases=cases)
    assert definition.positional_case_ids is True


def test_jsonl_with_ids_is_not_positional(write):
    definition = define_eval(test=lambda t, case: None, cases=load_jsonl(write("q.jsonl", '{"id": 1}\n')))
    assert definition.positional_case_ids is False


def test_jsonl_keeps_a_line_separator_inside_a_string(write):
    path = write("q.jsonl", '{"id": "a", "q": "one\u2028two"}\n')
    assert load_jsonl(path)[0].value == {"id": "a", "q": "one\u2028two"}


def test_jsonl_with_crlf_line_endings_and_a_bom(write):
    path = write("q.jsonl", b'\xef\xbb\xbf{"id": "a"}\r\n{"id": "b"}\r\n')
    assert [c.id for c in load_jsonl(path)] == ["a", "b"]


def test_a_bad_jsonl_line_names_the_file_line_and_column(write):
    path = write("q.jsonl", '{"id": "a"}\n{"id": bad}\n')
    message = problem(lambda: load_jsonl(path))
    assert f"load_jsonl: {path}:2: not valid JSON (Expecting value at column 8)" in message


def test_nan_in_jsonl_is_not_json(write):
    path = write("q.jsonl", '{"id": "a", "x": NaN}\n')
    assert f"{path}:1: not valid JSON (NaN is not JSON)" in problem(lambda: load_jsonl(path))


def test_duplicate_jsonl_ids_name_both_lines(write):
    path = write("q.jsonl", '{"id": "a"}\n{"id": "b"}\n{"id": "a"}\n')
    message = problem(lambda: load_jsonl(path))
    assert f"two rows have the case id 'a': {path}:1 and {path}:3" in message


def test_a_jsonl_row_without_the_id_field_names_its_line(write):
    path = write("q.jsonl", '{"qid": "a"}\n{"q": "b"}\n')
    assert f"{path}:2: the row has no field 'qid'" in problem(lambda: load_jsonl(path, id="qid"))


def test_a_jsonl_row_with_a_bad_id_names_its_line(write):
    path = write("q.jsonl", '{"id": "a"}\n{"id": 1.5}\n')
    message = problem(lambda: load_jsonl(path))
    assert f"{path}:2: a case id must be a non-empty string or an integer, got 1.5 (float)" in message


def test_text_that_is_not_utf8_names_the_line(write):
    path = write("q.jsonl", b'{"id": "a"}\n{"id": "\xff"}\n')
    assert f"{path}:2: is not UTF-8 text" in problem(lambda: load_jsonl(path))


def test_a_missing_file_says_where_relative_paths_are_resolved():
    message = problem(lambda: load_jsonl("no-such.jsonl"))
    here = Path(__file__).parent
    assert "no-such.jsonl: no such file" in message
    assert "relative paths are resolved against the folder of the module that calls load_jsonl" in message
    assert str(here.relative_to(Path.cwd())) in message or str(here) in message


def test_a_folder_is_not_a_data_file(tmp_path):
    assert "is a folder, not a data file" in problem(lambda: load_jsonl(tmp_path))


def test_an_id_rule_that_is_neither_a_name_nor_a_function(write):
    path = write("q.jsonl", "1\n")
    assert "load_jsonl(id=...): expected a field name or a function" in problem(lambda: load_jsonl(path, id=3))  # type: ignore[arg-type]


# --- JSON ------------------------------------------------------------------------------------


def test_json_list_rows_know_their_lines(write):
    path = write("q.json", '[\n  {"id": "a", "n": [1,\n 2]},\n  {"id": "b"}\n]\n')
    cases = load_json(path)
    assert summary(cases) == [("a", {"id": "a", "n": [1, 2]}), ("b", {"id": "b"})]
    assert [c.origin for c in cases] == [f"{path}:2", f"{path}:4"]


def test_json_object_keys_are_the_ids_in_file_order(write):
    path = write("q.json", '{\n "r-2": {"q": "b"},\n "r-1": "a"\n}')
    assert summary(load_json(path)) == [("r-2", {"q": "b"}), ("r-1", "a")]


def test_json_object_with_a_duplicate_key_names_both_lines(write):
    path = write("q.json", '{\n "a": 1,\n "b": 2,\n "a": 3\n}')
    assert f"two rows have the case id 'a': {path}:2 and {path}:4" in problem(lambda: load_json(path))


def test_json_list_without_ids_is_positional(write):
    assert [c.id for c in load_json(write("q.json", "[10, 20]"))] == ["0", "1"]


def test_json_empty_list_gives_no_cases_and_the_eval_refuses_it(write):
    cases = load_json(write("q.json", "[]"))
    assert cases == []
    with pytest.raises(DefinitionError, match="there are no cases"):
        define_eval(test=lambda t, case: None, cases=cases)


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ('[\n {"id": 1},\n {"id": 2,}\n]', 3, "not valid JSON (Expecting property name enclosed in double quotes"),
        ('[\n 1\n 2\n]', 3, "not valid JSON (Expecting ',' or ']'"),
        ("[1, 2] extra", 1, "not valid JSON (Extra data"),
        ('{"a": 1} {', 1, "not valid JSON (Extra data"),
        ('{\n "a" 1\n}', 2, "not valid JSON (Expecting ':'"),
        ("", 1, "not valid JSON (Expecting value"),
    ],
)
def test_invalid_json_names_the_line(write, text, line, expected):
    path = write("q.json", text)
    assert f"{path}:{line}: {expected}" in problem(lambda: load_json(path))


def test_json_scalar_at_top_level_is_refused(write):
    path = write("q.json", '\n"just text"')
    message = problem(lambda: load_json(path))
    assert f"{path}:2: expected a list of rows, or an object whose keys are the case ids" in message


def test_json_object_with_an_id_rule_is_refused(write):
    path = write("q.json", '{"a": 1}')
    assert "keys of this file's object are already the ids" in problem(lambda: load_json(path, id="x"))


def test_json_nested_too_deeply_is_a_clear_error(write):
    path = write("q.json", "[" + "[" * 100_000 + "]" * 100_000 + "]")
    assert "nested too deeply" in problem(lambda: load_json(path))


# --- CSV -------------------------------------------------------------------------------------


def test_csv_rows_are_dicts_of_text_named_by_the_id_column(write):
    path = write("q.csv", "id,question,expected\nr-1,How long?,30 days\nr-2,\"Where, exactly?\",here\n")
    assert summary(load_csv(path)) == [
        ("r-1", {"id": "r-1", "question": "How long?", "expected": "30 days"}),
        ("r-2", {"id": "r-2", "question": "Where, exactly?", "expected": "here"}),
    ]


def test_csv_types_convert_columns_and_bool_reads_words(write):
    path = write("q.csv", "name,qty,price,ok\na,1,2.5,true\nb,2,3,No\n")
    cases = load_csv(path, id="name", types={"qty": int, "price": float, "ok": bool})
    assert summary(cases) == [
        ("a", {"name": "a", "qty": 1, "price": 2.5, "ok": True}),
        ("b", {"name": "b", "qty": 2, "price": 3.0, "ok": False}),
    ]


def test_csv_without_an_id_column_is_positional(write):
    assert [c.id for c in load_csv(write("q.csv", "q\na\nb\n"))] == ["0", "1"]


def test_csv_line_numbers_count_quoted_newlines_and_blank_lines(write):
    path = write("q.csv", 'id,text\na,"two\nlines"\n\nb,x\n')
    cases = load_csv(path)
    assert [c.origin for c in cases] == [f"{path}:2", f"{path}:5"]


def test_a_ragged_csv_row_names_its_line_and_the_header_width(write):
    path = write("q.csv", "id,q\na,1\nb,2,extra\n")
    assert f"{path}:3: this row has 3 fields, the header (line 1) has 2" in problem(lambda: load_csv(path))


def test_a_failed_conversion_names_line_column_value_and_type(write):
    path = write("q.csv", "id,qty\na,1\nb,many\n")
    message = problem(lambda: load_csv(path, types={"qty": int}))
    assert f"{path}:3: column 'qty': cannot convert 'many' with int (ValueError: invalid literal" in message


def test_a_bad_boolean_names_the_accepted_words(write):
    path = write("q.csv", "id,ok\na,maybe\n")
    assert "'maybe' is not a boolean (true/false, yes/no, 1/0)" in problem(lambda: load_csv(path, types={"ok": bool}))


def test_a_conversion_to_something_that_is_not_json_is_refused_naming_the_eval_case_and_line(write):
    path = write("q.csv", "id,when\na,2024-01-01\n")
    import datetime

    cases = load_csv(path, types={"when": datetime.date.fromisoformat})
    with pytest.raises(DefinitionError) as caught:
        define_eval(test=lambda t, case: None, name="dated", cases=cases)
    message = str(caught.value)
    assert f"eval 'dated': define_eval(cases=...): case 'a' ({path}:2): its value holds a value of type date, " \
        "which is not JSON" in message, message


def test_types_naming_an_unknown_column_lists_the_columns(write):
    path = write("q.csv", "id,qty\na,1\n")
    assert "has no column 'qtty'; its columns: id, qty" in problem(lambda: load_csv(path, types={"qtty": int}))


def test_a_csv_header_with_a_repeated_or_empty_name_is_refused(write):
    assert "names column 'a' twice" in problem(lambda: load_csv(write("q.csv", "a,a\n1,2\n")))
    assert "empty column name (column 2)" in problem(lambda: load_csv(write("r.csv", "a,\n1,2\n")))


def test_an_empty_csv_needs_a_header(write):
    assert "is empty; a CSV dataset needs a header row" in problem(lambda: load_csv(write("q.csv", "")))


def test_duplicate_csv_ids_name_both_lines(write):
    path = write("q.csv", "id\na\nb\na\n")
    assert f"two rows have the case id 'a': {path}:2 and {path}:4" in problem(lambda: load_csv(path))


# --- relative paths follow the calling module, not the working directory ------------------


def test_relative_paths_resolve_against_the_calling_module_file(tmp_path, monkeypatch):
    folder = tmp_path / "evals" / "support"
    folder.mkdir(parents=True)
    (folder / "data").mkdir()
    (folder / "data" / "rows.jsonl").write_text('{"id": "a"}\n', encoding="utf-8")
    (folder / "rows.csv").write_text("id\nb\n", encoding="utf-8")
    (folder / "mod.py").write_text(
        "from niceeval_cli.datasets import load_csv, load_jsonl\n"
        "JSONL = load_jsonl('data/rows.jsonl')\n"
        "CSV = load_csv('rows.csv')\n",
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = importlib.util.spec_from_file_location("_loader_probe", folder / "mod.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert [c.id for c in module.JSONL] == ["a"]
    assert [c.id for c in module.CSV] == ["b"]
    assert os.getcwd() == str(elsewhere)


def test_loaders_through_the_cli_name_the_data_file_and_exit_2(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refunds.jsonl", '{"id": "r-1"}\n{"id": "r-2"\n')
    project.write("evals/refunds.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.datasets import load_jsonl

        @define_eval(cases=load_jsonl("refunds.jsonl"))
        def refund(t, case):
            pass
    """)
    result = project.run()
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "niceeval: eval module evals/refunds.py failed to load: evals/refunds.py:4: load_jsonl: "
        "evals/refunds.jsonl:2: not valid JSON (Expecting ',' delimiter at column 13)"
    ]


def test_a_yaml_mapping_with_a_key_written_twice_exits_2_naming_both_lines(project):
    """PyYAML keeps the last of a repeated key: one case was silently lost (load_json refuses)."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refunds.yaml", "r-1: {q: a}\nr-2: {q: b}\nr-1: {q: c}\n")
    project.write("evals/refunds.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.datasets import load_yaml
        from niceeval_cli.expect import equals

        @define_eval(cases=load_yaml("refunds.yaml"))
        def refunds(t, row):
            t.check(row["q"], equals(row["q"]))
    """)
    run = project.run()
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert run.stderr.strip() == (
        "niceeval: eval module evals/refunds.py failed to load: evals/refunds.py:5: load_yaml: evals/refunds.yaml: "
        "two rows have the case id 'r-1': evals/refunds.yaml:1 and evals/refunds.yaml:3; case ids must be unique "
        "within an eval"
    )
    assert not project.store.exists()
