"""Judge factories: `closed_qa`, `factuality`, `summarizes` (judge.md).

A JudgeMatch only *describes* a grading: its kind, its criterion text, its fixed lettered
choices and its size limits. It never grades anything itself; the runner hands it to the
JudgeService (`niceeval_cli.judge`), which asks the judge model for a letter and maps the letter
to the measurement through `choices`. The choices and `JUDGE_SCALE_VERSION` are stored in
`match_config`, so results stay comparable across versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NoReturn

from .._judge_scale import CRITERION_FIELD, JUDGE_CHOICES
from ._core import ScoreMatch

JudgeKind = Literal["closed_qa", "factuality", "summarizes"]

#: Bump when a letter's meaning or value changes (it is part of every judge's match_config).
JUDGE_SCALE_VERSION = "1"
DEFAULT_MAX_MATERIAL_BYTES = 256 * 1024
DEFAULT_MAX_AUDIT_BYTES = 1024 * 1024


class JudgeMatch(ScoreMatch):
    """A ScoreMatch whose measurement comes from a judge model (measured by the runner)."""

    is_judge = True

    def __init__(
        self,
        kind: JudgeKind,
        criterion: str,
        *,
        max_material_bytes: int | None = None,
        max_audit_bytes: int | None = None,
    ) -> None:
        if kind not in JUDGE_CHOICES:
            raise ValueError(f"unknown judge kind {kind!r}; expected one of {', '.join(JUDGE_CHOICES)}")
        field = CRITERION_FIELD[kind]
        if not isinstance(criterion, str) or not criterion.strip():
            raise ValueError(f"{kind}({field}=...): the {field} must be non-empty text, got {criterion!r}")
        self.judge_kind: JudgeKind = kind
        self.criterion: str = criterion
        self.max_material_bytes: int = _positive(kind, "max_material_bytes", max_material_bytes,
                                                 DEFAULT_MAX_MATERIAL_BYTES)
        self.max_audit_bytes: int = _positive(kind, "max_audit_bytes", max_audit_bytes,
                                              DEFAULT_MAX_AUDIT_BYTES)
        self.choices: Mapping[str, float] = JUDGE_CHOICES[kind]
        config: dict[str, Any] = {
            field: criterion,
            "choices": dict(self.choices),
            "scale_version": JUDGE_SCALE_VERSION,
            "max_material_bytes": self.max_material_bytes,
            "max_audit_bytes": self.max_audit_bytes,
        }
        super().__init__(kind, config)

    def describe(self) -> str:
        text = self.criterion if len(self.criterion) <= 60 else self.criterion[:59] + "…"
        return f"{self.name}({text!r})"

    def measure(self, candidate: object) -> NoReturn:
        raise TypeError(
            f"{self.describe()} is a judge: it is graded asynchronously by the runner's judge "
            "service, not by measure()"
        )


def _positive(kind: str, name: str, value: object, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{kind}({name}={value!r}): expected a positive whole number of bytes")
    return value


def closed_qa(
    question: str, *, max_material_bytes: int | None = None, max_audit_bytes: int | None = None,
) -> JudgeMatch:
    """Does the output satisfy one open-ended criterion? Measurement 0 or 1."""
    return JudgeMatch("closed_qa", question, max_material_bytes=max_material_bytes,
                      max_audit_bytes=max_audit_bytes)


def factuality(
    reference: str, *, max_material_bytes: int | None = None, max_audit_bytes: int | None = None,
) -> JudgeMatch:
    """Is the output factually consistent with the reference? Measurement 0, 0.4, 0.6 or 1."""
    return JudgeMatch("factuality", reference, max_material_bytes=max_material_bytes,
                      max_audit_bytes=max_audit_bytes)


def summarizes(
    source: str, *, max_material_bytes: int | None = None, max_audit_bytes: int | None = None,
) -> JudgeMatch:
    """Is the output a faithful summary of the source? Measurement 0 or 1."""
    return JudgeMatch("summarizes", source, max_material_bytes=max_material_bytes,
                      max_audit_bytes=max_audit_bytes)
