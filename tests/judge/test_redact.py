"""Redaction and trimming of stored text."""

from __future__ import annotations

import json

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
