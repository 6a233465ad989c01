"""Seed: support speech quality and task completion efficiency (a score-style eval).

The adapter, its `said` / `speech_delivery` assertions and the evaluation come from the
support-review library (`_review.py`, the seed's `createSupportReview`); this module plugs in
the simulated support application (`_app.py`). Maximum score 100: participation 5, expression
quality 45 (judge), completion duration 50; plus delivery, usage and runtime gates.
"""

from examples.support._app import observe
from examples.support._review import create_support_review

adapter, evaluation = create_support_review(observe)
