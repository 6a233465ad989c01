"""Per-measurement extras (issue 10.7): a registered source's mapping reaches the sealed
AssertionResult.extras as JSON; a failing source costs only its extras."""

from __future__ import annotations

import json

from niceeval_cli.authoring import Registration
from niceeval_cli.runner import _extras, register_extras_source


def test_extras_sources_fill_assertion_extras_and_a_broken_one_costs_only_its_extras(project, run_library):
    def calls(reg: Registration) -> dict[str, object] | None:
        return {"calls": [[0, 1]]} if reg.label == "tool" else None

    def broken(reg: Registration) -> dict[str, object] | None:
        if reg.label == "broken":
            raise RuntimeError("source bug")
        return None

    project.write("niceeval.toml", "[project]\n")
    project.write("evals/x.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def e(t):
            t.check(1, equals(1)).label("tool")
            t.check(1, equals(1)).label("broken")
            t.check(1, equals(1)).label("plain")
    """)
    saved = list(_extras._SOURCES)
    try:
        register_extras_source(calls)
        register_extras_source(broken)
        outcome, seen = run_library()
    finally:
        _extras._SOURCES[:] = saved
    assert outcome.exit_code == 0
    results = {r.label: r for r in seen.sealed_results[0]}
    tool = json.loads(results["tool"].extras or "{}")
    assert tool["calls"] == [[0, 1]]
    assert results["broken"].extras is None and results["plain"].extras is None
    notes = json.loads(seen.sealed_attempts[0].notes or "[]")
    assert any("extras of broken dropped" in n for n in notes)
