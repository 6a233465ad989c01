"""What eval code touches: definitions, the test context `t`, handles, adapters."""

from ._adapter import RESERVED_NAMES, Adapter, AdapterContext, ExperimentInfo, define_adapter
from ._context import AdapterFailure, NoAdapterError, TestContext
from ._definition import EvalDefinition, define_eval, define_score_eval
from ._errors import AuthoringError, SourceLocation, caller_location, raised_at
from ._registration import AssertionHandle, Registration, StopContinuation
from ._usage import Turn, Usage, UsageMeter, UsageView

__all__ = [
    "RESERVED_NAMES",
    "Adapter",
    "AdapterContext",
    "AdapterFailure",
    "AssertionHandle",
    "AuthoringError",
    "EvalDefinition",
    "ExperimentInfo",
    "NoAdapterError",
    "Registration",
    "SourceLocation",
    "StopContinuation",
    "TestContext",
    "Turn",
    "Usage",
    "UsageMeter",
    "UsageView",
    "caller_location",
    "define_adapter",
    "define_eval",
    "define_score_eval",
    "raised_at",
]
