"""Secret values are checked before they go into a header, and problems never quote them."""

from __future__ import annotations

import pytest

from niceeval_cli._errors import ExitCode
from niceeval_cli._secrets import SecretValueError, check_header_secret, header_secret_problem


@pytest.mark.parametrize(("value", "words"), [
    ("sk-abc\nSECRET", "line break (U+000A) at character 7"),
    ("sk-abc\rSECRET", "line break (U+000D)"),
    ("sk-abc\x00SECRET", "control character (U+0000)"),
    ("sk-ab\u00e9SECRET", "non-ASCII character (U+00E9 LATIN SMALL LETTER E WITH ACUTE)"),
    ("sk-ab\u00a0SECRET", "non-ASCII character (U+00A0 NO-BREAK SPACE)"),
    (" sk-SECRET", "starts or ends with whitespace"),
])
def test_unsendable_values_are_described_by_position_never_quoted(value: str, words: str) -> None:
    problem = header_secret_problem(value)
    assert problem is not None and words in problem and "SECRET" not in problem
    with pytest.raises(SecretValueError) as caught:
        check_header_secret("MY_KEY", value)
    assert caught.value.exit_code == ExitCode.SETUP
    assert "MY_KEY" in str(caught.value) and "SECRET" not in str(caught.value)


def test_printable_ascii_keys_pass() -> None:
    assert header_secret_problem('sk-proj_AZaz09-._~+/="\\\'') is None
    check_header_secret("MY_KEY", "plain key with spaces inside")
