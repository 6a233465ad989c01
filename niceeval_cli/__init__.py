"""NiceEval: write evals in Python, run them, read honest results back from SQLite.

The public authoring API is what `__all__` lists here, in `niceeval_cli.expect` and in
`niceeval_cli.datasets` (tests/test_public_api.py pins all three). Names are imported on first
use (PEP 562) so that `niceeval --version` does not pay for them.
"""

import sys as _sys

#: The console script's own names as argv[0] shows them (pip's wrappers on every platform).
_CONSOLE_SCRIPT = ("niceeval", "niceeval.exe", "niceeval-script.py", "niceeval-script.pyw")

# First of all, in the `niceeval` process: Ctrl-C or SIGTERM from this line on ends the command
# with one line and exit 130, never a traceback (niceeval_cli/_interrupt.py). Both signals wait,
# blocked, until `hold` has its handlers in place; it unblocks them.
if _sys.argv and _sys.argv[0].replace("\\", "/").rpartition("/")[2] in _CONSOLE_SCRIPT:
    import _signal  # the interpreter's own, already loaded: blocking costs nothing to import

    if hasattr(_signal, "pthread_sigmask"):
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT, _signal.SIGTERM})
    from . import _interrupt

    _interrupt.hold()

import importlib as _importlib  # noqa: E402
import typing as _typing  # noqa: E402

__version__ = "0.1.0"

_EXPORTS = {
    "Adapter": ".authoring",
    "AgentError": ".authoring",
    "Event": ".authoring",
    "Message": ".authoring",
    "ToolCall": ".authoring",
    "AdapterContext": ".authoring",
    "AssertionHandle": ".authoring",
    "AuthoringError": ".authoring",
    "Case": ".authoring",
    "EvalDefinition": ".authoring",
    "ExperimentInfo": ".authoring",
    "TestContext": ".authoring",
    "Turn": ".authoring",
    "Usage": ".authoring",
    "define_adapter": ".authoring",
    "define_eval": ".authoring",
    "define_score_eval": ".authoring",
    "local_sandbox": ".sandbox",
    "docker_sandbox": ".sandbox",
    "Fact": ".expect._facts",
    "FactUnavailable": ".expect._facts",
    "Material": ".expect._facts",
    "NumericMaterial": ".expect._facts",
}

__all__ = [
    "Adapter",
    "AdapterContext",
    "AgentError",
    "AssertionHandle",
    "AuthoringError",
    "Case",
    "EvalDefinition",
    "Event",
    "ExperimentInfo",
    "Fact",
    "FactUnavailable",
    "Material",
    "Message",
    "NumericMaterial",
    "TestContext",
    "ToolCall",
    "Turn",
    "Usage",
    "__version__",
    "define_adapter",
    "define_eval",
    "define_score_eval",
    "docker_sandbox",
    "local_sandbox",
]

if _typing.TYPE_CHECKING:
    from .authoring import (
        Adapter,
        AdapterContext,
        AgentError,
        AssertionHandle,
        AuthoringError,
        Case,
        EvalDefinition,
        Event,
        ExperimentInfo,
        Message,
        TestContext,
        ToolCall,
        Turn,
        Usage,
        define_adapter,
        define_eval,
        define_score_eval,
    )
    from .expect import Fact, FactUnavailable, Material, NumericMaterial
    from .sandbox import docker_sandbox, local_sandbox


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'niceeval_cli' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
