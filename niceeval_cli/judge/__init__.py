"""The Judge engine (judge.md): prompts, the OpenAI-compatible client, preflight and grading.

The factories that build judge matches live in `niceeval_cli.expect` (pure); this package does
the I/O. The runner owns one `JudgeService` per run.
"""

from ..expect._judge import JUDGE_CHOICES, JUDGE_SCALE_VERSION, JudgeMatch
from ._client import Backoff
from ._grade import EVIDENCE_MAX_BYTES, JudgeGrade, JudgeService, PreflightFailure
from ._prompts import PROMPT_VERSION, render_messages

__all__ = [
    "EVIDENCE_MAX_BYTES",
    "JUDGE_CHOICES",
    "JUDGE_SCALE_VERSION",
    "PROMPT_VERSION",
    "Backoff",
    "JudgeGrade",
    "JudgeMatch",
    "JudgeService",
    "PreflightFailure",
    "render_messages",
]
