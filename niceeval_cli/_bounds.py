"""Upper bounds on the counts a configuration multiplies work by, and on what one turn records.

`attempts = 100000000` (a slip of the keyboard) planned a hundred million slots: the command
sat, growing, until the machine ran out of memory, and no error was ever shown. Each bound is far
above any real need (statistics.md: a few dozen attempts already decide a rate to a few points) and
far below what would exhaust the machine; a value over it is a configuration error like any other,
reported before anything is planned or dispatched.
"""

#: Attempts per eval: `attempts` (project, experiment, `define_eval`), `--attempts`, and the cap of
#: `run --until-decided` (`[run] max_attempts`, `--max-attempts`).
MAX_ATTEMPTS = 1000
#: USD per million tokens in `[prices."MODEL"]`: a thousand times any real price, and low enough that
#: no attempt's tokens can make an estimate overflow to infinity (`1e308` did: the run's spend and
#: the attempt's `estimated_cost_usd` were written as `Infinity`, which no JSON reader accepts).
MAX_PRICE_PER_MTOK = 1_000_000
#: Grading requests per judge assertion (`judge.samples`, `--judge-samples`).
MAX_JUDGE_SAMPLES = 100

# What one turn may record. The system under test, not the configuration, sets these counts: a
# stuck or hostile agent reporting 200 000 events in one turn held ~650 MB, took ~20 s and stored
# 25 MB of event rows for one attempt. Past a bound nothing fails the run (docs/adapters.md, "How
# much one turn records").

#: Tool calls one chat-completion reply may ask for (`openai-chat`'s tool loop, `http` with
#: `format = "openai"`): past it the turn fails (`AgentError` of kind `too-many-tool-calls`) and
#: none of the reply's calls is run or recorded. Real models ask for a handful at a time.
MAX_TOOL_CALLS_PER_REPLY = 1000
#: Model requests of one `openai-chat` turn (`max_steps`): each resends the growing conversation, so
#: `max_steps = 100000000` (a slip of the keyboard) over a model stuck calling tools never ended.
MAX_TOOL_STEPS = 1000
#: Events one turn records, whatever reported them (an adapter, a trace's spans): the first ones
#: are kept and one `events-dropped` event counts the rest; also the spans one turn's trace keeps.
MAX_EVENTS_PER_TURN = 10_000
#: Bytes one turn's events store, each text and JSON value counted as stored (within its own
#: limit): the first events that fit are kept, the rest counted as past `MAX_EVENTS_PER_TURN`.
#: Four times a coding agent's whole turn (its 4 MiB of stream); a turn that reads every source
#: file of this package stores 2 MB.
MAX_EVENT_BYTES_PER_TURN = 16 * 1024 * 1024

__all__ = ["MAX_ATTEMPTS", "MAX_EVENTS_PER_TURN", "MAX_EVENT_BYTES_PER_TURN", "MAX_JUDGE_SAMPLES", "MAX_PRICE_PER_MTOK",
           "MAX_TOOL_CALLS_PER_REPLY", "MAX_TOOL_STEPS"]
