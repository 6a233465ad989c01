"""`niceeval judge agreement`: how often each judge decides as people (or another run's judge) do.

The store counts the pairs per judge identity (store/agreement.py); the figures are pure
(`stats.agreement_of`). Identities are keyed by the sha256 of their criterion text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..stats import Agreement, Confusion, agreement_of

if TYPE_CHECKING:
    from ..store import Store

ALL_RUNS = "all"
#: The criterion is shown by the first digits of its sha256, beside its first characters.
SHOWN_DIGITS = 12
SHOWN_CHARS = 60


def criterion_sha256(text: str) -> str:
    """The sha256 (hex) of a criterion's UTF-8 text: the part of a judge's identity that is its question."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Identity:
    """A judge identity as shown: model, factory, prompt / scale version, criterion digest and text."""

    model: str | None
    factory: str
    version: str | None
    sha256: str
    criterion: str

    @property
    def short(self) -> str:
        return self.sha256[:SHOWN_DIGITS]

    @property
    def text(self) -> str:
        """The criterion's first 60 characters (… when cut)."""
        flat = " ".join(self.criterion.split())
        return flat if len(flat) <= SHOWN_CHARS else flat[:SHOWN_CHARS - 1] + "…"


@dataclass(frozen=True)
class IdentityAgreement:
    """One identity's figures; `reference` is the other run's judge with `--between`, else None (people)."""

    judge: Identity
    reference: Identity | None
    figures: Agreement
    unmeasured: int  # labelled pairs without a judge measurement (unavailable, errored): not counted


def _identity(raw: object) -> Identity:
    model, factory, version, criterion = (getattr(raw, f) for f in ("model", "factory", "version", "criterion"))
    return Identity(model, factory, version, criterion_sha256(criterion), criterion)


def judge_agreement(store_file: Path, *, run: str | None = None, between: tuple[str, str] | None = None,
                    confidence: float = 0.95) -> list[IdentityAgreement]:
    """Every judge identity's agreement with the effective human labels of `run` (None / `all`:
    the whole store), or with `between = (RUN_A, RUN_B)` RUN_B's judge against RUN_A's."""
    from ..store import Store

    with Store.open(store_file, readonly=True) as store:
        return agreement_in(store, run=run, between=between, confidence=confidence)


def agreement_in(store: Store, *, run: str | None = None, between: tuple[str, str] | None = None,
                 confidence: float = 0.95) -> list[IdentityAgreement]:
    """`judge_agreement` over an open store (the report reads it with the run)."""
    if between is not None:
        reference_runs, judge_runs = (store.run_scope(store.resolve_ref(ref)[1]) for ref in between)
        counted = store.judge_agreement_between(reference_runs, judge_runs)
    else:
        scope = None if run in (None, ALL_RUNS) else store.run_scope(store.resolve_ref(run)[1])
        counted = store.label_agreement(scope)
    return [
        IdentityAgreement(
            _identity(c.judge), _identity(c.reference) if c.reference is not None else None,
            agreement_of(Confusion(c.tp, c.fp, c.fn, c.tn), exact_equal=c.exact_equal, exact_n=c.exact_n,
                         confidence=confidence),
            c.unmeasured,
        )
        for c in counted
    ]


__all__ = ["ALL_RUNS", "Identity", "IdentityAgreement", "agreement_in", "criterion_sha256", "judge_agreement"]
