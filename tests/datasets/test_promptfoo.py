"""`load_yaml`, `load_promptfoo` and `expect.from_promptfoo` (integrations.md, section 5): promptfoo's
test files become cases, its assertions become matches, and an assertion we cannot check is
`unavailable` — never a silent pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from niceeval_cli.authoring import DatasetError
from niceeval_cli.datasets import load_promptfoo, load_yaml
from niceeval_cli.expect import from_promptfoo


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _state(assertion: dict, output: object) -> str:
    return from_promptfoo(assertion).evaluate(output).state


def test_load_yaml_reads_a_list_or_a_mapping_of_ids(tmp_path: Path) -> None:
    rows = load_yaml(_write(tmp_path, "q.yaml", "- id: a\n  q: one\n- id: b\n  q: two\n"))
    assert [(c.id, c.value["q"]) for c in rows] == [("a", "one"), ("b", "two")]
    keyed = load_yaml(_write(tmp_path, "k.yaml", "first: {q: one}\nsecond: {q: two}\n"))
    assert [(c.id, c.value) for c in keyed] == [("first", {"q": "one"}), ("second", {"q": "two"})]


def test_load_yaml_errors_name_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        load_yaml(_write(tmp_path, "bad.yaml", "- id: a\n  q: [unclosed\n- id: b\n"))
    assert "bad.yaml:" in str(caught.value) and "not valid YAML" in str(caught.value)
    with pytest.raises(DatasetError) as caught:
        load_yaml(_write(tmp_path, "dup.yaml", "- id: a\n- id: a\n"))
    assert "dup.yaml" in str(caught.value) and "'a'" in str(caught.value)


TESTS_YAML = """
- description: capital
  vars:
    question: What is the capital of France?
  assert:
    - type: icontains
      value: paris
- description: sum
  vars:
    question: What is 2 + 2?
  assert:
    - type: equals
      value: "4"
    - type: javascript
      value: output.length < 10
  metadata: {difficulty: easy}
"""


def test_a_promptfoo_yaml_file_becomes_cases_named_by_description(tmp_path: Path) -> None:
    cases = load_promptfoo(_write(tmp_path, "tests.yaml", TESTS_YAML))
    assert [c.id for c in cases] == ["capital", "sum"]
    assert cases[0].value == {"question": "What is the capital of France?"}
    assert cases[1].metadata == {
        "assert": [{"type": "equals", "value": "4"}, {"type": "javascript", "value": "output.length < 10"}],
        "description": "sum",
        "metadata": {"difficulty": "easy"},
    }


def test_a_config_file_with_default_test_prepends_its_assertions(tmp_path: Path) -> None:
    path = _write(tmp_path, "promptfooconfig.yaml", """
defaultTest:
  vars: {tone: polite}
  assert:
    - type: not-contains
      value: sorry
tests:
  - vars: {question: hi}
    assert:
      - type: contains
        value: hello
  - vars: {question: bye, tone: curt}
""")
    cases = load_promptfoo(path)
    assert [c.id for c in cases] == ["0", "1"]  # no descriptions: positions
    assert cases[0].value == {"tone": "polite", "question": "hi"}
    assert cases[1].value == {"tone": "curt", "question": "bye"}
    assert [a["type"] for a in cases[0].metadata["assert"]] == ["not-contains", "contains"]
    assert [a["type"] for a in cases[1].metadata["assert"]] == ["not-contains"]


def test_a_promptfoo_csv_reads_expected_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, "tests.csv",
                  'question,__expected1,__expected2,__expected3,__description\n'
                  '"What is 2+2?","equals: 4","contains-any: four,4","javascript: output.length < 10",math\n'
                  '"Capital?",Paris,is-json,"grade: names a city",geo\n')
    cases = load_promptfoo(path)
    assert [c.id for c in cases] == ["math", "geo"]
    assert cases[0].value == {"question": "What is 2+2?"}
    assert cases[0].metadata["assert"] == [
        {"type": "equals", "value": "4"},
        {"type": "contains-any", "value": "four,4"},
        {"type": "javascript", "value": "output.length < 10"},
    ]
    assert cases[1].metadata["assert"] == [
        {"type": "equals", "value": "Paris"}, {"type": "is-json"}, {"type": "llm-rubric", "value": "names a city"},
    ]


def test_a_malformed_test_is_an_error_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        load_promptfoo(_write(tmp_path, "t.yaml", "- vars: {a: 1}\n- vars: [1, 2]\n"))
    assert "t.yaml:2" in str(caught.value) and "vars" in str(caught.value)
    with pytest.raises(DatasetError) as caught:
        load_promptfoo(_write(tmp_path, "u.yaml", "- assert: [{value: x}]\n"))
    assert "u.yaml:1" in str(caught.value) and "'type'" in str(caught.value)


@pytest.mark.parametrize(("assertion", "output", "state"), [
    ({"type": "equals", "value": "4"}, "4", "matched"),
    ({"type": "equals", "value": "4"}, "4.0", "mismatched"),
    ({"type": "equals", "value": {"a": 1}}, '{"a": 1}', "matched"),
    ({"type": "equals", "value": {"a": 1}}, "not json", "mismatched"),
    ({"type": "contains", "value": "Paris"}, "in Paris.", "matched"),
    ({"type": "contains", "value": "Paris"}, "in paris.", "mismatched"),
    ({"type": "icontains", "value": "PARIS"}, "in paris.", "matched"),
    ({"type": "not-contains", "value": "London"}, "in Paris.", "matched"),
    ({"type": "not-contains", "value": "Paris"}, "in Paris.", "mismatched"),
    ({"type": "regex", "value": r"\d+"}, "it is 42", "matched"),
    ({"type": "not-regex", "value": r"\d+"}, "it is 42", "mismatched"),
    ({"type": "starts-with", "value": "The"}, "The end", "matched"),
    ({"type": "starts-with", "value": "end"}, "The end", "mismatched"),
    ({"type": "contains-any", "value": ["x", "end"]}, "The end", "matched"),
    ({"type": "contains-any", "value": "x, y"}, "The end", "mismatched"),
    ({"type": "contains-all", "value": ["The", "end"]}, "The end", "matched"),
    ({"type": "contains-all", "value": "The,start"}, "The end", "mismatched"),
    ({"type": "is-json"}, '{"ok": true}', "matched"),
    ({"type": "is-json"}, "{ok", "mismatched"),
    ({"type": "not-icontains", "value": "SORRY"}, "sorry!", "mismatched"),
])
def test_supported_types_decide_like_promptfoo(assertion: dict, output: object, state: str) -> None:
    assert _state(assertion, output) == state


@pytest.mark.parametrize("kind", ["javascript", "python", "similar", "cost", "made-up-type", "not-javascript"])
def test_an_unsupported_type_is_unavailable_never_a_pass(kind: str) -> None:
    result = from_promptfoo({"type": kind, "value": "anything"}).evaluate("whatever the output")
    assert result.state == "unavailable"
    assert result.reason == f"unsupported-assertion:{kind}"


def test_llm_rubric_is_a_closed_qa_judge_with_a_threshold() -> None:
    match = from_promptfoo({"type": "llm-rubric", "value": "Is polite", "threshold": 0.7})
    assert match.name == "closed_qa" or "closed_qa" in match.describe()


def test_an_assertion_without_a_type_is_refused() -> None:
    with pytest.raises(ValueError, match="type"):
        from_promptfoo({"value": "x"})
