"""One summary row per attempt, and the details the page script renders on demand (sent once as JSON)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from ...app.compare import Results
from ...app.report import ReportData
from ...comparison import shown_eval_id
from ..viewmodels.standing import score_standing
from ..viewmodels.text import duration
from ._words import MARKS, OK_WORDS, attempt_word, eval_tags, score_text, slug


@dataclass(frozen=True)
class AttemptItem:
    """One summary row of the attempts list (its details live in the JSON payload, same index)."""

    index: int
    id: str
    experiment_id: str
    eval_id: str
    case_id: str | None
    ordinal: int
    word: str
    mark: str
    score: str
    duration: str
    tags: tuple[str, ...]
    open: bool
    reused_from: str | None
    grade: str | None = None  # a score's standing (high | middling | low), coloured and marked by it

    @property
    def state_slug(self) -> str:
        return slug(self.word)

    @property
    def badge_css(self) -> str:
        return f"s-{self.state_slug}" + (f" g-{self.grade}" if self.grade else "")

    @property
    def tags_text(self) -> str:
        return " ".join(self.tags)


#: The assertion columns the page reads (those the store has), sent once as the payload's `columns`.
RESULT_COLUMNS = ("state", "key", "label", "group_name", "role", "weight", "contribution", "measurement",
                  "threshold", "reason", "explanation", "match_name", "evidence", "judge_audit", "extras",
                  "source_file", "source_line", "or_stop")


class _Codes(dict[Any, int]):
    """Value → 1-based code, a new code the first time a value is seen (lookups stay in C).

    SQLite gives str, int, float, bytes or None; 1 and 1.0 share a code, which the page reads
    as the same number either way.
    """

    def __missing__(self, value: Any) -> int:
        self[value] = code = len(self)
        return code


def _results_by_attempt(results: Results) -> tuple[list[str], list[Any], dict[str, list[list[int]]]]:
    """Each attempt's results as rows of indexes into one table of distinct values (1-based; 0 = empty).

    Results repeat a lot (states, keys, labels, match names, files, evidence), so 100 000 of them
    travel as ~4 MB of small integers instead of ~15 MB of repeated text, and the page parses
    them that much faster. 0 and None stay different values (None is code 0).
    """
    columns = [c for c in RESULT_COLUMNS if c in results.columns]
    project = itemgetter(*(results.columns.index(c) for c in columns))
    at = results.columns.index("attempt_id")
    table = _Codes({None: 0})
    code = table.__getitem__
    grouped: dict[str, list[list[int]]] = {}
    for row in results.rows:  # already by attempt, severity order inside
        grouped.setdefault(row[at], []).append(list(map(code, project(row))))
    return columns, list(table)[1:], grouped


_ATTEMPT_FIELDS = ("reason", "error", "traceback", "stop_cause", "case_value", "case_metadata", "sandbox", "notes",
                   "started_at", "duration_ms", "input_tokens", "output_tokens", "judge_tokens", "cost_usd",
                   "estimated_cost_usd")


def _attempt_payload(row: Mapping[str, Any], results: list[list[int]],
                     turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    # What the summary row already shows (eval, experiment, state, score) is not repeated here.
    item: dict[str, Any] = {"id": row["id"], "results": results}
    score = score_text(row)
    if score:
        item["score"] = score
    if row.get("relation") == "reference":
        item["reused_from"] = row["run_id"]
    for name_ in _ATTEMPT_FIELDS:
        value = row.get(name_)
        if value is not None:
            item[name_] = value
    if row.get("case_id") is not None:
        item["case"] = row["case_id"]
    if turns:
        item["turns"] = list(turns)
    return item


def attempt_items(data: ReportData, server_rows: int) -> tuple[list[AttemptItem], dict[str, Any]]:
    columns, values, results = _results_by_attempt(data.results)
    tag_cache: dict[tuple[str, str], tuple[str, ...]] = {}
    items: list[AttemptItem] = []
    payload: list[dict[str, Any]] = []
    for i, row in enumerate(data.attempts):
        word = attempt_word(row["state"], row.get("gate"))
        standing = score_standing(row.get("score"), row.get("max_score")) if word == "scored" else None
        items.append(AttemptItem(
            index=i,
            id=row["id"],
            experiment_id=row["experiment_id"],
            eval_id=row["eval_id"],
            case_id=None if shown_eval_id(row["eval_id"], row.get("case_id")) == row["eval_id"] else row.get(
                "case_id"),  # shown apart only when the eval id does not carry it already
            ordinal=row["ordinal"],
            word=word,
            mark=standing.mark if standing else MARKS.get(word, ""),
            score=score_text(row),
            duration=duration(row.get("duration_ms")),
            tags=eval_tags(row, tag_cache),
            open=word not in OK_WORDS,
            reused_from=row["run_id"] if row.get("relation") == "reference" else None,
            grade=standing.grade if standing else None,
        ))
        payload.append(_attempt_payload(row, results.get(row["id"], []), data.turns.get(row["id"], ())))
    return items, {"columns": columns, "values": values, "attempts": payload}
