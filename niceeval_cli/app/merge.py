"""`niceeval merge STORE... [--into PATH] [--junit PATH] [--exit-code]` (scale.md).

Copies the sealed rows of each STORE into the target store in one transaction (the store's
`merge`), then reads back the merged logical run: the newest run among the sources, or its shard
group — what `--junit` and `--exit-code` report on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._errors import UsageError
from ..reports.data import MergeReport
from ..store import PlanSlot, Store
from .run import read_sealed


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
