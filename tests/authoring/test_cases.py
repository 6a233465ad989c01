"""`cases=` and `Case` (datasets.md, "Declaring cases"): how case ids are found, and the
configuration errors for duplicate ids, bad ids and values that are not JSON."""

from __future__ import annotations

import pytest

from niceeval_cli import Case, EvalDefinition, define_eval, define_score_eval
from niceeval_cli.authoring import DefinitionError
from niceeval_cli.authoring._cases import positional_warning


def _test(t, case):
    return None


def ids(definition: EvalDefinition) -> list[str]:
    assert definition.cases is not None
    return [case.id for case in definition.cases]


def values(definition: EvalDefinition) -> list[object]:
    assert definition.cases is not None
    return [case.value for case in definition.cases]


# --- the id rules ------------------------------------------------------------------------------


def test_a_mapping_gives_its_keys_as_ids_and_its_values_as_values_in_order():
    definition = define_eval(test=_test, cases={"r-02": {"q": "b"}, "r-01": {"q": "a"}, 7: "seven"})
    assert ids(definition) == ["r-02", "r-01", "7"]
    assert values(definition) == [{"q": "b"}, {"q": "a"}, "seven"]
    assert definition.positional_case_ids is False


def test_a_list_of_cases_keeps_their_ids_tags_and_metadata():
    definition = define_score_eval(
        test=_test,
        cases=[Case("a", 1, tags=["slow"], metadata={"source": "ticket 12"}), Case(2, [1, 2])],
    )
    assert ids(definition) == ["a", "2"]
    assert definition.cases is not None
    first, second = definition.cases
    assert (first.tags, first.metadata) == (("slow",), {"source": "ticket 12"})
    assert (second.tags, second.metadata) == ((), None)


def test_case_id_as_a_field_name_takes_each_value_s_field():
    definition = define_eval(test=_test, cases=[{"qid": "x", "q": 1}, {"qid": 9, "q": 2}], case_id="qid")
    assert ids(definition) == ["x", "9"]
    assert values(definition)[0] == {"qid": "x", "q": 1}  # the value keeps its id field


def test_case_id_as_a_function_computes_each_id_from_the_value():
    definition = define_eval(test=_test, cases=["Paris", "Lyon"], case_id=str.lower)
    assert ids(definition) == ["paris", "lyon"]


def test_mappings_that_all_have_an_id_field_are_named_by_it():
    definition = define_eval(test=_test, cases=[{"id": "r-1", "q": 1}, {"id": "r-2", "q": 2}])
    assert ids(definition) == ["r-1", "r-2"]
    assert definition.positional_case_ids is False


def test_otherwise_ids_are_the_zero_based_positions_and_recorded_as_positional():
    definition = define_eval(test=_test, cases=[{"id": "r-1"}, {"q": "no id"}, "plain"])
    assert ids(definition) == ["0", "1", "2"]
    assert definition.positional_case_ids is True


def test_positional_warning_names_the_eval_and_says_how_to_fix_it():
    text = positional_warning("refunds")
    assert "'refunds'" in text and "row positions" in text and "case_id=" in text and '"id"' in text


def test_a_generator_of_values_is_accepted():
    definition = define_eval(test=_test, cases=({"id": f"c{i}"} for i in range(3)))
    assert ids(definition) == ["c0", "c1", "c2"]


def test_case_ids_keep_any_unicode_and_brackets():
    definition = define_eval(test=_test, cases={"退款[1]": 1, "a b/c*": 2})
    assert ids(definition) == ["退款[1]", "a b/c*"]


def test_case_values_have_a_canonical_json_with_sorted_keys():
    definition = define_eval(test=_test, cases={"a": {"b": 1, "a": [1.5, None, "é"]}})
    assert definition.cases is not None
    assert definition.cases[0].canonical_json == '{"a":[1.5,null,"é"],"b":1}'


def test_cases_compare_by_id_value_tags_and_metadata():
    assert Case("a", {"x": 1}) == Case("a", {"x": 1})
    assert Case("a", 1) != Case("a", 2)
    assert Case(1, 1) == Case("1", 1)


# --- configuration errors ------------------------------------------------------------------------


def _error(**options: object) -> str:
    with pytest.raises(DefinitionError) as caught:
        define_eval(test=_test, **options)  # type: ignore[call-overload]
    message = str(caught.value)
    assert "test_cases.py:" in message and "eval '_test': define_eval(" in message, message
    assert "\n" not in message
    return message


def test_duplicate_ids_name_both_rows():
    message = _error(cases=[{"id": "a"}, {"id": "b"}, {"id": "a"}])
    assert "two cases have the id 'a': item 0 and item 2" in message


def test_duplicate_ids_from_a_mapping_name_both_keys():
    message = _error(cases={1: "x", "1": "y"})
    assert "two cases have the id '1': key 1 and key '1'" in message


def test_duplicate_case_objects_are_named_by_their_positions():
    message = _error(cases=[Case("a", 1), Case("b", 2), Case("a", 3)])
    assert "'a': item 0 and item 2" in message


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({1, 2}, "holds a value of type set, which is not JSON"),
        ({"when": object()}, "holds a value of type object"),
        (float("nan"), "NaN or an infinity"),
        ({"a": float("inf")}, "NaN or an infinity"),
        ("lone \ud800", "not valid Unicode"),
        ({1: "a", "b": 2}, "keys mix strings and numbers"),
    ],
)
def test_a_value_that_is_not_json_names_the_eval_and_the_case(value, problem):
    message = _error(cases={"r-1": value})
    assert "case 'r-1' (key 'r-1'): its value" in message
    assert problem in message
    assert "must be JSON" in message


def test_a_circular_value_is_not_json():
    loop: list[object] = []
    loop.append(loop)
    assert "circular" in _error(cases=[loop])


def test_a_value_nested_too_deeply_is_refused_without_a_recursion_error():
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    assert "nested too deeply" in _error(cases={"deep": deep})


@pytest.mark.parametrize(
    ("cases", "problem"),
    [
        ("abc", "expected a mapping of case id → value, or a list"),
        (42, "got 42 (int)"),
        ([], "there are no cases"),
        ({}, "there are no cases"),
        ({1.5: "x"}, "key 1.5 (float): a case id must be a non-empty string or an integer"),
        ({"": "x"}, "got an empty one"),
        ({"a": Case("a", 1)}, "holds a Case"),
    ],
)
def test_bad_cases_are_configuration_errors(cases, problem):
    assert problem in _error(cases=cases)


def test_case_id_with_a_mapping_is_an_error():
    assert "the keys of a mapping are already the ids" in _error(cases={"a": 1}, case_id="id")


def test_case_id_field_missing_from_a_row_names_the_row_and_its_fields():
    message = _error(cases=[{"qid": "a"}, {"question": "b"}], case_id="qid")
    assert "item 1 has no field 'qid' to be its id (its fields: 'question')" in message


def test_case_id_field_on_a_value_that_is_not_a_mapping():
    assert "item 0 is 'x' (str), not a mapping" in _error(cases=["x"], case_id="qid")


def test_a_case_id_function_that_raises_names_the_row():
    message = _error(cases=[{"a": 1}, {}], case_id=lambda v: v["a"])
    assert "the id function raised on item 1: KeyError: 'a'" in message


def test_a_case_id_function_returning_a_bad_id():
    assert "a case id must be a non-empty string or an integer, got None" in _error(
        cases=[1], case_id=lambda v: None
    )


def test_case_id_with_only_case_objects_has_nothing_to_name():
    assert "case_id= has nothing to name" in _error(cases=[Case("a", 1)], case_id="id")


def test_case_id_that_is_neither_a_name_nor_a_function():
    assert "case_id=...): expected a field name or a function" in _error(cases=[1], case_id=3)


@pytest.mark.parametrize(
    ("build", "problem"),
    [
        (lambda: Case("", 1), "got an empty one"),
        (lambda: Case(True, 1), "got True (bool)"),
        (lambda: Case("a", 1, tags="slow"), 'write tags=["slow"]'),
        (lambda: Case("a", 1, metadata=["x"]), "metadata: expected a mapping or None"),
    ],
)
def test_a_bad_case_object_is_an_error_at_its_line(build, problem):
    with pytest.raises(DefinitionError) as caught:
        build()
    assert "test_cases.py:" in str(caught.value)
    assert problem in str(caught.value)


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        (lambda: Case("a", {1, 2}), "case 'a': its value holds a value of type set"),
        (lambda: Case("a", 1, metadata={"x": {1}}), "case 'a': its metadata holds a value of type set"),
    ],
)
def test_a_case_object_that_is_not_json_is_refused_by_its_eval_naming_both(case, problem):
    message = _error(cases=[case()])
    assert problem in message, message


# --- through the real CLI --------------------------------------------------------------------


def test_discovery_reports_duplicate_case_ids_as_a_configuration_error(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refunds.py", """
        from niceeval_cli import define_eval

        ROWS = [{"id": "r-1", "q": "a"}, {"id": "r-2", "q": "b"}, {"id": "r-1", "q": "c"}]

        @define_eval(cases=ROWS)
        def refund(t, case):
            pass
    """)
    result = project.run()
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "niceeval: eval module evals/refunds.py failed to load: evals/refunds.py:5: eval 'refund': "
        "define_eval(cases=...): two cases have the id 'r-1': item 0 and item 2; case ids must be unique "
        "within an eval"
    ]
