"""`niceeval view` in plain mode (a pipe, CI, NO_COLOR): the exact text a reader gets.

Each snapshot is a specification: read it as the output a user sees for that kind of run.
Run and attempt ids are normalised to <ID1>, <ID2>, ... in order of appearance; times are
fixed by the builders.
"""

# ruff: noqa: E501  (snapshots hold real output lines, some of them long on purpose)

from __future__ import annotations

import pytest

from tests.support import view_scenarios as scenarios
from tests.support.view_builders import Runs, render

PASS_STYLE = """\
Run <ID1>  finished · exit 1 (a definite failure: 1 eval failed)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  2 attempts: 1 failed, 1 passed

Experiment exp
  evals     1 of 2 passed · 1 failed
  attempts  1 of 2 passed (50%)
            pass rate 50% [0%, 100%] over 2 evals

Attempts, worst first
FAILED  exp · support/refund#0  @<ID2>
  ✗ mismatched   Mentions 30 days
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:11
  ✓ matched      Polite
  ✓ matched      No apology

Passed, one line each (--all shows their results):
passed  exp · support/greeting#0  @<ID3>

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""

SCORE_STYLE = """\
Run <ID1>  finished · exit 1 (a definite failure: 1 gate failed)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  3 attempts: 1 unrankable, 1 gate failed, 1 scored

Experiment models/a
  score     60 of 120 · 50 unavailable · not rankable (1 unrankable)
            mean 75% · min 70% · max 80% of each eval's max (maxima differ) over 2 rankable attempts · gate failed in 1
            mean score 75% [65%, 85%] over 2 evals · 1 eval undecided, not in the mean

Attempts, worst first
UNRANKABLE  models/a · review/partial#0  45 of 100 · 50 unavailable · not rankable  @<ID2>
  reason: completion-unobserved
  ✗ mismatched   Asked for rating  0 / 5
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:11
  ? unavailable  Task completed  — / 50
      reason: completion-unobserved
      at evals/support.py:12
  ✓ matched      Said goodbye  45 / 45

GATE FAILED  models/a · review/rude#0  7 of 10 · points kept  @<ID3>
  ✗ mismatched   No insults  [gate]
      expected excludes('idiot'), got 'you idiot'
      at evals/support.py:10
  ✗ mismatched   Offered help  0 / 3
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:12
  ✓ matched      Answered  7 / 7

Passed, one line each (--all shows their results):
scored  models/a · review/full#0  8 of 10  @<ID4>

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""

JUDGE = """\
Run <ID1>  finished · exit 1 (a definite failure: 1 eval failed)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  1 attempt: 1 failed

Experiment exp
  evals     0 of 1 passed · 1 failed
  attempts  0 of 1 passed (0%)
            pass rate 0% over 1 eval

Attempts, worst first
FAILED  exp · support/clear#0  @<ID2>
  ✗ below        Clear answer  0.00 < 0.80 required  [gate]
      judge: N: The reply talks about shipping, not refunds.
      at evals/support.py:10
  · measured     Friendly tone  1.00
      judge: Y: Warm and polite throughout.

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""

UNAVAILABLE = """\
Run <ID1>  finished · exit 5 (something could not be decided: 1 eval errored)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  1 attempt: 1 errored

Experiment exp
  evals     0 of 1 passed · 1 errored
  attempts  no decided attempt · 1 errored, not counted
            pass rate — no eval with a decided attempt · 1 eval undecided, not in the mean

Attempts, worst first
ERRORED  exp · support/usage#0  @<ID2>
  reason: evidence-unavailable
  ? unavailable  Judge agrees  — (0.80 required)  [gate]
      reason: judge-key-unresolved
      judge: the judge key variable OPENAI_API_KEY is unset or empty; no request was sent
      at evals/support.py:11
  ✓ matched      Replied

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""

ERRORED = """\
Run <ID1>  finished · exit 5 (something could not be decided: 2 evals errored)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  2 attempts: 2 errored

Experiment exp
  evals     0 of 2 passed · 2 errored
  attempts  no decided attempt · 2 errored, not counted
            pass rate — no eval with a decided attempt · 2 evals undecided, not in the mean

Attempts, worst first
ERRORED  exp · support/broken_match#0  @<ID2>
  reason: assertion-errored
  ! errored      Parses JSON
      reason: match-error
      JSONDecodeError: Expecting value: line 1 column 1
      at evals/support.py:10
  ✓ matched      Non-empty

ERRORED  exp · support/crash#0  @<ID3>
  reason: exception
  error: ValueError: the reply was empty

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""

REUSED = """\
Run <ID1>  finished · exit 1 (a definite failure: 1 eval failed)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  2 attempts: 1 failed, 1 passed · 1 reused from earlier runs

Experiment exp
  evals     1 of 2 passed · 1 failed
  attempts  1 of 2 passed (50%)
            pass rate 50% [0%, 100%] over 2 evals

Attempts, worst first
FAILED  exp · support/refund#0  (reused from run <ID2>)  @<ID3>
  ✗ mismatched   Mentions 30 days
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:10

Passed, one line each (--all shows their results):
passed  exp · support/greeting#0  @<ID4>

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID3>
"""

MULTI_ATTEMPT = """\
Run <ID1>  finished · exit 0 (everything passed)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  5 attempts: 2 failed, 3 passed

Experiment exp
  evals     2 of 2 passed
  attempts  3 of 5 passed (60%)
            pass rate 67% [1%, 100%] over 2 evals · 1 flaky

Evals with several attempts, not all passing (worst first; folded under pass_rule any)
  passed  exp · support/flaky  passed under pass_rule any: 1/3 passed · 33% [6%, 79%] · flaky
  1 more eval(s) with several attempts passed every attempt

Attempts, worst first
FAILED  exp · support/flaky#0  @<ID2>  (its eval passed under pass_rule any: 1 of 3 decided attempts)
  ✗ mismatched   Mentions 30 days
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:10

FAILED  exp · support/flaky#2  @<ID3>  (its eval passed under pass_rule any: 1 of 3 decided attempts)
  ✗ mismatched   Mentions 30 days
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:10

Passed, one line each (--all shows their results):
passed  exp · support/flaky#1   @<ID4>
passed  exp · support/steady#0  @<ID5>
passed  exp · support/steady#1  @<ID6>

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""

HOSTILE = """\
Run <ID1>  finished · exit 1 (a definite failure: 2 evals failed)
  started 2025-03-01 10:00:00 UTC · took 2.5 s · niceeval 0.1.0
  4 attempts: 2 failed, 2 passed

Experiment exp
  evals     2 of 4 passed · 2 failed
  attempts  2 of 4 passed (50%)
            pass rate 50% [0%, 100%] over 4 evals

Attempts, worst first
FAILED  exp · support/hostile#0  @<ID2>
  ✗ mismatched   Label \\x1b]0;pwned\\x07 with OSC
      expected includes('30 days'), got We ship\\x1b[2J\\x1b[31m in 3 days\\x1b[0m\\rOK: all good
      at evals/support.py:10
  ✗ mismatched   Long reply
      word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word … [+9600 chars]
      at evals/support.py:11
  ✗ mismatched   Bidi \\u202etxt.exe
      abc\\u202edef
      at evals/support.py:12

FAILED  exp · 支持/退款#0  @<ID3>
  ✗ mismatched   提到三十天
      expected includes('30 days'), got 'We ship in 3 days.'
      at evals/support.py:10
  ✓ matched      礼貌

Passed, one line each (--all shows their results):
passed  exp · support/ok#0   @<ID4>
passed  exp · 支持/问候语#0  @<ID5>

One attempt in full (evidence, judge audit, usage, timings): niceeval view @<ID2>
"""


CASES = {
    "pass_style": PASS_STYLE,
    "score_style": SCORE_STYLE,
    "judge": JUDGE,
    "unavailable": UNAVAILABLE,
    "errored": ERRORED,
    "multi_attempt": MULTI_ATTEMPT,
    "hostile": HOSTILE,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_view_of_the_latest_run_reads_as_the_snapshot(runs: Runs, case: str) -> None:
    getattr(scenarios, case)(runs)
    assert render(runs.path) == CASES[case]


def test_a_reused_attempt_says_which_run_it_came_from(runs: Runs) -> None:
    first, second = scenarios.reused(runs)
    text = render(runs.path, second)
    assert text == REUSED
    # Under the run that executed it, the same attempt is plainly its own.
    assert "reused from" not in render(runs.path, first)
