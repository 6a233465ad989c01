"""What eval code touches: definitions, the test context `t`, handles, adapters."""

from ._adapter import RESERVED_NAMES, Adapter, AdapterContext, ExperimentInfo, define_adapter
from ._cases import Case, CaseIdRule
from ._context import AdapterFailure, NoAdapterError, TestContext
from ._definition import CasesOption, EvalDefinition, EvalOptions, TestFunction, define_eval, define_score_eval
from ._definition_errors import DatasetError, DefinitionError
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
    "Case",
    "CaseIdRule",
    "CasesOption",
    "DatasetError",
    "DefinitionError",
    "EvalDefinition",
    "EvalOptions",
    "ExperimentInfo",
    "NoAdapterError",
    "Registration",
    "SourceLocation",
    "StopContinuation",
    "TestContext",
    "TestFunction",
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
