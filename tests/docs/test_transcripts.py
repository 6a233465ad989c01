"""The comparer of console transcripts (tests/support/transcripts.py): what it lets vary, and that
everything else — a missing line, a changed count, a reordered section, an id that names another
run — is reported with the page and line. tests/docs/test_code_blocks.py runs it on the real pages
(and on a scratch page with a stale summary put back)."""

from __future__ import annotations

from tests.support.code_blocks import REPO, Block, transcripts
from tests.support.transcripts import PageIds, Shown, mismatch

_PAGE = "docs/page.md"

_SHOWN = """niceeval: 2 slot(s): 2 to execute, 0 reused
passed     default · refunds#0
failed     default · returns#0

FAILED  default · returns#0  @01M8N2KFAH0DAPNND9A3WTXE1Y
  ✗ mismatched   Mentions 30 days

Experiment default
  evals     1 of 2 passed · 1 failed
            pass rate 50% [0%, 100%] over 2 evals

run 01M8N2KFADGT636XAS27X4H787: 2 evals: 1 failed, 1 passed · exit 1 (a definite failure: 1 eval failed)
details: niceeval view 01M8N2KFADGT636XAS27X4H787
"""

#: The same output from another run: other ids, attempt lines in another order, other padding.
_PRINTED = """niceeval: 2 slot(s): 2 to execute, 0 reused
failed     default · returns#0
passed     default · refunds#0

FAILED  default · returns#0  @01M98KWRSCKXP669T1V13Z94AK
  ✗ mismatched     Mentions 30 days

Experiment default
  evals     1 of 2 passed · 1 failed
            pass rate 50% [0%, 100%] over 2 evals

run 01M98KWRSBAAAAAAAAAAAAAAAA: 2 evals: 1 failed, 1 passed · exit 1 (a definite failure: 1 eval failed)
details: niceeval view 01M98KWRSBAAAAAAAAAAAAAAAA
"""

_FIRST_LINE = 11  # the page line of the block's first output line


def _shown(text: str, first: int = _FIRST_LINE) -> list[Shown]:
    return [Shown(first + i, line) for i, line in enumerate(text.splitlines())]


def _check(shown: str, printed: str, ids: PageIds | None = None) -> str | None:
    return mismatch(_PAGE, _FIRST_LINE - 1, _shown(shown), printed, ids if ids is not None else PageIds())


def test_ids_attempt_order_and_padding_may_differ_and_the_page_ids_are_learnt() -> None:
    ids = PageIds()
    assert _check(_SHOWN, _PRINTED, ids) is None
    assert ids.printed == {"01M8N2KFAH0DAPNND9A3WTXE1Y": "01M98KWRSCKXP669T1V13Z94AK",
                           "01M8N2KFADGT636XAS27X4H787": "01M98KWRSBAAAAAAAAAAAAAAAA"}
    assert ids.command("niceeval view @01M8N2KFAH") == "niceeval view @01M98KWRSC"


def test_clock_times_durations_and_digests_may_differ() -> None:
    shown = ("  started      2026-11-30 01:55:08 UTC\n  duration     0.5 ms\n"
             '  "duration_ms": 1.362,\n  fingerprint  ' + "f0" * 32 + "\n")
    printed = ("  started      2026-12-07 16:01:23 UTC\n  duration     12.25 ms\n"
               '  "duration_ms": 0.8,\n  fingerprint  ' + "9a" * 32 + "\n")
    assert _check(shown, printed) is None


def test_a_missing_pass_rate_line_is_reported_at_its_page_line() -> None:
    stale = _SHOWN.replace("            pass rate 50% [0%, 100%] over 2 evals\n", "")
    problem = _check(stale, _PRINTED)
    assert problem is not None
    assert problem.startswith(f"{_PAGE}:{_FIRST_LINE + 9}: the page shows\n    (a blank line)\n"
                              "where niceeval printed\n    pass rate 50% [0%, 100%] over 2 evals\n")
    assert "niceeval's whole output:\n" in problem


def test_a_changed_count_is_reported() -> None:
    problem = _check(_SHOWN.replace("1 failed, 1 passed · exit 1", "2 passed · exit 1"), _PRINTED)
    assert problem is not None and problem.startswith(f"{_PAGE}:{_FIRST_LINE + 11}: the page shows\n    run ")


def test_a_reordered_section_is_reported() -> None:
    failure = "FAILED  default · returns#0  @01M8N2KFAH0DAPNND9A3WTXE1Y\n  ✗ mismatched   Mentions 30 days\n\n"
    experiment = ("Experiment default\n  evals     1 of 2 passed · 1 failed\n"
                  "            pass rate 50% [0%, 100%] over 2 evals\n\n")
    reordered = _SHOWN.replace(failure + experiment, experiment + failure)
    assert reordered != _SHOWN
    problem = _check(reordered, _PRINTED)
    assert problem is not None
    assert problem.startswith(f"{_PAGE}:{_FIRST_LINE + 4}: the page shows\n    Experiment default")


def test_an_excerpt_marks_omitted_lines_with_three_dots() -> None:
    excerpt = "niceeval: 2 slot(s): 2 to execute, 0 reused\n...\nExperiment default\n...\n"
    assert _check(excerpt, _PRINTED) is None
    assert _check("niceeval: 2 slot(s): 2 to execute, 0 reused\n...\nExperiment other\n...\n", _PRINTED) is not None


def test_output_past_the_end_of_the_shown_lines_is_reported_unless_marked() -> None:
    shown = "niceeval: 2 slot(s): 2 to execute, 0 reused\nfailed default · returns#0\npassed default · refunds#0\n"
    problem = _check(shown, _PRINTED)
    assert problem is not None
    assert problem.startswith(f"{_PAGE}:{_FIRST_LINE + 3}: niceeval printed more than the page shows")


def test_an_ellipsis_inside_a_line_matches_any_text() -> None:
    assert _check("run 01M8N2KFADGT636XAS27X4H787: … · exit 1 (…)\n", _PRINTED.splitlines()[-2] + "\n") is None
    assert _check("run 01M8N2KFADGT636XAS27X4H787: … · exit 0 (…)\n", _PRINTED.splitlines()[-2] + "\n") is not None


def test_a_page_id_stands_for_one_printed_id_across_the_page() -> None:
    ids = PageIds()
    assert _check(_SHOWN, _PRINTED, ids) is None
    plan = "reuse    default · returns#0  attempt 01M8N2KFAH0DAPNND9A3WTXE1Y from run 01M8N2KFADGT636XAS27X4H787\n"
    right = "reuse default · returns#0 attempt 01M98KWRSCKXP669T1V13Z94AK from run 01M98KWRSBAAAAAAAAAAAAAAAA\n"
    other_run = right.replace("01M98KWRSBAAAAAAAAAAAAAAAA", "01M98KWRSDBBBBBBBBBBBBBBBB")
    assert _check(plan, right, ids) is None
    problem = _check(plan, other_run, ids)
    assert problem is not None and problem.startswith(f"{_PAGE}:{_FIRST_LINE}: the page shows\n    reuse ")


def test_two_page_ids_for_one_printed_id_are_reported() -> None:
    ids = PageIds()
    assert _check(_SHOWN, _PRINTED, ids) is None
    renamed = "details: niceeval view 01M8N2KNDSSTDK0JRR0A3FPR2J\n"
    problem = _check(renamed, "details: niceeval view 01M98KWRSBAAAAAAAAAAAAAAAA\n", ids)
    assert problem == (f"{_PAGE}:{_FIRST_LINE}: the page writes 01M8N2KNDSSTDK0JRR0A3FPR2J "
                       "for the id it wrote 01M8N2KFADGT636XAS27X4H787 before")


def test_each_command_of_a_console_block_gets_its_lines_and_the_exit_code_the_page_states() -> None:
    body = ("$ niceeval run\nrun 01M8N2KFADGT636XAS27X4H787: 1 eval: 1 failed · exit 1 (a definite failure)\n"
            "$ niceeval run mistakes    # exit 5\n...\n"
            "$ cd elsewhere\nnot a niceeval line\n"
            "$ niceeval view ci-42\nGroup ci-42  finished · exit 5 (something could not be decided)\n")
    found = transcripts(Block(REPO / "docs" / "page.md", 40, "console", body, None))
    assert [(t.command.line, t.command.expected_exit, t.line) for t in found] == [
        ("niceeval run", 1, 41), ("niceeval run mistakes    # exit 5", 5, 43), ("niceeval view ci-42", 0, 47)]
    assert [line.line for line in found[2].shown] == [48]  # `$ cd` ends the lines shown under `run mistakes`


def test_an_indented_three_dots_line_is_an_excerpt_too() -> None:
    assert _check("niceeval: 2 slot(s): 2 to execute, 0 reused\n    ...\n", _PRINTED) is None
