"""Loaders that turn a data file into the `Case`s of an eval (datasets.md, "Loaders").

Relative paths are resolved against the file of the module that calls the loader (the eval
module), never the working directory, so `niceeval run` finds the data from anywhere. Every
problem is a `DatasetError` naming the file and line: discovery reports it as a configuration
error (exit 2).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from .authoring import Case, CaseIdRule, DatasetError, SourceLocation, caller_location
from .authoring._cases import (  # the loaders name cases by authoring's own id rules and wording
    ID_FIELD,
    CaseProblem,
    id_by_rule,
    id_key,
    one_line,
    same_id_text,
    show,
)
from .authoring._errors import _display_path  # a dataset's path shown as authoring errors show it

__all__ = ["CaseIdRule", "Converter", "load_csv", "load_json", "load_jsonl", "load_promptfoo", "load_yaml"]

#: A CSV column's type: a function of the cell's text (`int`, `float`, `json.loads`, ...);
#: `bool` reads true/false, yes/no, 1/0 (any case) instead of Python's `bool("false") is True`.
Converter: TypeAlias = Callable[[str], object]

_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})


class _Source:
    """One data file being read by one loader call: its path, its text and how to complain."""

    def __init__(self, loader: str, path: str | Path, called_at: SourceLocation) -> None:
        self.loader = loader
        self.called_at = called_at
        self.path = _resolve(Path(path), called_at)
        self.shown = _display_path(str(self.path))

    def error(self, problem: str, line: int | None = None) -> DatasetError:
        where = self.shown if line is None else f"{self.shown}:{line}"
        return DatasetError(f"{self.loader}: {where}: {problem}", self.called_at)

    def read_text(self) -> str:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise self.error(
                f"no such file (relative paths are resolved against the folder of the module that calls "
                f"{self.loader}: {_display_path(str(self.path.parent))})"
            ) from None
        except IsADirectoryError:
            raise self.error("is a folder, not a data file") from None
        except OSError as exc:
            raise self.error(f"cannot be read ({exc.strerror or one_line(exc)})") from None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise self.error(f"is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})", line) from None

    def case(self, raw_id: object, value: object, line: int | None, *, positional: bool = False,
             metadata: object = None) -> Case:
        origin = self.shown if line is None else f"{self.shown}:{line}"
        try:
            return Case._build(raw_id, value, origin=origin, positional=positional, metadata=metadata)
        except CaseProblem as problem:
            raise self.error(str(problem), line) from None


def _resolve(path: Path, called_at: SourceLocation) -> Path:
    path = path.expanduser()
    if path.is_absolute():
        return path
    caller = called_at.file
    if caller is None or caller.startswith("<"):
        return Path.cwd() / path
    return Path(caller).resolve().parent / path


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _rows_to_cases(
    source: _Source, rows: Sequence[tuple[int | None, object]], id: CaseIdRule | None
) -> list[Case]:
    """Cases from (line, value) rows: ids by `id`, else each row's "id" field, else positions."""
    rule: CaseIdRule | None = id
    if rule is None and rows and all(isinstance(v, Mapping) and ID_FIELD in v for _, v in rows):
        rule = ID_FIELD
    cases: list[Case] = []
    for position, (line, value) in enumerate(rows):
        if rule is None:
            cases.append(source.case(position, value, line, positional=True))
            continue
        try:
            raw_id = id_by_rule(rule, value, "the row" if line is not None else f"item {position}")
        except CaseProblem as problem:
            raise source.error(str(problem), line) from None
        cases.append(source.case(raw_id, value, line))
    _unique(source, cases)
    return cases


def _unique(source: _Source, cases: Sequence[Case]) -> None:
    seen: dict[str, Case] = {}
    for case in cases:
        first = seen.setdefault(id_key(case.id), case)
        if first is not case:
            what = "the case " + same_id_text(first.id, case.id).removeprefix("the ")  # "the case id 'r-01'"
            raise source.error(
                f"two rows have {what}: {first.origin} and {case.origin}; case ids must be unique within an eval"
            )


def _check_rule(loader: str, id: object, called_at: SourceLocation) -> None:
    if id is not None and not isinstance(id, str) and not callable(id):
        raise DatasetError(
            f"{loader}(id=...): expected a field name or a function of the row, got {show(id)}", called_at
        )


def load_jsonl(path: str | Path, id: CaseIdRule | None = None) -> list[Case]:
    """One case per non-blank line of a JSON Lines file, in file order."""
    source = _Source("load_jsonl", path, caller_location())
    _check_rule(source.loader, id, source.called_at)
    rows: list[tuple[int | None, object]] = []
    for number, line in enumerate(source.read_text().split("\n"), 1):
        if not line.strip():
            continue
        try:
            rows.append((number, _DECODER.decode(line)))
        except json.JSONDecodeError as exc:
            raise source.error(f"not valid JSON ({exc.msg} at column {exc.colno})", number) from None
        except (ValueError, RecursionError) as exc:
            raise source.error(f"not valid JSON ({_problem(exc)})", number) from None
    return _rows_to_cases(source, rows, id)


def load_json(path: str | Path, id: CaseIdRule | None = None) -> list[Case]:
    """The cases of a JSON file: a top-level list of rows, or an object whose keys are the ids."""
    source = _Source("load_json", path, caller_location())
    _check_rule(source.loader, id, source.called_at)
    text = source.read_text()
    try:
        top = _skip_space(text, 0)
        if top < len(text) and text[top] == "{":
            if id is not None:
                raise source.error("id= names the rows of a list; the keys of this file's object are already the ids")
            cases = [source.case(key, value, line) for line, key, value in _object_members(text, top)]
            _unique(source, cases)
            return cases
        if top < len(text) and text[top] == "[":
            return _rows_to_cases(source, list(_list_items(text, top)), id)
        value, _end = _DECODER.raw_decode(text, top)
        raise source.error(
            f"expected a list of rows, or an object whose keys are the case ids, got {show(value)}",
            _line(text, top),
        )
    except json.JSONDecodeError as exc:
        raise source.error(f"not valid JSON ({exc.msg} at column {exc.colno})", exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise source.error(f"not valid JSON ({_problem(exc)})") from None


def _problem(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else one_line(exc)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _expect(text: str, at: int, wanted: str) -> None:
    if at >= len(text) or text[at] not in wanted:
        expected = " or ".join(repr(c) for c in wanted)
        raise json.JSONDecodeError(f"Expecting {expected}", text, at)


def _list_items(text: str, at: int) -> Iterator[tuple[int | None, object]]:
    """The items of the top-level array starting at `at`, each with the line it starts on."""
    at = _skip_space(text, at + 1)
    if at < len(text) and text[at] == "]":
        _trailing(text, at + 1)
        return
    while True:
        value, end = _DECODER.raw_decode(text, at)
        yield _line(text, at), value
        at = _skip_space(text, end)
        _expect(text, at, ",]")
        if text[at] == "]":
            _trailing(text, at + 1)
            return
        at = _skip_space(text, at + 1)


def _object_members(text: str, at: int) -> Iterator[tuple[int, object, object]]:
    """The members of the top-level object at `at`: (line of the key, key, value)."""
    at = _skip_space(text, at + 1)
    if at < len(text) and text[at] == "}":
        _trailing(text, at + 1)
        return
    while True:
        _expect(text, at, '"')
        key, end = _DECODER.raw_decode(text, at)
        line = _line(text, at)
        at = _skip_space(text, end)
        _expect(text, at, ":")
        value, end = _DECODER.raw_decode(text, _skip_space(text, at + 1))
        yield line, key, value
        at = _skip_space(text, end)
        _expect(text, at, ",}")
        if text[at] == "}":
            _trailing(text, at + 1)
            return
        at = _skip_space(text, at + 1)


def _trailing(text: str, at: int) -> None:
    at = _skip_space(text, at)
    if at < len(text):
        raise json.JSONDecodeError("Extra data", text, at)


def load_csv(
    path: str | Path, id: CaseIdRule | None = None, types: Mapping[str, Converter] | None = None
) -> list[Case]:
    """One case per row of a CSV file with a header row: a dict of column → text, or the value
    `types` converts it to (`types={"quantity": int}`)."""
    source = _Source("load_csv", path, caller_location())
    _check_rule(source.loader, id, source.called_at)
    if types is not None and not isinstance(types, Mapping):
        raise DatasetError(f"load_csv(types=...): expected a mapping of column → type, got {show(types)}",
                           source.called_at)
    text = source.read_text()
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[tuple[int | None, object]] = []
    converters: dict[str, Converter] = {}
    columns: dict[str, int] = {}
    end_of_last = 0
    try:
        for cells in reader:
            line, end_of_last = end_of_last + 1, reader.line_num
            if not cells:
                continue  # a blank line
            if header is None:
                header, header_line = _header(source, cells, line), line
                converters = _converters(source, header, types or {})
                columns = {name: index for index, name in enumerate(header)}
                continue
            if len(cells) != len(header):
                raise source.error(
                    f"this row has {len(cells)} field{'s' if len(cells) != 1 else ''}, the header (line "
                    f"{header_line}) has {len(header)}",
                    line,
                )
            row: dict[str, object] = dict(zip(header, cells, strict=True))
            for column, convert in converters.items():
                row[column] = _convert(source, line, column, cells[columns[column]], convert)
            rows.append((line, row))
    except csv.Error as exc:
        raise source.error(f"not valid CSV ({one_line(exc)})", reader.line_num) from None
    if header is None:
        raise source.error("is empty; a CSV dataset needs a header row naming its columns")
    return _rows_to_cases(source, rows, id)


def _header(source: _Source, cells: list[str], line: int) -> list[str]:
    header = [cell.strip() for cell in cells]
    if any(not name for name in header):
        raise source.error(f"the header has an empty column name (column {header.index('') + 1})", line)
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise source.error(f"the header names column {repeated[0]!r} twice", line)
    return header


def _converters(source: _Source, header: list[str], types: Mapping[str, Converter]) -> dict[str, Converter]:
    unknown = [str(column) for column in types if column not in header]
    if unknown:
        raise DatasetError(
            f"load_csv(types=...): {source.shown} has no column {unknown[0]!r}; its columns: "
            f"{', '.join(header)}",
            source.called_at,
        )
    bad = [column for column, convert in types.items() if not callable(convert)]
    if bad:
        raise DatasetError(
            f"load_csv(types=...): the type of column {bad[0]!r} must be a function of the text "
            f"(int, float, bool, ...), got {show(types[bad[0]])}",
            source.called_at,
        )
    return dict(types)


def _convert(source: _Source, line: int, column: str, text: str, convert: Converter) -> object:
    if convert is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise source.error(f"column {column!r}: {text!r} is not a boolean (true/false, yes/no, 1/0)", line)
    try:
        return convert(text)
    except Exception as exc:
        name = getattr(convert, "__name__", repr(convert))
        raise source.error(
            f"column {column!r}: cannot convert {text!r} with {name} ({type(exc).__name__}: {one_line(exc)})",
            line,
        ) from None


def _yaml_rows(source: _Source, text: str, *, keys_are_ids: bool = False) -> tuple[object, list[int]]:
    """The YAML document and, when it is a list, the line each item starts on (PyYAML, imported
    here only). With `keys_are_ids`, a key written twice in a top-level mapping is two rows with
    one case id: PyYAML would keep the last silently, as `load_json` does not."""
    import yaml

    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or one_line(exc)
        raise source.error(f"not valid YAML ({problem})", mark.line + 1 if mark is not None else None) from None
    lines: list[int] = []
    if isinstance(node, yaml.SequenceNode):
        lines = [item.start_mark.line + 1 for item in node.value]
    elif isinstance(node, yaml.MappingNode):
        lines = [key.start_mark.line + 1 for key, _value in node.value]
        if keys_are_ids:
            _no_repeated_key(source, node)
    return data, lines


def _no_repeated_key(source: _Source, node: Any) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key, _value in node.value:
        if not isinstance(key.value, str):  # a list or mapping as a key: not a case id anyway
            continue
        line, written = key.start_mark.line + 1, (key.tag, key.value)
        first = seen.get(written)
        if first is None:
            seen[written] = line
        else:
            raise source.error(
                f"two rows have the case id {key.value!r}: {source.shown}:{first} and {source.shown}:{line}; "
                "case ids must be unique within an eval"
            )


def load_yaml(path: str | Path, id: CaseIdRule | None = None) -> list[Case]:
    """The cases of a YAML file, like `load_json`: a top-level list of rows, or a mapping whose
    keys are the ids."""
    source = _Source("load_yaml", path, caller_location())
    _check_rule(source.loader, id, source.called_at)
    data, lines = _yaml_rows(source, source.read_text(), keys_are_ids=True)
    if isinstance(data, Mapping):
        if id is not None:
            raise source.error("id= names the rows of a list; the keys of this file's mapping are already the ids")
        lines = lines if len(lines) == len(data) else [None] * len(data)  # type: ignore[list-item]  # merge keys (<<)
        cases = [source.case(key, value, line) for (key, value), line in zip(data.items(), lines, strict=True)]
        _unique(source, cases)
        return cases
    if isinstance(data, list):
        return _rows_to_cases(source, list(zip(lines, data, strict=True)), id)  # one start line per item
    raise source.error(f"expected a list of rows, or a mapping whose keys are the case ids, got {show(data)}")


def load_promptfoo(path: str | Path) -> list[Case]:
    """The tests of a promptfoo test file (YAML, or CSV with `__expected` columns) as cases: each
    case's value holds the test's `vars`, its metadata the `assert` list (promptfoo's assertion
    mappings, for `expect.from_promptfoo`), `description`, and promptfoo's own `metadata`.
    Case ids are the descriptions when every test has a distinct one, else positions."""
    from ._promptfoo_tests import promptfoo_cases

    source = _Source("load_promptfoo", path, caller_location())
    text = source.read_text()
    if source.path.suffix.lower() == ".csv":
        rows = _csv_rows(source, text)
        return promptfoo_cases(source, rows, from_csv=True)
    data, lines = _yaml_rows(source, text)
    return promptfoo_cases(source, (data, lines), from_csv=False)


def _csv_rows(source: _Source, text: str) -> list[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[tuple[int, dict[str, str]]] = []
    end_of_last = 0
    try:
        for cells in reader:
            line, end_of_last = end_of_last + 1, reader.line_num
            if not cells:
                continue
            if header is None:
                header = _header(source, cells, line)
                continue
            if len(cells) != len(header):
                raise source.error(f"this row has {len(cells)} fields, the header has {len(header)}", line)
            rows.append((line, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise source.error(f"not valid CSV ({one_line(exc)})", reader.line_num) from None
    if header is None:
        raise source.error("is empty; a promptfoo CSV needs a header row naming its vars")
    return rows
