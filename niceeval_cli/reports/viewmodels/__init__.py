"""View-models: sealed rows shaped for display, shared by every renderer (terminal now, HTML next).

Plain frozen dataclasses of display-ready text (stored text already made visible and trimmed,
numbers already formatted) and a few flags a renderer styles by. No rich, no I/O: a renderer
only lays them out. Built from store rows and `OutcomeGroup`s; every decision comes from
`outcomes` (through `reports._tally`), never from here.

- `attempt`: `AttemptHeading`, `AssertionLine`, `AttemptBlock`, `AttemptDetail` (+ `DetailField`,
  `ResultDetail`), `CollapsedAttempt`
- `run`: `RunHeader`, `ExperimentSummary`, `EvalCounts`, `ScoreLines`, `MultiAttempt`, `EvalFoldRow`,
  `RunCountLine`, `ReuseLine`
- `standing`: a score's grade (high, middling, low) by its share of the maximum
- `text`: the formatting every renderer shares (`num`, `plural`, `exit_text`, `name`, ...)
"""
