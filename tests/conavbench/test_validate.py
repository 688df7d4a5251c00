"""The validator rejecting broken episodes (one per check), JSON round trips, byte-identical splits."""

from __future__ import annotations

import dataclasses
import json

import pytest

from iclr26.conavbench import missions, splits, tools
from iclr26.conavbench.episode import Visit
from iclr26.conavbench.validate import EpisodeError, episode_from_json, episode_to_json, validate
from iclr26.core.errors import UserError
from tests.conavbench.test_tools import house


@pytest.fixture(scope="module")
def scene_and_episodes():
    sc = house(6)
    sp = tools.ShortestPaths(sc)
    single = missions.single_episode(sc, missions.Triple(0, "obj_2", "obj_4"), "s0", sp)
    collab = missions.collaborative_episode(sc, missions.Triple(10, "obj_5", "obj_3"), 41, "obj_2", "c0", sp)
    return sc, single, collab


def test_valid_episodes_pass(scene_and_episodes) -> None:
    sc, single, collab = scene_and_episodes
    validate(single, sc)
    validate(collab, sc)
    assert issubclass(EpisodeError, UserError)


def no_wait(ep):
    """`ep` with the primary's waits dropped (retimed): it leaves the relay before the helper comes."""
    sc = house(6)
    prim = [v for v in ep.schedule if v.robot == "primary"]
    tp = tools.timed_path(sc, "primary", [v.node for v in prim])
    return dataclasses.replace(ep, schedule=tuple(v for v in ep.schedule if v.robot == "helper") + tp.visits)


BROKEN = {
    "kind": lambda e: dataclasses.replace(e, kind="duo"),
    "collab_type": lambda e: dataclasses.replace(e, collab_type="A3"),
    "robots": lambda e: dataclasses.replace(e, starts={"primary": 10, "ghost": 41}),
    "nodes": lambda e: dataclasses.replace(e, starts={"primary": 10, "helper": 99999}),
    "objects": lambda e: dataclasses.replace(e, relay="obj_404"),
    "hops": lambda e: dataclasses.replace(e, starts={"primary": 40, "helper": 41}),
    "alpha": lambda e: dataclasses.replace(e, alpha=0.99),
    "solo_cost": lambda e: dataclasses.replace(e, solo_cost=1.0),
    "subtasks": lambda e: dataclasses.replace(e, subtasks=e.subtasks[::-1]),
    "acceptance": lambda e: dataclasses.replace(e, collab_type="A2"),
    "schedule": lambda e: dataclasses.replace(
        e, schedule=tuple(Visit(v.robot, v.node, v.arrive * 2, v.depart * 2) for v in e.schedule)
    ),
    "rendezvous": lambda e: no_wait(e),
}


@pytest.mark.parametrize("check", sorted(BROKEN))
def test_validator_rejects_each_broken_field(scene_and_episodes, check) -> None:
    sc, _, collab = scene_and_episodes
    with pytest.raises(EpisodeError, match=rf"episode 'c0': {check} check failed"):
        validate(BROKEN[check](collab), sc)


def test_unknown_type_named(scene_and_episodes) -> None:
    sc, _, collab = scene_and_episodes
    with pytest.raises(EpisodeError, match="unknown collaboration type 'A3'"):
        validate(dataclasses.replace(collab, collab_type="A3"), sc)


def test_relay_unreachable_and_disconnected_scene(scene_and_episodes) -> None:
    _, single, collab = scene_and_episodes
    cut = house(6)
    cut.graph.remove_nodes_from([1002])  # the door between rooms 1 and 2: two components
    with pytest.raises(EpisodeError, match="connectivity check failed"):
        validate(single, cut)
    island = house(6)
    x = island.object("obj_2").node
    island.graph.remove_edges_from(list(island.graph.edges(x)))  # the relay's node cut off
    with pytest.raises(EpisodeError, match=r"c0.*(guards|connectivity)"):
        validate(collab, island)
    sp = tools.ShortestPaths(island)
    assert missions.guard_failure(sp, "A1", 10, 41, 50, 30, x) == "the primary cannot reach the relay"


def test_conflicts_left_are_rejected(scene_and_episodes, monkeypatch) -> None:
    sc, _, collab = scene_and_episodes
    a = tools.timed_path(sc, "primary", [0, 1])
    b = tools.timed_path(sc, "helper", [1, 0])
    crossing = tools.conflicts(sc, a, b)
    assert crossing
    monkeypatch.setattr(tools, "conflicts", lambda *args, **kw: crossing)
    with pytest.raises(EpisodeError, match="conflicts check failed"):
        validate(collab, sc)


def test_json_round_trip(scene_and_episodes) -> None:
    sc, single, collab = scene_and_episodes
    for ep in (single, collab):
        d = episode_to_json(ep)
        assert list(d)[:5] == ["id", "Scene", "Task instruction", "Subtask list", "Object"]
        back = episode_from_json(json.loads(json.dumps(d)))
        assert back == ep
        validate(back, sc)
    with pytest.raises(EpisodeError, match="lacks key"):
        episode_from_json({"id": "z"})


def test_split_is_byte_identical_and_resumes(tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    sa = splits.build_split(3, n_single=24, n_collab=16, n_scenes=4, jobs=1, out=a)
    splits.build_split(3, n_single=24, n_collab=16, n_scenes=4, jobs=2, out=b)
    for name in ("train", "val", "test"):
        assert (a / f"episodes_{name}.json").read_bytes() == (b / f"episodes_{name}.json").read_bytes()
    assert sa.stats["single"] == 24 and sa.stats["collaborative"] == 16
    assert len({ep.scene for ep in sa.episodes["test"]} & {ep.scene for ep in sa.episodes["train"]}) == 0
    before = (a / "episodes_train.json").read_bytes()
    (a / "scenes" / "scene_0001.json").unlink()  # resume: only the missing scene is regenerated
    splits.build_split(3, n_single=24, n_collab=16, n_scenes=4, jobs=1, out=a)
    assert (a / "episodes_train.json").read_bytes() == before
