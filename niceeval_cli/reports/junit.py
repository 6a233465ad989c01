"""`niceeval run --junit PATH`: JUnit XML from a run's sealed rows (`app.run.SealedRun`).

One <testcase> per (experiment, eval, case) — classname = experiment id, name = eval id (with
the case id) — so CI counts what the exit code counts (cli.md, "JUnit"):
- its state is the eval's folded verdict: a pass-style eval under its pass_rule, a score-style
  eval failed when a gate failed in any attempt, errored when an attempt is errored, unrankable
  or gate-unavailable. <failure> carries the failing labels, <error> the reasons; the body is
  the text `view` prints for the attempts that went wrong;
- a pass-style eval that passed although some attempts did not carries one <flakyFailure> per
  failed attempt and one <flakyError> per errored one (Maven Surefire's rerun schema);
- `time` is what this run spent on it: the attempts it executed; a reused attempt adds 0 and
  is named in <system-out>.
The file is written through `_output_file.write_output`: through a symlink, atomically for a
regular file, so a reader never sees half a report.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from .. import outcomes
from .._errors import UsageError
from .._records import AssertionResult
from .._states import AssertionState, AttemptState, Derived, EvalKind, GateState, Relation, RunStatus
from ..store.rows import AttemptRow, RunRow
from ._safe import visible
from ._tally import attempt_word
from .data import RunReport, SealedRun
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
    if state is AttemptState.FAILED or _gate_failed(attempt):  # unrankable or errored with it too
        return "failure"
    if state in (AttemptState.ERRORED, AttemptState.UNRANKABLE) or word == Derived.GATE_UNAVAILABLE.label:
        return "error"
    return None


def _gate_failed(attempt: AttemptRow) -> bool:
    """A failed score gate is a definite failure whatever else the attempt is (outcomes.md)."""
    return attempt.gate is not None and GateState(attempt.gate) is GateState.FAILED


def _attempt_note(attempt: AttemptRow) -> str:
    word = attempt_word(attempt.state, attempt.gate)
    score = score_text(attempt)
    text = f"{word} #{attempt.ordinal}" + (f"  score: {score}" if score else "")
    if attempt.relation == Relation.REFERENCE:
        return text + f"  reused from run {attempt.run_id} (attempt {attempt.id}; 0 s in this run)"
    return text + f"  attempt {attempt.id}  {_seconds(attempt.duration_ms)} s"


#: The <error> type of an eval still undecided by its interval after `run --until-decided`.
UNDECIDED = "undecided"
#: ... and of one whose attempts that never ran (a missing shard's) could still change its verdict.
NOT_DECIDED = "not decided"


def _seconds(duration_ms: float | None) -> str:
    return f"{max(duration_ms or 0.0, 0.0) / 1000:.3f}"


def _spent_ms(attempts: Sequence[AttemptRow]) -> float:
    """What this run spent on these attempts: a reused one was paid for by the run that sealed it."""
    return sum(max(a.duration_ms or 0.0, 0.0) for a in attempts if a.relation != Relation.REFERENCE)


def _fold(attempts: Sequence[AttemptRow], verdicts: Sequence[str | None], pass_rule: str | None,
          missing: int = 0) -> tuple[str | None, str, str]:
    """The eval's verdict ("failure", "error" or None), its word (the <failure>/<error> type) and
    the summary line <system-out> starts with. `missing`: its planned attempts that never ran —
    a pass-style verdict stands only if they could not change it (`outcomes.settled_verdict`)."""
    if EvalKind(attempts[0].kind) is EvalKind.PASS:
        rule = outcomes.stored_pass_rule(pass_rule)
        fold = outcomes.fold_pass_eval([AttemptState(a.state) for a in attempts], rule)
        decided = fold.passed + fold.failed + fold.errored
        result = outcomes.settled_verdict(fold.passed, fold.failed, fold.errored, missing, rule)
        summary = f"{result.value} under pass_rule {rule}: {fold.passed} of {decided} attempts passed"
        if result is not fold.result:  # its missing attempts could still change it
            return "error", NOT_DECIDED, (f"{NOT_DECIDED} under pass_rule {rule}: {fold.passed} of {decided} "
                                          f"attempts passed, {missing} not run could change it")
        if missing:
            summary += f", {missing} not run"
        if fold.undecided and isinstance(rule, outcomes.IntervalRule):  # run --until-decided (statistics.md)
            return "error", UNDECIDED, outcomes.undecided_text(fold.passed, fold.failed, rule)
        verdict = {AttemptState.FAILED: "failure", AttemptState.ERRORED: "error"}.get(result)
        return verdict, result.value, summary
    verdict = "failure" if "failure" in verdicts else "error" if "error" in verdicts else None
    bad = sum(v is not None for v in verdicts)
    summary = f"{len(attempts) - bad} of {len(attempts)} attempts scored cleanly"
    if len(attempts) == 1:
        return verdict, attempt_word(attempts[0].state, attempts[0].gate), summary
    word = (Derived.GATE_FAILED.label if verdict == "failure"
            else "score undecided" if verdict == "error" else "scored")
    return verdict, word, summary


def _message(verdict: str, failing: Sequence[tuple[AttemptRow, Sequence[AssertionResult]]]) -> str:
    """<failure>: the failing labels; <error>: the reasons — of the attempts that went that way."""
    parts: list[str] = []
    for attempt, results in failing:
        word = attempt_word(attempt.state, attempt.gate)
        if verdict == "failure" and _verdict(attempt) == "failure":
            parts.append(_labels(results, gates_only=_gate_failed(attempt)))
        elif verdict == "error" and _verdict(attempt) == "error":
            parts.append(_reasons(attempt, results, gates_only=word == Derived.GATE_UNAVAILABLE.label))
    return "; ".join(dict.fromkeys(parts))


def _flaky(case: ET.Element, attempt: AttemptRow, results: Sequence[AssertionResult]) -> None:
    """A failed (or errored) attempt of an eval that passed all the same: <flakyFailure> /
    <flakyError>, with the attempt's view text as its <stackTrace>."""
    verdict = _verdict(attempt)
    message = _labels(results) if verdict == "failure" else _reasons(attempt, results)
    tag = "flakyFailure" if verdict == "failure" else "flakyError"
    child = ET.SubElement(case, tag, {"message": _xml_text(message, MESSAGE_LIMIT),
                                      "type": attempt_word(attempt.state, attempt.gate)})
    ET.SubElement(child, "stackTrace").text = _xml_text(_body(attempt, results))
    ET.SubElement(child, "system-out").text = _xml_text(_attempt_note(attempt))


def eval_testcase(
    attempts: Sequence[AttemptRow], results: Mapping[str, Sequence[AssertionResult]], pass_rule: str | None,
    missing: int = 0,
) -> ET.Element:
    """One (experiment, eval, case): one testcase, its state the eval's (see the module doc)."""
    first = attempts[0]
    case = ET.Element("testcase", {
        "classname": _xml_text(first.experiment_id), "name": _xml_text(first.eval_id),
        "time": _seconds(_spent_ms(attempts)),
    })
    verdicts = [_verdict(a) for a in attempts]
    verdict, word, summary = _fold(attempts, verdicts, pass_rule, missing)
    wrong = [(a, results.get(a.id, [])) for a, v in zip(attempts, verdicts, strict=True) if v is not None]
    if verdict is not None:
        message = summary if word in (UNDECIDED, NOT_DECIDED) else _message(verdict, wrong)
        child = ET.SubElement(case, verdict, {"message": _xml_text(message, MESSAGE_LIMIT), "type": word})
        child.text = _xml_text("\n\n".join(_body(a, r) for a, r in wrong))
    elif EvalKind(first.kind) is EvalKind.PASS:
        for attempt, found in wrong:
            _flaky(case, attempt, found)
    notes = [summary, *(_attempt_note(a) for a in attempts)]
    ET.SubElement(case, "system-out").text = _xml_text("\n".join(notes))
    return case


def build(sealed: SealedRun) -> ET.ElementTree:
    """The JUnit document for one run, one <testsuite> per experiment (in the run's order: the
    niceeval.toml file's), one <testcase> per (experiment, eval, case)."""
    run = sealed.run
    rules = {(g.experiment_id, g.eval_id): g.pass_rule for g in sealed.groups}
    per_eval: dict[tuple[str, str], list[AttemptRow]] = {}
    for attempt in sorted(sealed.attempts, key=lambda a: (a.eval_id, a.ordinal)):
        per_eval.setdefault((attempt.experiment_id, attempt.eval_id), []).append(attempt)
    root = ET.Element("testsuites", {"name": "niceeval", "id": run.id})
    suites: dict[str, ET.Element] = {}
    for experiment_id in [*run.experiments, *sorted({a.experiment_id for a in sealed.attempts})]:
        if experiment_id not in suites:
            suites[experiment_id] = ET.SubElement(root, "testsuite", {"name": _xml_text(experiment_id)})
    missing = Counter((slot.experiment_id, slot.eval_id) for slot in sealed.not_run)
    for key, attempts in per_eval.items():
        suites[key[0]].append(eval_testcase(attempts, sealed.results, rules.get(key), missing.get(key, 0)))
    why = not_run_reason(run)
    for slot in sealed.not_run:
        if slot.experiment_id not in suites:
            suites[slot.experiment_id] = ET.SubElement(root, "testsuite", {"name": _xml_text(slot.experiment_id)})
        case = ET.SubElement(suites[slot.experiment_id], "testcase", {
            "classname": _xml_text(slot.experiment_id), "name": _xml_text(f"{slot.eval_id}#{slot.ordinal}"),
            "time": "0.000",
        })
        ET.SubElement(case, "skipped", {"message": f"not run: {why}"})
    for element in [*suites.values(), root]:
        cases = list(element.iter("testcase"))
        element.set("tests", str(len(cases)))
        element.set("failures", str(sum(c.find("failure") is not None for c in cases)))
        element.set("errors", str(sum(c.find("error") is not None for c in cases)))
        element.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
        element.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
    wall = _wall_seconds(run)
    if wall is not None:
        root.set("time", f"{wall:.3f}")  # the run's own duration, as pytest writes it
    for suite in suites.values():
        suite.set("timestamp", run.started_at)
    ET.indent(root)
    return ET.ElementTree(root)


def not_run_reason(run: RunRow) -> str:
    """Why a planned slot of `run` has no attempt: what its <skipped> testcase says."""
    if run.is_group:
        return "no shard sealed this slot (a shard is missing)"
    return {
        RunStatus.SETUP_ERROR: "a setup check failed, so it was not dispatched (exit 3)",
        RunStatus.INTERRUPTED: "the run was interrupted before it started",
        RunStatus.BUDGET_EXHAUSTED: "the budget was spent before it started",
    }.get(run.status, f"the run ended ({run.status}) before it started")


def _wall_seconds(run: RunRow) -> float | None:
    """How long the run took (started → ended); None for a group or a run without an end."""
    if run.is_group or not run.ended_at:
        return None
    try:
        start = datetime.fromisoformat(run.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(run.ended_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max((end - start).total_seconds(), 0.0)


def write_tree(tree: ET.ElementTree, path: Path | str) -> Path:
    """Write a JUnit document where `path` points (`_output_file.write_output`); OSError reaches the caller."""
    from .._output_file import write_output

    return write_output(path, lambda handle: tree.write(handle, encoding="utf-8", xml_declaration=True))


def write_junit(sealed: SealedRun, path: Path | str, shown: Path | str | None = None) -> Path:
    """Write the run's JUnit XML to `path` (through a symlink; atomically for a regular file);
    an error names it as `shown` (the path as the user wrote it)."""
    target = Path(path)
    try:
        write_tree(build(sealed), target)
    except OSError as error:
        raise UsageError(
            f"--junit {shown or target}: could not write the JUnit XML ({error.strerror or error}); "
            f"the results are sealed in run {sealed.run.id}"
        ) from error
    return target


class JunitFile:
    """`run --junit FILE`: a listener of the run's relay that hears only `reported`, and writes the
    file once the app has read the run back. A relative path is the working directory's when
    the run starts: eval code that changes directory (`os.chdir`) does not move the report."""

    def __init__(self, path: Path) -> None:
        self.shown = path
        self.path = path.absolute()

    def reported(self, report: RunReport) -> None:
        if report.sealed is not None:
            write_junit(report.sealed, self.path, self.shown)
