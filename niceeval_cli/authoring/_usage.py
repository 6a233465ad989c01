"""Token usage and cost of one Attempt: what was reported, summed; unknown stays unknown.

`Turn` and `Usage` live in `_turns.py`; they are re-exported here for older imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .._states import UnavailableReason
from ..expect import NumericMaterial
from ._turns import COST_UNREPORTED, Turn, Usage

PRICE_UNKNOWN = "price-unknown"


@dataclass(frozen=True)
class Price:
    """`[prices."MODEL"]`: USD per million tokens. A missing cache price bills cache reads as input."""

    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float | None = None

    def estimate(self, input_tokens: int, output_tokens: int, cache_read_tokens: int | None) -> float:
        """Input tokens include cache reads (the OpenAI convention); those are billed at the cache price."""
        cached = min(cache_read_tokens or 0, input_tokens)
        cache_price = self.cache_read_per_mtok if self.cache_read_per_mtok is not None else self.input_per_mtok
        return (
            (input_tokens - cached) * self.input_per_mtok
            + cached * cache_price
            + output_tokens * self.output_per_mtok
        ) / 1_000_000


class UsageMeter:
    """Accumulates usage reported during one Attempt; unknown stays unknown (never 0)."""

    def __init__(self, price: Price | None = None) -> None:
        self._input: int | None = None
        self._output: int | None = None
        self._cache_read: int | None = None
        self._cost: float | None = None
        self._turns = 0
        self._turns_without_cost = 0
        self.price = price

    def record(self, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        """Tokens only (`ctx.record_usage`); subclasses may bound them, so turns come through here too."""
        if input_tokens is not None:
            self._input = (self._input or 0) + int(input_tokens)
        if output_tokens is not None:
            self._output = (self._output or 0) + int(output_tokens)

    def record_turn(self, usage: Usage | None) -> None:
        """A turn's usage: tokens add up; a turn that reported no cost makes the cost unknown."""
        self._turns += 1
        if usage is None:
            self._turns_without_cost += 1
            return
        if usage.cost_usd is None:
            self._turns_without_cost += 1
        else:
            self._cost = (self._cost or 0.0) + float(usage.cost_usd)
        if usage.cache_read_tokens is not None:
            self._cache_read = (self._cache_read or 0) + int(usage.cache_read_tokens)
        self.record(usage.input_tokens, usage.output_tokens)

    @property
    def input_tokens(self) -> int | None:
        return self._input

    @property
    def output_tokens(self) -> int | None:
        return self._output

    @property
    def cache_read_tokens(self) -> int | None:
        return self._cache_read

    @property
    def cost_usd(self) -> float | None:
        """The sum of reported cost; None when nothing was reported or a turn reported none."""
        if self._cost is None or self._turns_without_cost:
            return None
        return self._cost

    @property
    def estimated_cost_usd(self) -> float | None:
        """From the experiment model's price and the reported tokens; None when either is unknown."""
        if self.price is None or self._input is None or self._output is None:
            return None
        return self.price.estimate(self._input, self._output, self._cache_read)

    def snapshot(self) -> UsageView:
        return UsageView(self._input, self._output, self._cache_read, self.cost_usd,
                         self.estimated_cost_usd, self.price is not None)


@dataclass(frozen=True)
class UsageView:
    """`t.usage`: each field a number, or an unavailable NumericMaterial when nothing was reported."""

    _input: int | None
    _output: int | None
    _cache_read: int | None = None
    _cost: float | None = None
    _estimate: float | None = None
    _priced: bool = False

    @property
    def input_tokens(self) -> int | NumericMaterial:
        return _known(self._input)

    @property
    def output_tokens(self) -> int | NumericMaterial:
        return _known(self._output)

    @property
    def cache_read_tokens(self) -> int | NumericMaterial:
        return _known(self._cache_read)

    @property
    def total_tokens(self) -> int | NumericMaterial:
        if self._input is None or self._output is None:
            return NumericMaterial.unavailable(UnavailableReason.USAGE_UNREPORTED)
        return self._input + self._output

    @property
    def cost_usd(self) -> float | NumericMaterial:
        """Reported cost only (never an estimate): unavailable `cost-unreported` otherwise."""
        if self._cost is None:
            return NumericMaterial.unavailable(COST_UNREPORTED)
        return self._cost

    @property
    def estimated_cost_usd(self) -> float | NumericMaterial:
        """From `[prices."MODEL"]`: unavailable `price-unknown` or `usage-unreported` otherwise."""
        if not self._priced:
            return NumericMaterial.unavailable(PRICE_UNKNOWN)
        if self._estimate is None:
            return NumericMaterial.unavailable(UnavailableReason.USAGE_UNREPORTED)
        return self._estimate


def _known(value: int | None) -> int | NumericMaterial:
    if value is None:
        return NumericMaterial.unavailable(UnavailableReason.USAGE_UNREPORTED)
    return value


def price_for(prices: Mapping[str, Price], model: str | None) -> Price | None:
    """The price of `model` (exact name), or None."""
    if model is None:
        return None
    return prices.get(model)


__all__ = ["PRICE_UNKNOWN", "Price", "Turn", "Usage", "UsageMeter", "UsageView", "price_for"]
