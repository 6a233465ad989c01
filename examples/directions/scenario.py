"""Seed scenario: "A does not know the route; B does" — modelled checkpoint by checkpoint.

Goal: after asking for directions, A independently reaches the destination and meets B.
A complete score ranges from 0 to 10: expression 2 + information 3 + independent completion 5.
Gates decide pass/fail separately; earned points are kept when a gate fails, and unavailable
evidence is reported as unavailable (never as a complete zero).
"""

from examples.directions._review import (
    actor,
    at_place,
    decided_by,
    delivered,
    directions,
    executed,
    formal,
    involves,
    move,
    outcome,
    recipient,
    route_information,
    speech,
    speech_act,
)
from niceeval_cli.expect import and_, every, is_true

EXPRESSION = "Is all of A's formal speech natural, complete, and understandable in context?"
INFORMATION = "Does the delivered conversation provide enough information to find the destination?"


@directions.define_score_eval(
    description="A asks B for directions, then independently reaches the old well and meets B",
    judge=True,
)
async def ask_for_directions(t):
    # Observe: the adapter ran the application until the task ended or the observation deadline.

    # Prerequisite: conversation, action and outcome records are complete and can be correlated.
    # Otherwise this entry is unavailable (with its reason) and the checks below never run.
    await t.records_ready().gate().label("Prerequisite: records complete and correlated").or_stop()

    with t.group("Checkpoint 1"):
        # One and the same utterance must be A's request for directions, addressed to B, and delivered.
        # (Separate checks could be satisfied by different lines: a greeting B heard, a question B missed.)
        t.said(and_(actor("A"), speech_act("ask-route"), recipient("B"), delivered())) \
            .gate().label("A delivered a request for directions to B")

    with t.group("Checkpoint 2"):
        # Expression: all of A's formal speech — unheard, incorrect and unverified-origin lines included.
        t.closed_qa(speech(and_(actor("A"), formal())), EXPRESSION).score(2).label("Expression")
        # Information: only what was actually delivered, plus the official map and destination.
        t.closed_qa(route_information(t.facts), INFORMATION).score(3).label("Information")
        # Model origin, checked separately: unknown origin does not prove autonomy (recorded, not scored).
        t.model_origin(and_(actor("A"), formal()), every(is_true())).label("Model origin of A's speech")

    with t.group("Checkpoint 3"):
        a_model_move = and_(actor("A"), move(), decided_by("model"))
        # Three separate records ...
        t.actions(a_model_move).label("A's model chose movement")
        t.actions(and_(a_model_move, executed())).label("The application executed it")
        t.outcomes(and_(outcome("met"), involves("A", "B"), at_place("old well"))).label("A arrived and met B")
        # ... and independent completion: the meeting was caused by A's own model-chosen, executed
        # move. A gate worth 5 points; a move the player made never satisfies it.
        t.meeting_caused_by(and_(a_model_move, executed())).gate().score(5).label("Independent completion")
