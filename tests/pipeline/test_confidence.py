"""The confidence formula: weights, saturation, bands and ledger overrides."""

from __future__ import annotations

import math

from looma_git.pipeline import confidence as c


def test_weights_sum_to_one_and_file_overlap_is_largest() -> None:
    assert math.isclose(sum(c.WEIGHTS.values()), 1.0)
    assert max(c.WEIGHTS, key=lambda k: c.WEIGHTS[k]) == "file_overlap"


def test_breadth_shape() -> None:
    assert c.breadth(1) == 0.0
    assert math.isclose(c.breadth(2), 1 - math.exp(-c.K))
    assert c.breadth(3) > c.breadth(2)


def test_formula_and_bands() -> None:
    full = {k: 1.0 for k in c.WEIGHTS}
    assert c.score(full).value == 1.0 and c.score(full).band == "high"
    only_files = c.score({"file_overlap": 1.0})
    assert only_files.value == 0.30 and only_files.band == "low"
    mid = c.score({"file_overlap": 1.0, "commit_linkage": 0.6})
    assert mid.band == "medium"
    assert dict(mid.features)["commit_linkage"] == 0.6


def test_overrides_pin() -> None:
    assert c.score({}, override="force-promote").value == 1.0
    assert c.score({k: 1.0 for k in c.WEIGHTS}, override="reject").value == 0.0
    assert c.score({}, override="merge-target").band == "high"
