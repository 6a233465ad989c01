"""Outcome rules (outcomes.md): assertion results → an Attempt's verdict or score.

Pure functions only. The runner calls `decide_attempt` once when sealing; `view`, `query`,
JUnit and the exit code read what was decided (stored) and never re-decide.
"""
