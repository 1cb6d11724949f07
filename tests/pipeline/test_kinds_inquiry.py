"""An inquiry that led to a change diagnosed what the change fixes: a bugfix, not an
investigation; one that changed nothing stays an investigation; an aside ("while you're there")
names no kind."""

from __future__ import annotations

from looma_git.pipeline.kinds import judge_kind

ASK = ("on the new release the exporter stops writing the header row. find out why "
       "header_written says yes")


def test_an_inquiry_that_led_to_commits_is_a_bugfix() -> None:
    assert judge_kind(prompts=[ASK], subjects=["Handle the header row on an empty sheet"],
                      files=["exporter.py", "tests/test_exporter.py"]) == "bugfix"


def test_an_inquiry_on_a_fix_branch_is_a_bugfix_not_a_tie() -> None:
    assert judge_kind(prompts=["figure out the estimate in _split_cells"],
                      subjects=["Fix split cells", "simplify"], branches=["fix-split-cells"],
                      files=["rich/segment.py"]) == "bugfix"


def test_an_inquiry_that_changed_nothing_is_an_investigation() -> None:
    assert judge_kind(prompts=[ASK], changed=False) == "investigation"


def test_other_cues_keep_their_kind() -> None:
    assert judge_kind(prompts=["refactor the exporter into one module per format"],
                      subjects=["Split the exporter"], files=["exporter.py"]) == "refactor"


def test_an_aside_asked_on_the_way_names_no_kind() -> None:
    ask = ("with record=True the export shows captured output twice. only record outside a "
           "capture, and tidy the record tests while you're there")
    assert judge_kind(prompts=[ask], subjects=["Fix record and capture"],
                      branches=["fix-record-and-capture"], files=["console.py"]) == "bugfix"
    assert judge_kind(prompts=["tidy the record tests"], subjects=["Tidy record tests"],
                      files=["tests/test_console.py"]) == "refactor"
