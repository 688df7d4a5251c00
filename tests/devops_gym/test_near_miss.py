"""Near-miss solutions: made by rule for every task, each different from the reference, and the
verifier rejecting the ones its fixes are for (the go directive a Go 1.19 build ignored, a
requirement of an unavailable module left in go.mod)."""

from __future__ import annotations

import re

import pytest

from iclr26.devops_gym.agent import oracle_agent
from iclr26.devops_gym.evaluate import run_task
from iclr26.devops_gym.near_miss import KINDS, near_miss_task, near_misses, reference_steps, revert_one_block
from iclr26.devops_gym.runner import RunLimits
from iclr26.devops_gym.suite import all_drafts
from iclr26.devops_gym.task import load_task
from tests.devops_gym.conftest import DEBIAN

DRAFTS = {f"{d.category}/{d.name}": d for d in all_drafts(0)}


def test_every_task_has_near_misses_each_unlike_its_reference():
    for task_id, draft in DRAFTS.items():
        made = near_misses(draft)
        assert made, task_id
        assert all(m.kind in KINDS and m.task_id == task_id for m in made)
        assert all(m.script.strip() and m.script.strip() != draft.solution.strip() for m in made), task_id
        assert len({m.script for m in made}) == len(made), task_id  # no two alike


def test_the_categories_get_their_kinds():
    kinds = {t: {m.kind for m in near_misses(d)} for t, d in DRAFTS.items()}
    assert kinds["test_generation/go-semver"] == {"fails_on_both", "passes_on_both"}
    assert kinds["monitor/cpu-spike"] == {"wrong_label", "hedged_label"}
    assert {"symptom", "wrong_dependency"} <= kinds["build/java-dependency-conflict"]
    assert kinds["end_to_end/go-catalog-cache"] == {"one_step_removed"}
    assert len(near_misses(DRAFTS["end_to_end/go-catalog-cache"])) == 4  # one per stage


def test_a_stage_left_out_lacks_exactly_that_stage():
    draft = DRAFTS["end_to_end/go-logship-descriptors"]
    no_report = next(m for m in near_misses(draft) if m.detail.startswith("stage 2"))
    assert "report.txt" in draft.solution and "report.txt" not in no_report.script
    assert len(reference_steps(no_report.script)) == len(reference_steps(draft.solution)) - 1


def test_revert_one_block_puts_back_one_change_at_a_time():
    old, new = "a\nb\nc\nd\n", "A\nb\nc\nD\n"
    assert revert_one_block(old, new) == ["a\nb\nc\nD\n", "A\nb\nc\nd\n"]
    assert revert_one_block("a\n", "b\n") == []  # one change: removing it is doing nothing
    # an import removed is cleanup, not a step: reverting it behaves as the reference does
    assert revert_one_block("import x;\na\nb\n", "a\nB\n") == []


def test_a_broken_generated_test_changes_every_test_function():
    draft = DRAFTS["test_generation/java-money"]
    fails = next(m for m in near_misses(draft) if m.kind == "fails_on_both").script
    n_tests = len(re.findall(r"@Test", fails))
    assert n_tests >= 1 and fails.count('throw new AssertionError("near miss")') == n_tests


@pytest.mark.debian(*DEBIAN)
@pytest.mark.parametrize(
    "task_id, detail",
    [
        ("build/go-toolchain-mismatch", "step 1 of 2 left out"),  # go.mod still says go 1.22
        ("build/go-unavailable-dependency", "step 1 of 2 left out"),  # go.mod still requires pkg/errors
        ("monitor/healthy-1", "memory_leak for healthy"),
    ],
)
def test_the_verifier_rejects_the_near_miss(suite, tmp_path, task_id, detail):
    task = load_task(suite / task_id)
    near_miss = next(m for m in near_misses(DRAFTS[task_id]) if m.detail == detail)
    copy = near_miss_task(task, near_miss, tmp_path)
    limits = RunLimits(command_timeout_s=120.0, max_steps=2)
    assert not run_task(copy, oracle_agent([copy]), limits, oracle=True).resolved
    assert run_task(task, oracle_agent([task]), limits, oracle=True).resolved  # the reference still passes
