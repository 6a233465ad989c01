"""Turns and token usage exchanged with the system under test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._states import UnavailableReason
from ..expect._facts import NumericMaterial


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        """Known only when both parts are (like `t.usage.total_tokens`): never a guess."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Turn:
    """One exchange with the system under test."""

    input: str
    message: str
    data: Any = None
    usage: Usage | None = None
    elapsed_ms: float | None = None


class UsageMeter:
    """Accumulates usage reported during one Attempt; unknown stays unknown (never 0)."""

    def __init__(self) -> None:
        self._input: int | None = None
        self._output: int | None = None

    def record(self, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        if input_tokens is not None:
            self._input = (self._input or 0) + int(input_tokens)
        if output_tokens is not None:
            self._output = (self._output or 0) + int(output_tokens)

    @property
    def input_tokens(self) -> int | None:
        return self._input

    @property
    def output_tokens(self) -> int | None:
        return self._output

    def snapshot(self) -> UsageView:
        return UsageView(self._input, self._output)


@dataclass(frozen=True)
class UsageView:
    """`t.usage`: each field an int, or an unavailable NumericMaterial when nothing was reported."""

    _input: int | None
    _output: int | None

    @property
    def input_tokens(self) -> int | NumericMaterial:
        return _known(self._input)

    @property
    def output_tokens(self) -> int | NumericMaterial:
        return _known(self._output)

    @property
    def total_tokens(self) -> int | NumericMaterial:
        if self._input is None or self._output is None:
            return NumericMaterial.unavailable(UnavailableReason.USAGE_UNREPORTED)
        return self._input + self._output


def _known(value: int | None) -> int | NumericMaterial:
    if value is None:
        return NumericMaterial.unavailable(UnavailableReason.USAGE_UNREPORTED)
    return value
