"""What a user's reference names: a run id, a shard group id, an attempt id, or a unique prefix of one.

`None` is the latest run (or its group: a group reads as one run). Ids are upper-case Crockford
base32 and people type them in any case, so a prefix matches case-insensitively; an exact id is
tried first. An unknown or ambiguous reference is a `StoreError` naming the store and, for an
ambiguous one, a few of the candidates.
"""

from __future__ import annotations

from collections.abc import Callable

from .db import Db
from .errors import StoreError
from .groups import GROUP_KIND, RUN_KIND, GroupOutcome, RunRead, read_group, scope_sql
from .queries import RUN_ORDER, RUN_SELECT
from .rows import run_row

#: Candidates named in an "ambiguous prefix" message at most.
AMBIGUOUS_SHOWN = 5


def latest_run_id(db: Db) -> str | None:
    """The most recent run, or its group when it is a shard (a group counts as one run)."""
    rows = db.rows(
        "Finding the latest run",
        "SELECT id, CASE WHEN shard_count IS NOT NULL THEN group_id END AS grp FROM runs "
        "ORDER BY started_at DESC, id DESC LIMIT 1",
    )
    return (rows[0]["grp"] or rows[0]["id"]) if rows else None


def read_run(db: Db, ref: str | None, outcome: Callable[[], GroupOutcome | None] | None = None) -> RunRead:
    """The run (or group, as one run) `ref` names, and what deciding a group read on the way
    (`Store.read_run`)."""
    kind, ident = resolve_ref(db, ref)
    if kind == GROUP_KIND:
        return read_group(db, ident, outcome)
    rows = db.rows("Reading a run", f"SELECT {RUN_SELECT} FROM runs WHERE id = ?", [ident])
    return RunRead(run_row(rows[0]), None, None)


def resolve_ref(db: Db, ref: str | None) -> tuple[str, str]:
    """What `ref` names — ("run", run id) or ("group", group id); None: the latest run or group."""
    if ref is None:
        ref = latest_run_id(db)
        if ref is None:
            raise StoreError(f"No runs yet in {db.path}; run `niceeval run` first.")
    return resolve_run_or_group(db, ref)


def resolve_run_or_group(db: Db, ref: str) -> tuple[str, str]:
    """An exact run id, an exact shard group id, or a unique prefix of either."""
    ref = ref.strip()
    if not ref:
        raise StoreError("Give the run id or group id (or the start of one).")
    if db.rows("Finding run", "SELECT id FROM runs WHERE id = ?", [ref]):
        return RUN_KIND, ref
    if is_group(db, ref):
        return GROUP_KIND, ref
    matches = [(RUN_KIND, row["id"]) for row in db.rows(
        f"Finding run {ref}",
        f"SELECT id FROM runs WHERE upper(substr(id, 1, length(:ref))) = upper(:ref) "
        f"ORDER BY id LIMIT {AMBIGUOUS_SHOWN + 1}", {"ref": ref},
    )] + [(GROUP_KIND, row["group_id"]) for row in db.rows(
        f"Finding group {ref}",
        "SELECT DISTINCT group_id FROM runs WHERE shard_count IS NOT NULL "
        f"AND substr(group_id, 1, length(:ref)) = :ref ORDER BY group_id LIMIT {AMBIGUOUS_SHOWN + 1}",
        {"ref": ref},
    )]
    if not matches:
        raise StoreError(
            f"No run with id {ref!r} in {db.path} (nor a shard group); `niceeval query runs` lists them."
        )
    if len(matches) > 1:
        more = ", ..." if len(matches) > AMBIGUOUS_SHOWN else ""
        shown = ", ".join(f"{kind} {ident}" for kind, ident in matches[:AMBIGUOUS_SHOWN]) + more
        raise StoreError(
            f"The id prefix {ref!r} is ambiguous in {db.path}: it matches {shown}; give more characters."
        )
    return matches[0]


def is_group(db: Db, group_id: str) -> bool:
    return bool(db.rows(
        "Finding a group", "SELECT 1 FROM runs WHERE group_id = ? AND shard_count IS NOT NULL LIMIT 1",
        [group_id],
    ))


def run_scope(db: Db, ref_id: str) -> list[str]:
    """The run ids an exact run or group id stands for: the run itself, or the group's member
    shard runs (newest first)."""
    rows = db.rows(
        "Reading a group's runs",
        f"SELECT runs.id FROM runs WHERE runs.id IN ({scope_sql(':ref')}) ORDER BY {RUN_ORDER}",
        {"ref": ref_id},
    )
    return [row["id"] for row in rows] or [ref_id]


def resolve_prefix(db: Db, table: str, what: str, ref: str) -> str:
    """The exact id in `table` that `ref` is, or is the unique (case-insensitive) prefix of."""
    ref = ref.strip()
    if not ref:
        raise StoreError(f"Give the {what} id (or the start of one).")
    if db.rows(f"Finding {what} {ref}", f"SELECT id FROM {table} WHERE id = ?", [ref]):
        return ref
    matches = [
        row["id"]
        for row in db.rows(
            f"Finding {what} {ref}",
            f"SELECT id FROM {table} WHERE upper(substr(id, 1, length(:ref))) = upper(:ref) "
            f"ORDER BY id LIMIT {AMBIGUOUS_SHOWN + 1}",
            {"ref": ref},
        )
    ]
    if not matches:
        listing = "niceeval query runs" if table == "runs" else "niceeval query attempts --run all"
        raise StoreError(f"No {what} with id {ref!r} in {db.path}; `{listing}` lists them.")
    if len(matches) > 1:
        more = ", ..." if len(matches) > AMBIGUOUS_SHOWN else ""
        shown = ", ".join(matches[:AMBIGUOUS_SHOWN]) + more
        raise StoreError(
            f"The {what} id prefix {ref!r} is ambiguous in {db.path}: it matches {shown}; "
            "give more characters."
        )
    return str(matches[0])
