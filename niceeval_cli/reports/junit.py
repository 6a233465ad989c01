"""`niceeval run --junit PATH`: JUnit XML from a run's sealed rows (`app.run.SealedRun`).

One <testcase> per eval (classname = experiment id, name = eval id), so CI counts what the exit
code counts:
- an eval with one attempt: that attempt. <failure> for a failed attempt or a failed score
  gate (message: the failing labels); <error> for errored, unrankable or gate-unavailable
  (message: the reasons). The body is the text `view` prints for the attempt.
- an eval with several attempts: a pass-style eval fails (or errors) exactly when it does under
  its pass_rule; a score-style eval fails when a gate failed in any attempt, errors when an
  attempt is errored, unrankable or gate-unavailable. Its attempts are listed in <system-out>.
The file is written to a temp file beside PATH and renamed over it, so a reader never sees half
a report.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import outcomes
from .._errors import UsageError
from .._records import AssertionResult
from .._states import AssertionState, AttemptState, Derived, EvalKind, GateState, Relation
from ..app.run import SealedRun, stored_pass_rule
from ..store.rows import AttemptRow
from ._safe import visible
from ._tally import attempt_word
from .terminal.attempt import block_lines
from .terminal.lines import plain
from .viewmodels.attempt import attempt_block, score_text

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
    return plain(block_lines(attempt_block(attempt, results, rest_limit=0, text_limit=2000), note_hidden=False))


def _verdict(attempt: AttemptRow) -> str | None:
    """"failure", "error" or None for one attempt."""
    state = AttemptState(attempt.state)
    word = attempt_word(state, GateState(attempt.gate) if attempt.gate is not None else None)
    if state is AttemptState.FAILED or word == Derived.GATE_FAILED.label:
        return "failure"
    if state in (AttemptState.ERRORED, AttemptState.UNRANKABLE) or word == Derived.GATE_UNAVAILABLE.label:
        return "error"
    return None


def _attempt_note(attempt: AttemptRow) -> str:
    word = attempt_word(attempt.state, attempt.gate)
    score = score_text(attempt)
    text = f"{word} #{attempt.ordinal}" + (f"  score: {score}" if score else "")
    if attempt.relation == Relation.REFERENCE:
        return text + f"  reused from run {attempt.run_id} (attempt {attempt.id})"
    return text + f"  attempt {attempt.id}"


def testcase(attempt: AttemptRow, results: Sequence[AssertionResult]) -> ET.Element:
    """An eval with one attempt: the attempt is the testcase."""
    case = ET.Element("testcase", {
        "classname": _xml_text(attempt.experiment_id), "name": _xml_text(attempt.eval_id),
        "time": f"{max(attempt.duration_ms, 0.0) / 1000:.3f}",
    })
    verdict = _verdict(attempt)
    word = attempt_word(attempt.state, attempt.gate)
    if verdict == "failure":
        message = _labels(results, gates_only=word == Derived.GATE_FAILED.label)
    elif verdict == "error":
        message = _reasons(attempt, results, gates_only=word == Derived.GATE_UNAVAILABLE.label)
    if verdict is not None:
        child = ET.SubElement(case, verdict, {"message": _xml_text(message, MESSAGE_LIMIT), "type": word})
        child.text = _xml_text(_body(attempt, results))
    notes = []
    score = score_text(attempt)
    if score:
        notes.append(f"score: {score}")
    if attempt.relation == Relation.REFERENCE:
        notes.append(f"reused from run {attempt.run_id} (attempt {attempt.id})")
    else:
        notes.append(f"attempt {attempt.id}")
    ET.SubElement(case, "system-out").text = _xml_text("\n".join(notes))
    return case


def eval_testcase(
    attempts: Sequence[AttemptRow], results: Mapping[str, Sequence[AssertionResult]], pass_rule: str | None
) -> ET.Element:
    """An eval with several attempts: one testcase, its verdict the eval's (see the module doc)."""
    first = attempts[0]
    case = ET.Element("testcase", {
        "classname": _xml_text(first.experiment_id), "name": _xml_text(first.eval_id),
        "time": f"{sum(max(a.duration_ms, 0.0) for a in attempts) / 1000:.3f}",
    })
    verdicts = [_verdict(a) for a in attempts]
    if EvalKind(first.kind) is EvalKind.PASS:
        rule = stored_pass_rule(pass_rule)
        fold = outcomes.fold_pass_eval([AttemptState(a.state) for a in attempts], rule)
        decided = fold.passed + fold.failed + fold.errored
        summary = f"{fold.result.value} under pass_rule {rule}: {fold.passed} of {decided} attempts passed"
        verdict = {AttemptState.FAILED: "failure", AttemptState.ERRORED: "error"}.get(fold.result)
        word = fold.result.value
    else:
        verdict = "failure" if "failure" in verdicts else "error" if "error" in verdicts else None
        bad = sum(v is not None for v in verdicts)
        summary = f"{len(attempts) - bad} of {len(attempts)} attempts scored cleanly"
        word = (Derived.GATE_FAILED.label if verdict == "failure"
                else "score undecided" if verdict == "error" else "scored")
    if verdict is not None:
        failing = [(a, results.get(a.id, [])) for a, v in zip(attempts, verdicts, strict=True) if v is not None]
        details = [_labels(r) if _verdict(a) == "failure" else _reasons(a, r) for a, r in failing]
        message = f"{summary}; " + "; ".join(f"#{a.ordinal}: {d}" for (a, _), d in zip(failing, details, strict=True))
        child = ET.SubElement(case, verdict, {"message": _xml_text(message, MESSAGE_LIMIT), "type": word})
        child.text = _xml_text("\n\n".join(_body(a, r) for a, r in failing))
    notes = [summary, *(_attempt_note(a) for a in attempts)]
    ET.SubElement(case, "system-out").text = _xml_text("\n".join(notes))
    return case


def build(sealed: SealedRun) -> ET.ElementTree:
    """The JUnit document for one run, one <testsuite> per experiment, one <testcase> per eval."""
    run = sealed.run
    rules = {(g.experiment_id, g.eval_id): g.pass_rule for g in sealed.groups}
    per_eval: dict[tuple[str, str], list[AttemptRow]] = {}
    for attempt in sorted(sealed.attempts, key=lambda a: (a.experiment_id, a.eval_id, a.ordinal)):
        per_eval.setdefault((attempt.experiment_id, attempt.eval_id), []).append(attempt)
    root = ET.Element("testsuites", {"name": "niceeval", "id": run.id})
    suites: dict[str, ET.Element] = {}
    for experiment_id in [*run.experiments, *sorted({a.experiment_id for a in sealed.attempts})]:
        if experiment_id not in suites:
            suites[experiment_id] = ET.SubElement(root, "testsuite", {"name": _xml_text(experiment_id)})
    for key, attempts in per_eval.items():
        if len(attempts) == 1:
            case = testcase(attempts[0], sealed.results.get(attempts[0].id, []))
        else:
            case = eval_testcase(attempts, sealed.results, rules.get(key))
        suites[key[0]].append(case)
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


def write_junit(sealed: SealedRun, path: Path | str) -> Path:
    """Write the run's JUnit XML to `path` atomically (temp file in the same folder, then rename)."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tree = build(sealed)
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                tree.write(handle, encoding="utf-8", xml_declaration=True)
            os.chmod(temp, 0o666 & ~_umask())  # mkstemp makes it private; a report is an ordinary file
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise UsageError(
            f"--junit {target}: could not write the JUnit XML ({error.strerror or error}); "
            f"the results are sealed in run {sealed.run.id}"
        ) from error
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
