"""Redaction and trimming of stored text."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

import niceeval_cli._redact as _redact_module
from niceeval_cli._redact import REDACTED, redact, redact_json, safe_json, trim_json


def test_exact_secret_values_are_replaced_everywhere() -> None:
    text = redact("key=abc123XYZ and again abc123XYZ.", ["abc123XYZ"])
    assert "abc123XYZ" not in text and text.count(REDACTED) == 2


def test_empty_secret_is_ignored() -> None:
    assert redact("nothing to hide", ["", ""]) == "nothing to hide"


def test_bearer_tokens_are_redacted() -> None:
    text = redact("sent Bearer eyJhbGciOi.J9-x_y header")
    assert "eyJhbGciOi" not in text and "Bearer [redacted] header" in text


def test_sk_style_keys_need_sixteen_token_characters() -> None:
    assert redact("use sk-proj-ABCDEFGHijklmnop1234 now") == f"use {REDACTED} now"
    assert redact("sk-short stays") == "sk-short stays"
    assert redact("task-abcdefghijklmnopqrstu") == "task-abcdefghijklmnopqrstu"


def test_authorization_and_api_key_header_values_are_redacted() -> None:
    text = redact("Authorization: Basic dXNlcjpwYXNz\napi-key: 0123secret\nX-Api-Key=zzz9")
    assert "dXNlcjpwYXNz" not in text and "0123secret" not in text and "zzz9" not in text
    assert text.splitlines()[0] == f"Authorization: {REDACTED}"
    assert "api_key_env" in redact('api_key_env = "OPENAI_API_KEY"')
    assert "OPENAI_API_KEY" in redact('api_key_env = "OPENAI_API_KEY"')


def test_redact_json_walks_nested_values_and_credential_named_keys() -> None:
    value = {"headers": {"Authorization": "Token plain", "api_key": "k"},
             "items": ["sk-ABCDEFGHIJKLMNOPQRST", ("my-secret-value",)], "n": 3}
    out = redact_json(value, ["my-secret-value"])
    assert out == {"headers": {"Authorization": REDACTED, "api_key": REDACTED},
                   "items": [REDACTED, [REDACTED]], "n": 3}


def test_trim_json_keeps_valid_json_with_a_visible_marker() -> None:
    value = {"short": "ok", "long": "x" * 5000, "items": ["y" * 3000, 1]}
    text = trim_json(value, 1000)
    assert len(text.encode()) <= 1000
    parsed = json.loads(text)
    assert parsed["short"] == "ok" and parsed["items"][1] == 1
    assert "bytes trimmed]" in parsed["long"] and parsed["long"].startswith("xxx")


def test_trim_json_leaves_small_values_alone() -> None:
    assert trim_json({"a": "é"}, 100) == '{"a":"é"}'


def test_trim_json_counts_utf8_bytes_and_never_splits_a_character() -> None:
    text = trim_json({"t": "é" * 1000}, 300)
    assert len(text.encode()) <= 300
    assert "\ufffd" not in json.loads(text)["t"]


def test_structure_too_big_for_any_string_cut_becomes_a_marked_head() -> None:
    text = trim_json(list(range(1000)), 200)
    parsed = json.loads(text)
    assert len(text.encode()) <= 200
    assert "only the start is kept" in parsed["trimmed"] and parsed["head"].startswith("[0,1,2")


def test_safe_json_redacts_before_trimming_so_no_prefix_leaks() -> None:
    secret = "S" * 40
    text = safe_json({"a": secret + "z" * 100}, secrets=[secret], max_bytes=60)
    assert "SSSS" not in text and json.loads(text)["a"].startswith(REDACTED)


def test_a_secret_is_redacted_in_each_encoding_it_can_take() -> None:
    import urllib.parse

    from niceeval_cli._redact import secret_forms

    key = 'a"b\\c\'d<e&f g'
    encodings = [key, json.dumps(key), repr(key), json.dumps(json.dumps(key)), repr(json.dumps(key)),
                 urllib.parse.quote(key), urllib.parse.quote_plus(key), repr(key.encode()),
                 '<x v="' + key.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;") + '"/>']
    for text in encodings:
        assert redact(f"before {text} after", [key]).count(REDACTED) == 1, text
    assert key in secret_forms(key) and len(secret_forms(key)) > 5


def test_safe_json_finds_a_secret_that_serialising_escaped() -> None:
    key = 'q"uote\\key-1234'
    stored = safe_json({"out": "key=" + key, "as_json": json.dumps({"k": key})}, secrets=[key], max_bytes=10_000)
    assert "uote" not in stored and stored.count(REDACTED) == 2


def test_safe_json_stores_only_valid_json_and_bounds_depth() -> None:
    from niceeval_cli._redact import MAX_DEPTH

    deep: list = []
    node = deep
    for _ in range(900):
        node.append([])
        node = node[0]
    stored = safe_json({"nan": float("nan"), "inf": float("-inf"), "deep": deep}, max_bytes=100_000)
    parsed = json.loads(stored, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    assert parsed["nan"] == "NaN" and parsed["inf"] == "-Infinity"
    assert f"nested deeper than {MAX_DEPTH} levels" in stored


def test_trim_text_keeps_the_start_within_the_bound_with_a_marker() -> None:
    from niceeval_cli._redact import trim_text

    text = trim_text("é" * 100_000, 1000)
    assert len(text.encode()) <= 1000 and text.startswith("éé") and "trimmed to 1000" in text
    assert trim_text("short", 1000) == "short"


# ── issue 23 item 12: escapes a JSON encoder may choose, letter case, base64 ─────────────────────


def test_a_secret_is_redacted_in_any_mix_of_per_character_escapes() -> None:
    key = "ab/cd+ef/gh+ij"
    mixes = [key.replace("/", "\\/"), key.replace("+", "\\u002B"), key.replace("+", "\\u002b").replace("/", "\\/"),
             "".join(c if c.isalnum() else f"\\u{ord(c):04X}" for c in key),
             key.replace("/", "\\\\/").replace("+", "\\\\u002b"), key.replace("+", "&#43;").replace("/", "&#x2F;"),
             key.replace("/", "%2f", 1)]
    for text in mixes:
        out = redact(f'{{"error": "bad {text} here', [key])  # not valid JSON: nothing to decode
        assert out == f'{{"error": "bad {REDACTED} here', text


def test_a_secret_beyond_the_bmp_is_redacted_as_a_surrogate_pair_escape() -> None:
    key = "key-\U0001F511-value"
    assert redact("x key-\\ud83d\\udd11-value y", [key]) == f"x {REDACTED} y"
    assert redact("x key-\\uD83D\\uDD11-value y", [key]) == f"x {REDACTED} y"


def test_a_secret_is_redacted_in_any_letter_case() -> None:
    key = "sEcReT-Value-9931"
    for text in (key.upper(), key.lower(), "SeCrEt-vALUE-9931"):
        assert redact(f"echo {text}.", [key]) == f"echo {REDACTED}."
    assert redact("İ then SECRET-VALUE-9931", [key]) == f"İ then {REDACTED}"  # lower() changes the length


def test_a_secret_is_redacted_base64_encoded_alone_or_inside_longer_base64() -> None:
    import base64

    key = "plain-judge-secret-4471"
    blobs = [base64.b64encode(key.encode()).decode(),
             base64.b64encode(b"user:" + key.encode()).decode(),
             base64.b64encode(b"ab" + key.encode() + b"zz").decode(),
             base64.urlsafe_b64encode(b"\xff\xfe" + key.encode()).decode()]
    for blob in blobs:
        out = redact(f"Basic {blob} end", [key])
        assert REDACTED in out and blob not in out, blob
        left = out.removeprefix("Basic ").removesuffix(" end").split(REDACTED)
        assert all(len(part) <= 10 for part in left), out  # only the neighbours' characters stay


def test_base64_is_not_searched_for_a_short_secret_and_nothing_else_is_touched() -> None:
    import base64

    assert redact(base64.b64encode(b"12345678").decode(), ["12345678"]) == base64.b64encode(b"12345678").decode()
    text = "Live tokens, a / and a + and \\u002B stay as they are"
    assert redact(text, ["tok/Live+9f8e7d6c/5b4a3+2Qx"]) == text


def test_safe_json_of_a_lone_surrogate_is_replaced_not_an_encoding_error() -> None:
    assert json.loads(safe_json({"t": "bad \ud800 text"}, secrets=["some-secret-value"], max_bytes=1000)) == {
        "t": "bad \ufffd text"}


# Issue 27 item 8: the quick checks over a turn's text answer exactly as the plain scans did.
# `_maybe_credential` spells the words out; `_MAYBE_WORDS` stays their one list.
_WORDS = _redact_module._MAYBE_WORDS


def test_the_quick_credential_check_knows_every_listed_word() -> None:
    for word in _WORDS:
        assert _redact_module._maybe_credential(f"x {word} y"), word


_PIECES = ("api", "key", "-", "_", "sk", "bearer", "authoriz", "ation", "x", "é", "\ud800", "\udfff", " ")


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_quick_credential_and_surrogate_checks_agree_with_the_plain_scans(text: str) -> None:
    from niceeval_cli._redact import _SURROGATE, _has_surrogate, _maybe_credential, is_clean

    low = text.lower()
    assert _maybe_credential(low) == any(word in low for word in _WORDS)
    assert _has_surrogate(text) == (_SURROGATE.search(text) is not None)
    assert is_clean(text) == (_SURROGATE.search(text) is None and not any(word in low for word in _WORDS))
    assert not is_clean(text) or redact(text) == text


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40) | st.text(min_size=30, max_size=300),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=60,
)


@given(value=_JSON_VALUES, max_bytes=st.integers(min_value=0, max_value=400),
       secret=st.sampled_from(["", "sk-abc", 'q"uote', "abc", "authorization"]))
def test_safe_json_of_any_value_is_its_redacted_value_trimmed(value, max_bytes, secret) -> None:
    """Whatever shortcut a clean or a large value takes, what is stored is the careful form:
    redacted first, then trimmed to the bound."""
    secrets = [secret] if secret else []
    stored = safe_json(value, secrets=secrets, max_bytes=max_bytes)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    careful = text if redact(text, secrets) == text and len(text.encode()) <= max_bytes \
        else trim_json(redact_json(value, secrets), max_bytes)
    assert stored == careful


def test_a_value_whose_structure_alone_is_over_the_bound_keeps_the_start_of_its_json() -> None:
    """200 000 small strings (a flood of tool calls): no cut of the strings can fit, so the start
    of the JSON is kept at once, as the bisection would end (it took 12 s for such a reply)."""
    calls = [{"id": f"c{i}", "function": {"name": "t", "arguments": "{}"}} for i in range(200_000)]
    stored = safe_json({"tool_calls": calls}, max_bytes=64 * 1024)
    parsed = json.loads(stored)
    assert set(parsed) == {"trimmed", "head"} and "only the start is kept" in parsed["trimmed"]
    assert parsed["head"].startswith('{"tool_calls":[{"id":"c0","function":{"name":"t"')
    assert len(stored.encode()) <= 64 * 1024


@given(value=_JSON_VALUES, max_bytes=st.integers(min_value=0, max_value=400))
def test_trim_json_fits_the_bound_and_keeps_the_start_only_when_its_structure_cannot_fit(value, max_bytes) -> None:
    trimmed = trim_json(value, max_bytes)
    assert len(trimmed.encode()) <= max(max_bytes, len(trim_json(value, 0).encode()))
    skeleton = re.sub(r'"(?:[^"\\]|\\.)*"', '""', json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if len(skeleton.encode()) > max_bytes:
        assert set(json.loads(trimmed)) == {"trimmed", "head"}


def test_trim_json_cuts_strings_when_the_structure_fits() -> None:
    assert trim_json({"a": "x" * 400}, 60) == '{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxx… [+372 bytes trimmed]"}'


def test_a_placeholder_key_shorter_than_eight_characters_leaves_words_alone() -> None:
    """A local server's placeholder key (`EMPTY`, `x`, `ollama`) is no secret: redacting it by value
    replaced that word everywhere (`expect` read `e[redacted]pect` with the key `x`). A real key's
    value, and every credential pattern, still is redacted."""
    text = "expected a non-empty answer from ollama; Authorization: Bearer abc"
    for placeholder in ("x", "EMPTY", "ollama", "1234567"):
        assert redact(text, [placeholder]) == "expected a non-empty answer from ollama; Authorization: [redacted]"
    assert redact("the key is k3y-0f-8ch in full", ["k3y-0f-8ch"]) == f"the key is {REDACTED} in full"
    assert safe_json({"note": "non-empty"}, secrets=["EMPTY"], max_bytes=100) == '{"note":"non-empty"}'


def _levels(value: object) -> int:
    """How many levels of lists, tuples and mappings `value` nests (a plain recursive walk)."""
    if isinstance(value, dict):
        return 1 + max(map(_levels, value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return 1 + max(map(_levels, value), default=0)
    return 0


_BRACKETY = st.text(alphabet='[]{}"\\x', max_size=6)
_NESTED = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _BRACKETY,
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_BRACKETY, inner, max_size=3),
    max_leaves=30,
)


@given(value=_NESTED, limit=st.integers(min_value=0, max_value=8))
def test_the_depth_read_from_the_json_text_is_the_depth_of_the_value(value, limit) -> None:
    """safe_json reads a clean value's depth from its JSON text (strings emptied, innermost bracket
    pairs taken out a level at a time) instead of walking the value; brackets, quotes and
    backslashes inside strings are no structure."""
    from niceeval_cli._redact import _dumps, _nests_deeper, _skeleton

    assert _nests_deeper(_skeleton(_dumps(value)), limit) == (_levels(value) > limit)


def test_a_clean_value_too_big_is_stored_as_the_careful_form_on_both_sides_of_the_depth_bound() -> None:
    from niceeval_cli._redact import MAX_DEPTH

    for levels in (MAX_DEPTH, MAX_DEPTH + 1):
        value: object = {"out": "x" * 5000, "brackets": "[[[{{{"}
        for _ in range(levels - 1):
            value = [value, "]"]
        assert _levels(value) == levels
        stored = safe_json(value, max_bytes=2000)
        assert stored == trim_json(redact_json(value), 2000)
        assert ("nested deeper than" in stored) == (levels > MAX_DEPTH)
