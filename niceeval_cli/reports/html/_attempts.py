"""One summary row per attempt (the details the page script renders on demand: `_details`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ...comparison import shown_eval_id
from ..data import ReportData
from ..viewmodels.standing import score_standing
from ..viewmodels.text import duration
from ._words import MARKS, OK_WORDS, attempt_word, eval_tags, score_text, slug, tags_attribute


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
    def tags_attribute(self) -> str:
        return tags_attribute(self.tags)


def attempt_items(data: ReportData, limit: int | None = None) -> list[AttemptItem]:
    """One summary row per attempt, worst first, the first `limit` of them (their details:
    `_details.payload_chunks`)."""
    tag_cache: dict[tuple[str, str], tuple[str, ...]] = {}
    items: list[AttemptItem] = []
    for i, row in enumerate(itertools.islice(data.attempts, limit)):
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
    return items
