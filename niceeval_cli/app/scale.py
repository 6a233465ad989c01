"""What `run` takes from the command line and the project for shards and executors (scale.md).

`NICEEVAL_RUN_GROUP` is the one environment variable a run reads: it labels a shard group (the
CI run number, say) and changes no result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._errors import UsageError
from .._shards import ShardSpec, parse_shard
from ..config import ProjectConfig

RUN_GROUP_ENV = "NICEEVAL_RUN_GROUP"


def shard_settings(
    shard: str | None, group: str | None, environ: Mapping[str, str]
) -> tuple[ShardSpec | None, str | None]:
    """`--shard K/N` parsed (exit 2 when malformed) and the group id: `--group`, else
    NICEEVAL_RUN_GROUP, else None (the runner then uses the plan digest)."""
    if shard is None:
        if group is not None:
            raise UsageError("--group names the group of a shard run; give --shard K/N with it")
        return None, None
    spec = parse_shard(shard)
    chosen = group if group is not None else environ.get(RUN_GROUP_ENV) or None
    if chosen is not None:
        _check_group_id(chosen, "--group" if group is not None else RUN_GROUP_ENV)
    return spec, chosen


def _check_group_id(group: str, source: str) -> None:
    """A group id labels runs and names files (the report's `.niceeval/reports/<id>.html`): printable
    text with no path in it, refused here before anything is planned or stored."""
    if not group.strip() or group != group.strip() or not group.isprintable():
        raise UsageError(f"{source} {group!r}: a group id is printable text without surrounding spaces")
    if "/" in group or "\\" in group or not group.strip("."):
        raise UsageError(
            f"{source} {group!r}: a group id is a name, not a path — it may not contain '/' or '\\' "
            "or be only dots; use letters, digits, '-', '_' or '.' (the CI run number, say: ci-42)"
        )


def executor_settings(
    project: ProjectConfig, executor: str | None, ray_address: str | None, retry_lost: bool
) -> tuple[str | None, dict[str, Any]]:
    """The executor (flag, else `[run] executor`, else None: in-process) and its options. An
    unknown `[run] executor` is named as the file's key, not as a flag the user never gave."""
    if executor is None and project.executor is not None:
        from .._registry import EXECUTORS
        from ..runner import executor_names

        if project.executor not in executor_names():
            where = project.file or "niceeval.toml"
            raise UsageError(f"{where}: [run] executor: {EXECUTORS.unknown(project.executor)}")
    name = executor or project.executor
    address = ray_address or project.ray_address
    if address and name not in (None, "ray"):
        raise UsageError(f"--ray-address applies to --executor ray, not to --executor {name}")
    if address and name is None:
        name = "ray"
    options: dict[str, Any] = {}
    if address:
        options["ray_address"] = address
    if retry_lost:
        options["retry_lost"] = True
    return name, options


__all__ = ["RUN_GROUP_ENV", "executor_settings", "shard_settings"]
