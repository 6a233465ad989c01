"""The Judge engine (judge.md): prompts, the OpenAI-compatible client, preflight and grading.

The factories that build judge matches live in `niceeval_cli.expect` (pure); this package does
the I/O. The runner is handed a grader name and makes one `Grader` per run from the registry
(`create_grader`); the default one is the HTTP `JudgeService`.
"""

from ..expect._judge import (  # the judge match's engine side: not in expect's pinned user API
    JUDGE_CHOICES,
    JUDGE_SCALE_VERSION,
    JudgeMatch,
)
from ._calibration import JUDGE_VERSION, Calibrated, Calibration, identity_key
from ._client import Backoff
from ._grade import EVIDENCE_MAX_BYTES, JudgeService
from ._grader import (
    DEFAULT_GRADER,
    Grader,
    GraderFactory,
    JudgeGrade,
    PreflightFailure,
    create_grader,
    register_grader,
)
from ._inputs import JudgeInput, StoredInput, judge_input, read_judge_input, redacted_input
from ._prompts import PROMPT_VERSION, render_messages
from ._samples import Sampled, fold

__all__ = [
    "DEFAULT_GRADER",
    "EVIDENCE_MAX_BYTES",
    "JUDGE_CHOICES",
    "JUDGE_SCALE_VERSION",
    "JUDGE_VERSION",
    "PROMPT_VERSION",
    "Backoff",
    "Calibrated",
    "Calibration",
    "Grader",
    "GraderFactory",
    "JudgeGrade",
    "JudgeInput",
    "JudgeMatch",
    "JudgeService",
    "PreflightFailure",
    "Sampled",
    "StoredInput",
    "create_grader",
    "fold",
    "identity_key",
    "judge_input",
    "read_judge_input",
    "redacted_input",
    "register_grader",
    "render_messages",
]
