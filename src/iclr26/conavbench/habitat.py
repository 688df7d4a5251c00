"""An optional adapter from Habitat-Sim (the CoNavBench paper's simulator, ICLR 2026) to our `Scene`:
the navigation graph is a lattice of navigable navmesh points, objects come from the semantic
scene, and rooms from its regions, relabelled by the paper's four-step labelling (`labelling.py`)
because HM3D's room labels are noisy.

`habitat_sim` is imported lazily: `available()` says whether it is installed, and
`scene_from_habitat` raises a one-line UserError saying what to install when it is not. The
Habitat-free core, `scene_from_grid`, takes a navigability test as a plain function.

Coordinates: Habitat is y-up with the floor in (x, z); a 2D point is (x, -z), so the map seen from
above is not mirrored. Edge widths (our rule) are twice the smaller distance of the two endpoints to
the closest obstacle (`pathfinder.distance_to_closest_obstacle`), or the lattice spacing without it.
Only the largest connected piece of the lattice is kept (navmeshes have islands on furniture).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import networkx as nx
import numpy as np

from iclr26.conavbench.house import VOCABULARY
from iclr26.conavbench.labelling import label_regions, region_name
from iclr26.conavbench.scene import CATEGORIES, Room, Scene, SceneObject
from iclr26.core.errors import UserError

INSTALL_HINT = "install habitat-sim (conda install habitat-sim -c conda-forge -c aihabitat)"

_KEYWORDS: dict[str, tuple[str, ...]] = {
    "portable furniture": ("chair", "stool", "table", "sofa", "couch", "bench", "desk", "ottoman"),
    "bedding and textiles": ("bed", "pillow", "blanket", "towel", "curtain", "rug", "mat", "cushion"),
    "plants": ("plant", "flower", "cactus"),
    "electronics": ("tv", "monitor", "computer", "laptop", "speaker", "phone", "screen"),
    "appliances": ("fridge", "refrigerator", "oven", "microwave", "washer", "dryer", "stove", "dishwasher"),
    "storage": ("cabinet", "shelf", "drawer", "box", "wardrobe", "closet", "basket", "rack", "dresser"),
    "kitchenware": ("cup", "mug", "bowl", "plate", "pot", "pan", "bottle", "glass", "kettle"),
    "personal leisure": ("book", "toy", "game", "guitar", "piano", "bicycle", "ball"),
    "tools and cleaning": ("broom", "mop", "bucket", "tool", "vacuum", "brush", "detergent"),
}
_BY_NAME = {n: c for c, by_room in VOCABULARY.items() for names in by_room.values() for n in names}


def available() -> bool:
    """Whether `habitat_sim` can be imported."""
    return importlib.util.find_spec("habitat_sim") is not None


def guess_category(name: str) -> str:
    """One of CATEGORIES for a raw object name: our vocabulary first, then keywords, else "decor"."""
    n = name.strip().lower()
    if n in _BY_NAME:
        return _BY_NAME[n]
    for category, words in _KEYWORDS.items():
        if any(w in n.split() or w in n for w in words):
            return category
    return "decor"


@dataclass(frozen=True)
class RawObject:
    """An annotated object before anchoring: name, category, 2D position and region index (or None)."""

    name: str
    category: str
    pos: tuple[float, float]
    region: int | None


def scene_from_grid(
    scene_id: str,
    navigable: Callable[[float, float], bool],
    bounds: tuple[float, float, float, float],
    *,
    regions: Sequence[Room],
    objects: Sequence[RawObject],
    spacing: float = 0.5,
    clearance: Callable[[float, float], float] | None = None,
    step: float = 0.1,
    llm: Any = None,
) -> Scene:
    """A Scene from a navigability test on the plane: lattice nodes every `spacing` metres inside
    `bounds` (x0, y0, x1, y1) where `navigable`, 8-connected where the straight segment stays navigable
    (checked every `step` metres); nodes' rooms and regions from `label_regions` on the objects' region
    labels (`regions[i].type`, instance-wise); objects anchored to their nearest node. An object without a
    region gets its anchor node's room after the labelling (-1 if there is no label at all)."""
    if spacing <= 0 or step <= 0:
        raise ValueError(f"spacing and step must be > 0; got spacing={spacing}, step={step}")
    x0, y0, x1, y1 = bounds
    xs = x0 + spacing * np.arange(int(np.floor((x1 - x0) / spacing)) + 1)
    ys = y0 + spacing * np.arange(int(np.floor((y1 - y0) / spacing)) + 1)
    ok = np.array([[bool(navigable(float(x), float(y))) for y in ys] for x in xs], dtype=bool).reshape(
        len(xs), -1
    )
    g = nx.Graph()
    ids = -np.ones(ok.shape, dtype=np.int64)
    for i, j in zip(*np.nonzero(ok), strict=True):
        ids[i, j] = g.number_of_nodes()
        pos = (round(float(xs[i]), 4), round(float(ys[j]), 4))
        g.add_node(int(ids[i, j]), pos=pos, room=None, region=None, door=False)
    half = {}
    if clearance is not None:
        half = {n: float(clearance(*g.nodes[n]["pos"])) for n in g.nodes}
    for i, j in zip(*np.nonzero(ok), strict=True):
        for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):
            a, b = i + di, j + dj
            if not (0 <= a < ok.shape[0] and 0 <= b < ok.shape[1] and ok[a, b]):
                continue
            p, q = np.array([xs[i], ys[j]]), np.array([xs[a], ys[b]])
            length = float(np.hypot(*(q - p)))
            ts = np.linspace(0.0, 1.0, max(2, int(np.ceil(length / step)) + 1))[1:-1]
            if all(navigable(*(p + t * (q - p)).tolist()) for t in ts):
                u, v = int(ids[i, j]), int(ids[a, b])
                width = 2 * min(half[u], half[v]) if half else spacing
                g.add_edge(u, v, length=round(length, 6), width=round(width, 4))
    if g.number_of_nodes() == 0:
        raise UserError(f"scene {scene_id}: no navigable point on the {spacing} m grid; check the navmesh")
    main = max(nx.connected_components(g), key=lambda c: (len(c), -min(c)))
    g = nx.convert_node_labels_to_integers(g.subgraph(sorted(main)).copy(), ordering="sorted")
    scene = Scene(id=scene_id, rooms=list(regions), doors=[], graph=g)
    nodes = sorted(g.nodes)
    pts = np.array([g.nodes[n]["pos"] for n in nodes])
    for k, o in enumerate(objects):
        node = nodes[int(np.argmin(np.hypot(*(pts - np.asarray(o.pos)).T)))]
        room = -1 if o.region is None else o.region
        scene.objects.append(SceneObject(f"obj_{k}", o.name, o.category, o.pos, room, node))
    labels = {o.id: f"{regions[o.room].type}:{o.room}" for o in scene.objects if o.room >= 0}
    if labels:
        for n, label in label_regions(scene, labels, llm=llm).items():
            g.nodes[n]["region"] = region_name(label)
            g.nodes[n]["room"] = int(label.rsplit(":", 1)[1])
        scene.objects = [  # objects without a region take their anchor node's room
            replace(o, room=g.nodes[o.node]["room"])
            if o.room < 0 and g.nodes[o.node]["room"] is not None
            else o
            for o in scene.objects
        ]
    return scene


def scene_from_habitat(
    sim: Any,
    semantic_scene: Any = None,
    *,
    scene_id: str | None = None,
    spacing: float = 0.5,
    height: float | None = None,
    max_y_delta: float = 0.5,
    category_of: Callable[[str], str] = guess_category,
    llm: Any = None,
) -> Scene:
    """A Scene from a Habitat-Sim simulator (or its `pathfinder`) and semantic annotations.

    Parameters
    ----------
    sim : habitat_sim.Simulator or habitat_sim.PathFinder
        Its `pathfinder` (or itself) answers `is_navigable`; `sim.semantic_scene` is the default
        `semantic_scene`.
    semantic_scene : habitat_sim.scene.SemanticScene, optional
        Regions (`.category.name()`, `.aabb`) become rooms; objects (`.category.name()`, `.aabb`,
        `.region`) become scene objects whose region labels feed the labelling.
    scene_id : str, optional
        Defaults to the simulator's scene id, else "habitat".
    height : float, optional
        The floor's y; defaults to the navmesh's lower bound.
    category_of : callable
        Maps a raw category name to one of CATEGORIES.
    """
    if not available():
        raise UserError(f"scene_from_habitat needs habitat_sim, which is not installed; {INSTALL_HINT}")
    pathfinder = getattr(sim, "pathfinder", sim)
    if semantic_scene is None:
        semantic_scene = getattr(sim, "semantic_scene", None)
    lower, upper = (np.asarray(v, dtype=float) for v in pathfinder.get_bounds())
    y = float(lower[1] if height is None else height)

    def navigable(x: float, y2: float) -> bool:
        return bool(pathfinder.is_navigable(np.array([x, y, -y2], dtype=np.float32), max_y_delta))

    def clearance(x: float, y2: float) -> float:
        return float(pathfinder.distance_to_closest_obstacle(np.array([x, y, -y2], dtype=np.float32), 2.0))

    regions: list[Room] = []
    index: dict[str, int] = {}
    raw: list[RawObject] = []
    if semantic_scene is not None:
        for r in semantic_scene.regions:
            c, s = np.asarray(r.aabb.center, dtype=float), np.asarray(r.aabb.sizes, dtype=float)
            index[str(r.id)] = len(regions)
            regions.append(
                Room(
                    len(regions),
                    _name(r),
                    float(round(c[0] - s[0] / 2, 3)),
                    float(round(-c[2] - s[2] / 2, 3)),
                    float(round(c[0] + s[0] / 2, 3)),
                    float(round(-c[2] + s[2] / 2, 3)),
                )
            )
        for o in semantic_scene.objects:
            name = _name(o)
            category = category_of(name)
            if category not in CATEGORIES:
                raise ValueError(f"category_of({name!r}) returned {category!r}, not one of CATEGORIES")
            c = np.asarray(o.aabb.center, dtype=float)
            region = getattr(o, "region", None)
            raw.append(
                RawObject(
                    name,
                    category,
                    (round(float(c[0]), 3), round(float(-c[2]), 3)),
                    index.get(str(region.id)) if region is not None else None,
                )
            )
    if scene_id is None:
        sim_cfg = getattr(getattr(sim, "config", None), "sim_cfg", None)
        scene_id = str(getattr(sim_cfg, "scene_id", "") or "habitat")
    bounds = (float(lower[0]), float(-upper[2]), float(upper[0]), float(-lower[2]))
    return scene_from_grid(
        scene_id,
        navigable,
        bounds,
        regions=regions,
        objects=raw,
        spacing=spacing,
        clearance=clearance,
        llm=llm,
    )


def _name(x: Any) -> str:
    """A semantic entry's category name, lower-case ("unknown" when it has none)."""
    category = getattr(x, "category", None)
    return str(category.name()).strip().lower() if category is not None else "unknown"
