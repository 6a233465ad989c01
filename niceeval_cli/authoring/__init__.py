"""What eval code touches: definitions, the test context `t`, handles, adapters."""

from ._adapter import (
    RESERVED_NAMES,
    Adapter,
    AdapterContext,
    AdapterFactory,
    ExperimentInfo,
    InstalledVersionError,
    define_adapter,
)
from ._cases import Case, CaseIdRule, positional_warning
from ._context import AdapterFailure, NoAdapterError, TestContext
from ._definition import EvalDefinition, TestFunction, define_eval, define_score_eval
from ._definition_errors import DatasetError, DefinitionError
from ._errors import AuthoringError, SourceLocation, caller_location, exception_text, raised_at
from ._options import JUDGE_FIELDS, CasesOption, EvalOptions
from ._registration import AssertionHandle, Registration, StopContinuation
from ._sandbox_api import SandboxFiles
from ._session import Session
from ._transcript import transcript_records
from ._turns import (
    AgentError,
    AnyEvent,
    Event,
    Message,
    ToolCall,
    Turn,
    Usage,
    event_from_dict,
    turn_from_reply,
    usage_from_dict,
)
from ._usage import Price, UsageMeter, UsageView

__all__ = [
    "JUDGE_FIELDS",
    "RESERVED_NAMES",
    "Adapter",
    "AdapterContext",
    "AdapterFactory",
    "AdapterFailure",
    "AgentError",
    "AnyEvent",
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
    "InstalledVersionError",
    "Message",
    "NoAdapterError",
    "Price",
    "Registration",
    "SandboxFiles",
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
    "event_from_dict",
    "exception_text",
    "positional_warning",
    "raised_at",
    "transcript_records",
    "turn_from_reply",
    "usage_from_dict",
]
