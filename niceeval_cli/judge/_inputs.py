"""A judge assertion's full input, stored so the assertion can be graded again (judge-trust.md §2).

The input is what a grade depends on besides the judge settings: the factory, its criterion
text (question / reference / source), its scale (choices and scale version), its size limits,
and the subject — the grading material exactly as the judge is shown it, after redaction. It
is one canonical JSON text, addressed by its sha256, so a thousand attempts grading the same
reference against the same answer store it once (table `judge_inputs`).

A subject that never reached the judge (the material was unavailable, or over
`max_material_bytes`) is stored as that reason instead: regrading it asks no judge.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, cast

from .._redact import is_clean, redact_json
from .._states import UnavailableReason
from ..expect import Material
from ..expect._facts import unavailable_reason  # engine helpers below are not in expect's pinned user API
from ..expect._json import canonical_json  # the one stable JSON text (the fingerprint's too)
from ..expect._judge import (  # the judge match's definition, which the input describes
    CRITERION_FIELD,
    JUDGE_CHOICES,
    JUDGE_SCALE_VERSION,
    JudgeKind,
    JudgeMatch,
)

__all__ = ["JudgeInput", "StoredInput", "judge_input", "read_judge_input", "redacted_input"]


@dataclass(frozen=True)
class JudgeInput:
    """One judge assertion's input: its canonical JSON and that text's sha256 (hex)."""

    sha256: str
    content: str


@dataclass(frozen=True)
class StoredInput:
    """A stored input read back: the judge match to grade with, and the subject — or why there
    was none to show the judge (`unavailable`: the reason the original grade gave)."""

    match: JudgeMatch
    subject: Any
    unavailable: str | None


def judge_input(match: JudgeMatch, material: object, secrets: list[str] | tuple[str, ...] = ()) -> JudgeInput:
    """The input `match` grades `material` with, redacted of `secrets` (the key, header secrets)."""
    from ._grade import _material_json  # the subject exactly as the grader builds it

    document: dict[str, Any] = {
        "factory": match.judge_kind,
        CRITERION_FIELD[match.judge_kind]: match.criterion,
        "choices": dict(match.choices),
        "scale_version": JUDGE_SCALE_VERSION,
        "max_material_bytes": match.max_material_bytes,
        "max_audit_bytes": match.max_audit_bytes,
    }
    reason = unavailable_reason(material)
    if reason is None and isinstance(material, Material) and material.state == "partial":
        reason = material.reason or "partial"
    if reason is None:
        subject = _material_json(material)
        size = len(_json(subject).encode("utf-8", "surrogatepass"))
        if size > match.max_material_bytes:  # never sent, so never needed again: not kept whole
            document["subject_unavailable"] = UnavailableReason.MATERIAL_CAPACITY_EXCEEDED.value
            document["subject_bytes"] = size
        else:
            document["subject"] = subject
    else:
        document["subject_unavailable"] = str(reason)
    text = _json(document)
    if not is_clean(text, list(secrets)):  # a secret, or a code point UTF-8 cannot store
        text = _json(redact_json(document, list(secrets)))
    return JudgeInput(hashlib.sha256(text.encode("utf-8")).hexdigest(), text)


def redacted_input(found: JudgeInput, secrets: list[str] | tuple[str, ...]) -> JudgeInput:
    """`found` redacted of further `secrets` too (the run's adapter secrets, known at sealing)."""
    if not secrets or is_clean(found.content, list(secrets)):
        return found
    text = _json(redact_json(json.loads(found.content), list(secrets)))
    return JudgeInput(hashlib.sha256(text.encode("utf-8")).hexdigest(), text)


def _json(value: Any) -> str:
    try:
        return canonical_json(value)
    except ValueError:  # a non-finite number: stored as its name, as evidence is
        return canonical_json(redact_json(value))


def read_judge_input(content: str) -> StoredInput:
    """A stored input as the judge match and subject to grade again (ValueError when it is not one)."""
    document = json.loads(content)
    kind = document.get("factory") if isinstance(document, dict) else None
    if not isinstance(kind, str) or kind not in JUDGE_CHOICES:
        raise ValueError(f"not a judge input of a known factory: {str(kind)!r}")
    match = JudgeMatch(cast("JudgeKind", kind), document[CRITERION_FIELD[kind]],
                       max_material_bytes=document.get("max_material_bytes"),
                       max_audit_bytes=document.get("max_audit_bytes"))
    unavailable = document.get("subject_unavailable")
    return StoredInput(match, document.get("subject"), None if unavailable is None else str(unavailable))
