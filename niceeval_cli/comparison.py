"""What changed between two sides: two runs, or two experiments of one run (reports.md, "compare").

Pure: attempts in, classed pairs out. Attempts pair by (experiment, eval, case id) — or by
(eval, case id) when two experiments play the two sides — and assertions by `key`. An eval is its
identity (module id, definition name: authoring.md), so an eval whose displayed id changed when
its module gained or lost an eval still pairs; an attempt sealed before identities were stored
pairs by its eval id (with the attempt of either side that shows that id). Each side of
a pair is folded over its attempts (`pass_rule` for pass-style verdicts and score gates), so
repeated attempts compare by their eval-level result and carry their pass rates. Every decision
about one attempt comes from `outcomes`; nothing here re-decides what was sealed.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any

from . import outcomes
from ._pair_stats import EXPERIMENT_COLUMNS, ExperimentChange, PairStats, change_of, gate_evidence, interval_of
from ._states import AttemptState, EvalKind, GateState
from ._unit_folds import AttemptFacts, UnitFold, mean_score, unit_fold
from .stats import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE,
    Significance,
    UnitEvidence,
    experiment_differences,
    pair_tests,
)

__all__ = [
    "CLASS_ORDER",
    "EXPERIMENTS_ORDER",
    "EXPERIMENT_COLUMNS",
    "ROW_COLUMNS",
    "AttemptFacts",
    "Comparison",
    "ExperimentChange",
    "Pair",
    "PairClass",
    "PairStats",
    "Side",
    "UnitFold",
    "Verdict",
    "case_eval_id",
    "classify",
    "compare",
    "compare_folds",
    "fold_side",
    "group_units",
    "shown_eval_id",
    "side_of",
]


def case_eval_id(eval_id: str, case_id: str | None) -> str:
    """The eval a dataset case belongs to: `refunds` for `refunds[r-017]` (datasets.md, "Ids")."""
    if case_id is not None and eval_id.endswith(f"[{case_id}]"):
        return eval_id[: -len(case_id) - 2]
    return eval_id


def shown_eval_id(eval_id: str, case_id: str | None) -> str:
    """An eval id as text shows it: a case's own id carries its case (`refunds[r-017]`)."""
    if case_id is None or eval_id.endswith(f"[{case_id}]"):
        return eval_id
    return f"{eval_id}[{case_id}]"


class PairClass(str, Enum):
    """The one class each pair gets."""

    REGRESSED = "regressed"
    FIXED = "fixed"
    UNDECIDED = "undecided"
    DECIDED = "decided"
    STILL_FAILING = "still-failing"
    UNCHANGED = "unchanged"
    ADDED = "added"
    REMOVED = "removed"

    def __str__(self) -> str:
        return str(self.value)


#: Run against run: regressions first, then fixed, undecided, the rest.
CLASS_ORDER: tuple[PairClass, ...] = tuple(PairClass)
#: Experiment A against B: B's wins (fixed) and losses (regressed) first.
EXPERIMENTS_ORDER: tuple[PairClass, ...] = (
    PairClass.FIXED, PairClass.REGRESSED, *(c for c in PairClass if c not in (PairClass.FIXED, PairClass.REGRESSED)),
)


class Verdict(str, Enum):
    """Where one side stands: a definite pass, a definite failure, or nothing decided."""

    PASSED = "passed"
    FAILED = "failed"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Side:
    """One (experiment, eval, case) of one side, folded over its attempts."""

    experiment_id: str
    eval_id: str
    case_id: str | None
    kind: EvalKind
    state: AttemptState  # pass: the fold's result; score: errored > unrankable > scored
    gate: GateState | None  # score-style: the gates folded under pass_rule; None for pass-style
    score: float | None  # the mean score of the attempts that have one
    max_score: float | None
    passed: int  # attempts that passed (score-style: scored with their gate passed or absent)
    attempts: int
    verdict: Verdict
    key_states: Mapping[str, tuple[str, ...]]  # assertion key → its states over the attempts, sorted
    errored: int = 0  # attempts that errored: evidence neither way, shown beside the rate
    missing: int = 0  # planned attempts never sealed (a missing shard): the verdict waits on them

    @property
    def decided(self) -> int:
        """Attempts that count as evidence (statistics.md: errored ones are not failures)."""
        return self.attempts - self.errored

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None

    @property
    def rankable(self) -> bool:
        return self.kind is EvalKind.SCORE and self.state is AttemptState.SCORED and self.score is not None




_GATE_AS_ATTEMPT = {
    GateState.PASSED: AttemptState.PASSED,
    GateState.FAILED: AttemptState.FAILED,
    GateState.UNAVAILABLE: AttemptState.ERRORED,
}
_ATTEMPT_AS_GATE = {v: k for k, v in _GATE_AS_ATTEMPT.items()}


def fold_side(attempts: Sequence[AttemptFacts], *, keys: bool = True) -> Side:
    """Fold one (experiment, eval, case)'s attempts: verdict, pass count, mean score, and (unless
    `keys=False`, for readers that do not compare assertions) the states of each assertion key."""
    return side_of(unit_fold(attempts, keys=keys))


@lru_cache(maxsize=256)
def _rule(stored: str | None) -> outcomes.PassRule:
    """A slot's stored pass rule, parsed once per distinct text (20 000 sides share a few)."""
    return outcomes.parse_pass_rule(outcomes.stored_pass_rule(stored))


def side_of(fold: UnitFold) -> Side:
    """A side from its unit's fold: pass-style verdicts under the pass rule, score gates folded
    under it likewise, the mean score."""
    state, gate, score, max_score, passed, verdict = _verdict_of(
        fold.kind, fold.pass_rule, fold.passed, fold.failed, fold.errored, fold.scored, fold.unrankable,
        fold.gates_passed, fold.gates_failed, fold.gates_unavailable, fold.scored_gate_passed, fold.scores,
        fold.max_score, fold.missing)
    return Side(
        experiment_id=fold.experiment_id,
        eval_id=fold.eval_id,
        case_id=fold.case_id,
        kind=fold.kind,
        state=state,
        gate=gate,
        score=score,
        max_score=max_score,
        passed=passed,
        attempts=fold.attempts,
        verdict=verdict,
        key_states=fold.key_states,
        errored=fold.errored,
        missing=fold.missing,
    )


@lru_cache(maxsize=4096, typed=True)  # typed: a max_score of 10 and one of 10.0 print differently
def _verdict_of(kind: EvalKind, pass_rule: str | None, passed: int, failed: int, errored: int, scored: int,
                unrankable: int, gates_passed: int, gates_failed: int, gates_unavailable: int,
                scored_gate_passed: int, scores: tuple[float, ...], max_score: float | None, missing: int = 0
                ) -> tuple[AttemptState, GateState | None, float | None, float | None, int, Verdict]:
    """What a side's counts decide (state, gate, mean score, max score, passes, verdict), by the
    counts alone: 20 000 sides of units of a few attempts meet a few hundred distinct ones.
    `missing` planned attempts never sealed: a pass verdict or a folded gate stands only where they
    could not change it (`outcomes.settled_verdict`)."""
    rule = _rule(pass_rule)
    gate: GateState | None = None
    if kind is EvalKind.PASS:
        if scored or unrankable:
            raise outcomes.not_pass_style(AttemptState.SCORED if scored else AttemptState.UNRANKABLE)
        state = outcomes.settled_verdict(passed, failed, errored, missing, rule)
        verdict = {AttemptState.PASSED: Verdict.PASSED, AttemptState.FAILED: Verdict.FAILED}.get(
            state, Verdict.UNDECIDED
        )
    else:
        if errored:
            state = AttemptState.ERRORED
        elif unrankable:
            state = AttemptState.UNRANKABLE
        else:
            state = AttemptState.SCORED
        if gates_passed or gates_failed or gates_unavailable:
            folded = outcomes.settled_verdict(gates_passed, gates_failed, gates_unavailable, missing, rule)
            gate = _ATTEMPT_AS_GATE[folded]
        else:
            gate = GateState.NONE
        passed = scored_gate_passed
        if state is not AttemptState.SCORED or gate is GateState.UNAVAILABLE:
            verdict = Verdict.UNDECIDED
        elif gate is GateState.FAILED:
            verdict = Verdict.FAILED
        else:
            verdict = Verdict.PASSED
    is_score = kind is EvalKind.SCORE
    return (state, gate, mean_score(scores) if scores and is_score else None, max_score if is_score else None,
            passed, verdict)


def _score_change(base: Side, new: Side) -> int:
    """-1 when the rankable score went down, 1 when up, 0 otherwise (or when either is not rankable)."""
    if not (base.rankable and new.rankable) or base.score is None or new.score is None:
        return 0
    b, n = base.score, new.score
    if base.max_score and new.max_score and not math.isclose(base.max_score, new.max_score):
        b, n = b / base.max_score, n / new.max_score  # out of different maxima: compare fractions
    if math.isclose(b, n, rel_tol=1e-9, abs_tol=1e-12):
        return 0
    return 1 if n > b else -1


def classify(base: Side | None, new: Side | None) -> PairClass:
    """The class of one pair (reports.md's table); both sides undecided reads `unchanged`."""
    if base is None and new is None:
        raise ValueError("a pair needs at least one side")
    if base is None:
        return PairClass.ADDED
    if new is None:
        return PairClass.REMOVED
    b, n = base.verdict, new.verdict
    if b is Verdict.UNDECIDED and n is Verdict.UNDECIDED:
        return PairClass.UNCHANGED
    if n is Verdict.UNDECIDED:
        return PairClass.UNDECIDED
    if b is Verdict.UNDECIDED:
        return PairClass.DECIDED
    if b is Verdict.PASSED and n is Verdict.FAILED:
        return PairClass.REGRESSED
    if b is Verdict.FAILED and n is Verdict.PASSED:
        return PairClass.FIXED
    if b is Verdict.FAILED:
        return PairClass.STILL_FAILING
    change = _score_change(base, new)
    if change < 0:
        return PairClass.REGRESSED
    if change > 0:
        return PairClass.FIXED
    return PairClass.UNCHANGED


def _changed_keys(base: Side | None, new: Side | None) -> tuple[str, ...]:
    """Assertion keys whose states differ (a key on one side only counts as changed)."""
    if base is None or new is None or base.key_states is new.key_states:  # alike states share one mapping
        return ()
    keys = list(dict.fromkeys([*new.key_states, *base.key_states]))
    return tuple(k for k in keys if base.key_states.get(k) != new.key_states.get(k))


@dataclass(frozen=True)
class Pair:
    """One (experiment, eval, case) on both sides, with its class."""

    cls: PairClass
    experiment_id: str  # the NEW side's experiment (the base's for a removed pair)
    base_experiment_id: str  # equal to experiment_id when two runs are compared
    eval_id: str
    case_id: str | None
    base: Side | None
    new: Side | None
    changed_keys: tuple[str, ...]
    stats: PairStats | None = None

    @property
    def significance(self) -> Significance | None:
        """Only a regressed or fixed pair carries it (statistics.md)."""
        if self.stats is None or self.cls not in (PairClass.REGRESSED, PairClass.FIXED):
            return None
        return self.stats.test.significance

    @property
    def kind(self) -> EvalKind:
        side = self.new or self.base
        assert side is not None
        return side.kind

    def row(self) -> dict[str, Any]:
        """The machine row (`--format json|ndjson|csv`); column names are documented in docs/reports.md.
        Written out key by key (10 000 rows a comparison: no key is built per row)."""
        b_state, b_gate, b_score, b_max, b_passed, b_attempts = _side_values(self.base)
        n_state, n_gate, n_score, n_max, n_passed, n_attempts = _side_values(self.new)
        test = self.stats.test if self.stats is not None else None
        significance = self.significance
        b_interval = self.stats.base_interval if self.stats is not None else None
        n_interval = self.stats.new_interval if self.stats is not None else None
        return {
            "class": self.cls.value, "experiment_id": self.experiment_id,
            "base_experiment_id": self.base_experiment_id, "eval_id": self.eval_id, "case_id": self.case_id,
            "kind": self.kind.value,
            "base_state": b_state, "base_gate": b_gate, "base_score": b_score, "base_max_score": b_max,
            "base_passed": b_passed, "base_attempts": b_attempts,
            "new_state": n_state, "new_gate": n_gate, "new_score": n_score, "new_max_score": n_max,
            "new_passed": n_passed, "new_attempts": n_attempts,
            "changed_keys": list(self.changed_keys),
            "p_value": None if test is None else test.p_value, "q_value": None if test is None else test.q_value,
            "significance": None if significance is None else significance.value,
            "base_low": None if b_interval is None else b_interval.low,
            "base_high": None if b_interval is None else b_interval.high,
            "new_low": None if n_interval is None else n_interval.low,
            "new_high": None if n_interval is None else n_interval.high,
        }


def _side_values(side: Side | None) -> tuple[Any, ...]:
    """A side's state, gate, score, max score, passes and attempts as a row shows them."""
    if side is None:
        return (None,) * 6
    return (side.state.value, None if side.gate is None else side.gate.value, side.score, side.max_score,
            side.passed, side.attempts)

ROW_COLUMNS: tuple[str, ...] = (
    "class", "experiment_id", "base_experiment_id", "eval_id", "case_id", "kind",
    "base_state", "base_gate", "base_score", "base_max_score", "base_passed", "base_attempts",
    "new_state", "new_gate", "new_score", "new_max_score", "new_passed", "new_attempts",
    "changed_keys", "p_value", "q_value", "significance", "base_low", "base_high", "new_low", "new_high",
)


@dataclass(frozen=True)
class Comparison:
    """Every pair, in reading order, and how many fell in each class."""

    pairs: tuple[Pair, ...]
    order: tuple[PairClass, ...] = CLASS_ORDER
    experiments: tuple[ExperimentChange, ...] = ()
    alpha: float = DEFAULT_ALPHA
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def single_attempts(self) -> bool:
        """Every paired unit has at most one decided attempt a side: a flip cannot be told from noise."""
        return all(p.base is None or p.new is None or max(p.base.attempts, p.new.attempts) <= 1 for p in self.pairs)

    def counts(self) -> dict[PairClass, int]:
        counted = Counter(p.cls for p in self.pairs)
        return {c: counted.get(c, 0) for c in self.order}

    def of(self, cls: PairClass) -> list[Pair]:
        return [p for p in self.pairs if p.cls is cls]

    def any_in(self, classes: Iterable[PairClass | str]) -> bool:
        wanted = {PairClass(c) for c in classes}
        return any(p.cls in wanted for p in self.pairs)


#: (experiment or "", the eval: (module id, name), or (None, eval id) without identity, case id)
Key = tuple[str, tuple[str | None, str], str | None]
#: An attempt's identity by what it shows: (experiment or "", eval id, case id) → (module id, name).
Identities = dict[tuple[str, str, str | None], tuple[str, str]]
#: Per (experiment, eval id, case id): planned attempts of a side no attempt filled (`Store.not_run`).
Missing = Mapping[tuple[str, str, str | None], int]


def _identities(sides: Iterable[Iterable[AttemptFacts]], *, by_experiment: bool) -> Identities:
    """The identity each shown eval id has (the first side given wins), for attempts without one."""
    known: Identities = {}
    for attempts in sides:
        for a in attempts:
            if a.eval_module is not None and a.eval_name is not None:
                known.setdefault((a.experiment_id if by_experiment else "", a.eval_id, a.case_id),
                                 (a.eval_module, a.eval_name))
    return known


def group_units(
    attempts: Iterable[AttemptFacts], *, by_experiment: bool, identities: Identities | None = None
) -> dict[Key, list[AttemptFacts]]:
    """Attempts by unit (experiment when `by_experiment`, eval identity, case id), each unit's in
    ordinal order; an attempt without an identity takes the one `identities` knows for its eval id."""
    groups: dict[Key, list[AttemptFacts]] = {}
    known = identities or {}
    for a in attempts:
        experiment = a.experiment_id if by_experiment else ""
        eval_key: tuple[str | None, str]
        if a.eval_module is not None and a.eval_name is not None:
            eval_key = (a.eval_module, a.eval_name)
        else:
            eval_key = known.get((experiment, a.eval_id, a.case_id), (None, a.eval_id))
        groups.setdefault((experiment, eval_key, a.case_id), []).append(a)
    for group in groups.values():
        group.sort(key=lambda a: a.ordinal)
    return groups


def compare(
    base: Iterable[AttemptFacts],
    new: Iterable[AttemptFacts],
    *,
    experiments: tuple[str, str] | None = None,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = DEFAULT_CONFIDENCE,
    missing: tuple[Missing, Missing] = ({}, {}),
) -> Comparison:
    """Pair and class two sides. With `experiments=(A, B)` the sides are A's attempts of `base`
    and B's attempts of `new` (pass the same run twice), paired by (eval id, case id). Each pair is
    tested against the noise (statistics.md) and each experiment's paired difference computed."""
    if experiments is not None:
        a_id, b_id = experiments
        base = [a for a in base if a.experiment_id == a_id]
        new = [a for a in new if a.experiment_id == b_id]
    by_experiment = experiments is None
    base, new = list(base), list(new)
    identities = _identities((new, base), by_experiment=by_experiment)
    base_groups = group_units(base, by_experiment=by_experiment, identities=identities)
    new_groups = group_units(new, by_experiment=by_experiment, identities=identities)
    return _compared(_with_missing({key: unit_fold(group) for key, group in base_groups.items()}, missing[0]),
                     _with_missing({key: unit_fold(group) for key, group in new_groups.items()}, missing[1]),
                     experiments=experiments, alpha=alpha, confidence=confidence)


def _with_missing(folds: dict[Key, UnitFold], missing: Missing) -> dict[Key, UnitFold]:
    """The folds with each unit's missing attempts set (a side with none: unchanged)."""
    if not missing:
        return folds
    return {key: dataclasses.replace(fold, missing=n) if (n := missing.get((fold.experiment_id, fold.eval_id,
                                                                             fold.case_id), 0)) else fold
            for key, fold in folds.items()}


def compare_folds(base: Iterable[UnitFold], new: Iterable[UnitFold], *, alpha: float = DEFAULT_ALPHA,
                  confidence: float = DEFAULT_CONFIDENCE, missing: tuple[Missing, Missing] = ({}, {}),
                  ) -> Comparison | None:
    """`compare` of two runs whose units the store folded (store/unit_folds.py), each unit seen
    first where `first_seen` says. The same pairing as `compare`: by identity, or by eval id for a
    unit without one. None when two units of one side would pair as one (a unit's attempts split
    between two folds): the caller then compares the attempts themselves."""
    ordered = [sorted(side, key=_first_seen) for side in (base, new)]
    identities: Identities = {}
    for fold in (*ordered[1], *ordered[0]):
        if fold.eval_module is not None and fold.eval_name is not None:
            identities.setdefault((fold.experiment_id, fold.eval_id, fold.case_id), (fold.eval_module, fold.eval_name))
    keyed: list[dict[Key, UnitFold]] = []
    for side in ordered:
        by_key: dict[Key, UnitFold] = {}
        for fold in side:
            eval_key: tuple[str | None, str]
            if fold.eval_module is not None and fold.eval_name is not None:
                eval_key = (fold.eval_module, fold.eval_name)
            else:
                eval_key = identities.get((fold.experiment_id, fold.eval_id, fold.case_id), (None, fold.eval_id))
            key = (fold.experiment_id, eval_key, fold.case_id)
            if key in by_key:
                return None
            by_key[key] = fold
        keyed.append(by_key)
    return _compared(_with_missing(keyed[0], missing[0]), _with_missing(keyed[1], missing[1]), experiments=None,
                     alpha=alpha, confidence=confidence)


def _first_seen(fold: UnitFold) -> tuple[int, str, str, int]:
    return fold.first_seen or (0, "", "", 0)


Evidence = tuple[UnitEvidence | None, UnitEvidence | None]


def _tested(base: Side | None, new: Side | None, base_fold: UnitFold | None, new_fold: UnitFold | None,
            evidence: Evidence) -> Evidence:
    """What a pair is tested on: its units' evidence, except a score-style pair whose gate decided
    its class (passed on one side, failed on the other), tested on the gates' counts."""
    if (base is None or new is None or base_fold is None or new_fold is None or base.kind is not EvalKind.SCORE
            or {base.verdict, new.verdict} != {Verdict.PASSED, Verdict.FAILED}):
        return evidence
    return (gate_evidence(base_fold.gates_passed, base_fold.gates_failed),
            gate_evidence(new_fold.gates_passed, new_fold.gates_failed))


def _compared(base_folds: Mapping[Key, UnitFold], new_folds: Mapping[Key, UnitFold], *,
              experiments: tuple[str, str] | None, alpha: float, confidence: float) -> Comparison:
    """Pair, class and test two sides' units, keyed by pairing key in the order first seen.

    Everything scipy is not needed for comes first (sides, classes, changed keys, the paired
    differences), the tests and t intervals last: when a helper process imports scipy meanwhile
    (`stats.computed_by`), the wait for it falls after this process's own work."""
    order = CLASS_ORDER if experiments is None else EXPERIMENTS_ORDER
    rank = {c: i for i, c in enumerate(order)}
    drafts: list[tuple[PairClass, str, str, str, str | None, Side | None, Side | None, tuple[str, ...]]] = []
    evidence: list[Evidence] = []
    tested: list[Evidence] = []  # what each pair's test reads
    for key in dict.fromkeys([*base_folds, *new_folds]):
        base_fold, new_fold = base_folds.get(key), new_folds.get(key)
        b = None if base_fold is None else side_of(base_fold)
        n = None if new_fold is None else side_of(new_fold)
        side = n or b
        assert side is not None
        drafts.append((
            classify(b, n),
            experiments[1] if experiments else side.experiment_id,
            experiments[0] if experiments else side.experiment_id,
            side.eval_id,  # as the new side shows it
            key[2], b, n, _changed_keys(b, n),
        ))
        evidence.append((None if base_fold is None else base_fold.evidence,
                         None if new_fold is None else new_fold.evidence))
        tested.append(_tested(b, n, base_fold, new_fold, evidence[-1]))
    changes = experiment_differences([((d[1], d[2]), case_eval_id(d[3], d[4]), b, n)
                                      for d, (b, n) in zip(drafts, evidence, strict=True)], confidence)
    tests = pair_tests(tested, alpha)
    pairs = [
        Pair(cls, experiment_id, base_experiment_id, eval_id, case_id, b, n, changed,
             PairStats(test, interval_of(base_evidence, confidence), interval_of(new_evidence, confidence)))
        for (cls, experiment_id, base_experiment_id, eval_id, case_id, b, n, changed), test,
        (base_evidence, new_evidence) in zip(drafts, tests, evidence, strict=True)
    ]
    pairs.sort(key=lambda p: (rank[p.cls], p.experiment_id, p.eval_id, p.case_id is not None, p.case_id or ""))
    experiment_rows = tuple(change_of(change) for change in changes)
    return Comparison(tuple(pairs), order, experiment_rows, alpha, confidence)
