"""Per-experiment and per-eval totals for report headers, from grouped sealed outcomes.

Pure: it reads `OutcomeGroup`s and asks `outcomes` (fold_pass_eval, summarize_scores) for every
decision, so a header can never disagree with the rules. Nothing here re-decides an attempt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

from .. import outcomes
from .._states import ATTEMPT_WORDS, AttemptState, Derived, EvalKind, GateState, Relation
from ..outcomes import stored_pass_rule as _rule
from ..store import OutcomeGroup, PassedEvals, PlanSlot

#: The fold used when a run recorded no pass rule on its slots (stores written before it did).
DEFAULT_PASS_RULE = outcomes.DEFAULT_PASS_RULE


_REST_SEVERITY = outcomes.attempt_severity(AttemptState.PASSED, None)
_FOLD_SEVERITY = {
    AttemptState.ERRORED: outcomes.attempt_severity(AttemptState.ERRORED, None),
    AttemptState.FAILED: outcomes.attempt_severity(AttemptState.FAILED, None),
}


@lru_cache(maxsize=4096)
def _fold(passed: int, failed: int, errored: int, rule: outcomes.PassRule) -> outcomes.EvalFold:
    """fold_pass_eval depends only on the counts, so equal counts share one fold, decided from the
    counts as `fold_pass_eval` decides (no list of one state per attempt: the run's 20 000 counted)."""
    parsed = outcomes.parse_pass_rule(rule)
    result, pass_rate = outcomes.pass_verdict(passed, failed, errored, parsed)
    return outcomes.EvalFold(result=result, passed=passed, failed=failed, errored=errored, pass_rate=pass_rate,
                             undecided=outcomes.is_undecided(passed, failed, parsed))


_GATE_FAILED_WORDS = {
    AttemptState.SCORED: Derived.GATE_FAILED.label,
    AttemptState.UNRANKABLE: Derived.UNRANKABLE_GATE_FAILED.label,
    AttemptState.ERRORED: Derived.ERRORED_GATE_FAILED.label,
}


@lru_cache(maxsize=64)
def attempt_word(state: AttemptState | str, gate: GateState | str | None) -> str:
    """The one word a report uses for an attempt's outcome (a failed score gate is its own word,
    and is said beside `unrankable` / `errored`: it is a definite failure either way)."""
    state = AttemptState(state)
    if gate is not None and GateState(gate) is GateState.FAILED:
        return _GATE_FAILED_WORDS.get(state, state.value)
    if state is AttemptState.SCORED and gate is not None and GateState(gate) is GateState.UNAVAILABLE:
        return Derived.GATE_UNAVAILABLE.label
    return state.value


@dataclass(eq=False, slots=True)  # one per eval: a summary of 20 000 evals holds 20 000
class EvalTally:
    """One (experiment, eval): its attempts' outcome counts, folded on demand."""

    experiment_id: str
    eval_id: str
    kind: EvalKind
    rule: outcomes.PassRule = DEFAULT_PASS_RULE
    # Its groups (read `groups`): most evals have one, held bare (no list per eval).
    _groups: OutcomeGroup | list[OutcomeGroup] | None = field(default=None, repr=False)
    attempts: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    severity: int = _REST_SEVERITY  # of its worst attempt (outcomes.attempt_severity)
    _fold: outcomes.EvalFold | None = field(default=None, repr=False)
    case_id: str | None = None  # a case of an eval with cases: eval_id is "<eval id>[<case id>]"
    worst_word: str = "passed"  # attempt_word of its worst attempt

    @property
    def groups(self) -> list[OutcomeGroup]:
        """Its attempts' groups, in the order they were added."""
        held = self._groups
        if held is None:
            return []
        return held if isinstance(held, list) else [held]

    def add(self, group: OutcomeGroup, severity: int) -> None:
        held = self._groups
        if held is None:
            self._groups = group
        elif isinstance(held, list):
            held.append(group)
        else:
            self._groups = [held, group]
        self.attempts += group.total
        if group.state is AttemptState.PASSED:
            self.passed += group.total
        elif group.state is AttemptState.FAILED:
            self.failed += group.total
        elif group.state is AttemptState.ERRORED:
            self.errored += group.total
        if severity < self.severity or self.attempts == group.total:
            self.severity = severity
            self.worst_word = attempt_word(group.state, group.gate)
        self._fold = None

    @property
    def base_id(self) -> str:
        """The eval's own id: a case eval's id without its `[<case id>]`."""
        if self.case_id is None:
            return self.eval_id
        return self.eval_id[: -len(self.case_id) - 2] if self.eval_id.endswith(f"[{self.case_id}]") else self.eval_id

    @property
    def word(self) -> str:
        """The eval's one-word result: pass-style folded under its rule, score-style its worst attempt."""
        return self.fold().result.value if self.kind is EvalKind.PASS else self.worst_word

    @property
    def ok(self) -> bool:
        return self.word in (AttemptState.PASSED.value, AttemptState.SCORED.value)

    def fold(self) -> outcomes.EvalFold:
        """The eval-level result of a pass-style eval under its pass_rule."""
        if self._fold is None:
            self._fold = _fold(self.passed, self.failed, self.errored, self.rule)
        return self._fold

    def scores(self) -> outcomes.ScoreSummary:
        groups = self.groups
        return outcomes.summarize_scores(groups, [g.total for g in groups])

    @property
    def eval_severity(self) -> int:
        """Worst first: an errored or failed eval, then an eval with undecidable or failed attempts."""
        if self.kind is EvalKind.PASS:
            return _FOLD_SEVERITY.get(self.fold().result, self.severity)
        return self.severity


@dataclass(frozen=True)
class CasesTally:
    """The cases of one eval in one experiment (datasets.md): each case is an EvalTally."""

    eval_id: str
    kind: EvalKind
    cases: tuple[EvalTally, ...]

    @property
    def ok(self) -> int:
        return sum(case.ok for case in self.cases)

    def failing(self) -> list[EvalTally]:
        """The cases that did not pass (or score cleanly), worst first, then by case id."""
        return sorted((c for c in self.cases if not c.ok), key=lambda c: (c.eval_severity, c.case_id or ""))


@dataclass
class ExperimentTally:
    """One experiment's evals (in eval id order once `tally` has built it; read-only after)."""

    experiment_id: str
    evals: list[EvalTally] = field(default_factory=list)
    # Pass-style evals whose every attempt passed, counted, not listed (a run's summary reads
    # them as `store.PassedEvals`): how many, their attempts, and those with several attempts.
    counted: int = 0
    counted_attempts: int = 0
    counted_multi: int = 0
    # What `eval_results` and `attempt_fold` read, folded once: the count line and the
    # experiment's lines both ask, and each asking was a fold of every eval (20 000 of them).
    _pass_totals: tuple[dict[AttemptState, int], int, int, int, int] | None = field(
        default=None, repr=False, compare=False)

    def case_groups(self) -> list[CasesTally]:
        """Evals with cases, each with its cases (in eval id order)."""
        groups: dict[str, list[EvalTally]] = {}
        for tally_ in self.evals:
            if tally_.case_id is not None:
                groups.setdefault(tally_.base_id, []).append(tally_)
        return [CasesTally(eval_id, cases[0].kind, tuple(cases)) for eval_id, cases in sorted(groups.items())]

    def pass_evals(self) -> list[EvalTally]:
        return [e for e in self.evals if e.kind is EvalKind.PASS]

    def score_groups(self) -> list[OutcomeGroup]:
        return [g for e in self.evals if e.kind is EvalKind.SCORE for g in e.groups]

    def _folded(self) -> tuple[dict[AttemptState, int], int, int, int, int]:
        """(pass-style evals by folded result, pass-style evals, their passed, failed, errored attempts)."""
        if self._pass_totals is None:
            counts = {AttemptState.PASSED: self.counted, AttemptState.FAILED: 0, AttemptState.ERRORED: 0}
            evals, passed, failed, errored = self.counted, self.counted_attempts, 0, 0
            for tally_ in self.evals:
                if tally_.kind is EvalKind.PASS:
                    counts[tally_.fold().result] += 1
                    evals += 1
                    passed += tally_.passed
                    failed += tally_.failed
                    errored += tally_.errored
            self._pass_totals = (counts, evals, passed, failed, errored)
        return self._pass_totals

    def eval_results(self) -> dict[AttemptState, int]:
        """How many pass-style evals passed, failed and errored (each folded under its rule)."""
        return dict(self._folded()[0])

    def undecided_evals(self) -> int:
        """Pass-style evals still undecided by their interval (`run --until-decided`): among
        `eval_results`' errored ones (so the exit code reads them alike), said apart."""
        return sum(1 for e in self.evals if e.kind is EvalKind.PASS and e.fold().undecided)

    def attempt_fold(self) -> outcomes.EvalFold | None:
        """All pass-style attempts together: the attempt-level pass rate."""
        _, evals, passed, failed, errored = self._folded()
        if not evals:
            return None
        # only its pass_rate is read: passed / (passed + failed + errored)
        return _fold(passed, failed, errored, DEFAULT_PASS_RULE)

    def scores(self) -> outcomes.ScoreSummary | None:
        groups = self.score_groups()
        return outcomes.summarize_scores(groups, [g.total for g in groups]) if groups else None


@dataclass
class RunTally:
    experiments: list[ExperimentTally]
    attempts: int
    reused: int
    words: dict[str, int]  # attempt_word → count
    rules_known: bool = False  # False: some slots carry no pass rule (older stores): folded under "any"
    #: (experiment, eval) → its planned attempts that never ran (`--budget`, a missing shard)
    missing: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def passed_so_far(self) -> int:
        """Pass-style evals folded `passed` that attempts which never ran could still fail
        (`outcomes.settled_verdict`): counted passed, yet nothing definite (exit 5)."""
        if not self.missing:
            return 0
        return sum(
            1 for x in self.experiments for e in x.pass_evals()
            if (n := self.missing.get((e.experiment_id, e.eval_id), 0)) and e.fold().result is AttemptState.PASSED
            and outcomes.settled_verdict(e.passed, e.failed, e.errored, n, e.rule) is not AttemptState.PASSED)

    def multi_attempt_evals(self) -> tuple[list[EvalTally], int]:
        """Evals with several attempts where not every attempt passed (or scored cleanly), worst
        first; and how many evals with several attempts there are in all."""
        multi = [e for x in self.experiments for e in x.evals if e.attempts > 1]
        # and evals still undecided by their interval, every attempt passed or not (run --until-decided)
        mixed = [e for e in multi if e.severity < _REST_SEVERITY or (e.kind is EvalKind.PASS and e.fold().undecided)]
        counted = sum(x.counted_multi for x in self.experiments)  # all passed: never mixed
        return sorted(mixed, key=lambda e: (e.eval_severity, e.experiment_id, e.eval_id)), len(multi) + counted


@lru_cache(maxsize=64)
def _severity(state: AttemptState, gate: GateState | None) -> int:
    return outcomes.attempt_severity(state, gate)


@lru_cache(maxsize=64)
def _outcome(state: AttemptState, gate: GateState | None) -> tuple[int, str, bool, bool, bool]:
    """What one group adds to its eval: severity, word, and whether it counts passed, failed, errored."""
    return (_severity(state, gate), attempt_word(state, gate), state is AttemptState.PASSED,
            state is AttemptState.FAILED, state is AttemptState.ERRORED)


_EVAL_ORDER = attrgetter("eval_id")
_NO_ID = object()


def not_run_by_eval(slots: Iterable[PlanSlot]) -> Counter[tuple[str, str]]:
    """(experiment, eval) → how many of its planned slots never ran: `tally`'s `missing`, for a
    page that lists the slots (a shard group's view, a budget-stopped run's view or report)."""
    return Counter((slot.experiment_id, slot.eval_id) for slot in slots)


def tally(groups: Sequence[OutcomeGroup], experiment_order: Sequence[str] = (),
          passed_evals: Sequence[PassedEvals] = (), missing: Mapping[tuple[str, str], int] | None = None,
          ) -> RunTally:
    """Gather grouped outcomes by experiment and eval (experiments in run order, then by id).

    `passed_evals`: evals whose every attempt passed, counted, not listed (`Store.run_outcome_rows`):
    other evals than the groups'. Every total reads them as it would their groups.

    `missing`: (experiment, eval) → planned attempts that never ran; such an eval must be among
    the groups (`Store.run_outcome_rows(unsettled=...)`), never counted in `passed_evals`.

    Each eval folds under the pass rule its run recorded on its slots (stores written before
    slots carried it fold under "any", and the header says so).

    Two passes, since a run's summary tallies every eval it has (20 000, say): the groups
    gathered by experiment and eval, then each eval built once from its groups (most evals have
    one group: built whole, without an `add` per group).
    """
    # By experiment, then by eval id (no key tuple per eval); an eval's one group held bare,
    # several in a list (no list per eval).
    by_experiment: dict[str, dict[str, OutcomeGroup | list[OutcomeGroup]]] = {}
    current_id: object = _NO_ID
    current: dict[str, OutcomeGroup | list[OutcomeGroup]] = {}
    for group in groups:
        if group.experiment_id != current_id:
            current_id = group.experiment_id
            current = by_experiment.setdefault(current_id, {})
        found = current.get(group.eval_id)
        if found is None:
            current[group.eval_id] = group
        elif isinstance(found, list):
            found.append(group)
        else:
            current[group.eval_id] = [found, group]
    experiments: dict[str, ExperimentTally] = {eid: ExperimentTally(eid) for eid in experiment_order}
    words: dict[str, int] = {}
    attempts = reused = 0
    rules_known = True
    for experiment_id, by_eval in by_experiment.items():
        experiment = experiments.get(experiment_id)
        if experiment is None:
            experiment = experiments[experiment_id] = ExperimentTally(experiment_id)
        add = experiment.evals.append
        for eval_id, found in by_eval.items():
            if not isinstance(found, list):
                first = found
                rules_known = rules_known and first.pass_rule is not None
                n = first.total
                severity, word, passed, failed, errored = _outcome(first.state, first.gate)
                add(EvalTally(experiment_id, eval_id, first.kind, _rule(first.pass_rule), found, n, n * passed,
                              n * failed, n * errored, severity, None, first.case_id, word))
                words[word] = words.get(word, 0) + n
                attempts += n
                if first.relation is Relation.REFERENCE:
                    reused += n
                continue
            first = found[0]
            rules_known = rules_known and first.pass_rule is not None
            tally_ = EvalTally(experiment_id, eval_id, first.kind, _rule(first.pass_rule), case_id=first.case_id)
            for group in found:
                severity, word, *_ = _outcome(group.state, group.gate)
                tally_.add(group, severity)
                words[word] = words.get(word, 0) + group.total
                attempts += group.total
                if group.relation is Relation.REFERENCE:
                    reused += group.total
            add(tally_)
    passed_word = attempt_word(AttemptState.PASSED, None)
    for counted in passed_evals:
        experiment = experiments.get(counted.experiment_id)
        if experiment is None:
            experiment = experiments[counted.experiment_id] = ExperimentTally(counted.experiment_id)
        rules_known = rules_known and counted.pass_rule is not None
        experiment.counted += counted.evals
        experiment.counted_attempts += counted.attempts
        experiment.counted_multi += counted.evals if counted.attempts_each > 1 else 0
        words[passed_word] = words.get(passed_word, 0) + counted.attempts
        attempts += counted.attempts
        reused += counted.reused
    for experiment in experiments.values():
        experiment.evals.sort(key=_EVAL_ORDER)
    ordered = {w: words[w] for w in ATTEMPT_WORDS if w in words}
    return RunTally(list(experiments.values()), attempts, reused, ordered, rules_known=rules_known,
                    missing=missing or {})
