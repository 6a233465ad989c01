"""`niceeval merge STORE... [--into PATH] [--junit PATH] [--exit-code]` (scale.md).

Copies the sealed rows of each STORE into the target store in one transaction (the store's
`merge`), then reads back the merged logical run: the newest run among the sources, or its shard
group — what `--junit` and `--exit-code` report on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._errors import ExitCode, UsageError
from ..store import MergeResult, PlanSlot, RunRow, Store
from .run import SealedRun, read_sealed


@dataclass(frozen=True)
class MergeReport:
    target: Path
    sources: tuple[Path, ...]
    result: MergeResult
    merged: RunRow | None  # the merged logical run (a group for shards); None: the sources had no runs
    not_run: tuple[PlanSlot, ...]  # its planned slots that no attempt filled (a missing shard's)
    sealed: SealedRun | None = None  # its sealed rows, read for JUnit (`junit=True`)

    @property
    def exit_code(self) -> int:
        """The merged run's decided exit code (a group's from its sealed rows), for `--exit-code`."""
        if self.merged is None or self.merged.exit_code is None:
            return int(ExitCode.OK) if self.merged is None else int(ExitCode.UNDECIDED)
        return int(self.merged.exit_code)


def merge_stores(target: Path, sources: Sequence[Path], *, junit: bool = False) -> MergeReport:
    """Merge `sources` into `target` (created when absent); all or nothing. `junit`: also read
    the merged run's rows for its JUnit XML."""
    if not sources:
        raise UsageError("merge: give at least one store to merge (niceeval merge shard-1.db shard-2.db ...)")
    for source in sources:
        if not Path(source).is_file():
            raise UsageError(f"merge: {source}: no such store file; give the results.db of each shard")
    with Store.open(target) as store:
        result = store.merge([Path(s) for s in sources])
        read = store.read_run(result.logical_runs[0]) if result.logical_runs else None
        merged = read.run if read is not None else None
        not_run: tuple[PlanSlot, ...] = ()
        if read is not None:  # a group's were read deciding its verdict
            not_run = tuple(read.not_run if read.not_run is not None else store.not_run(read.run.id))
        sealed = read_sealed(store, merged.id, summary_limit=None, junit=True) if junit and merged else None
    return MergeReport(Path(target), tuple(Path(s) for s in sources), result, merged, not_run, sealed)


__all__ = ["MergeReport", "merge_stores"]
