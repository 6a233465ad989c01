"""The attempts' details as the page embeds them: one JSON value written piece by piece, bounded.

Each attempt's texts arrive one attempt at a time (`ReportData.details`), already cut to
`Limits.text` characters by SQLite and marked `… [+N chars]` (as the terminal marks a cut);
here they are coded into the table of distinct values and written out at once, so the page is
never held whole. Two more limits keep a huge run's page (and the memory that writes it) small:
an attempt's details stop at `attempt` characters (the rest counted: "3 more turns"); the
details of every attempt stop at `page` characters — attempts come worst first, so the ones
left out are the last passed ones, and their rows stay in the list with a pointer to
`niceeval view @ATTEMPT`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from ...store.report_reads import AttemptTexts
from ..data import ReportData
from . import _json
from ._words import score_text


@dataclass(frozen=True)
class Limits:
    """How much of the run's texts the page embeds (characters; docs/reports.md, "Size")."""

    text: int = 4_000  # one text: a reply, an evidence value, a traceback, a tool call's output
    attempt: int = 60_000  # one attempt's details together
    page: int = 25_000_000  # every attempt's details together


#: The assertion columns the page reads (those the store has), sent once as the payload's `columns`.
RESULT_COLUMNS = ("state", "key", "label", "group_name", "role", "weight", "contribution", "measurement",
                  "threshold", "reason", "explanation", "match_name", "evidence", "judge_audit", "extras",
                  "source_file", "source_line", "or_stop")
_ATTEMPT_FIELDS = ("reason", "started_at", "duration_ms", "input_tokens", "output_tokens", "judge_tokens", "cost_usd",
                   "estimated_cost_usd", "judge_cost_usd", "judge_estimated_cost_usd", "stop_cause")
_TURN_FIELDS = ("session", "ordinal", "input", "message", "status", "observed", "input_tokens", "output_tokens",
                "cost_usd", "elapsed_ms", "data")
_EVENT_FIELDS = ("seq", "kind", "name", "role", "input", "output", "status", "text")


class _Codes(dict[Any, int]):
    """Value → 1-based code, a new code the first time a value is seen (lookups stay in C).

    SQLite gives str, int, float, bytes or None; 1 and 1.0 share a code, which the page reads
    as the same number either way.
    """

    def __missing__(self, value: Any) -> int:
        self[value] = code = len(self)
        return code


class _Writer:
    """One attempt's details at a time, within the attempt's and the page's budgets."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.left = limits.page  # characters the page may still embed
        self.codes = _Codes({None: 0})
        self.omitted = 0  # attempts whose details were left out

    def attempt(self, row: Mapping[str, Any], texts: AttemptTexts | None) -> dict[str, Any]:
        # What the summary row already shows (eval, experiment, state, score) is not repeated here.
        item: dict[str, Any] = {"id": row["id"]}
        if self.left <= 0:
            self.omitted += 1
            item["omitted"] = 1
            return item
        budget = min(self.limits.attempt, self.left)
        spent = 0
        score = score_text(row)
        if score:
            item["score"] = score
        if row.get("relation") == "reference":
            item["reused_from"] = row["run_id"]
        for name in _ATTEMPT_FIELDS:
            if row.get(name) is not None:
                item[name] = row[name]
        if row.get("case_id") is not None:
            item["case"] = row["case_id"]
        if texts is not None:
            for name, value in texts.fields.items():
                if value is not None:
                    item[name] = value
                    spent += _size(value)
            item["results"], spent, more = self._results(texts, spent, budget)
            if more:
                item["more_results"] = more
            turns, spent, more = self._turns(texts.turns, spent, budget)
            if turns:
                item["turns"] = turns
            if more:
                item["more_turns"] = more
        else:
            item["results"] = []
        self.left -= spent
        return item

    def _results(self, texts: AttemptTexts, spent: int, budget: int) -> tuple[list[list[Any]], int, int]:
        at = [texts.result_columns.index(c) if c in texts.result_columns else None for c in RESULT_COLUMNS]
        code = self.codes.__getitem__
        coded: list[list[Any]] = []
        for n, row in enumerate(texts.results):
            values = [None if i is None else row[i] for i in at]
            size = sum(len(v) if v.__class__ is str else 8 for v in values)
            if coded and spent + size > budget:
                return coded, spent, len(texts.results) - n
            # Short values repeat (states, keys, labels): coded once in the table. Long ones travel
            # inline with their attempt, so the table never holds the run's long texts.
            coded.append([v if v.__class__ is str and len(v) > _INLINE else code(v) for v in values])
            spent += size
        return coded, spent, 0

    def _turns(self, turns: list[dict[str, Any]], spent: int, budget: int) -> tuple[list[dict[str, Any]], int, int]:
        kept: list[dict[str, Any]] = []
        for n, turn in enumerate(turns):
            item = {k: turn[k] for k in _TURN_FIELDS if turn.get(k) is not None}
            item["events"] = [{k: e[k] for k in _EVENT_FIELDS if e.get(k) is not None} for e in turn["events"]]
            size = sum(_size(v) for v in item.values() if not isinstance(v, list)) + sum(
                _size(v) for e in item["events"] for v in e.values())
            if spent + size > budget:
                return kept, spent, len(turns) - n
            kept.append(item)
            spent += size
        return kept, spent, 0


_INLINE = 256  # characters: a longer text is written with its attempt, not in the table of values


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str) else 8


def payload_chunks(data: ReportData, head: Mapping[str, Any], limits: Limits,
                   listed: int | None = None) -> Iterable[str]:
    """The page's data as JSON text, in pieces: `head`, the attempts one by one (the first `listed`:
    those the list holds), then the table of distinct values they refer to and what was left out."""
    writer = _Writer(limits)
    yield _json.embed(dict(head))[:-1]  # the object stays open
    yield ',"columns":' + _json.embed(list(RESULT_COLUMNS)) + ',"attempts":['
    with data.details(limits.text) if data.details is not None else nullcontext(None) as read:
        for n, row in enumerate(itertools.islice(data.attempts, listed)):
            texts = read(row["id"]) if read is not None and writer.left > 0 else None
            yield ("," if n else "") + _json.embed(writer.attempt(row, texts))
    values = list(writer.codes)[1:]
    writer.codes = _Codes()
    yield '],"values":' + _json.embed(values)
    yield ',"omitted":' + str(writer.omitted) + "}"
