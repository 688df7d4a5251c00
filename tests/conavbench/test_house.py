"""Procedural houses (`conavbench.house`) and the optional Habitat adapter (`conavbench.habitat`)."""

from __future__ import annotations

import json
import time

import networkx as nx
import numpy as np
import pytest

from iclr26.conavbench import habitat
from iclr26.conavbench.habitat import RawObject, scene_from_grid
from iclr26.conavbench.house import (
    DOOR_WIDTH,
    anchor,
    check_connected,
    generate_scene,
    scene_from_json,
    scene_to_json,
)
from iclr26.conavbench.scene import CATEGORIES, ROOM_TYPES, WALL_CLEARANCE, Room, distance
from iclr26.core.errors import UserError


@pytest.fixture(scope="module")
def houses():
    """200 houses of 6-12 rooms from one seed, and the seconds each took."""
    rng = np.random.default_rng(2026)
    out, times = [], []
    for i in range(200):
        n = int(rng.integers(6, 13))
        t = time.perf_counter()
        out.append(generate_scene(rng, f"house_{i:03d}", n_rooms=n))
        times.append(time.perf_counter() - t)
    return out, times


def test_houses_are_connected_and_sized(houses):
    for s in houses[0][:50]:
        check_connected(s)
        assert nx.is_connected(s.graph)
        area = sum((r.x1 - r.x0) * (r.y1 - r.y0) for r in s.rooms)
        assert 60 <= area <= 230, (s.id, area)
        assert s.rooms[0].type == "hallway" and all(r.type in ROOM_TYPES for r in s.rooms)
        assert all(any(s.graph.nodes[n]["room"] == r.id for n in s.graph) for r in s.rooms)


def test_rooms_do_not_overlap_and_doors_join_different_rooms(houses):
    for s in houses[0][:50]:
        for a in s.rooms:
            for b in s.rooms[a.id + 1 :]:
                overlap = min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)
                assert not (overlap[0] > 1e-6 and overlap[1] > 1e-6), (s.id, a, b)
        for d in s.doors:
            assert d.a != d.b
            assert DOOR_WIDTH[0] <= d.width <= DOOR_WIDTH[1]
            attrs = s.graph.nodes[d.node]
            assert attrs["door"] and attrs["room"] is None and attrs["pos"] == d.pos
            assert {s.graph.nodes[m]["room"] for m in s.graph[d.node]} == {d.a, d.b}
            assert all(s.graph.edges[d.node, m]["width"] == d.width for m in s.graph[d.node])


def test_graph_attributes(houses):
    s = houses[0][0]
    g = s.graph
    for u, v, e in g.edges(data=True):
        pu, pv = np.array(g.nodes[u]["pos"]), np.array(g.nodes[v]["pos"])
        assert e["length"] == pytest.approx(np.linalg.norm(pu - pv), abs=1e-6)
        if not (g.nodes[u]["door"] or g.nodes[v]["door"]):
            r = s.rooms[g.nodes[u]["room"]]
            assert g.nodes[v]["room"] == r.id and e["length"] < 0.71
            assert e["width"] == pytest.approx(min(r.x1 - r.x0, r.y1 - r.y0), abs=1e-3)
    for _, a in g.nodes(data=True):
        if not a["door"]:
            r = s.rooms[a["room"]]
            x, y = a["pos"]
            assert r.x0 + WALL_CLEARANCE - 1e-9 <= x <= r.x1 - WALL_CLEARANCE + 1e-9
            assert r.y0 + WALL_CLEARANCE - 1e-9 <= y <= r.y1 - WALL_CLEARANCE + 1e-9
            assert a["region"] == r.type


def test_objects_anchored_to_their_nearest_node_in_their_room(houses):
    for s in houses[0][:20]:
        assert len({o.id for o in s.objects}) == len(s.objects)
        for o in s.objects:
            assert o.node == anchor(s, o.pos)
            assert s.graph.nodes[o.node]["room"] == o.room
            r = s.rooms[o.room]
            assert r.x0 <= o.pos[0] <= r.x1 and r.y0 <= o.pos[1] <= r.y1


def test_category_frequencies_match_the_paper(houses):
    objects = [o for s in houses[0] for o in s.objects]
    count = {c: 0 for c in CATEGORIES}
    for o in objects:
        count[o.category] += 1
    freq = {c: count[c] / len(objects) for c in CATEGORIES}
    print(
        f"\n{len(objects)} objects over 200 houses: "
        + ", ".join(f"{c} {100 * f:.1f}%" for c, f in freq.items())
    )
    for c, p in CATEGORIES.items():
        assert abs(freq[c] - p) <= 0.03, (c, freq[c], p)


def test_generation_speed(houses):
    times = np.array(houses[1])
    print(f"\ngeneration: mean {1000 * times.mean():.1f} ms, max {1000 * times.max():.1f} ms per house")
    assert np.median(times) < 0.1


def test_same_seed_gives_byte_identical_json():
    a = generate_scene(np.random.default_rng(5), "h", n_rooms=9)
    b = generate_scene(np.random.default_rng(5), "h", n_rooms=9)
    ja, jb = (json.dumps(scene_to_json(s), sort_keys=True) for s in (a, b))
    assert ja == jb
    c = generate_scene(np.random.default_rng(6), "h", n_rooms=9)
    assert json.dumps(scene_to_json(c), sort_keys=True) != ja


def test_json_round_trip():
    s = generate_scene(np.random.default_rng(1), "h", n_rooms=7)
    text = json.dumps(scene_to_json(s), sort_keys=True)
    t = scene_from_json(json.loads(text))
    assert json.dumps(scene_to_json(t), sort_keys=True) == text
    assert t.rooms == s.rooms and t.doors == s.doors and t.objects == s.objects
    assert distance(t, 0, max(t.graph)) == pytest.approx(distance(s, 0, max(s.graph)))
    with pytest.raises(UserError, match="malformed"):
        scene_from_json({"id": "bad", "rooms": []})


def test_disconnected_scene_is_a_clear_error():
    s = generate_scene(np.random.default_rng(0), "broken_house", n_rooms=6)
    leaf = max(s.doors, key=lambda d: d.b)  # cut room b off by removing its door node
    s.graph.remove_node(leaf.node)
    with pytest.raises(UserError) as e:
        check_connected(s)
    msg = str(e.value)
    assert "\n" not in msg and "broken_house" in msg and f"{leaf.b} ({s.rooms[leaf.b].type})" in msg


@pytest.mark.parametrize("n", [0, 1, 21, 6.0])
def test_bad_room_count(n):
    with pytest.raises(ValueError, match="n_rooms"):
        generate_scene(np.random.default_rng(0), "h", n_rooms=n)


def test_small_and_large_houses():
    for n in (2, 3, 5, 16, 20):
        s = generate_scene(np.random.default_rng(n), f"h{n}", n_rooms=n)
        assert len(s.rooms) == n
        check_connected(s)


# --- Habitat adapter ---------------------------------------------------------------------------


def test_grid_core_builds_a_labelled_scene_without_habitat():
    """An L-shaped floor: a kitchen (x < 4) and a bedroom (y > 3), objects labelled by region."""
    rooms = [Room(0, "kitchen", 0, 0, 4, 3), Room(1, "bedroom", 0, 3, 2, 7)]

    def navigable(x: float, y: float) -> bool:
        return (0.3 <= x <= 3.7 and 0.3 <= y <= 2.7) or (0.3 <= x <= 1.7 and 0.3 <= y <= 6.7)

    objects = [
        RawObject("fridge", "appliances", (3.0, 1.0), 0),
        RawObject("oven", "appliances", (2.0, 0.5), 0),
        RawObject("mug", "kitchenware", (1.0, 2.0), 0),
        RawObject("bed", "bedding and textiles", (1.0, 6.0), 1),
        RawObject("lamp", "decor", (1.5, 5.0), 1),
        RawObject("book", "personal leisure", (0.5, 4.5), 1),
    ]
    s = scene_from_grid(
        "toy", navigable, (0, 0, 4, 7), regions=rooms, objects=objects, clearance=lambda x, y: 0.4
    )
    check_connected(s)
    g = s.graph
    assert all(e["width"] == 0.8 for _, _, e in g.edges(data=True))
    assert {o.node for o in s.objects} <= set(g.nodes)
    assert all(a["region"] == ("bedroom" if a["pos"][1] > 2.75 else "kitchen") for _, a in g.nodes(data=True))
    assert all(a["room"] == (1 if a["region"] == "bedroom" else 0) for _, a in g.nodes(data=True))


def test_guess_category():
    assert habitat.guess_category("Sofa") == "portable furniture"
    assert habitat.guess_category("kitchen cabinet") == "storage"
    assert habitat.guess_category("xyzzy") == "decor"


@pytest.mark.skipif(habitat.available(), reason="habitat_sim is installed")
def test_habitat_missing_is_a_one_line_user_error():
    with pytest.raises(UserError) as e:
        habitat.scene_from_habitat(object())
    assert "\n" not in str(e.value) and "habitat-sim" in str(e.value)


def test_habitat_scene_when_installed():
    habitat_sim = pytest.importorskip("habitat_sim")
    pf = habitat_sim.PathFinder()
    if not pf.is_loaded:
        pytest.skip("no navmesh file to load here")
    s = habitat.scene_from_habitat(pf, scene_id="navmesh")
    check_connected(s)
