"""The calibration gate's rules (judge-trust.md §4), pure: identity keys and the shortfall."""

from __future__ import annotations

import hashlib

from niceeval_cli.config import JudgeSettings
from niceeval_cli.judge import JUDGE_VERSION, Calibration, identity_key
from niceeval_cli.judge._calibration import shortfall
from niceeval_cli.runner._plan import _judge_version


def test_the_gate_keys_identities_as_the_fingerprint_records_the_judge_version():
    assert JUDGE_VERSION == _judge_version(JudgeSettings(model="m"))
    key = identity_key("m", "closed_qa", JUDGE_VERSION, "Is it right?")
    assert key[3] == hashlib.sha256(b"Is it right?").hexdigest()
    assert Calibration(((key, 25, 0.7),)).of(key) == (25, 0.7)
    assert Calibration().of(key) == (0, None)  # never labelled: no labels, no kappa


def test_off_by_default_and_each_shortfall_names_its_figures():
    assert shortfall(JudgeSettings(model="m"), 0, None) is None  # no min_human_kappa: the gate is off
    gate = JudgeSettings(model="m", min_human_kappa=0.6)
    assert gate.min_labels == 20
    assert shortfall(gate, 20, 0.6) is None  # at the floor decides
    assert shortfall(gate, 19, 0.9) == "19 effective human label(s) < min_labels 20 (kappa 0.9000, min_human_kappa 0.6)"
    assert shortfall(gate, 30, 0.59) == "kappa 0.5900 < min_human_kappa 0.6 over 30 effective human label(s)"
    assert shortfall(gate, 30, None) == "kappa undefined < min_human_kappa 0.6 over 30 effective human label(s)"


def test_the_gate_enters_the_fingerprint_only_when_on():
    off = JudgeSettings(model="m").fingerprint_view()
    assert "min_human_kappa" not in off and "min_labels" not in off
    on = JudgeSettings(model="m", min_human_kappa=0.5, min_labels=30).fingerprint_view()
    assert (on["min_human_kappa"], on["min_labels"]) == (0.5, 30)


def test_a_kappa_at_the_floor_decides_as_the_store_counts_it():
    """24 labels, 6/0/2/16: kappa is 0.8 exactly, so `min_human_kappa = 0.8` lets the judge decide
    (it was held back as "kappa 0.8000 < min_human_kappa 0.8")."""
    from niceeval_cli.stats import Confusion, cohen_kappa

    gate = JudgeSettings(model="m", min_human_kappa=0.8)
    assert shortfall(gate, 24, cohen_kappa(Confusion(6, 0, 2, 16))) is None
