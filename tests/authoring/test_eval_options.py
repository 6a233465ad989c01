"""Eval options are checked where the eval is defined, like niceeval.toml checks its keys: a bad
option is a configuration error naming the option, the eval and the file:line (issue 9 item 16)."""

from __future__ import annotations

import sys

import pytest

from niceeval_cli import Case, define_eval, define_score_eval
from niceeval_cli.authoring import AuthoringError, DefinitionError


def _test(t):
    return None


def _line_here() -> int:
    return sys._getframe(1).f_lineno


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"tags": "smoke"}, ["tags=", 'got "smoke"', 'write tags=["smoke"]']),
        ({"tags": ["ok", 3]}, ["tags=", "3 (int)"]),
        ({"tags": ["ok", ""]}, ["tags=", "non-empty"]),
        ({"tags": {"a"}}, ["tags=", "list of strings", "(set)"]),
        ({"timeout_ms": -5}, ["timeout_ms=", "a positive integer", "-5"]),
        ({"timeout_ms": 0}, ["timeout_ms=", "a positive integer"]),
        ({"timeout_ms": 1.5}, ["timeout_ms=", "1.5 (float)"]),
        ({"attempts": 0}, ["attempts=", "an integer from 1 to 1000", "0 (int)"]),
        ({"attempts": 10**8}, ["attempts=", "an integer from 1 to 1000", "100000000 (int)"]),
        ({"attempts": True}, ["attempts=", "True (bool)"]),
        ({"attempts": "3"}, ["attempts=", "'3' (str)"]),
        ({"pass_rule": "most"}, ["pass_rule=", '"any", "all" or a minimum pass rate', "'most'"]),
        ({"pass_rule": 1.5}, ["pass_rule=", "1.5"]),
        ({"pass_rule": 0}, ["pass_rule=", "0 (int)"]),
        ({"pass_rule": float("nan")}, ["pass_rule=", "nan"]),
        ({"judge": "yes"}, ["judge=", "True or a mapping of judge fields"]),
        ({"judge": {"modle": "m"}}, ["judge=", "modle", "did you mean 'model'?"]),
        ({"judge": {"max_concurrency": 2}}, ["judge=", "max_concurrency", "niceeval.toml"]),
        ({"description": 3}, ["description=", "a string"]),
        ({"name": ""}, ["name=", "a non-empty string"]),
        ({"adapter": "http"}, ["adapter=", "define_adapter"]),
        ({"tgas": ["x"]}, ["tgas=", "unknown option 'tgas'", "did you mean 'tags'?", "allowed: adapter"]),
        ({"case_id": "id"}, ["case_id=", "has no cases"]),
    ],
)
@pytest.mark.parametrize("define", [define_eval, define_score_eval])
def test_a_bad_option_is_a_definition_error_naming_option_eval_and_line(define, options, names):
    line = _line_here() + 2
    with pytest.raises(DefinitionError) as caught:
        define(test=_test, **options)
    message = str(caught.value)
    assert f"test_eval_options.py:{line}: " in message
    assert "eval '_test'" in message
    assert f"{define.__name__}(" in message
    for name in names:
        assert name in message
    assert "\n" not in message
    assert caught.value.exit_code == 2


def test_the_decorator_form_names_the_function_and_the_decorator_line():
    line = _line_here() + 2
    with pytest.raises(DefinitionError) as caught:
        @define_eval(attempts=0)
        def refund_window(t):
            return None

    assert str(caught.value).startswith(f"tests/authoring/test_eval_options.py:{line}: eval 'refund_window': ")


def test_the_name_option_names_the_eval_in_errors():
    with pytest.raises(DefinitionError, match=r"eval '退款': define_eval\(attempts=\.\.\.\)"):
        define_eval(test=_test, name="退款", attempts=-1)


def test_a_definition_error_is_an_authoring_error_so_an_attempt_that_defines_one_is_errored():
    assert issubclass(DefinitionError, AuthoringError)


def test_valid_options_are_kept_and_tags_become_a_tuple():
    definition = define_eval(
        test=_test, tags=["smoke", "refunds"], attempts=3, timeout_ms=500, pass_rule=0.5,
        judge={"model": "m"}, description="d",
    )
    assert definition.tags == ("smoke", "refunds")
    assert (definition.attempts, definition.timeout_ms, definition.pass_rule) == (3, 500, 0.5)
    assert definition.judge == {"model": "m"}
    assert definition.cases is None


def test_an_integer_pass_rule_of_one_means_a_rate_of_one():
    assert define_eval(test=_test, pass_rule=1).pass_rule == 1.0


def test_a_test_that_is_not_callable_is_rejected():
    with pytest.raises(DefinitionError, match=r"define_eval\(test=...\): expected a function taking t"):
        define_eval(test="not a function")  # type: ignore[call-overload]


def test_a_test_taking_two_parameters_needs_cases():
    def two(t, case):
        return None

    with pytest.raises(DefinitionError, match=r"def two\(t\) \(two takes 2 positional parameters\); a second "):
        define_eval(test=two)


def test_with_cases_the_test_must_take_the_case_as_its_second_parameter():
    with pytest.raises(DefinitionError, match=r"with cases, the test takes a second parameter.*def _test\(t, case\)"):
        define_eval(test=_test, cases={"a": 1})


@pytest.mark.parametrize(
    "signature",
    ["def f(t, case): pass", "def f(t, case=None): pass", "def f(*args): pass", "async def f(t, case, extra=1): pass"],
)
def test_test_functions_that_accept_t_and_the_case_are_accepted(signature):
    scope: dict[str, object] = {}
    exec(signature, scope)
    definition = define_eval(test=scope["f"], cases=[Case("a", 1)])  # type: ignore[arg-type]
    assert definition.cases is not None and [c.id for c in definition.cases] == ["a"]


def test_a_callable_object_without_a_readable_signature_is_accepted():
    definition = define_eval(test=print, name="printer")  # builtins may have no signature
    assert definition.name == "printer"


# --- through the real CLI: discovery reports it as a configuration error (exit 2) ------------


@pytest.mark.parametrize(
    ("decorator", "names"),
    [
        ('@define_eval(tags="smoke")', ["tags=", 'write tags=["smoke"]']),
        ("@define_eval(timeout_ms=-1)", ["timeout_ms=", "-1 (int)"]),
        ("@define_score_eval(attempts=0)", ["define_score_eval(attempts=...)", "0 (int)"]),
        ('@define_eval(pass_rule="best")', ["pass_rule=", "'best'"]),
        ("@define_eval(retries=2)", ["unknown option 'retries'"]),
    ],
)
def test_discovery_reports_a_bad_option_as_a_configuration_error_without_traceback(project, decorator, names):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refund.py", f"""
        from niceeval_cli import define_eval, define_score_eval

        {decorator}
        def refund_window(t):
            pass
    """)
    result = project.run()
    assert result.exit_code == 2, (result.stdout, result.stderr)
    message = result.stderr.strip()
    assert "evals/refund.py:3: eval 'refund_window'" in message
    for name in names:
        assert name in message
    assert "Traceback" not in result.stderr
    assert len(message.splitlines()) == 1


# --- the adapter forms ------------------------------------------------------------------------


def test_the_adapter_forms_check_options_and_take_cases():
    from niceeval_cli import define_adapter

    adapter = define_adapter(name="echo", send=lambda ctx, message: message)

    @adapter.define_score_eval(cases={"a": 1, "b": 2}, tags=["smoke"])
    def scored(t, case):
        return None

    assert scored.adapter is adapter
    assert scored.cases is not None and [c.id for c in scored.cases] == ["a", "b"]
    explicit = adapter.define_eval(test=_test, attempts=2)
    assert (explicit.adapter, explicit.attempts) == (adapter, 2)
    line = _line_here() + 2
    with pytest.raises(DefinitionError) as caught:
        adapter.define_eval(test=_test, tags="smoke")
    assert f"test_eval_options.py:{line}: eval '_test': define_eval(tags=...)" in str(caught.value)


def test_an_adapter_form_refuses_a_second_adapter():
    from niceeval_cli import define_adapter

    first, second = define_adapter(name="first"), define_adapter(name="second")
    with pytest.raises(DefinitionError, match="already uses adapter 'first'"):
        first.define_eval(test=_test, adapter=second)


def test_an_adapter_assertion_may_not_shadow_t_case_id():
    from niceeval_cli import AuthoringError, define_adapter

    with pytest.raises(AuthoringError, match="case_id"):
        define_adapter(name="shadow", assertions=lambda check: {"case_id": lambda: None})


def _counts_by_signature(fn):
    """(required, most) positional parameters as inspect.signature reports them."""
    import inspect

    params = inspect.signature(fn).parameters.values()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    most = None if any(p.kind is p.VAR_POSITIONAL for p in params) else len(positional)
    return sum(p.default is p.empty for p in positional), most


@pytest.mark.parametrize(
    "signature",
    [
        "def f(t): pass", "def f(): pass", "def f(t, case): pass", "def f(t, case=None): pass",
        "def f(*args): pass", "def f(t, *args, **kw): pass", "def f(t, /, case, *, k): pass",
        "def f(t, *, k=1): pass", "def f(a=1, b=2, c=3): pass", "async def f(t, case, extra=1): pass",
        "f = lambda t, case=0: None", "def f(t, case): yield",
    ],
)
def test_plain_functions_are_counted_from_their_code_as_inspect_counts_them(signature):
    from niceeval_cli.authoring._definition import _positional_params

    scope: dict[str, object] = {}
    exec(signature, scope)
    fn = scope["f"]
    assert _positional_params(fn) == _counts_by_signature(fn)  # type: ignore[arg-type]
    assert "__annotations__" not in fn.__dict__ and fn.__annotations__ == {}  # type: ignore[union-attr]


def test_wrapped_partial_and_callable_tests_are_counted_through_their_signature():
    import functools

    from niceeval_cli.authoring._definition import _positional_params

    def two(t, case):
        return None

    @functools.wraps(two)
    def wrapper(*args, **kwargs):
        return two(*args, **kwargs)

    class Callable:
        def __call__(self, t):
            return None

    assert _positional_params(wrapper) == (2, 2)  # the wrapped signature, not (*args)
    assert _positional_params(functools.partial(two, None)) == (1, 1)
    assert _positional_params(Callable()) == (1, 1)
    assert _positional_params(Callable().__call__) == (1, 1)
    with pytest.raises(DefinitionError, match=r"def two\(t\) \(two takes 2 positional parameters\)"):
        define_eval(test=wrapper)
    assert define_eval(test=functools.partial(two, case=None)).name == "?"


def test_evals_defined_at_one_line_share_one_location():
    """A project that defines thousands of evals in a loop keeps one location, not one each."""
    made = [define_eval(test=_test, name=f"e{i}") for i in range(3)]; line = _line_here()  # noqa: E702
    other = define_eval(test=_test, name="other")
    assert made[0].defined_at is made[1].defined_at is made[2].defined_at
    assert made[0].defined_at.line == line and made[0].defined_at.file == __file__
    assert other.defined_at.line == line + 1 and other.defined_at is not made[0].defined_at


def test_evals_made_in_one_loop_read_back_their_own_kind_tags_and_adapter():
    """What the evals of one call site share is held once for them, never mixed between them."""
    from niceeval_cli import define_adapter

    async def echo(ctx, message, **options):
        return message

    first, second = define_adapter(name="first", send=echo), define_adapter(name="second", send=echo)
    made = [
        (define_score_eval if i % 2 else define_eval)(test=_test, name=f"e{i}", tags=[f"t{i % 3}"],
                                                      adapter=(first, second, None)[i % 3])
        for i in range(6)
    ]
    assert [(str(d.kind), d.tags, d.adapter) for d in made] == [
        ("pass", ("t0",), first), ("score", ("t1",), second), ("pass", ("t2",), None),
        ("score", ("t0",), first), ("pass", ("t1",), second), ("score", ("t2",), None),
    ]
    assert made[0].defined_at is made[5].defined_at
    assert made[0] != made[3] and hash(made[0]) == hash(made[0])
