"""A reader's `--experiment X` (`query`, `view`) where the runs read have no experiment X: an error naming where X is.

An empty answer would read as "X ran and produced nothing"; a typo or the wrong run would pass a
script's check silently. The runs' own `experiments` (the ids each run selected) decide.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from .._selectors import selects_experiment
from .errors import StoreError

__all__ = ["check_experiments_present"]

#: Runs named in the message at most (newest first).
_SHOWN = 5


def _experiments_by_run(conn: sqlite3.Connection, run_ids: Sequence[str] | None) -> list[tuple[str, list[str]]]:
    where = "" if run_ids is None else f" WHERE id IN ({', '.join('?' * len(run_ids)) or 'NULL'})"
    rows = conn.execute(
        f"SELECT id, experiments FROM runs{where} ORDER BY started_at DESC, id DESC", list(run_ids or ())
    ).fetchall()
    out = []
    for run_id, text in rows:
        try:
            listed = json.loads(text or "[]")
        except ValueError:
            listed = []
        out.append((str(run_id), [str(e) for e in listed] if isinstance(listed, list) else []))
    return out


def check_experiments_present(
    conn: sqlite3.Connection, run_ids: Sequence[str] | None, wanted: Sequence[str], scope: str
) -> None:
    """Raise a StoreError (exit 2) for each `wanted` experiment no run of `run_ids` (None: every
    run) has, naming the runs that have it. `scope` names what was read (`run 01J…`)."""
    if not wanted:
        return
    read = _experiments_by_run(conn, run_ids)
    present = sorted({e for _, listed in read for e in listed})
    missing = [w for w in wanted if not any(selects_experiment(w, e) for e in present)]
    if not missing:
        return
    name = missing[0]
    elsewhere = [run_id for run_id, listed in _experiments_by_run(conn, None)
                 if any(selects_experiment(name, e) for e in listed)]
    has = f"its experiments are {', '.join(present)}" if present else "it has no experiments"
    if elsewhere:
        more = len(elsewhere) - _SHOWN
        shown = ", ".join(elsewhere[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
        where = f"experiment {name!r} is in run(s) {shown} (newest first): pass --run ID, or --run all"
    else:
        where = f"no run in this store has experiment {name!r}"
    raise StoreError(f"--experiment {name!r}: {scope} has no experiment {name!r} ({has}); {where}.")
