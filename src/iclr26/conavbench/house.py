"""Procedural multi-room houses for CoNavBench (ICLR 2026): the stand-in for HM3D scenes, which
cannot be downloaded here. One `generate_scene` call draws a floor plan, its doors, a walkable
navigation graph and objects, all from one `numpy.random.Generator`.

Floor plan (ours; the paper uses HM3D): a hallway spine runs along x; "front" rooms line both of
its long walls, each with a door onto it; a few "back" rooms (an en-suite bathroom or closet behind
a bedroom, a laundry room behind the kitchen) open only into their parent; the living room, dining
room and kitchen sit side by side and are joined by doors too, so the graph has loops.

Navigation graph: a square lattice (`SPACING`) inside each room, kept `WALL_CLEARANCE` from its
walls and 8-connected within the room, plus one node per door on the wall, joined to the nearest
lattice nodes on both sides. Edge `length` is Euclidean. Edge `width` (our rule) is the clear width
of the corridor the edge runs along: a door edge gets the door's opening; an in-room edge gets the
room's narrowest wall-to-wall span, min(x1 - x0, y1 - y0). Objects are not obstacles.

Objects: per room about one per `OBJECT_AREA` square metres (at least `MIN_OBJECTS`), categories
drawn i.i.d. with the `CATEGORIES` frequencies, names from a per-category vocabulary that prefers
the room type (`VOCABULARY`), anchored to the nearest walkable node (`anchor`), which lies in their
own room (positions are redrawn until it does).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import networkx as nx
import numpy as np

from iclr26.conavbench.scene import CATEGORIES, ROOM_TYPES, WALL_CLEARANCE, Door, Room, Scene, SceneObject
from iclr26.core.errors import UserError

SPACING = 0.5
"""Lattice step of the navigation graph in metres."""
DOOR_WIDTH = (0.8, 1.2)
"""Range of door openings in metres."""
HALL_WIDTH = (1.4, 2.0)
"""Range of the hallway's width in metres."""
OBJECT_AREA = 2.5
"""Square metres of floor per object."""
MIN_OBJECTS = 3
"""Objects in the smallest room (three, so the labelling's 3-nearest vote has material)."""
MIN_ROOMS, MAX_ROOMS = 2, 20

# Room shape ranges (metres): frontage along the hallway, depth away from it.
_FRONTAGE: dict[str, tuple[float, float]] = {
    "living room": (4.5, 6.0), "kitchen": (3.0, 4.2), "dining room": (3.0, 4.0), "bedroom": (3.0, 4.2),
    "bathroom": (2.2, 3.0), "office": (2.6, 3.6), "laundry room": (2.2, 3.0), "garage": (3.6, 5.0),
    "closet": (2.0, 2.6),
}  # fmt: skip
_DEPTH: dict[str, tuple[float, float]] = {
    "living room": (4.0, 5.0), "kitchen": (3.2, 4.2), "dining room": (3.2, 4.0), "bedroom": (3.2, 4.2),
    "bathroom": (2.2, 3.0), "office": (2.8, 3.6), "laundry room": (1.8, 2.4), "garage": (4.5, 5.5),
    "closet": (1.8, 2.2),
}  # fmt: skip
_CORE = ("living room", "kitchen", "bedroom", "bathroom")
"""Every house of >= 5 rooms has a hallway and these."""
_EXTRA: dict[str, float] = {
    "bedroom": 3.0, "bathroom": 2.0, "dining room": 1.5, "office": 1.5, "closet": 1.5, "laundry room": 1.0,
    "garage": 0.8,
}  # fmt: skip
"""Weights of the further room types; types in `_SINGLE` appear at most once."""
_SINGLE = ("dining room", "laundry room", "garage")
_SOCIAL = ("living room", "dining room", "kitchen")
"""Placed side by side in this order and joined by doors."""
_BACK_PARENT = {"closet": "bedroom", "laundry room": "kitchen", "bathroom": "bedroom"}
"""A back room opens only into a parent of this type (the first bathroom stays off the hallway)."""

VOCABULARY: dict[str, dict[str, tuple[str, ...]]] = {
    "portable furniture": {
        "*": ("chair", "stool", "side table", "ottoman"),
        "living room": ("sofa", "armchair", "coffee table", "ottoman"),
        "dining room": ("dining chair", "dining table", "bench"),
        "kitchen": ("bar stool", "kitchen chair"),
        "bedroom": ("nightstand", "desk chair", "dresser"),
        "office": ("office chair", "desk", "bookcase"),
        "garage": ("workbench", "folding chair"),
    },
    "personal leisure": {
        "*": ("book", "magazine", "board game"),
        "living room": ("guitar", "board game", "book", "game controller"),
        "bedroom": ("book", "teddy bear", "yoga mat"),
        "office": ("book", "notebook"),
        "garage": ("bicycle", "basketball", "skateboard"),
        "bathroom": ("magazine", "rubber duck"),
    },
    "decor": {
        "*": ("picture frame", "vase", "candle", "wall clock"),
        "living room": ("painting", "vase", "candle", "cushion"),
        "bedroom": ("picture frame", "mirror", "wall clock"),
        "bathroom": ("mirror", "candle"),
        "hallway": ("painting", "mirror", "coat rack"),
    },
    "appliances": {
        "*": ("fan", "heater", "air purifier"),
        "kitchen": ("fridge", "microwave", "oven", "dishwasher", "kettle", "toaster"),
        "laundry room": ("washing machine", "dryer", "iron"),
        "bathroom": ("hair dryer", "scale"),
        "garage": ("freezer", "vacuum cleaner"),
    },
    "kitchenware": {
        "*": ("mug", "bowl", "plate"),
        "kitchen": ("pot", "pan", "cutting board", "knife block", "mug", "plate"),
        "dining room": ("plate", "bowl", "wine glass", "jug"),
    },
    "electronics": {
        "*": ("phone", "tablet", "speaker"),
        "living room": ("tv", "speaker", "game console", "remote"),
        "office": ("laptop", "monitor", "printer", "keyboard"),
        "bedroom": ("laptop", "alarm clock", "phone"),
    },
    "storage": {
        "*": ("box", "basket", "shelf"),
        "closet": ("shoe rack", "suitcase", "storage box"),
        "bedroom": ("wardrobe", "chest of drawers"),
        "garage": ("toolbox", "storage bin", "shelf"),
        "kitchen": ("cabinet", "pantry shelf"),
        "hallway": ("shoe rack", "cabinet"),
    },
    "bedding and textiles": {
        "*": ("blanket", "rug", "cushion"),
        "bedroom": ("bed", "pillow", "blanket", "duvet"),
        "bathroom": ("towel", "bath mat"),
        "living room": ("rug", "throw blanket"),
        "laundry room": ("laundry basket", "towel"),
    },
    "plants": {"*": ("potted plant", "cactus", "fern"), "living room": ("houseplant", "palm")},
    "tools and cleaning": {
        "*": ("broom", "mop", "bucket"),
        "garage": ("drill", "hammer", "ladder"),
        "laundry room": ("detergent", "mop", "bucket"),
        "kitchen": ("dish soap", "sponge"),
        "bathroom": ("toilet brush", "plunger"),
    },
}
"""Object names per category, keyed by the room type they suit ("*": anywhere)."""


def generate_scene(rng: np.random.Generator, scene_id: str, *, n_rooms: int) -> Scene:
    """A procedural house of `n_rooms` rooms (the hallway included), deterministic in `rng`.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    scene_id : str
        The scene's id (e.g. "house_007").
    n_rooms : int
        Rooms, in [MIN_ROOMS, MAX_ROOMS]; 6-12 give houses of about 60-200 square metres.
    """
    if not isinstance(n_rooms, int | np.integer) or not MIN_ROOMS <= n_rooms <= MAX_ROOMS:
        raise ValueError(f"n_rooms must be an int in [{MIN_ROOMS}, {MAX_ROOMS}]; got {n_rooms!r}")
    rooms, links = _floor_plan(rng, _room_types(rng, int(n_rooms)))
    doors_geom = [_door_on_wall(rng, rooms[a], rooms[b]) for a, b in links]
    graph, room_nodes, doors = _navigation_graph(rooms, links, doors_geom)
    scene = Scene(id=scene_id, rooms=rooms, doors=doors, graph=graph)
    scene.objects = _place_objects(rng, scene, room_nodes)
    return scene


def _room_types(rng: np.random.Generator, n_rooms: int) -> list[str]:
    """The hallway, then the core rooms, then further types drawn with `_EXTRA` weights."""
    types = ["hallway", *_CORE][:n_rooms]
    while len(types) < n_rooms:
        pool = [t for t in _EXTRA if not (t in _SINGLE and t in types)]
        w = np.array([_EXTRA[t] for t in pool])
        types.append(pool[int(rng.choice(len(pool), p=w / w.sum()))])
    assert all(t in ROOM_TYPES for t in types)
    return types


def _floor_plan(rng: np.random.Generator, types: list[str]) -> tuple[list[Room], list[tuple[int, int]]]:
    """Rooms (id = index in `types`) and the pairs of rooms that a door joins (a: nearer the hallway)."""
    n = len(types)
    # Back rooms: each parent of the right type takes at most one; the first bathroom stays in front.
    parent: dict[int, int] = {}
    first_bath = types.index("bathroom") if "bathroom" in types else -1
    for i in range(1, n):
        want = _BACK_PARENT.get(types[i])
        if want is None or i == first_bath:
            continue
        free = [j for j in range(1, n) if types[j] == want and j not in parent.values() and j not in parent]
        if free:
            parent[i] = free[0]
    front = [i for i in range(1, n) if i not in parent]
    frontage = {i: float(rng.uniform(*_FRONTAGE[types[i]])) for i in range(1, n)}
    depth = {i: float(rng.uniform(*_DEPTH[types[i]])) for i in range(1, n)}
    # Sides: the social rooms as one block on the north, the rest shuffled onto the shorter side.
    social = [i for t in _SOCIAL for i in front if types[i] == t]
    others = [front[k] for k in rng.permutation(len(front)) if front[k] not in social]
    sides: list[list[int]] = [social[:], []]
    for i in others:
        sides[int(sum(frontage[j] for j in sides[1]) < sum(frontage[j] for j in sides[0]))].append(i)
    lengths = [sum(frontage[j] for j in s) for s in sides]
    hall_len = max(max(lengths), 3.0)
    for s, length in zip(sides, lengths, strict=True):  # stretch the shorter side (at most 1.35x)
        k = min(hall_len / length, 1.35) if length > 0 else 1.0
        for j in s:
            frontage[j] *= k
    hall_w = float(rng.uniform(*HALL_WIDTH))
    boxes: dict[int, tuple[float, float, float, float]] = {0: (0.0, 0.0, hall_len, hall_w)}
    links: list[tuple[int, int]] = []
    for side, s in enumerate(sides):
        x = 0.0
        for j in s:
            x1 = x + frontage[j]
            if side == 0:
                boxes[j] = (x, hall_w, x1, hall_w + depth[j])
            else:
                boxes[j] = (x, -depth[j], x1, 0.0)
            links.append((0, j))
            x = x1
        for a, b in itertools.pairwise(s):  # neighbouring social rooms share a door
            if types[a] in _SOCIAL and types[b] in _SOCIAL:
                links.append((a, b))
    for c, p in sorted(parent.items()):  # a back room spans its parent's frontage, behind it
        px0, py0, px1, py1 = boxes[p]
        if py0 >= hall_w - 1e-9:
            boxes[c] = (px0, py1, px1, py1 + depth[c])
        else:
            boxes[c] = (px0, py0 - depth[c], px1, py0)
        links.append((p, c))
    rooms = [Room(i, types[i], *(round(v, 3) for v in boxes[i])) for i in range(n)]
    return rooms, links


def _door_on_wall(rng: np.random.Generator, a: Room, b: Room) -> tuple[tuple[float, float], float]:
    """A door's centre and width on the wall that rooms a and b share."""
    width = round(float(rng.uniform(*DOOR_WIDTH)), 3)
    margin = width / 2 + 0.15
    if abs(a.y1 - b.y0) < 1e-6 or abs(a.y0 - b.y1) < 1e-6:  # horizontal wall
        y = a.y1 if abs(a.y1 - b.y0) < 1e-6 else a.y0
        lo, hi = max(a.x0, b.x0) + margin, min(a.x1, b.x1) - margin
        return (round(float(rng.uniform(lo, hi)), 3), y), width
    assert abs(a.x1 - b.x0) < 1e-6 or abs(a.x0 - b.x1) < 1e-6, (a, b)
    x = a.x1 if abs(a.x1 - b.x0) < 1e-6 else a.x0
    lo, hi = max(a.y0, b.y0) + margin, min(a.y1, b.y1) - margin
    return (x, round(float(rng.uniform(lo, hi)), 3)), width


def _lattice(room: Room) -> tuple[np.ndarray, tuple[int, int]]:
    """Lattice points (n, 2) inside `room`, at least WALL_CLEARANCE from its walls and centred, and the
    lattice's shape (points along x, along y); point k is (k // ny, k % ny)."""
    axes = []
    for lo, hi in ((room.x0, room.x1), (room.y0, room.y1)):
        span = hi - lo - 2 * WALL_CLEARANCE
        k = int(np.floor(span / SPACING + 1e-9)) + 1
        start = lo + WALL_CLEARANCE + (span - (k - 1) * SPACING) / 2
        axes.append(np.round(start + SPACING * np.arange(k), 4))
    gx, gy = np.meshgrid(axes[0], axes[1], indexing="ij")
    return np.stack([gx.ravel(), gy.ravel()], axis=1), (len(axes[0]), len(axes[1]))


def _navigation_graph(
    rooms: list[Room], links: list[tuple[int, int]], doors_geom: list[tuple[tuple[float, float], float]]
) -> tuple[nx.Graph, dict[int, np.ndarray], list[Door]]:
    """The lattice graph of every room plus door nodes; returns the graph, each room's node ids, doors."""
    graph = nx.Graph()
    room_nodes: dict[int, np.ndarray] = {}
    room_pts: dict[int, np.ndarray] = {}
    nid = 0
    diag = round(SPACING * np.sqrt(2), 6)
    for room in rooms:
        pts, (nx_, ny) = _lattice(room)
        ids = np.arange(nid, nid + len(pts))
        nid += len(pts)
        room_nodes[room.id], room_pts[room.id] = ids, pts
        graph.add_nodes_from(
            (int(i), {"pos": (float(p[0]), float(p[1])), "room": room.id, "region": room.type, "door": False})
            for i, p in zip(ids, pts, strict=True)
        )
        grid = ids.reshape(nx_, ny)
        width = round(min(room.x1 - room.x0, room.y1 - room.y0), 3)  # in-room edge width rule
        for (dx, dy), length in (((1, 0), SPACING), ((0, 1), SPACING), ((1, 1), diag), ((1, -1), diag)):
            a = grid[: nx_ - dx, max(0, -dy) : ny - max(0, dy)]  # node (i, j) ...
            b = grid[dx:, max(0, dy) : ny + min(0, dy)]  # ... and its neighbour (i + dx, j + dy)
            graph.add_edges_from(
                (int(u), int(v), {"length": length, "width": width})
                for u, v in zip(a.ravel(), b.ravel(), strict=True)
            )
    doors = []
    for (ra, rb), (pos, width) in zip(links, doors_geom, strict=True):
        graph.add_node(nid, pos=pos, room=None, region=rooms[rb].type, door=True)
        for r in (ra, rb):  # the nearest lattice nodes on this side (ties within 5 cm)
            d = np.hypot(*(room_pts[r] - np.asarray(pos)).T)
            for k in np.flatnonzero(d <= d.min() + 0.05):
                graph.add_edge(nid, int(room_nodes[r][k]), length=round(float(d[k]), 6), width=width)
        doors.append(Door(ra, rb, pos, width, nid))
        nid += 1
    return graph, room_nodes, doors


def _positions(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """Node ids (n,) and positions (n, 2) of the scene's graph, in node order."""
    ids = np.fromiter(scene.graph.nodes, dtype=np.int64, count=scene.graph.number_of_nodes())
    pos = np.array([scene.graph.nodes[int(i)]["pos"] for i in ids], dtype=float).reshape(-1, 2)
    return ids, pos


def anchor(scene: Scene, pos: tuple[float, float], *, room: int | None = None) -> int:
    """The walkable node nearest to `pos` (Euclidean, lowest id on ties), among `room`'s nodes if given."""
    ids, pts = _positions(scene)
    if room is not None:
        keep = np.array([scene.graph.nodes[int(i)]["room"] == room for i in ids], dtype=bool)
        ids, pts = ids[keep], pts[keep]
    if len(ids) == 0:
        raise ValueError(
            f"scene {scene.id} has no walkable node" + ("" if room is None else f" in room {room}")
        )
    d = np.hypot(*(pts - np.asarray(pos, dtype=float)).T)
    return int(ids[np.flatnonzero(d == d.min()).min()] if len(ids) else -1)


def _place_objects(
    rng: np.random.Generator, scene: Scene, room_nodes: dict[int, np.ndarray]
) -> list[SceneObject]:
    """Objects for every room; categories i.i.d. from CATEGORIES, each anchored inside its own room."""
    ids, pts = _positions(scene)
    cats = list(CATEGORIES)
    p = np.array([CATEGORIES[c] for c in cats])
    p = p / p.sum()
    objects: list[SceneObject] = []
    for room in scene.rooms:
        area = (room.x1 - room.x0) * (room.y1 - room.y0)
        n = max(MIN_OBJECTS, round(area / OBJECT_AREA))
        own = set(room_nodes[room.id].tolist())
        for _ in range(n):
            cat = cats[int(rng.choice(len(cats), p=p))]
            names = VOCABULARY[cat].get(room.type) or VOCABULARY[cat]["*"]
            name = names[int(rng.integers(len(names)))]
            m = 0.15  # objects stand at least 15 cm from walls
            for _try in range(20):  # redraw until the nearest node is one of this room's
                xy = (
                    round(float(rng.uniform(room.x0 + m, room.x1 - m)), 3),
                    round(float(rng.uniform(room.y0 + m, room.y1 - m)), 3),
                )
                d = np.hypot(*(pts - np.asarray(xy)).T)
                node = int(ids[np.flatnonzero(d == d.min()).min()])
                if node in own:
                    break
            else:  # pragma: no cover - a lattice point is always within reach of the room's centre
                xy = (round((room.x0 + room.x1) / 2, 3), round((room.y0 + room.y1) / 2, 3))
                node = anchor(scene, xy)
            objects.append(SceneObject(f"obj_{len(objects)}", name, cat, xy, room.id, node))
    return objects


def check_connected(scene: Scene) -> None:
    """Raise a one-line UserError naming the scene and the unreachable rooms if its graph is disconnected."""
    g = scene.graph
    if g.number_of_nodes() == 0:
        raise UserError(f"scene {scene.id} has an empty navigation graph")
    parts = sorted(nx.connected_components(g), key=lambda c: (-len(c), min(c)))
    if len(parts) == 1:
        return
    main = parts[0]
    rest = sorted(set().union(*parts[1:]))
    main_rooms = sorted({g.nodes[n]["room"] for n in main if g.nodes[n]["room"] is not None})
    cut = sorted({g.nodes[n]["room"] for n in rest if g.nodes[n]["room"] is not None})
    names = ", ".join(f"{r} ({scene.rooms[r].type})" if r < len(scene.rooms) else str(r) for r in cut)
    raise UserError(
        f"scene {scene.id} is disconnected: {len(rest)} node(s) in {len(parts) - 1} piece(s) "
        f"(rooms {names or 'none'}; nodes {rest[:5]}{'...' if len(rest) > 5 else ''}) cannot be reached "
        f"from the main piece (rooms {main_rooms[:8]}); check the doors joining them"
    )


def scene_to_json(scene: Scene) -> dict[str, Any]:
    """The scene as JSON-ready data: nodes and edges sorted by id, so `json.dumps` repeats byte for byte."""
    g = scene.graph
    nodes = []
    for n in sorted(g.nodes):
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(g.nodes[n].items())}
        nodes.append({"id": int(n), **attrs})
    edges = []
    for u, v in sorted((min(u, v), max(u, v)) for u, v in g.edges):
        edges.append({"u": int(u), "v": int(v), **dict(sorted(g.edges[u, v].items()))})
    return {
        "id": scene.id,
        "rooms": [
            {"id": r.id, "type": r.type, "x0": r.x0, "y0": r.y0, "x1": r.x1, "y1": r.y1} for r in scene.rooms
        ],
        "doors": [
            {"a": d.a, "b": d.b, "pos": list(d.pos), "width": d.width, "node": d.node} for d in scene.doors
        ],
        "objects": [
            {
                "id": o.id,
                "name": o.name,
                "category": o.category,
                "pos": list(o.pos),
                "room": o.room,
                "node": o.node,
            }
            for o in scene.objects
        ],
        "graph": {"nodes": nodes, "edges": edges},
    }


def scene_from_json(d: Mapping[str, Any]) -> Scene:
    """The scene that `scene_to_json` wrote (tuples restored, ids as ints)."""
    try:
        g = nx.Graph()
        for node in d["graph"]["nodes"]:
            attrs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in node.items() if k != "id"}
            g.add_node(int(node["id"]), **attrs)
        for e in d["graph"]["edges"]:
            g.add_edge(int(e["u"]), int(e["v"]), **{k: v for k, v in e.items() if k not in ("u", "v")})
        return Scene(
            id=d["id"],
            rooms=[Room(**r) for r in d["rooms"]],
            doors=[Door(x["a"], x["b"], tuple(x["pos"]), x["width"], x["node"]) for x in d["doors"]],
            graph=g,
            objects=[
                SceneObject(o["id"], o["name"], o["category"], tuple(o["pos"]), o["room"], o["node"])
                for o in d["objects"]
            ],
        )
    except (KeyError, TypeError) as e:
        raise UserError(f"scene JSON {d.get('id', '?')!r} is malformed: missing or bad field {e}") from e
