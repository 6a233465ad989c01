"""NiceEval: write evals in Python, run them, read honest results back from SQLite.

The public authoring API is what `__all__` lists here plus `niceeval_cli.expect`.
"""

from .authoring import (
    Adapter,
    AdapterContext,
    AssertionHandle,
    AuthoringError,
    EvalDefinition,
    ExperimentInfo,
    TestContext,
    Turn,
    Usage,
    define_adapter,
    define_eval,
    define_score_eval,
)
from .expect._facts import Fact, FactUnavailable, Material, NumericMaterial

__version__ = "0.1.0"

__all__ = [
    "Adapter",
    "AdapterContext",
    "AssertionHandle",
    "AuthoringError",
    "EvalDefinition",
    "ExperimentInfo",
    "Fact",
    "FactUnavailable",
    "Material",
    "NumericMaterial",
    "TestContext",
    "Turn",
    "Usage",
    "__version__",
    "define_adapter",
    "define_eval",
    "define_score_eval",
]
