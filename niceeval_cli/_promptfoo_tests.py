"""A promptfoo test file's tests as NiceEval cases (integrations.md, "Tests from other tools").

Behind `datasets.load_promptfoo`. A test's `vars` become the case's value; its assertions (with
`defaultTest`'s first), description and promptfoo metadata become the case's metadata, in
promptfoo's own assertion form, so `expect.from_promptfoo` reads them unchanged. A CSV's
`__expected` cells (`contains: Paris`, a bare text meaning equals) are turned into that form here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .authoring import Case
from .expect._promptfoo import PROMPTFOO_TYPES  # the assertion types expect's promptfoo reader knows: one list

if TYPE_CHECKING:
    from .datasets import _Source

__all__ = ["expected_cell", "promptfoo_cases"]

#: Types promptfoo knows that NiceEval does not map (they load, and stay `unavailable`), so a CSV
#: cell `javascript: output.length < 10` is read as that type, not as text to equal.
_KNOWN_ELSEWHERE = frozenset({
    "javascript", "python", "similar", "levenshtein", "rouge-n", "bleu", "gleu", "meteor", "cost", "latency",
    "perplexity", "perplexity-score", "answer-relevance", "context-faithfulness", "context-recall",
    "context-relevance", "factuality", "model-graded-closedqa", "model-graded-factuality", "moderation", "webhook",
    "is-valid-openai-tools-call", "is-valid-openai-function-call", "contains-json", "is-xml", "contains-xml",
    "is-sql", "contains-sql", "classifier", "select-best", "g-eval", "is-refusal", "trace-span-count",
    "assert-set", "word-count", "finish-reason", "pi", "guardrails", "max-score",
})
_ALIASES = {"grade": "llm-rubric", "fn": "javascript", "eval": "javascript"}
_PREFIX = re.compile(r"^\s*([a-z][a-z0-9-]*)\s*:\s?(.*)$", re.DOTALL)
_VALUELESS = frozenset({"is-json", "is-xml", "is-sql", "is-refusal"})


def _known(kind: str) -> bool:
    base = kind.removeprefix("not-")
    return base in PROMPTFOO_TYPES or base in _KNOWN_ELSEWHERE


def expected_cell(text: str) -> dict[str, Any]:
    """One `__expected` cell as a promptfoo assertion: `type: value`, a bare type without a
    value (`is-json`), or else the whole text to equal."""
    stripped = text.strip()
    if _known(stripped) and stripped.removeprefix("not-") in _VALUELESS:
        return {"type": stripped}
    found = _PREFIX.match(text)
    if found is not None:
        kind = _ALIASES.get(found.group(1), found.group(1))
        if _known(kind):
            return {"type": kind, "value": found.group(2)}
    return {"type": "equals", "value": text}


def _metadata(description: object, asserts: list[Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"assert": asserts}
    if description is not None:
        meta["description"] = description
    meta.update({key: value for key, value in extra.items() if value is not None})
    return meta


def _test_from_csv(row: Mapping[str, str]) -> dict[str, Any]:
    vars_: dict[str, Any] = {}
    asserts: list[dict[str, Any]] = []
    metadata: dict[str, Any] = {}
    test: dict[str, Any] = {}
    for column, cell in row.items():
        if column == "__expected" or re.fullmatch(r"__expected\d+", column):
            if cell.strip():
                asserts.append(expected_cell(cell))
        elif column == "__description":
            test["description"] = cell or None
        elif column.startswith("__metadata:"):
            metadata[column.removeprefix("__metadata:")] = cell
        elif column in ("__prefix", "__suffix", "__metric", "__threshold"):
            if cell:
                test[column.removeprefix("__")] = float(cell) if column == "__threshold" else cell
        else:
            vars_[column] = cell
    test.update(vars=vars_, assertions=asserts, metadata=metadata or None)
    return test


def _test_from_yaml(source: _Source, item: object, line: int | None, default: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise source.error(f"a test must be a mapping with vars and assert, got {type(item).__name__}", line)
    vars_ = item.get("vars", {})
    if vars_ is None:
        vars_ = {}
    if not isinstance(vars_, Mapping):
        raise source.error("vars must be a mapping of variable names to values", line)
    asserts = item.get("assert", []) or []
    if not isinstance(asserts, list) or not all(isinstance(a, Mapping) and isinstance(a.get("type"), str)
                                                for a in asserts):
        raise source.error("assert must be a list of assertions, each a mapping with a 'type'", line)
    default_vars = default.get("vars") or {}
    test = {key: value for key, value in item.items() if key not in ("vars", "assert")}
    test.update(vars={**default_vars, **vars_}, assertions=[*(default.get("assert") or []), *asserts])
    return test


def promptfoo_cases(source: _Source, read: object, *, from_csv: bool) -> list[Case]:
    tests: list[tuple[int | None, dict[str, Any]]] = []
    if from_csv:
        rows: Sequence[tuple[int, Mapping[str, str]]] = read  # type: ignore[assignment]
        tests = [(line, _test_from_csv(row)) for line, row in rows]
    else:
        data: object
        lines: list[int | None]
        data, lines = read  # type: ignore[misc]
        default: Mapping[str, Any] = {}
        if isinstance(data, Mapping):  # a config file: its `tests` list and `defaultTest`
            default = data.get("defaultTest") or {}
            data = data.get("tests")
            lines = [None] * len(data) if isinstance(data, list) else []
        if not isinstance(data, list):
            raise source.error("expected a list of tests (or a mapping with a `tests:` list)")
        tests = [(line, _test_from_yaml(source, item, line, default))
                 for item, line in zip(data, lines or [None] * len(data), strict=True)]
    descriptions = [test.get("description") for _line, test in tests]
    by_description = all(isinstance(d, str) and d.strip() for d in descriptions) and len(set(descriptions)) == len(
        descriptions)
    cases: list[Case] = []
    for position, (line, test) in enumerate(tests):
        extra = {key: value for key, value in test.items() if key not in ("vars", "assertions", "description")}
        metadata = _metadata(test.get("description"), test["assertions"], extra)
        raw_id: object = test["description"] if by_description else position
        cases.append(source.case(raw_id, test["vars"], line, positional=not by_description, metadata=metadata))
    return cases
