"""A call run in a forked child (pipeline/child.py) returns its value and raises its error in
the caller, and what it allocates is not the caller's."""

from __future__ import annotations

import os

import pytest

from looma_git.pipeline.child import in_child


def test_the_value_comes_back_from_another_process() -> None:
    here = os.getpid()
    pid, big = in_child(lambda: (os.getpid(), len(bytearray(50 << 20))))
    assert pid != here and big == 50 << 20


def test_an_error_in_the_child_is_raised_in_the_caller() -> None:
    def fails() -> None:
        raise ValueError("no such session")

    with pytest.raises(ValueError, match="no such session"):
        in_child(fails)


class _Picky(Exception):
    def __init__(self, code: int, why: str) -> None:
        super().__init__(f"{code}: {why}")


def test_an_error_that_does_not_unpickle_still_says_what_it_was() -> None:
    def fails() -> None:
        raise _Picky(3, "store.db is locked")

    with pytest.raises(RuntimeError, match=r"_Picky: 3: store\.db is locked"):
        in_child(fails)


def test_the_child_runs_without_the_cyclic_collector() -> None:
    import gc

    before = (gc.isenabled(), gc.get_threshold())
    frozen, collecting = in_child(lambda: (gc.get_freeze_count() > 0, gc.isenabled()))
    assert frozen and not collecting
    assert (gc.isenabled(), gc.get_threshold()) == before  # (the caller's is untouched)
