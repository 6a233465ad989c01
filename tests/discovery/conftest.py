"""The CLI runs in-process in these tests; keep one project's modules out of the next test."""

from __future__ import annotations




