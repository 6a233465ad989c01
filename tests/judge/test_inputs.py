"""A judge assertion's full input (judge-trust.md §2): canonical, content-addressed, redacted, read back."""

from __future__ import annotations

import hashlib
import json

from niceeval_cli.expect import Material, closed_qa, factuality
from niceeval_cli.judge import judge_input, read_judge_input

QA = {"input": "What is the capital of France?", "output": "Paris."}


def test_the_same_question_and_subject_make_the_same_key():
    one = judge_input(closed_qa("Capital?"), dict(QA))
    two = judge_input(closed_qa("Capital?"), dict(reversed(QA.items())))  # key order does not matter
    assert one == two and one.sha256 == hashlib.sha256(one.content.encode()).hexdigest()
    assert judge_input(closed_qa("Capital city?"), QA).sha256 != one.sha256


def test_an_input_reads_back_as_the_match_and_subject_it_grades():
    stored = read_judge_input(judge_input(factuality("Paris is the capital."), QA).content)
    assert (stored.match.judge_kind, stored.match.criterion, stored.subject, stored.unavailable) == (
        "factuality", "Paris is the capital.", QA, None)
    assert dict(stored.match.choices) == {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}


def test_secrets_are_redacted_before_the_key_is_made():
    key = "sk-test-inputsKey0123456789abcdef"
    found = judge_input(closed_qa("Secret?"), {"input": "key?", "output": f"it is {key}"}, [key])
    assert key not in found.content and "[redacted]" in found.content
    assert found.sha256 == hashlib.sha256(found.content.encode()).hexdigest()


def test_a_subject_that_never_reached_the_judge_is_stored_as_its_reason():
    over = judge_input(closed_qa("Long?", max_material_bytes=10), {"output": "x" * 100})
    document = json.loads(over.content)
    assert document["subject_unavailable"] == "material-capacity-exceeded" and "subject" not in document
    assert read_judge_input(over.content).unavailable == "material-capacity-exceeded"
    gone = judge_input(closed_qa("Said?"), Material.unavailable("unobserved"))
    assert read_judge_input(gone.content).unavailable == "unobserved"
