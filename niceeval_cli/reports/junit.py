"""`niceeval run --junit PATH`: JUnit XML from the sealed rows of one run (cli.md, "JUnit").

One <testcase> per attempt (reused ones included): classname = experiment id, name = eval id
(plus `#<ordinal>` when the eval has several attempts), time in seconds.
- <failure>: a failed attempt or a failed score gate; message = the failing labels.
- <error>: errored, unrankable or gate-unavailable; message = the reasons.
The body of both is the same text `view` prints for that attempt. The file is written to a temp
file beside PATH and renamed over it, so a reader never sees half a report.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .. import outcomes
from .._records import AssertionResult
from .._states import AssertionState, AttemptState, GateState
from ..store import AttemptRow, Store
from ._render import attempt_lines, score_text
from ._safe import visible
from ._tally import attempt_word

MESSAGE_LIMIT = 1000
# XML 1.0 cannot carry these at all (not even as character references).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str, limit: int | None = None) -> str:
    """Made visible like terminal text (no escape sequences reach a CI log), trimmed with a marker,
    and valid XML."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", visible(text, limit))


def _labels(results: Sequence[AssertionResult], *, gates_only: bool = False) -> str:
    failing = [
        r.label or r.key for r in results
        if r.state in outcomes.SHORT_STATES and (not gates_only or r.role in outcomes.GATE_ROLES)
    ]
    return ", ".join(dict.fromkeys(failing)) or "(no failing assertion recorded)"


def _reasons(attempt: AttemptRow, results: Sequence[AssertionResult], *, gates_only: bool = False) -> str:
    reasons: list[str] = []
    if attempt.reason and not gates_only:
        reasons.append(attempt.reason + (f": {attempt.error}" if attempt.error else ""))
    for r in results:
        if r.state in (AssertionState.ERRORED, AssertionState.UNAVAILABLE) and r.reason:
            if not gates_only or r.role in outcomes.GATE_ROLES:
                reasons.append(f"{r.label or r.key}: {r.state} ({r.reason})")
    return "; ".join(dict.fromkeys(reasons)) or str(attempt.state)


def _body(attempt: AttemptRow, results: Sequence[AssertionResult]) -> str:
    lines = attempt_lines(attempt, results, rest_limit=0, text_limit=2000, note_hidden=False)
    return "\n".join(" " * line.indent + line.text.plain for line in lines)


def testcase(attempt: AttemptRow, results: Sequence[AssertionResult], *, several: bool) -> ET.Element:
    case = ET.Element("testcase", {
        "classname": _xml_text(attempt.experiment_id),
        "name": _xml_text(attempt.eval_id + (f"#{attempt.ordinal}" if several else "")),
        "time": f"{max(attempt.duration_ms, 0.0) / 1000:.3f}",
    })
    state = AttemptState(attempt.state)
    gate = GateState(attempt.gate) if attempt.gate is not None else None
    word = attempt_word(state, gate)
    if state is AttemptState.FAILED or word == "gate failed":
        child = ET.SubElement(case, "failure", {
            "message": _xml_text(_labels(results, gates_only=word == "gate failed"), MESSAGE_LIMIT),
            "type": word,
        })
        child.text = _xml_text(_body(attempt, results))
    elif state in (AttemptState.ERRORED, AttemptState.UNRANKABLE) or word == "gate unavailable":
        child = ET.SubElement(case, "error", {
            "message": _xml_text(_reasons(attempt, results, gates_only=word == "gate unavailable"), MESSAGE_LIMIT),
            "type": word,
        })
        child.text = _xml_text(_body(attempt, results))
    notes = []
    score = score_text(attempt)
    if score:
        notes.append(f"score: {score}")
    if attempt.relation == "reference":
        notes.append(f"reused from run {attempt.run_id} (attempt {attempt.id})")
    else:
        notes.append(f"attempt {attempt.id}")
    ET.SubElement(case, "system-out").text = _xml_text("\n".join(notes))
    return case


def build(store: Store, run_id: str) -> ET.ElementTree:
    """The JUnit document for one run, one <testsuite> per experiment."""
    run = store.resolve_run(run_id)
    attempts = store.attempts_for_run(run.id)
    per_eval = Counter((a.experiment_id, a.eval_id) for a in attempts)
    root = ET.Element("testsuites", {"name": "niceeval", "id": run.id})
    suites: dict[str, ET.Element] = {}
    for experiment_id in [*run.experiments, *sorted({a.experiment_id for a in attempts})]:
        if experiment_id not in suites:
            suites[experiment_id] = ET.SubElement(root, "testsuite", {"name": _xml_text(experiment_id)})
    for attempt in sorted(attempts, key=lambda a: (a.experiment_id, a.eval_id, a.ordinal)):
        results = store.assertions_for_attempt(attempt.id) if not _clean(attempt) else []
        several = per_eval[(attempt.experiment_id, attempt.eval_id)] > 1
        suites[attempt.experiment_id].append(testcase(attempt, results, several=several))
    for element in [*suites.values(), root]:
        cases = list(element.iter("testcase"))
        element.set("tests", str(len(cases)))
        element.set("failures", str(sum(c.find("failure") is not None for c in cases)))
        element.set("errors", str(sum(c.find("error") is not None for c in cases)))
        element.set("skipped", "0")
        element.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
    for suite in suites.values():
        suite.set("timestamp", run.started_at)
    ET.indent(root)
    return ET.ElementTree(root)


def _clean(attempt: AttemptRow) -> bool:
    return attempt_word(attempt.state, attempt.gate) in ("passed", "scored")


def write_junit(store: Store, run_id: str, path: Path | str) -> Path:
    """Write the run's JUnit XML to `path` atomically (temp file in the same folder, then rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tree = build(store, run_id)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            tree.write(handle, encoding="utf-8", xml_declaration=True)
        os.chmod(temp, 0o666 & ~_umask())  # mkstemp makes it private; a report is an ordinary file
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
