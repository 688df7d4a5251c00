"""The 2D simulator on a hand-built three-room corridor house."""

import math

import networkx as nx
import pytest

from iclr26.conavbench.episode import SubTask
from iclr26.conavbench.scene import Door, Room, Scene, SceneObject
from iclr26.conavbench.sim import FORWARD_STEP, SceneIndex, SimConfig, simulate


def corridor_scene() -> Scene:
    """Rooms 0 | 1 | 2, each 4 x 3 m, doors at x = 4 and x = 8; nodes on y = 1.5 every 2 m."""
    rooms = [
        Room(i, t, 4.0 * i, 0.0, 4.0 * i + 4, 3.0) for i, t in enumerate(("kitchen", "hallway", "bedroom"))
    ]
    g = nx.Graph()
    xs = [1, 3, 4, 5, 7, 8, 9, 11]
    for n, x in enumerate(xs):
        door = x in (4, 8)
        room = None if door else int(x // 4)
        region = rooms[int(x // 4) if not door else int(x // 4) - 1].type
        g.add_node(n, pos=(float(x), 1.5), room=room, region=region, door=door)
    for a in range(len(xs) - 1):
        g.add_edge(a, a + 1, length=float(xs[a + 1] - xs[a]), width=1.0)
    doors = [Door(0, 1, (4.0, 1.5), 1.0, 2), Door(1, 2, (8.0, 1.5), 1.0, 5)]
    objects = [
        SceneObject("obj_0", "mug", "kitchenware", (1.0, 1.5), 0, 0),
        SceneObject("obj_1", "sofa", "portable furniture", (5.0, 1.5), 1, 3),
        SceneObject("obj_2", "bed", "bedding and textiles", (11.0, 1.5), 2, 7),
    ]
    return Scene("corridor", rooms, doors, g, objects)


def sub(robot, action, node, obj="obj_0"):
    return SubTask(robot, action, node, obj, "", f"{action}")


class Script:
    """A policy replaying fixed actions per robot, then stop."""

    def __init__(self, actions):
        self.actions = {r: list(a) for r, a in actions.items()}

    def begin(self, index, plan, starts):
        pass

    def act(self, view):
        q = self.actions[view.robot]
        return q.pop(0) if q else "stop"


def test_walkable_area_and_geodesic():
    idx = SceneIndex(corridor_scene())
    assert idx.walkable(1.0, 1.5) and idx.walkable(4.0, 1.5)  # a room, a door
    assert not idx.walkable(4.0, 0.5)  # the wall beside the door
    assert not idx.walkable(0.1, 1.5)  # within WALL_CLEARANCE of the outer wall
    assert idx.geodesic(1.5, 1.5, 0) == pytest.approx(0.5)
    assert idx.geodesic(1.0, 2.5, 4) == pytest.approx(math.hypot(3, 1) + 3)  # straight to the door
    assert idx.route(1.0, 1.5, 7) == list(range(8))


def test_forward_turn_and_walls_block():
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 1)]
    run = simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": ["forward"] * 4 + ["stop"]}))
    assert run.traces["primary"].positions[-1] == pytest.approx((2.0, 1.5))
    assert run.traces["primary"].path_length == pytest.approx(4 * FORWARD_STEP)
    assert not run.subtasks[0].success  # exactly 1 m away: success needs < 1 m (LH-VLN)
    run = simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": ["forward"] * 5 + ["stop"]}))
    assert run.subtasks[0].success and run.subtasks[0].steps == 6  # the stop counts
    assert run.subtasks[0].nav_error == pytest.approx(0.75) and run.subtasks[0].gt_length == pytest.approx(
        2.0
    )
    # turn to face -y (three right turns) and push into the wall: blocked after 4 moves (y >= 0.3)
    acts = ["right"] * 3 + ["forward"] * 8
    run = simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": acts}))
    x, y = run.traces["primary"].positions[-1]
    assert x == pytest.approx(1.0) and y == pytest.approx(0.5) and y >= 0.3
    assert not run.subtasks[0].success  # 2.06 m from node 1
    assert run.makespan == pytest.approx(12 * 0.5)


def test_budget_ends_a_subtask_failed():
    idx = SceneIndex(corridor_scene())
    run = simulate(
        idx,
        [sub("primary", "move_to", 0)],
        {"primary": (1.0, 1.5)},
        Script({"primary": ["left"] * 50}),
        budgets=7,
    )
    assert not run.subtasks[0].success and run.subtasks[0].steps == 7
    assert run.subtasks[0].oracle_success  # it was within 1 m all along


def test_rendezvous_first_robot_waits_and_handoff_moves_object():
    idx = SceneIndex(corridor_scene())
    plan = [
        sub("helper", "pick", 0),
        sub("helper", "handoff", 1),
        sub("primary", "receive", 1),
        sub("primary", "place", 1),
    ]
    # the helper is at node 1 at once; the primary spends 10 turns before stopping there
    script = Script({"helper": ["stop", "stop"], "primary": ["left"] * 10 + ["stop", "stop"]})
    starts = {"helper": (3.0, 1.5), "primary": (3.0, 1.8)}
    run = simulate(idx, plan, starts, script)
    assert [r.success for r in run.subtasks] == [False, False, False, False]  # pick at 2 m fails
    script = Script({"helper": ["stop", "stop"], "primary": ["left"] * 10 + ["stop", "stop"]})
    plan[0] = sub("helper", "pick", 1)
    run = simulate(idx, plan, starts, script)
    assert [r.success for r in run.subtasks] == [True, True, True, True]
    assert run.delivered
    assert run.traces["helper"].wait_time == pytest.approx(9 * 0.5)  # at x from tick 3 to 11
    assert run.subtasks[1].end_time == run.subtasks[2].end_time == pytest.approx(11 * 0.5)
    assert run.interference == 0  # closeness at the rendezvous node is exempt


def test_waiting_robot_gives_up_when_partner_cannot_come():
    idx = SceneIndex(corridor_scene())
    plan = [sub("helper", "handoff", 1), sub("primary", "move_to", 0)]
    run = simulate(
        idx, plan, {"helper": (3.0, 1.5), "primary": (1.0, 1.5)}, Script({"helper": [], "primary": []})
    )
    assert not run.subtasks[0].success and run.subtasks[1].success


def test_interference_counts_onsets():
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 4), sub("helper", "move_to", 0)]
    # the primary walks east through the helper, standing still at (2.0, 1.5)
    script = Script({"primary": ["forward"] * 8 + ["stop"], "helper": ["wait"] * 9 + ["stop"]})
    run = simulate(idx, plan, {"primary": (1.0, 1.5), "helper": (2.0, 1.5)}, script)
    assert run.interference == 1
    assert run.traces["helper"].wait_time == pytest.approx(9 * 0.5)


def test_deterministic_and_bad_input():
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 7)]
    a = simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": ["forward", "left"] * 9}))
    b = simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": ["forward", "left"] * 9}))
    assert a.traces["primary"].positions == b.traces["primary"].positions
    with pytest.raises(ValueError, match="without a start"):
        simulate(idx, [sub("helper", "move_to", 0)], {"primary": (1.0, 1.5)}, Script({}))
    with pytest.raises(ValueError, match="expected one of"):
        simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": ["jump"]}))
    with pytest.raises(ValueError, match="dt"):
        SimConfig(dt=0)


class Recorder(Script):
    """A `Script` that keeps every view it was shown."""

    def __init__(self, actions):
        super().__init__(actions)
        self.views = []

    def act(self, view):
        self.views.append(view)
        return super().act(view)


NOISY = SimConfig(forward_noise=0.15, turn_noise=6.0)


def test_noise_free_config_is_the_exact_simulator():
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 7)]
    acts = ["forward", "left", "forward", "right"] * 6 + ["forward"] * 10
    a = simulate(idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": acts}))
    b = simulate(
        idx,
        plan,
        {"primary": (1.0, 1.5)},
        Script({"primary": acts}),
        config=SimConfig(forward_noise=0.0),
        seed=9,
    )
    assert a.traces["primary"].positions == b.traces["primary"].positions
    assert a.traces["primary"].beliefs == a.traces["primary"].positions  # exact: the belief is the truth
    assert len(a.traces["primary"].activity) == a.ticks == len(a.traces["primary"].positions) - 1
    with pytest.raises(ValueError, match="forward_noise"):
        SimConfig(forward_noise=-0.1)


def test_policy_sees_the_belief_and_the_truth_drifts():
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 1)]
    pol = Recorder({"primary": ["forward"] * 6})
    run = simulate(idx, plan, {"primary": (1.0, 1.5)}, pol, config=SimConfig(forward_noise=0.3), seed=1)
    assert pol.views[-1].x == pytest.approx(1.0 + 6 * FORWARD_STEP)  # commanded: dead reckoning
    assert run.traces["primary"].beliefs[-1][0] == pytest.approx(1.0 + 6 * FORWARD_STEP)
    true_x = run.traces["primary"].positions[-1][0]
    assert true_x != pytest.approx(1.0 + 6 * FORWARD_STEP, abs=1e-6)
    assert run.traces["primary"].path_length == pytest.approx(true_x - 1.0)  # straight along +x
    # success and the navigation error are judged on the true pose
    assert run.subtasks[0].nav_error == pytest.approx(abs(3.0 - true_x))


def test_noise_repeats_with_its_seed():
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 7)]
    acts = ["forward", "left", "forward", "right"] * 10

    def go(seed):
        return simulate(
            idx, plan, {"primary": (1.0, 1.5)}, Script({"primary": acts}), config=NOISY, seed=seed
        )

    assert go(3).traces["primary"].positions == go(3).traces["primary"].positions
    assert go(3).traces["primary"].positions != go(4).traces["primary"].positions


@pytest.mark.parametrize("relocalise", [True, False])
def test_successful_interaction_relocalises(relocalise):
    idx = SceneIndex(corridor_scene())
    plan = [sub("primary", "move_to", 1), sub("primary", "pick", 1), sub("primary", "move_to", 3)]
    cfg = SimConfig(forward_noise=0.3, turn_noise=10.0, relocalise_on_interaction=relocalise)
    acts = ["forward"] * 8 + ["stop", "stop", "forward"]  # 2 m east, stop near node 1, pick, one more
    pol = Recorder({"primary": acts})
    run = simulate(idx, plan, {"primary": (1.0, 1.5)}, pol, config=cfg, seed=5)
    assert run.subtasks[1].success
    tr = run.traces["primary"]
    k = 10  # the tick of the pick
    assert (tr.beliefs[k] == tr.positions[k]) is relocalise
    assert (tr.beliefs[k][0] == pytest.approx(3.0)) is not relocalise


def test_long_legs_fail_more_under_noise():
    """The noise-free expert succeeds on every leg; with noise, success falls with the leg's length."""
    from iclr26.conavbench.agents import OraclePolicy, index_scenes
    from iclr26.conavbench.splits import build_split

    split = build_split(0, n_single=12, n_collab=12, n_scenes=3, jobs=1)
    indices = index_scenes(split.scenes)
    legs = {}
    for cfg in (SimConfig(), SimConfig(forward_noise=0.15, turn_noise=3.0)):
        out = []
        for ep in split.all:
            idx = indices[ep.scene]
            starts = dict(ep.starts)
            for j, s in enumerate(ep.subtasks):
                if s.action == "move_to":
                    run = simulate(
                        idx, [s], {s.robot: idx.pos[starts[s.robot]]}, OraclePolicy(), budgets=600,
                        standalone=True, config=cfg, seed=j,
                    )  # fmt: skip
                    out.append((run.subtasks[0].gt_length, run.subtasks[0].success))
                starts[s.robot] = s.node
        legs[cfg.noisy] = out
    assert all(ok for _, ok in legs[False])
    noisy = sorted(legs[True])
    half = len(noisy) // 2
    sr_short = sum(ok for _, ok in noisy[:half]) / half
    sr_long = sum(ok for _, ok in noisy[half:]) / (len(noisy) - half)
    assert sr_short > sr_long + 0.2, (sr_short, sr_long)
