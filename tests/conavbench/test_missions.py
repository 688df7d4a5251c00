"""NavCraft-S/C: the hop rule, the acceptance rule on hand-computed cases, the LLM agent's check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from iclr26.conavbench import missions, tools
from iclr26.conavbench.validate import validate
from tests.conavbench.test_tools import house


def test_acceptance_rule_hand_computed() -> None:
    a1 = missions.Acceptance(c_solo=10.0, j_a1=6.0, j_a2=8.0)  # A1 wins: alpha = 6 / 10
    assert a1.accepted and a1.collab_type == "A1" and a1.alpha == pytest.approx(0.6)
    a2 = missions.Acceptance(c_solo=10.0, j_a1=12.0, j_a2=7.0)
    assert a2.accepted and a2.collab_type == "A2" and a2.alpha == pytest.approx(0.7)
    no = missions.Acceptance(c_solo=10.0, j_a1=10.0, j_a2=11.0)  # min(J) = C_solo: not strictly less
    assert not no.accepted


def test_acceptance_on_a_scene() -> None:
    sc = house(6)
    sp = tools.ShortestPaths(sc)
    s, t, e = 10, 50, 30  # rooms 1, 5, 3: the target lies beyond the end
    acc = missions.acceptance(sp, s, t, e, 20)  # relay in room 2, between s and e
    assert acc.c_solo == pytest.approx(sp.distance(s, t) + sp.distance(t, e))
    assert acc.j_a1 == pytest.approx(sp.distance(s, 20) + sp.distance(20, e))
    assert acc.j_a2 == pytest.approx(sp.distance(s, t) + sp.distance(t, 20))
    assert acc.accepted and acc.collab_type == "A1"  # J_A1 = d(s, e) < J_A2 < C_solo
    a2 = missions.acceptance(sp, 10, 30, 50, 20)  # s, t, e in a row: J_A1 = d(s, e) = C_solo, J_A2 smaller
    assert a2.accepted and a2.collab_type == "A2" and a2.j_a1 == pytest.approx(a2.c_solo)
    far = missions.acceptance(sp, 20, 30, 40, 0)  # relay behind the start: neither beats solo
    assert not far.accepted


def test_hop_rule() -> None:
    sc = house(6)
    sp = tools.ShortestPaths(sc)
    assert missions.leg_hops(sc, sp, 0, 10) == 1
    assert not missions.legs_valid(sc, sp, 0, 10, 30)  # leg s -> t has 1 hop
    assert missions.legs_valid(sc, sp, 0, 20, 40)
    rng = np.random.default_rng(0)
    for _ in range(20):
        tr = missions.sample_triple(rng, sc, sp)
        s, t, e = tr.start, sc.object(tr.target).node, sc.object(tr.end).node
        assert missions.leg_hops(sc, sp, s, t) >= 2 and missions.leg_hops(sc, sp, t, e) >= 2


def test_collaborative_episode_fields_and_guards() -> None:
    sc = house(6)
    sp = tools.ShortestPaths(sc)
    tr = missions.Triple(10, "obj_5", "obj_3")
    ep = missions.collaborative_episode(sc, tr, 41, "obj_2", "c0", sp)
    assert ep is not None and ep.collab_type == "A1" and ep.alpha < 1
    assert [st.robot for st in ep.subtasks].count("helper") == 4
    validate(ep, sc)
    makespan = ep.meta["makespan"]
    assert makespan == pytest.approx(max(v.arrive for v in ep.schedule if v.robot == "primary"))
    counts = missions.Proposals()
    assert missions.collaborative_episode(sc, tr, 41, "obj_5", "c1", sp, counts=counts) is None  # x == t
    assert counts.rejected == {"relay x is the target's node t": 1}


def test_scene_episodes_validate() -> None:
    sc = house(6)
    eps, counts = missions.scene_episodes(np.random.default_rng(1), sc, 6, 6)
    assert sum(e.kind == "single" for e in eps) == 6 and counts.kept == sum(
        e.kind == "collaborative" for e in eps
    )
    for ep in eps:
        validate(ep, sc)


@dataclass
class _Reply:
    text: str


class FakeModel:
    """A ChatModel stand-in replying with canned texts in turn."""

    name, supports_images, supports_json_schema, supports_logprobs = "fake", False, True, False

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies

    def chat(self, messages, **kw):
        return [_Reply(self.replies.pop(0))]


def test_llm_proposals_go_through_the_validator() -> None:
    sc = house(6)
    tr = missions.Triple(0, "obj_2", "obj_4")
    good = (
        '{"instruction": "Bring the thing2 from the kitchen to the thing4 in the bathroom.", "subtasks": '
        "[\"Move_to('thing2_kitchen')\", \"Pick('thing2')\", "
        "\"Move_to('thing4_bathroom')\", \"Place('thing2')\"]}"
    )
    wrong_region = good.replace("from the kitchen", "from the garage")
    wrong_steps = good.replace("Pick", "Place")
    model = FakeModel([good, wrong_region, wrong_steps, "no json"])
    out = [missions.propose_instruction(model, sc, tr) for _ in range(4)]
    assert [p.ok for p in out] == [True, False, False, False]
    assert "kitchen" in out[1].reason and "differ" in out[2].reason
    assert missions.generation_success_rate(FakeModel([good, "x"]), sc, [tr, tr]) == 0.5
