"""The efficiency tool library on crafted crossings: detection, and repair removing the conflicts."""

from __future__ import annotations

import math

import networkx as nx
import pytest

from iclr26.conavbench import tools
from iclr26.conavbench.scene import Scene, SceneObject


def graph_scene(
    pos: dict[int, tuple[float, float]], edges: list[tuple[int, int, float]], sid: str = "g"
) -> Scene:
    """A scene over a bare graph: every node in region "r", edges (u, v, width)."""
    g = nx.Graph()
    for n, p in pos.items():
        g.add_node(n, pos=p, room=0, region="r", door=False)
    for u, v, w in edges:
        g.add_edge(u, v, length=math.dist(pos[u], pos[v]), width=w)
    return Scene(id=sid, rooms=[], doors=[], graph=g)


ROOMS = ("living room", "hallway", "kitchen", "bedroom", "bathroom", "office")


def house(n_rooms: int = 6, sid: str = "house") -> Scene:
    """Rooms in a row, each a 2x2 grid of nodes 1 m apart (room i spans x in [4i, 4i + 1]), joined by
    door nodes at x = 4i + 2.5; one object per room anchored at its first node; rooms i, i + 1 are
    ROOMS[i], ROOMS[i + 1], so node hops between rooms i < j are j - i."""
    g = nx.Graph()
    objects = []
    for i in range(n_rooms):
        base = 10 * i
        for k, (dx, dy) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
            g.add_node(base + k, pos=(4.0 * i + dx, float(dy)), room=i, region=ROOMS[i], door=False)
        for a, b in [(0, 1), (0, 2), (1, 3), (2, 3)]:
            g.add_edge(base + a, base + b, length=1.0, width=3.0)
        objects.append(SceneObject(f"obj_{i}", f"thing{i}", "decor", (4.0 * i, 0.0), i, base))
        if i:
            d = 1000 + i
            g.add_node(d, pos=(4.0 * i - 1.5, 0.5), room=None, region=ROOMS[i - 1], door=True)
            for u in (base - 10 + 1, base - 10 + 3):
                g.add_edge(u, d, length=math.dist(g.nodes[u]["pos"], (4.0 * i - 1.5, 0.5)), width=0.9)
            for u in (base, base + 2):
                g.add_edge(d, u, length=math.dist(g.nodes[u]["pos"], (4.0 * i - 1.5, 0.5)), width=0.9)
    return Scene(id=sid, rooms=[], doors=[], graph=g, objects=objects)


def corridor() -> Scene:
    """0-1-2-3 along y = 0 (1 m edges), narrow (0.8 m)."""
    return graph_scene({i: (float(i), 0.0) for i in range(4)}, [(0, 1, 0.8), (1, 2, 0.8), (2, 3, 0.8)])


def test_reachable_time_width() -> None:
    sc = corridor()
    sc.graph.add_node(9, pos=(9.0, 9.0), room=0, region="r", door=False)
    assert tools.reachable(sc, 0, 3) and not tools.reachable(sc, 0, 9) and not tools.reachable(sc, 0, 77)
    assert tools.travel_time(sc, [0, 1, 2, 3]) == pytest.approx(6.0)  # 3 m at 0.5 m/s
    assert tools.corridor_width(sc, [0, 1, 2]) == pytest.approx(0.8)
    sp = tools.ShortestPaths(sc)
    assert sp.distance(0, 3) == 3.0 and math.isinf(sp.distance(0, 9)) and sp.path(3, 0) == [3, 2, 1, 0]


def test_timed_path_and_occupancy() -> None:
    sc = corridor()
    tp = tools.timed_path(sc, "primary", [0, 1, 2], 1.0, {1: 3.0})
    assert [(v.arrive, v.depart) for v in tp.visits] == [(1.0, 1.0), (3.0, 6.0), (8.0, 8.0)]
    occ = tools.occupancy([tp], clearance=0.6)
    assert occ[0].kind == "node" and occ[0].start == pytest.approx(0.4)  # w / (2v) = 0.6 s ahead
    edges = [o for o in occ if o.kind == "edge"]
    assert [(o.where, o.start, o.end) for o in edges] == [((0, 1), 1.0, 3.0), ((1, 2), 6.0, 8.0)]
    with pytest.raises(ValueError, match="not an edge"):
        tools.timed_path(sc, "primary", [0, 2])


def test_head_on_swap_detected_on_a_corridor() -> None:
    sc = corridor()
    a = tools.timed_path(sc, "primary", [0, 1, 2, 3])
    b = tools.timed_path(sc, "helper", [3, 2, 1, 0])
    kinds = {c.kind for c in tools.conflicts(sc, a, b)}
    assert "swap" in kinds  # they meet mid-edge (1, 2) at t = 3 s


def test_narrow_edge_shared_in_the_same_direction() -> None:
    sc = corridor()
    a = tools.timed_path(sc, "primary", [0, 1, 2, 3])
    b = tools.timed_path(sc, "helper", [1, 2, 3], 1.0)  # one second behind on no robot's node, same edges
    found = tools.conflicts(sc, a, b, clearance=0.1)  # tiny robots: no node overlaps, but 0.8 < 2 x 0.6?
    assert not found  # with clearance 0.1 the 0.8 m corridor is wide enough
    assert any(c.kind == "narrow" for c in tools.conflicts(sc, a, b, clearance=0.6))


def junction() -> Scene:
    """A cross: arms 0 (west), 1 (east), 2 (south), 3 (north), all 2 m from the junction J = 4."""
    pos = {0: (-2.0, 0.0), 1: (2.0, 0.0), 2: (0.0, -2.0), 3: (0.0, 2.0), 4: (0.0, 0.0)}
    return graph_scene(pos, [(0, 4, 2.0), (1, 4, 2.0), (2, 4, 2.0), (3, 4, 2.0)])


def test_both_arrive_at_a_junction_then_wait_repairs() -> None:
    sc = junction()
    a = tools.timed_path(sc, "primary", [0, 4, 1])
    b = tools.timed_path(sc, "helper", [2, 4, 3])
    found = tools.conflicts(sc, a, b)
    assert [c.kind for c in found] == ["node"] and found[0].a.where == 4
    fixed = tools.repair(sc, {"primary": a, "helper": b})
    assert fixed.kinds == ("wait",) and fixed.repairs == 1
    assert not tools.conflicts(sc, fixed.paths["primary"], fixed.paths["helper"])
    hb = fixed.paths["helper"]
    assert hb.waits[0] == pytest.approx(1.2, abs=1e-4)  # the helper (the tie's yielder) waits 2 x 0.6 s
    assert fixed.paths["primary"].waits == (0.0, 0.0, 0.0)


def ring() -> Scene:
    """A square ring 0-1-2-3-4-5-0 of 1 m edges: two equal routes from 0 to 3 (via 1, 2 or via 5, 4)."""
    pos = {0: (0.0, 0.0), 1: (1.0, 0.0), 2: (2.0, 0.0), 3: (2.0, 1.0), 4: (1.0, 1.0), 5: (0.0, 1.0)}
    return graph_scene(pos, [(0, 1, 0.8), (1, 2, 0.8), (2, 3, 0.8), (3, 4, 0.8), (4, 5, 0.8), (5, 0, 0.8)])


def test_head_on_swap_on_a_ring_is_rerouted() -> None:
    sc = ring()
    a = tools.timed_path(sc, "primary", [0, 1, 2, 3])
    b = tools.timed_path(sc, "helper", [3, 2, 1, 0])
    assert tools.conflicts(sc, a, b)
    fixed = tools.repair(sc, {"primary": a, "helper": b})
    assert "reroute" in fixed.kinds
    pa, pb = fixed.paths["primary"], fixed.paths["helper"]
    assert not tools.conflicts(sc, pa, pb)
    assert {pa.nodes, pb.nodes} == {(0, 1, 2, 3), (3, 4, 5, 0)}


def test_rendezvous_first_arrival_waits() -> None:
    sc = junction()
    a = tools.timed_path(sc, "primary", [0, 4, 1], meet=1)
    b = tools.timed_path(sc, "helper", [3, 4], 5.0, meet=1)
    s = tools.synchronize({"primary": a, "helper": b}, sc)
    assert s["primary"].visits[1].depart == pytest.approx(9.0)  # the helper arrives at 5 + 4 s
    assert s["primary"].waits[1] == pytest.approx(5.0) and s["helper"].waits[1] == 0.0
    fixed = tools.repair(sc, s, exempt={4})
    assert not tools.conflicts(sc, fixed.paths["primary"], fixed.paths["helper"], exempt={4})


def test_unrepairable_schedule_raises() -> None:
    sc = corridor()
    a = tools.timed_path(sc, "primary", [0, 1, 2, 3])
    b = tools.timed_path(sc, "helper", [0, 1])
    with pytest.raises(tools.ScheduleError):
        tools.repair(sc, {"primary": a, "helper": b})
