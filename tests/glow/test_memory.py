"""GLoW's dual-scale memory: v(τ), the frontier's ranking and top-k update, the archive's novelty test."""

import random

import numpy as np
import pytest

from iclr26.glow.memory import Archive, Frontier, Trajectory, Transition


def traj(rewards, name="a", start_score=0):
    """A hand-made trajectory with actions `name0, name1, ...`; each step's state is its index."""
    score, steps = start_score, []
    for i, r in enumerate(rewards):
        score += r
        steps.append(Transition(f"{name}{i}", f"obs {i}", r, score, state=i))
    return Trajectory(start="s0", transitions=steps, final=len(rewards) - 1, start_score=start_score)


def test_running_value_is_the_best_prefix_sum_and_its_state():
    tau = traj([0, 5, -3, 10, -20])  # running sums 0, 5, 2, 12, -8
    assert tau.running_value == 12
    assert tau.steps_to_value == 4
    assert tau.best_state == 3  # the state after the 4th step
    assert tau.actions == ("a0", "a1", "a2", "a3", "a4")


def test_running_value_counts_the_empty_prefix_and_the_start_score():
    assert traj([-1, -2]).running_value == 0
    assert traj([-1, -2]).best_state == "s0"
    assert traj([0, 3], start_score=7).running_value == 10


def test_frontier_ranks_by_value_then_steps_then_insertion():
    f = Frontier(k=3)
    assert f.add(traj([0, 0, 5], "slow5"))  # v = 5 after 3 steps
    assert f.add(traj([10], "ten"))  # v = 10
    assert f.add(traj([5], "fast5"))  # v = 5 after 1 step
    assert [t.transitions[0].action for t in f] == ["ten0", "fast50", "slow50"]
    assert f.best is not None and f.best.running_value == 10


def test_frontier_keeps_only_the_top_k():
    f = Frontier(k=2)
    assert f.add(traj([3], "x")) and f.add(traj([4], "y"))
    version = f.version
    assert not f.add(traj([1], "low"))  # below the k-th: rejected, F unchanged
    assert not f.add(traj([3], "tie"))  # ties the k-th on value and steps: the earlier one stays
    assert f.version == version
    assert f.add(traj([9], "top"))  # enters; the lowest (x, v = 3) drops out
    assert [t.running_value for t in f] == [9, 4] and len(f) == 2 and f.version == version + 1


def test_frontier_rejects_a_repeated_action_sequence():
    f = Frontier(k=5)
    assert f.add(traj([2, 2]))
    assert not f.add(traj([2, 2]))
    assert len(f) == 1


def test_frontier_render_and_bad_k():
    f = Frontier()
    assert f.render() == "(no trajectories yet)"
    f.add(traj([0, 5, 0], "go"))
    text = f.render()
    assert text.startswith("1. best score 5 after 2 steps:") and "go1 (+5)" in text
    with pytest.raises(ValueError, match="k must be a positive int"):
        Frontier(k=0)


def test_trajectory_render_keeps_the_argmax_in_view():
    tau = traj([0] * 10 + [7] + [0] * 5)
    text = tau.render(max_steps=4)
    assert "a10 (+7)" in text and text.startswith("... > ") and text.endswith(" > ...")
    assert tau.render(since=16) == "(no steps)"


def test_archive_novelty_test():
    a = Archive()
    assert a.add("s", score=0, steps=5, key="h1")  # unseen hash
    assert not a.add("s", score=0, steps=5, key="h1")  # same score, same steps
    assert not a.add("s", score=0, steps=9, key="h1")  # same score, more steps
    assert a.add("s-short", score=0, steps=3, key="h1")  # same score, fewer steps: replaces
    assert a.cells()[0].state == "s-short" and a.cells()[0].steps == 3
    assert a.add("s-rich", score=5, steps=20, key="h1")  # higher score, even if longer
    assert not a.add("s", score=2, steps=1, key="h1")  # lower score
    assert a.add("t", score=0, steps=1, key="h2")
    assert len(a) == 2 and "h1" in a and [c.key for c in a.cells()] == ["h1", "h2"]


def test_archive_reads_the_state_hash_and_keeps_visits():
    class S:
        hash = "w1"

    a = Archive()
    assert a.add(S(), 0, 2)
    a.cells()[0].visits = 3
    assert a.add(S(), 1, 4)
    assert a.cells()[0].visits == 3 and a.cells()[0].score == 1


def test_archive_sample_uniform():
    a = Archive()
    with pytest.raises(ValueError, match="archive is empty"):
        a.sample_uniform(random.Random(0))
    for i in range(4):
        a.add(f"s{i}", 0, i, key=f"h{i}")
    seen_py = {a.sample_uniform(random.Random(s)).key for s in range(40)}
    rng = np.random.default_rng(0)
    seen_np = {a.sample_uniform(rng).key for _ in range(40)}
    assert seen_py == seen_np == {"h0", "h1", "h2", "h3"}
