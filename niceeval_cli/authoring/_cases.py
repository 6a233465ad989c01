"""Cases: one eval over many inputs — `Case`, how case ids are found, and the checks made when
the eval is defined (datasets.md). Pure: no I/O, no runner."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ._definition_errors import DefinitionError
from ._errors import caller_location

#: `case_id=` / a loader's `id=`: the field that holds each case's id, or a function of the value.
CaseIdRule: TypeAlias = str | Callable[[Any], str | int]

#: The `"id"` field that names the cases of a list of mappings when no rule is given.
ID_FIELD = "id"

_JSON_KINDS = "objects, lists, strings, numbers, true, false and null"


class CaseProblem(ValueError):
    """What is wrong with a case, without saying where; the caller adds the eval or the file."""


def show(value: object, limit: int = 60) -> str:
    """A value as an error message quotes it: its repr, shortened, and its type."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{text} ({type(value).__name__})"


def check_case_id(raw: object) -> str:
    """A case id: a non-empty string (any Unicode), or an integer written in decimal."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    if not isinstance(raw, str):
        raise CaseProblem(f"a case id must be a non-empty string or an integer, got {show(raw)}")
    if not raw:
        raise CaseProblem("a case id must be a non-empty string, got an empty one")
    if raw.isascii():
        return raw
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise CaseProblem(f"the case id {raw!r} is not valid Unicode (it holds a lone surrogate)") from None
    return raw


def check_tags(tags: object, what: str = "tags") -> tuple[str, ...]:
    """Tags are a list (or tuple) of non-empty strings; a bare string is the classic slip."""
    if tags == ():
        return ()
    if isinstance(tags, str):
        raise CaseProblem(
            f"{what}: expected a list of strings, got {json.dumps(tags, ensure_ascii=False)}; write "
            f"{what}=[{json.dumps(tags, ensure_ascii=False)}]"
        )
    if not isinstance(tags, (list, tuple)):
        raise CaseProblem(f"{what}: expected a list of strings, got {show(tags)}")
    bad = [t for t in tags if not isinstance(t, str) or not t]
    if bad:
        raise CaseProblem(f"{what}: expected a list of non-empty strings, got {show(bad[0])} in it")
    return tuple(tags)


_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def canonical_json(value: object) -> str:
    """The one JSON text of a value (sorted keys, no spaces): what fingerprints and stores it."""
    try:
        text = _ENCODER.encode(value)
    except RecursionError:
        raise CaseProblem("is nested too deeply to store") from None
    except ValueError as exc:
        if "ircular" in str(exc):
            raise CaseProblem("contains itself (a circular reference), which JSON cannot hold") from None
        raise CaseProblem("holds NaN or an infinity, which JSON cannot hold") from None
    except TypeError as exc:
        detail = str(exc)
        if detail.startswith("Object of type "):
            kind = detail.removeprefix("Object of type ").split(" ", 1)[0]
            raise CaseProblem(f"holds a value of type {kind}, which is not JSON ({_JSON_KINDS})") from None
        if "not supported between" in detail:
            raise CaseProblem("has an object whose keys mix strings and numbers") from None
        raise CaseProblem(f"is not JSON ({detail})") from None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise CaseProblem("holds text that is not valid Unicode (a lone surrogate)") from None
    return text


@dataclass(frozen=True, init=False)
class Case:
    """One input of an eval with cases: a stable id, a JSON value, tags added to the eval's
    tags (so `--tag` selects cases) and metadata (stored and shown, never compared)."""

    id: str
    value: Any
    tags: tuple[str, ...]
    metadata: Mapping[str, Any] | None
    _json: str | None = field(repr=False, compare=False)  # None when the value is not JSON (`_problem`)
    _problem: str | None = field(repr=False, compare=False)  # why it cannot be an eval's case
    _origin: str | None = field(repr=False, compare=False)  # "evals/refunds.jsonl:7", for errors
    _positional: bool = field(repr=False, compare=False)  # the id is the row's position

    def __init__(
        self,
        id: str | int,
        value: object,
        tags: list[str] | tuple[str, ...] = (),
        metadata: Mapping[str, object] | None = None,
    ) -> None:
        try:
            _fill(self, id, value, tags, metadata, origin=None, positional=False)
        except CaseProblem as problem:
            raise DefinitionError(f"Case({show(id)}, ...): {problem}", caller_location()) from None

    @classmethod
    def _build(
        cls,
        raw_id: object,
        value: object,
        *,
        origin: str | None,
        positional: bool = False,
        tags: object = (),
        metadata: object = None,
    ) -> Case:
        """A Case made by a loader or from `cases=`; raises CaseProblem for the caller to place."""
        case = cls.__new__(cls)
        _fill(case, raw_id, value, tags, metadata, origin=origin, positional=positional)
        return case

    @property
    def canonical_json(self) -> str:
        """The value as canonical JSON: what the case's fingerprint covers."""
        if self._json is None:
            raise CaseProblem(self._problem or "its value is not JSON")
        return self._json

    @property
    def fingerprint_json(self) -> str:
        """What the case's fingerprint covers: its value, and its metadata when it has some (eval
        code may read `t.case.metadata` — a promptfoo case's assertions live there — so editing
        it must not leave an earlier result reused)."""
        if self.metadata is None:
            return self.canonical_json
        return '{"metadata":' + canonical_json(self.metadata) + ',"value":' + self.canonical_json + "}"

    @property
    def origin(self) -> str | None:
        """Where the case came from ("evals/refunds.jsonl:7", "item 3"), when known."""
        return self._origin


def _fill(
    case: Case, raw_id: object, value: object, tags: object, metadata: object, *, origin: str | None,
    positional: bool,
) -> None:
    case_id = check_case_id(raw_id)

    def named() -> str:
        return f"case {case_id!r}" + (f" ({origin})" if origin else "")

    # A value or metadata that is not JSON is reported by the eval that declares the case
    # (resolve_cases), so the error names the eval as well as the case: a loader or `Case(...)`
    # runs before `define_eval` knows which eval it is building.
    text: str | None = None
    problem_text: str | None = None
    try:
        text = canonical_json(value)
    except CaseProblem as problem:
        problem_text = f"{named()}: its value {problem}; case values are fingerprinted and stored, so they must be JSON"
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise CaseProblem(f"{named()}: metadata: expected a mapping or None, got {show(metadata)}")
        try:
            canonical_json(metadata)
        except CaseProblem as problem:
            problem_text = problem_text or f"{named()}: its metadata {problem}; metadata is stored, so it must be JSON"
    try:
        case_tags = check_tags(tags)
    except CaseProblem as problem:
        raise CaseProblem(f"{named()}: {problem}") from None
    put = object.__setattr__
    put(case, "id", case_id)
    put(case, "value", value)
    put(case, "tags", case_tags)
    put(case, "metadata", metadata)
    put(case, "_json", text)
    put(case, "_problem", problem_text)
    put(case, "_origin", origin)
    put(case, "_positional", positional)


@dataclass(frozen=True)
class CaseSet:
    """The cases of one eval, in order, and whether their ids are mere positions."""

    cases: tuple[Case, ...]
    positional: bool


def resolve_cases(cases: object, case_id: CaseIdRule | None) -> CaseSet:
    """`cases=` as Cases with unique ids (datasets.md, "Declaring cases"). Raises CaseProblem."""
    if isinstance(cases, Mapping):
        if case_id is not None:
            raise CaseProblem("case_id= names the cases of a list; the keys of a mapping are already the ids")
        built = [_from_key(key, value) for key, value in cases.items()]
        return _unique(CaseSet(tuple(built), positional=False))
    if isinstance(cases, (str, bytes)) or not isinstance(cases, Iterable):
        raise CaseProblem(
            f"expected a mapping of case id → value, or a list (of Case objects, or of values), got {show(cases)}"
        )
    items = list(cases)
    plain = [i for i, item in enumerate(items) if not isinstance(item, Case)]
    if case_id is not None and not plain:
        raise CaseProblem(
            "case_id= has nothing to name: every item is already a Case with its id (a loader names "
            "ids with its own id= argument)"
        )
    if case_id is not None and not (isinstance(case_id, str) or callable(case_id)):
        raise CaseProblem(f"case_id: expected a field name or a function of the value, got {show(case_id)}")
    rule: CaseIdRule | None = case_id
    if rule is None and plain and all(_has_field(items[i], ID_FIELD) for i in plain):
        rule = ID_FIELD
    built_items: list[Case] = []
    positional = False
    for index, item in enumerate(items):
        if isinstance(item, Case):
            built_items.append(item)
            positional = positional or item._positional
            continue
        origin = f"item {index}"
        raw_id = index if rule is None else id_by_rule(rule, item, origin)
        built_items.append(Case._build(raw_id, item, origin=origin, positional=rule is None))
        positional = positional or rule is None
    return _unique(CaseSet(tuple(built_items), positional))


def _from_key(key: object, value: object) -> Case:
    if isinstance(value, Case):
        raise CaseProblem(
            f"key {key!r} holds a Case; give either a list of Case objects or a mapping of case id → value"
        )
    try:
        raw_id = check_case_id(key)
    except CaseProblem as problem:
        raise CaseProblem(f"key {show(key)}: {problem}") from None
    return Case._build(raw_id, value, origin=f"key {key!r}")


def _has_field(item: object, name: str) -> bool:
    return isinstance(item, Mapping) and name in item


def id_by_rule(rule: CaseIdRule, item: object, origin: str) -> object:
    """The raw id `rule` gives `item` (checked afterwards by check_case_id)."""
    if isinstance(rule, str):
        if not isinstance(item, Mapping):
            raise CaseProblem(f"{origin} is {show(item)}, not a mapping, so it has no field {rule!r} to be its id")
        if rule not in item:
            fields = ", ".join(map(repr, list(item)[:8])) or "none"
            raise CaseProblem(f"{origin} has no field {rule!r} to be its id (its fields: {fields})")
        return item[rule]
    try:
        return rule(item)
    except Exception as exc:
        raise CaseProblem(f"the id function raised on {origin}: {type(exc).__name__}: {one_line(exc)}") from None


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def id_key(case_id: str) -> str:
    """What two case ids must differ in to be two cases: ids that differ only by Unicode
    normalisation (NFC / NFD) or trailing whitespace print alike, so they are one id twice."""
    key = case_id if case_id.isascii() else unicodedata.normalize("NFC", case_id)
    return key.rstrip()


def same_id_text(first: str, second: str) -> str:
    """How a duplicate id is named: itself, or both spellings when they only print alike."""
    if first == second:
        return f"the id {first!r}"
    return (f"the id {first!r} written two ways, {first!a} and {second!a} (they differ only by Unicode "
            "normalisation or trailing whitespace, so they print alike)")


def _unique(found: CaseSet) -> CaseSet:
    if not found.cases:
        raise CaseProblem("there are no cases; an eval with cases needs at least one (it would run nothing)")
    for case in found.cases:
        if case._problem is not None:
            raise CaseProblem(case._problem)
    seen: dict[str, int] = {}
    for index, case in enumerate(found.cases):
        first = seen.setdefault(id_key(case.id), index)
        if first != index:
            raise CaseProblem(
                f"two cases have {same_id_text(found.cases[first].id, case.id)}: "
                f"{_where(found.cases[first], first)} and {_where(case, index)}; case ids must be unique within an eval"
            )
    return found


def _where(case: Case, index: int) -> str:
    return case.origin or f"item {index}"


def positional_warning(eval_id: str) -> str:
    """What `niceeval list` says about an eval whose case ids are row positions."""
    return (
        f"eval {eval_id!r}: its case ids are row positions (0, 1, 2, …): inserting or removing a row "
        "renames every case after it, and those re-run; give each row an \"id\" field, or pass case_id= "
        "(or id= to the loader)"
    )
