"""`niceeval report`: read one run (and what it is compared with) for the HTML report.

Reads in a fixed number of queries whatever the size of the run (attempts, assertion states,
slots; the baseline's the same), leaving the long texts out: those are streamed, cut by SQLite,
while the page is written (`store/report_reads.py`). Rendering is `reports.html`'s job; this
module reads, and writes the page as it is rendered, atomically.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .._errors import UsageError
from ..comparison import AttemptFacts
from ..comparison import compare as compare_facts
from ..reports.data import CompareResult, ReportData
from ..stats import DEFAULT_ALPHA, DEFAULT_CONFIDENCE
from ..store.report_reads import AttemptTexts, ReportRow, attempt_rows, attempt_texts, result_states
from ..store.rows import RunRow

if TYPE_CHECKING:
    from ..store import Store
from .agreement import agreement_in
from .compare import attempt_facts, experiments_result

__all__ = ["AttemptTexts", "ReportData", "default_path", "load_report", "read_report", "report_file_name",
           "save_report"]

REPORTS_DIR = "reports"


def load_report(
    path: Path, run_ref: str | None, *, baseline: str | None = None, experiments: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA, confidence: float = DEFAULT_CONFIDENCE,
) -> ReportData:
    """`niceeval report`: read the run (the store opened read-only, so it works while a run writes)."""
    from ..store import Store

    with Store.open(Path(path), readonly=True) as store:
        return read_report(store, run_ref, baseline=baseline, experiments=experiments, alpha=alpha,
                           confidence=confidence)


def _short(store: Store, run: RunRow) -> tuple[list[ReportRow], list[AttemptFacts]]:
    """A run's attempts without their long texts, and what the totals read of each (its
    assertion states streamed into shared mappings: no result row is kept)."""
    scope = store.run_scope(run.id)
    rows = attempt_rows(store.path, scope)
    return rows, attempt_facts(store, run, rows, result_states(store.path, scope))


def read_report(
    store: Store,
    run_ref: str | None,
    *,
    baseline: str | None = None,
    experiments: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = DEFAULT_CONFIDENCE,
) -> ReportData:
    """Read a run for its report; `experiments` (A, B) or a run of exactly two experiments adds A vs B.
    `alpha` / `confidence`: the project's `[stats]` (or the flags), as `compare` and `view` read them."""
    run = store.resolve_run(run_ref)
    attempts, facts = _short(store, run)

    against: CompareResult | None = None
    if baseline is not None:
        base_run = store.resolve_run(baseline)
        if base_run.id == run.id:
            raise UsageError(f"--baseline {baseline}: that is the reported run itself; give an earlier run.")
        _, base_facts = _short(store, base_run)
        against = CompareResult(base_run, run, compare_facts(base_facts, facts, alpha=alpha, confidence=confidence))

    pair: CompareResult | None = None
    present = list(dict.fromkeys([*run.experiments, *(a["experiment_id"] for a in attempts)]))
    if experiments:
        if len(experiments) != 2:
            raise UsageError("--experiments takes two experiment ids: A (base) and B (new).")
        pair = experiments_result(run, facts, experiments[0], experiments[1], alpha=alpha, confidence=confidence)
    elif len(present) == 2:
        pair = experiments_result(run, facts, present[0], present[1], alpha=alpha, confidence=confidence)
    return ReportData(
        store_path=store.path,
        run=run,
        attempts=attempts,
        facts=facts,
        baseline=against,
        experiments=pair,
        groups=store.outcome_rows(run.id),
        not_run_slots=tuple(store.not_run(run.id)) if run.not_run else (),
        costs=store.costs(run.id),
        details=partial(attempt_texts, store.path),
        judges=agreement_in(store, confidence=confidence),
        alpha=alpha,
        confidence=confidence,
    )


def default_path(store_path: Path, run_id: str) -> Path:
    """`.niceeval/reports/<run id>.html`, beside the store: always a file inside that folder.

    A run or group id comes from the store, and a merged shard store may carry any text there
    (`../../x`, an absolute path): only `--out` chooses a path elsewhere (issue 23).
    """
    return Path(store_path).parent / REPORTS_DIR / report_file_name(run_id)


_NAME_MAX = 120  # well under every file system's 255-byte limit, with room for the hash and `.html`


def report_file_name(run_id: str) -> str:
    """The report's file name for a run or group id: the id itself when it is a plain name (every
    run id is), else its letters, digits, `-`, `_` and `.` with a short hash of the whole id, so
    two different ids never share a file and no id can name a path."""
    if _PLAIN_NAME.fullmatch(run_id) and len(run_id) <= _NAME_MAX:
        return f"{run_id}.html"
    kept = _UNSAFE_IN_NAME.sub("_", run_id).strip("._")[:_NAME_MAX] or "run"
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{kept}-{digest}.html"


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def save_report(html: str | Iterable[str], path: Path) -> Path:
    """Write the page where `path` points (through a symlink; atomically for a regular file:
    `_output_file`), so a reader never sees half a report."""
    from .._output_file import write_output

    path = Path(path)
    try:
        write_output(path, lambda out: _write(out, html))
    except BrokenPipeError:
        raise  # `--out /dev/stdout | head`: the reader went away, the one broken-pipe policy (exit 0)
    except IsADirectoryError:
        raise UsageError(f"--out {path}: is a directory; give the path of the .html file to write.") from None
    except OSError as error:
        raise UsageError(f"--out {path}: cannot write the report ({error.strerror or error}).") from None
    return path


def _write(out: BinaryIO, html: str | Iterable[str]) -> None:
    """The page as it is rendered, piece by piece: never the whole page in memory at once."""
    if isinstance(html, str):
        out.write(html.encode("utf-8"))
        return
    pending: list[bytes] = []
    size = 0
    for piece in html:
        pending.append(piece.encode("utf-8"))
        size += len(pending[-1])
        if size >= 1 << 20:
            out.write(b"".join(pending))
            pending, size = [], 0
    out.write(b"".join(pending))
