"""Views for SQLite tools (datasette, sqlite-utils, `sqlite3`): questions answered in one SELECT.

Plain SQL, no NiceEval function, so any program reading the file can use them (docs/cli.md,
"The store"). `run_results`: every slot of every run (reused ones too) with its attempt's verdict,
so "what did the latest run decide" is one SELECT. `run_status`: a run's status as readers
should take it, where a `running` run whose owner stopped beating is `abandoned`.
"""

from __future__ import annotations

from .._states import RunStatus

__all__ = ["HEARTBEAT_INTERVAL_S", "HEARTBEAT_STALE_S", "VIEWS", "view_statements"]

#: How often a running run's owner writes its heartbeat (`run_heartbeats.beat_at`).
HEARTBEAT_INTERVAL_S = 5.0
#: A `running` run whose last beat is older than this reads `abandoned` in `run_status`: five beats
#: missed, so an owner whose beat waited out another writer's lock (up to 10 s) is never taken for dead.
HEARTBEAT_STALE_S = 30

_RUNNING, _ABANDONED = RunStatus.RUNNING.value, RunStatus.ABANDONED.value

VIEWS: dict[str, str] = {
    "run_results": (
        "SELECT s.run_id AS run_id, r.group_id AS group_id, r.started_at AS run_started_at, "
        "s.experiment_id AS experiment_id, s.eval_id AS eval_id, a.case_id AS case_id, s.ordinal AS ordinal, "
        "a.eval_module AS eval_module, a.eval_name AS eval_name, s.relation AS relation, "
        "s.plan_reason AS plan_reason, s.pass_rule AS pass_rule, s.attempt_id AS attempt_id, "
        "a.run_id AS attempt_run_id, a.kind AS kind, a.state AS state, a.gate AS gate, a.score AS score, "
        "a.max_score AS max_score, a.reason AS reason, a.error AS error, a.duration_ms AS duration_ms, "
        "a.cost_usd AS cost_usd, a.ended_at AS ended_at "
        "FROM run_slots s JOIN runs r ON r.id = s.run_id LEFT JOIN attempts a ON a.id = s.attempt_id"
    ),
    "run_status": (
        "SELECT r.id AS id, r.group_id AS group_id, r.shard_index AS shard_index, r.shard_count AS shard_count, "
        "r.started_at AS started_at, r.ended_at AS ended_at, r.exit_code AS exit_code, "
        f"CASE WHEN r.status = '{_RUNNING}' AND h.beat_at < "
        f"strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-{HEARTBEAT_STALE_S} seconds') THEN '{_ABANDONED}' "
        "ELSE r.status END AS status, "
        "r.status AS stored_status, h.beat_at AS last_beat_at, r.owner_pid AS owner_pid, r.owner_host AS owner_host "
        "FROM runs r LEFT JOIN run_heartbeats h ON h.run_id = r.id"
    ),
}


def view_statements() -> list[str]:
    """CREATE VIEW for each view (a later schema that changes one drops it first)."""
    return [f'CREATE VIEW IF NOT EXISTS "{name}" AS {body}' for name, body in VIEWS.items()]
