"""What eval code touches: definitions, the test context `t`, handles, adapters."""

from ._adapter import RESERVED_NAMES, Adapter, AdapterContext, ExperimentInfo, define_adapter
from ._cases import Case, CaseIdRule
from ._context import AdapterFailure, NoAdapterError, TestContext
from ._definition import EvalDefinition, TestFunction, define_eval, define_score_eval
from ._definition_errors import DatasetError, DefinitionError
from ._errors import AuthoringError, SourceLocation, caller_location, raised_at
from ._options import CasesOption, EvalOptions
from ._registration import AssertionHandle, Registration, StopContinuation
from ._session import Session
from ._turns import AgentError, Event, Message, ToolCall, Turn, Usage
from ._usage import Price, UsageMeter, UsageView

__all__ = [
    "RESERVED_NAMES",
    "Adapter",
    "AdapterContext",
    "AdapterFailure",
    "AgentError",
    "AssertionHandle",
    "AuthoringError",
    "Case",
    "CaseIdRule",
    "CasesOption",
    "DatasetError",
    "DefinitionError",
    "EvalDefinition",
    "EvalOptions",
    "Event",
    "ExperimentInfo",
    "Message",
    "NoAdapterError",
    "Price",
    "Registration",
    "Session",
    "SourceLocation",
    "StopContinuation",
    "TestContext",
    "TestFunction",
    "ToolCall",
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
