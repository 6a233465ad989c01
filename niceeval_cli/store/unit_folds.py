"""A run's units folded in SQL: what `compare` reads of 100 000 attempts, as 10 000 rows.

A unit is one (experiment, eval, case) of a run — here, the slots of one (experiment, eval id),
whose attempts the store adds up in two statements that each walk the run's slots in key order
(no sort): the attempts' counts by state and gate (and how their scores spread), and their
assertion keys with every state that is not `matched`. A third reads the scores one by one of the
few score-style units whose counts do not tell them, finding those units' slots by key.
`_unit_folds.unit_fold` folds attempts in Python to the same `UnitFold`
(tests/compare/test_unit_folds_sql.py holds the two together).

Where the counts cannot stand for the attempts the answer is None, and the caller reads the
attempts: a unit whose attempts differ in kind, pass rule, case or identity, or whose attempt rows
disagree with their slots. Where an attempt's assertion keys are not every other attempt's keys
(a key registered twice, or only in some attempts), that unit's results are read one by one.

A run's units are folded once, when the run is finalised (`store_unit_folds`, in the transaction
that gives it its final status): the two statements' rows go into table `unit_folds` as they
come out, and `unit_folds` reads them back in their place — the same rows, so the same
`UnitFold`s — instead of walking 100 000 attempts and a million results on every `compare`.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from .._states import KIND_OF, AssertionState, AttemptState, EvalKind, GateState, Relation
from .._unit_folds import UnitFold, fold_key_states, score_evidence, shared_key_states
from ..outcomes import assertion_severity, assertion_severity_sql, attempt_severity_sql
from ..stats import UnitEvidence
from .db import Db
from .errors import translated
from .references import run_scope
from .schema import UNIT_FOLD_COLUMNS

__all__ = ["FOLD_FORMAT", "store_unit_folds", "unit_folds"]

#: What a stored fold row holds, as the statements below name it: bumped whenever they change
#: what a unit's row says, so rows stored by another NiceEval's statements are not read.
FOLD_FORMAT = 1
#: A unit's row, as table `unit_folds` stores it (less its run_id): the attempts statement's
#: columns, then the keys statement's (NULL for a unit without results).
_UNIT_COLUMNS = tuple(UNIT_FOLD_COLUMNS)[1:]
_ATTEMPT_NAMES, _KEY_NAMES = _UNIT_COLUMNS[:22], _UNIT_COLUMNS[22:]

#: Severity and ordinal of an attempt in one integer: the unit's first attempt in reading order.
_ORDINAL_BITS = 40
_MATCHED = AssertionState.MATCHED.value
_UnitKey = tuple[str, str]  # (experiment id, eval id) of the slots


#: Four counts packed into one sum, 16 bits each (a unit of 32 768 attempts or more is read
#: attempt by attempt): one aggregate instead of four over 100 000 rows.
_PACK = 1 << 16
_PACKED_LIMIT = 1 << 15


def _packed(column: str, values: Sequence[str]) -> str:
    whens = " ".join(f"WHEN '{value}' THEN {_PACK ** i}" for i, value in enumerate(values))
    return f"sum(CASE {column} {whens} ELSE 0 END)"


#: The packed states and gates, in packing order (`unrankable` is counted on its own).
_STATES = tuple(state.value for state in (AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED,
                                          AttemptState.SCORED))
_GATES = tuple(gate.value for gate in (GateState.PASSED, GateState.FAILED, GateState.UNAVAILABLE, GateState.NONE))


def _attempts_sql(runs: str, *, members: int = 1) -> str:
    """The units' counts; `members` is how many runs the scope holds (a shard group, several).
    Each column is named as table `unit_folds` stores it (`_ATTEMPT_NAMES`)."""
    severity = attempt_severity_sql("a.state", "a.gate")
    # A slot's key is (run, experiment, eval, ordinal): one run's unit cannot repeat an ordinal, so
    # only a group of runs needs the distinct count (a temporary B-tree of every slot).
    ordinals = "count(*)" if members == 1 else "count(DISTINCT s.ordinal)"
    # Whether the counts can stand for the attempts (`_told`) is decided in SQL, once per unit: the
    # row then carries each column's value, not its lowest, highest and count (fewer to hand over).
    columns = (
        "s.experiment_id", "s.eval_id", "count(*)", _told(ordinals), "min(s.ordinal)",
        f"min(({severity}) * {1 << _ORDINAL_BITS} + s.ordinal)",
        "min(a.case_id)", "min(a.eval_module)", "min(a.eval_name)", "min(a.kind)", "min(s.pass_rule)",
        _packed("a.state", _STATES), "sum(a.state IS 'unrankable')", _packed("a.gate", _GATES), "count(a.gate)",
        "sum(a.state IS 'scored' AND (a.gate IS NULL OR a.gate IN ('passed', 'none')))", "max(a.max_score)",
        *_SCORES_ALIKE,
    )
    return (
        f"SELECT {_named(columns, _ATTEMPT_NAMES)} "
        f"FROM run_slots s JOIN attempts a ON a.id = s.attempt_id WHERE s.run_id IN ({runs}) "
        "GROUP BY s.experiment_id, s.eval_id"
    )


def _named(columns: Sequence[str], names: Sequence[str]) -> str:
    return ", ".join(f"{column} AS {name}" for column, name in zip(columns, names, strict=True))


def _told(ordinals: str) -> str:
    """True when the unit's attempts are one attempt per ordinal, each its slot's, of one kind, and
    alike in case, identity and pass rule (each NULL in all or one value in all)."""
    alike = [f"(count({c}) = 0 OR (count({c}) = count(*) AND min({c}) = max({c})))"
             for c in ("a.case_id", "a.eval_module", "a.eval_name", "s.pass_rule")]
    return " AND ".join([
        f"({ordinals} = count(*)",
        "NOT sum(a.experiment_id IS NOT s.experiment_id OR a.eval_id IS NOT s.eval_id OR a.ordinal IS NOT s.ordinal)",
        "min(a.kind) = max(a.kind)", *alike]) + ")"


def _unpacked(total: int) -> tuple[int, int, int, int]:
    return (total % _PACK, total // _PACK % _PACK, total // _PACK ** 2 % _PACK, total // _PACK ** 3)


def _keys_sql(runs: str) -> str:
    # Every "ordinal:key" the unit's results have, how many results and how many distinct
    # (attempt, result ordinal), and each result whose state is not `matched` ("attempt-ordinal
    # result-ordinal state", space-separated: neither holds a space). `_regular_key_states` reads
    # from them whether every attempt has the same keys, each once.
    columns = (
        "s.experiment_id", "s.eval_id", "count(r.ordinal)", "count(DISTINCT s.ordinal * 4294967296 + r.ordinal)",
        "json_group_array(DISTINCT r.ordinal || ':' || r.key)",
        f"group_concat(CASE WHEN r.state <> '{_MATCHED}' "
        "THEN s.ordinal || ' ' || r.ordinal || ' ' || r.state END, ' ')",
    )
    return (
        f"SELECT {_named(columns, ('experiment_id', 'eval_id', *_KEY_NAMES))} "
        f"FROM run_slots s JOIN assertion_results r ON r.attempt_id = s.attempt_id WHERE s.run_id IN ({runs}) "
        "GROUP BY s.experiment_id, s.eval_id"
    )


#: An attempt whose score is evidence (`_unit_folds.score_evidence`: scored, its gate not
#: unavailable, a score out of a positive maximum).
_EVIDENCE = ("a.state = 'scored' AND (a.gate IS NULL OR a.gate <> 'unavailable') AND a.score IS NOT NULL "
             "AND a.max_score > 0")
#: Most score-style units score alike in every attempt (a check's fixed points): their scores are
#: told by the lowest and highest score, how many there are, how many are evidence, and the lowest
#: maximum (beside the highest, already read): one maximum in every attempt is one maximum in the
#: evidence. Only the others' scores are read one by one (`_scores_sql`), for the units named.
_SCORES_ALIKE = ("min(a.score)", "max(a.score)", "count(a.score)", f"sum({_EVIDENCE})", "min(a.max_score)")


def _scores_sql(runs: str) -> str:
    """Each score of chosen units (a JSON list of [experiment, eval id]): those whose scores are
    not alike (see `_SCORES_ALIKE`). Each unit's slots are found by their key, not by a walk of the run."""
    return _whole(
        "SELECT s.experiment_id, s.eval_id, s.ordinal, a.state, a.gate, a.score, a.max_score "
        f"FROM run_slots s JOIN attempts a ON a.id = s.attempt_id WHERE s.run_id IN ({runs}) "
        "AND a.score IS NOT NULL AND (s.experiment_id, s.eval_id) IN "
        "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))")


def _results_sql(runs: str) -> str:
    """The results of chosen units (a JSON list of "experiment␟eval id"), by attempt, worst first."""
    return _whole(
        "SELECT s.experiment_id, s.eval_id, s.ordinal, r.key, r.state, s.attempt_id AS attempt_id, "
        "r.ordinal AS result_ordinal "
        f"FROM run_slots s JOIN assertion_results r ON r.attempt_id = s.attempt_id WHERE s.run_id IN ({runs}) "
        "AND s.experiment_id || char(31) || s.eval_id IN (SELECT value FROM json_each(?))",
        order=f"experiment_id, eval_id, ordinal, attempt_id, {assertion_severity_sql('state')}, result_ordinal")


def _whole(sql: str, *, order: str = "") -> str:
    """`sql` computed whole within its first step (a MATERIALIZED CTE: SQLite fills a table
    before the first row comes out), its rows in `order` if given. The sqlite3 module releases
    the GIL for each step and takes it back to hand over the row; a statement yielding its 10 000
    groups one step at a time then waits for the GIL at every group (up to Python's 5 ms switch
    interval each) while another thread holds it, e.g. one importing scipy, and stalls. Computed
    in one step, it runs beside that thread; only reading the rows waits."""
    ordered = f" ORDER BY {order}" if order else ""
    if sqlite3.sqlite_version_info < _MATERIALIZED_SINCE:  # the same rows, computed step by step
        return f"SELECT * FROM ({sql}) AS whole{ordered}"
    return f"WITH whole AS MATERIALIZED ({sql}) SELECT * FROM whole{ordered}"


#: `AS MATERIALIZED` arrived in SQLite 3.35.0 (2021-03); an older library reads the folds as before.
_MATERIALIZED_SINCE = (3, 35, 0)


def unit_folds(db: Db, run_id: str) -> list[UnitFold] | None:
    """Every unit of a run (or group) folded, in no particular order (`first_seen` says where
    reading order meets each); None when some unit's attempts cannot be told by counts.

    A finished run's units are read as stored when it was finalised (`store_unit_folds`); a
    run still running, one finished before schema 10 and a group of several runs are folded
    here, by the same statements."""
    members = run_scope(db, run_id)
    runs = _quoted(members)
    with translated(db.path, "Folding a run's attempts"):
        units = _stored_units(db, members[0]) if len(members) == 1 else None
        if units is None:
            units = _folded_units(db, runs, len(members))
        scores: dict[_UnitKey, list[tuple[Any, ...]]] = defaultdict(list)
        varied = [[row[0], row[1]] for row in units if _scores_vary(row)]
        if varied:
            for row in db.conn.execute(_scores_sql(runs), [json.dumps(varied)]):
                scores[(row[0], row[1])].append(row[2:])
    folds: list[UnitFold] = []
    irregular: dict[_UnitKey, int] = {}  # unit → index of its fold, whose keys are read one by one
    for row in units:
        unit = (row[0], row[1])
        key_states = _regular_key_states(row[2], row[4], *row[_RESULTS:])
        fold = _fold(row, key_states or _NO_KEYS, scores.get(unit, ()))
        if fold is None:
            return None
        if key_states is None:
            irregular[unit] = len(folds)
        folds.append(fold)
    if irregular:
        with translated(db.path, "Reading the results of a run's units"):
            found = _key_states_of(db.conn.execute(
                _results_sql(runs), [json.dumps([f"{e}\x1f{v}" for e, v in irregular])]))
        for unit, index in irregular.items():
            folds[index] = replace(folds[index], key_states=found.get(unit, _NO_KEYS))
    return folds


def _quoted(members: Sequence[str]) -> str:
    return ", ".join("'" + member.replace("'", "''") + "'" for member in members)


def _folded_units(db: Db, runs: str, members: int) -> list[tuple[Any, ...]]:
    """Each unit's row folded now: its attempts statement's columns, then its keys statement's."""
    # Both are computed before any row is read (see `_whole`), so the statements run back to
    # back without the GIL while another thread imports or folds.
    attempts_rows = db.conn.execute(_whole(_attempts_sql(runs, members=members)))
    keys_rows = db.conn.execute(_whole(_keys_sql(runs)))
    attempts = attempts_rows.fetchall()
    keys = {(row[0], row[1]): row[2:] for row in keys_rows}
    return [(*row, *keys.get((row[0], row[1]), _NO_RESULTS)) for row in attempts]


_NO_RESULTS = (None,) * len(_KEY_NAMES)


def _stored_units(db: Db, run_id: str) -> list[tuple[Any, ...]] | None:
    """The unit rows stored when the run was finalised, or None when it has no complete set of
    this format (still running, finished before schema 10, or stored by other statements)."""
    marker = db.conn.execute(
        "SELECT f.units FROM unit_fold_runs f JOIN runs r ON r.id = f.run_id "
        "WHERE f.run_id = ? AND f.format = ? AND r.status IS NOT 'running'", [run_id, FOLD_FORMAT]).fetchone()
    if marker is None:
        return None
    rows = db.conn.execute(
        f"SELECT {', '.join(_UNIT_COLUMNS)} FROM unit_folds WHERE run_id = ? ORDER BY experiment_id, eval_id",
        [run_id]).fetchall()
    return rows if len(rows) == marker[0] else None


def store_unit_folds(conn: sqlite3.Connection, run_id: str) -> None:
    """Fold a run that has just been given its final status, and store its units with the mark
    that they are complete (inside the caller's transaction, the one that finalises the run).

    A finalised run never changes (its slots, attempts and results are sealed), so folding it
    once stands for every later read. The rows are the fold statements' own, as read — or, for a
    run whose slots are exactly an earlier folded run's (`_same_slots_as`), that run's rows, which
    are the same rows."""
    donor = _same_slots_as(conn, run_id)
    if donor is not None:
        _copy_folds(conn, donor, run_id)
    else:
        _fold_into_store(conn, run_id)
    conn.execute("INSERT INTO unit_fold_runs (run_id, format, units) "
                 "VALUES (?, ?, (SELECT count(*) FROM unit_folds WHERE run_id = ?))", [run_id, FOLD_FORMAT, run_id])


def _fold_into_store(conn: sqlite3.Connection, run_id: str) -> None:
    runs = _quoted([run_id])
    attempts = ", ".join(f"a.{name}" for name in _ATTEMPT_NAMES)
    keys = ", ".join(f"k.{name}" for name in _KEY_NAMES)
    conn.execute(
        f"INSERT INTO unit_folds (run_id, {', '.join(_UNIT_COLUMNS)}) "
        f"WITH a AS MATERIALIZED ({_attempts_sql(runs)}), k AS MATERIALIZED ({_keys_sql(runs)}) "
        f"SELECT ?, {attempts}, {keys} FROM a LEFT JOIN k ON k.experiment_id = a.experiment_id "
        "AND k.eval_id = a.eval_id", [run_id])


# A unit's row is a function of its slots alone — each slot's ordinal, pass rule and attempt
# (the attempt, its results and the slot rows are insert-only) — so a run whose slots are another
# finished run's slots, key for key, has that run's rows. A re-run that reused every result is
# such a run: copying its donor's 20 000 rows streams, and costs a fraction of folding 20 000
# units again (whose statements hold a few MiB of SQLite's temporary tables at a re-run's peak).

#: Donors tried: the run that sealed one of the run's attempts, then the latest run with stored folds.
_DONORS = (
    "SELECT a.run_id FROM run_slots s JOIN attempts a ON a.id = s.attempt_id WHERE s.run_id = :run LIMIT 1",
    "SELECT f.run_id FROM unit_fold_runs f JOIN runs r ON r.id = f.run_id "
    "WHERE f.format = :format AND f.run_id <> :run ORDER BY r.started_at DESC, r.id DESC LIMIT 1",
)
#: How many of the run's slots the donor has too, with the same attempt and pass rule.
_SHARED_SLOTS = (
    "SELECT count(*) FROM run_slots n JOIN run_slots o ON o.run_id = ?2 AND o.experiment_id = n.experiment_id "
    "AND o.eval_id = n.eval_id AND o.ordinal = n.ordinal WHERE n.run_id = ?1 "
    "AND o.attempt_id IS n.attempt_id AND o.pass_rule IS n.pass_rule"
)


def _same_slots_as(conn: sqlite3.Connection, run_id: str) -> str | None:
    """A finished run whose folds are stored in this format and whose slots are exactly `run_id`'s
    (key, attempt and pass rule), or None. Only a run of reference slots alone can have one: a
    slot it executed is its own."""
    if conn.execute("SELECT 1 FROM run_slots WHERE run_id = ? AND relation IS NOT ? LIMIT 1",
                    [run_id, Relation.REFERENCE.value]).fetchone() is not None:
        return None
    slots = _slot_count(conn, run_id)
    if not slots:
        return None
    tried = {run_id}
    for sql in _DONORS:
        found = conn.execute(sql, {"run": run_id, "format": FOLD_FORMAT}).fetchone()
        if found is None or found[0] in tried:
            continue
        donor = found[0]
        tried.add(donor)
        # Its rows complete (as many as its mark says: what `_stored_units` reads), its slots ours.
        folded = conn.execute(
            "SELECT f.units = (SELECT count(*) FROM unit_folds u WHERE u.run_id = f.run_id) FROM unit_fold_runs f "
            "JOIN runs r ON r.id = f.run_id WHERE f.run_id = ? AND f.format = ? AND r.status IS NOT 'running'",
            [donor, FOLD_FORMAT]).fetchone()
        if folded is not None and folded[0] and _slot_count(conn, donor) == slots \
                and conn.execute(_SHARED_SLOTS, [run_id, donor]).fetchone()[0] == slots:
            return str(donor)
    return None


def _slot_count(conn: sqlite3.Connection, run_id: str) -> int:
    return int(conn.execute("SELECT count(*) FROM run_slots WHERE run_id = ?", [run_id]).fetchone()[0])


def _copy_folds(conn: sqlite3.Connection, donor: str, run_id: str) -> None:
    """The donor's unit rows as `run_id`'s, `_COPIED` at a time in key order: an INSERT into a
    table with triggers fills a temporary table with what its SELECT yields first (SQLite does),
    and so many rows at once would hold what the copy saves (~2 MiB at 20 000 units)."""
    columns = ", ".join(_UNIT_COLUMNS)
    after: list[str] = []  # the last key copied: (experiment id, eval id)
    while True:
        since = " AND (experiment_id, eval_id) > (?, ?)" if after else ""
        found = conn.execute(f"SELECT experiment_id, eval_id FROM unit_folds WHERE run_id = ?{since} ORDER BY "
                             "experiment_id, eval_id LIMIT 1 OFFSET ?", [donor, *after, _COPIED - 1]).fetchone()
        until = " AND (experiment_id, eval_id) <= (?, ?)" if found is not None else ""
        conn.execute(f"INSERT INTO unit_folds (run_id, {columns}) SELECT ?, {columns} FROM unit_folds "
                     f"WHERE run_id = ?{since}{until}", [run_id, donor, *after, *(found or ())])
        if found is None:
            return
        after = [found[0], found[1]]


#: Unit rows copied a statement.
_COPIED = 1000


#: Where `_fold` finds the score columns in a unit's row (`_attempts_sql`), and where its keys start.
_KIND, _MAX_SCORE, _SCORE_LO, _SCORE_HI, _SCORE_N, _EVIDENCE_N, _TOP_LO, _RESULTS = 9, 16, 17, 18, 19, 20, 21, 22


def _scores_vary(row: Sequence[Any]) -> bool:
    """A score-style unit whose scores are not told by `_SCORES_ALIKE`: read them one by one."""
    return (row[_KIND] == "score" and bool(row[_SCORE_N])
            and not _alike(row[_SCORE_LO], row[_SCORE_HI], row[_EVIDENCE_N], row[_TOP_LO], row[_MAX_SCORE]))


def _alike(score_lo: Any, score_hi: Any, evidence_n: int, top_lo: Any, top_hi: Any) -> bool:
    return score_lo == score_hi and (not evidence_n or top_lo == top_hi)


_NO_KEYS = shared_key_states(())


def _fold(row: Sequence[Any], key_states: Mapping[str, tuple[str, ...]], scored: Iterable[Sequence[Any]]
          ) -> UnitFold | None:
    (experiment_id, eval_id, n, told, _, first_seen, case_id, eval_module, eval_name, kind_name, pass_rule,
     states, unrankable, gates, gate_n, scored_gate_passed, max_score,
     score_lo, score_hi, score_n, evidence_n, top_lo, *_) = row
    passed, failed, errored, n_scored = _unpacked(states)
    gate_passed, gate_failed, gate_unavailable, gate_none = _unpacked(gates)
    if (not told or n >= _PACKED_LIMIT or kind_name not in KIND_OF
            or passed + failed + errored + n_scored + unrankable != n
            or gate_passed + gate_failed + gate_unavailable + gate_none != gate_n):
        return None  # read from the attempts, which fold (or fail) as they always have
    kind = KIND_OF[kind_name]
    if kind is EvalKind.PASS and (n_scored or unrankable):
        return None
    values: tuple[float, ...] = ()
    evidence_scores: tuple[float, ...] = ()
    if kind is EvalKind.SCORE and scored:
        values, evidence_scores = _scores_of(scored)
    elif kind is EvalKind.SCORE and score_n:  # alike in every attempt: none was read one by one
        if not _alike(score_lo, score_hi, evidence_n, top_lo, max_score):
            return None  # not alike after all
        values = (score_lo,) * score_n
        if evidence_n:
            x = score_evidence(AttemptState.SCORED.value, None, score_lo, max_score)
            if x is None:
                return None
            evidence_scores = (x,) * evidence_n
    if kind is EvalKind.PASS:
        evidence = _evidence("pass", passed, failed, (), n - passed - failed)
    else:
        evidence = _evidence("score", 0, 0, tuple(evidence_scores), n - len(evidence_scores))
    severity, ordinal = divmod(first_seen, 1 << _ORDINAL_BITS)
    return UnitFold(
        experiment_id=experiment_id, eval_id=eval_id, case_id=case_id, kind=kind, pass_rule=pass_rule,
        attempts=n, passed=passed, failed=failed, errored=errored, scored=n_scored, unrankable=unrankable,
        gates_passed=gate_passed, gates_failed=gate_failed, gates_unavailable=gate_unavailable,
        scored_gate_passed=scored_gate_passed, scores=values, max_score=max_score,
        key_states=key_states, evidence=evidence,
        eval_module=eval_module, eval_name=eval_name, first_seen=(severity, experiment_id, eval_id, ordinal),
    )


@lru_cache(maxsize=4096)
def _evidence(style: str, passed: int, failed: int, scores: tuple[float, ...], not_counted: int) -> UnitEvidence:
    """One evidence record for every unit whose evidence is alike: 10 000 units of a few attempts
    meet a few hundred, and comparing then finds each one's interval and test by identity."""
    return UnitEvidence(style, passed, failed, scores, not_counted)


def _scores_of(scored: Iterable[Sequence[Any]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A unit's scores read one by one ((ordinal, state, gate, score, max_score) each): all of them,
    and those that are evidence, in ordinal order."""
    values: list[float] = []
    evidence: list[float] = []
    for _, state, gate, score, top in sorted(scored, key=lambda s: s[0]):
        values.append(score)
        x = score_evidence(state, gate, score, top)
        if x is not None:
            evidence.append(x)
    return tuple(values), tuple(evidence)


@lru_cache(maxsize=4096)
def _regular_key_states(n: int, first_ordinal: int, results: int | None, attempt_ordinals: int | None,
                        pairs_json: str | None, exceptions: str | None) -> Mapping[str, tuple[str, ...]] | None:
    """Each key's states when every attempt has the same keys once each; else None.

    Every state not listed as an exception is `matched`; the keys stand in the first attempt's
    reading order (its worst results first, then registration order), as attempt by attempt.
    `results` ... `exceptions`: the keys statement's columns, NULL for a unit without results.
    Decided once per distinct set of them: 10 000 units of a run meet far fewer."""
    if results is None or pairs_json is None:
        return _NO_KEYS
    pairs = _pairs(pairs_json)
    width = len(pairs)
    # Each attempt's (ordinal, key) pairs are a set (no result ordinal twice in one attempt)
    # within the unit's `width` pairs; `n * width` of them in all means every attempt has every
    # pair; as many ordinals and keys as pairs means each key is registered once, at one ordinal.
    if not (results == n * width and attempt_ordinals == results and _one_to_one(pairs)):
        return None
    return _from_exceptions(n, first_ordinal, pairs, exceptions)


@lru_cache(maxsize=1024)
def _pairs(pairs_json: str) -> tuple[tuple[int, str], ...]:
    """The unit's (result ordinal, key) pairs from their JSON list of "ordinal:key"."""
    pairs = []
    for pair in json.loads(pairs_json):
        ordinal, _, key = pair.partition(":")
        pairs.append((int(ordinal), key))
    return tuple(pairs)


def _one_to_one(pairs: tuple[tuple[int, str], ...]) -> bool:
    return len({o for o, _ in pairs}) == len({k for _, k in pairs}) == len(pairs)


def _from_exceptions(n: int, first_ordinal: int, pairs: tuple[tuple[int, str], ...],
                     exceptions: str | None) -> Mapping[str, tuple[str, ...]]:
    others: dict[int, list[str]] = defaultdict(list)  # result ordinal → its states that are not matched
    first: dict[int, str] = {}  # result ordinal → its state in the first attempt
    if exceptions:
        parts = exceptions.split(" ")
        for i in range(0, len(parts), 3):
            attempt, ordinal, state = int(parts[i]), int(parts[i + 1]), parts[i + 2]
            others[ordinal].append(state)
            if attempt == first_ordinal:
                first[ordinal] = state
    ordered = sorted(pairs, key=lambda p: (assertion_severity(first.get(p[0], _MATCHED)), p[0]))
    return shared_key_states(tuple(
        (key, tuple(sorted([*others.get(ordinal, ()), *[_MATCHED] * (n - len(others.get(ordinal, ())))])))
        for ordinal, key in ordered
    ))


def _key_states_of(rows: Iterable[Sequence[Any]]) -> dict[_UnitKey, Mapping[str, tuple[str, ...]]]:
    """Each unit's key states from its results, by attempt in ordinal order, each attempt's worst
    first (a key registered twice keeps its place and its later state, as `assertion_states`)."""
    by_unit: dict[_UnitKey, dict[int, dict[str, str]]] = {}
    for experiment_id, eval_id, ordinal, key, state, *_ in rows:  # then the columns it was ordered by
        mapping = by_unit.setdefault((experiment_id, eval_id), {}).setdefault(ordinal, {})
        mapping[key] = state
    return {unit: fold_key_states(attempts[o] for o in sorted(attempts)) for unit, attempts in by_unit.items()}
