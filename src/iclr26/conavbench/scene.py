"""The scene: a house as rooms joined by doors, a walkable navigation graph in metres, and
objects anchored to it. Every other module (missions, tools, simulator, agents) reads scenes
through this contract:

- `Scene.graph` is an undirected `networkx.Graph`. Node ids are ints. Node attributes:
  `pos` (x, y) in metres, `room` (the room id the node lies in, or None for a door node),
  `region` (the region label: a room type such as "kitchen"; door nodes get their room's label
  by the labelling, `labelling.py`), `door` (True on a door node). Edge attributes: `length`
  (metres, the Euclidean distance of the two positions) and `width` (the corridor's clear width
  in metres: a door's opening, or the room's free width for edges inside a room).
- `Scene.rooms` and `Scene.doors` give the floor plan: axis-aligned rectangles and door segments.
  The walkable area is the union of the rooms' rectangles (shrunk by `WALL_CLEARANCE`) and the
  door openings; the simulator moves robots in it.
- `Scene.objects`: objects with a category (one of `CATEGORIES`), a position, their room and
  their anchor node (the nearest walkable node, `anchor`).

Distances are shortest-path lengths over `length` (`distance`, `path`); hops between regions
(`region_hops`) count region changes along the shortest path.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

WALL_CLEARANCE = 0.3
"""Metres kept free between a robot's centre and a wall."""

CATEGORIES: dict[str, float] = {
    "portable furniture": 0.28,
    "personal leisure": 0.17,
    "decor": 0.12,
    "appliances": 0.10,
    "kitchenware": 0.09,
    "electronics": 0.08,
    "storage": 0.06,
    "bedding and textiles": 0.04,
    "plants": 0.03,
    "tools and cleaning": 0.03,
}
"""The ten object categories and their frequencies (the paper's first three: 28%, 17%, 12%; the
rest ours, summing to 1)."""

ROOM_TYPES = (
    "living room", "kitchen", "dining room", "bedroom", "bathroom", "hallway", "office", "laundry room",
    "garage", "closet",
)  # fmt: skip


@dataclass(frozen=True)
class Room:
    """An axis-aligned rectangle [x0, x1] x [y0, y1] (metres) of one room type."""

    id: int
    type: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Door:
    """An opening of `width` metres centred at `pos` in the wall between rooms `a` and `b`."""

    a: int
    b: int
    pos: tuple[float, float]
    width: float
    node: int  # the door's node in the navigation graph


@dataclass(frozen=True)
class SceneObject:
    """An object: its id (e.g. "obj_12"), name ("sofa"), category, position, room and anchor node."""

    id: str
    name: str
    category: str
    pos: tuple[float, float]
    room: int
    node: int


@dataclass
class Scene:
    """One house: its id, rooms, doors, navigation graph and objects."""

    id: str
    rooms: list[Room]
    doors: list[Door]
    graph: nx.Graph
    objects: list[SceneObject] = field(default_factory=list)

    def object(self, object_id: str) -> SceneObject:
        """The object called `object_id` (KeyError naming it when absent)."""
        for o in self.objects:
            if o.id == object_id:
                return o
        raise KeyError(f"scene {self.id} has no object {object_id!r}")


def distance(scene: Scene, a: int, b: int) -> float:
    """Shortest walkable distance in metres between nodes a and b (inf when unreachable)."""
    try:
        return float(nx.shortest_path_length(scene.graph, a, b, weight="length"))
    except nx.NetworkXNoPath:
        return float("inf")


def path(scene: Scene, a: int, b: int) -> list[int]:
    """The shortest node path from a to b (NetworkXNoPath when unreachable)."""
    return list(nx.shortest_path(scene.graph, a, b, weight="length"))


def region_hops(scene: Scene, nodes: Sequence[int]) -> int:
    """How many times the region label changes along a node path (door nodes take no part)."""
    labels = [scene.graph.nodes[n]["region"] for n in nodes if not scene.graph.nodes[n].get("door")]
    return sum(1 for a, b in itertools.pairwise(labels) if a != b)
