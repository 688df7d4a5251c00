"""The CoNavBench (ICLR 2026) region labelling of navigation-graph nodes from labelled objects, for
scenes whose room annotations are noisy (HM3D through Habitat; our procedural houses in tests).

The paper's four steps, one function each:
1. `vote_nearest_objects`: a node's label is the majority of its 3 nearest labelled objects.
2. `relabel_isolated`: a node with 2 <= degree <= 4 whose label differs from all its neighbours
   takes its neighbours' majority.
3. `keep_largest_pieces`: per label keep only the largest connected piece; the rest is unlabelled.
4. `fill_from_neighbours`: unlabelled nodes take their labelled neighbours' majority, repeated
   until nothing changes; the paper asks an LLM here, ours asks `llm` only where the histogram is
   tied or empty (and keeps the histogram's answer unless the reply is one of the candidates).

`label_regions` runs all four. Labels are opaque strings. With room *types* ("bedroom"), step 3
keeps one bedroom per house, as the paper's "per room class" reads; with room *instances*
("bedroom:3", `object_labels(scene)`'s default) it keeps one piece per room. `region_name` maps
either back to a room type, and `apply_regions` writes it into the graph's `region` attribute.

Ties are broken deterministically: step 1 by the nearest voting object, steps 2 and 4 by the
nearest neighbour (edge `length`) among the tied labels, then by the label's spelling.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from iclr26.conavbench.scene import Scene

Labels = dict[int, str | None]
"""Node id -> label (None: unlabelled)."""
LLMHook = Callable[[str], str]
"""A prompt -> reply callable; a `core.llm` ChatModel is accepted too and wrapped into one."""


def object_labels(scene: Scene, *, instances: bool = True) -> dict[str, str]:
    """Each object's label from its room: "type:room_id" when `instances`, else the room type."""
    rooms = {r.id: r for r in scene.rooms}
    return {
        o.id: f"{rooms[o.room].type}:{o.room}" if instances else rooms[o.room].type for o in scene.objects
    }


def region_name(label: str) -> str:
    """The room type of a label ("bedroom:3" -> "bedroom"; "bedroom" stays)."""
    return label.split(":", 1)[0]


def _node_positions(scene: Scene) -> tuple[list[int], np.ndarray]:
    nodes = sorted(scene.graph.nodes)
    return nodes, np.array([scene.graph.nodes[n]["pos"] for n in nodes], dtype=float).reshape(-1, 2)


def _labelled_objects(scene: Scene, labels: Mapping[str, str]) -> tuple[list[str], np.ndarray, list[str]]:
    """Ids, positions (m, 2) and labels of the objects that carry a label, in scene order."""
    objs = [o for o in scene.objects if labels.get(o.id) is not None]
    pos = np.array([o.pos for o in objs], dtype=float).reshape(-1, 2)
    return [o.id for o in objs], pos, [labels[o.id] for o in objs]


def _majority(votes: list[tuple[str, float]]) -> str:
    """The most frequent label among (label, distance) votes; ties: the nearest vote, then the spelling."""
    count = Counter(label for label, _ in votes)
    nearest: dict[str, float] = {}
    for label, d in votes:
        nearest[label] = min(d, nearest.get(label, np.inf))
    return min(count, key=lambda lab: (-count[lab], nearest[lab], lab))


METRICS = ("geodesic", "euclidean")


def _object_distances(
    scene: Scene, nodes: list[int], npos: np.ndarray, opos: np.ndarray, anchors: list[int], metric: str
) -> np.ndarray:
    """Distances (nodes, objects): straight-line, or walked (graph path to the object's anchor node, plus
    the anchor-to-object offset)."""
    if metric == "euclidean":
        return np.hypot(npos[:, None, 0] - opos[None, :, 0], npos[:, None, 1] - opos[None, :, 1])
    index = {n: i for i, n in enumerate(nodes)}
    g = scene.graph
    rows, cols, w = [], [], []
    for u, v, length in g.edges(data="length", default=1.0):
        rows += [index[u], index[v]]
        cols += [index[v], index[u]]
        w += [length, length]
    adj = csr_matrix((w, (rows, cols)), shape=(len(nodes), len(nodes)))
    sources = sorted(set(anchors))
    walked = dijkstra(adj, directed=False, indices=[index[a] for a in sources])  # (sources, nodes)
    row = {a: k for k, a in enumerate(sources)}
    offset = np.hypot(*(opos - npos[[index[a] for a in anchors]]).T)
    return walked[[row[a] for a in anchors]].T + offset[None, :]


def vote_nearest_objects(
    scene: Scene, labels: Mapping[str, str], *, k: int = 3, metric: str = "geodesic"
) -> dict[int, str]:
    """Step 1: every node's label is the majority of its `k` nearest labelled objects.

    `metric` "geodesic" (ours, the default) measures the walk to the object's anchor node, so votes do
    not leak through walls; "euclidean" is the straight line.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1; got {k}")
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    nodes, npos = _node_positions(scene)
    _, opos, olab = _labelled_objects(scene, labels)
    if not olab:
        raise ValueError(f"scene {scene.id} has no labelled object; pass labels for some of its objects")
    anchors = [o.node for o in scene.objects if labels.get(o.id) is not None]
    d = _object_distances(scene, nodes, npos, opos, anchors, metric)  # (nodes, objects)
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    return {n: _majority([(olab[j], d[i, j]) for j in order[i]]) for i, n in enumerate(nodes)}


def _neighbour_vote(g: nx.Graph, n: int, labels: Labels) -> tuple[list[str], Counter[str], str | None]:
    """(tied top labels, histogram, deterministic winner) of n's labelled neighbours."""
    votes = [(labels[m], g.edges[n, m].get("length", 1.0)) for m in sorted(g[n]) if labels.get(m) is not None]
    if not votes:
        return [], Counter(), None
    hist = Counter(label for label, _ in votes)
    top = max(hist.values())
    return sorted(lab for lab, c in hist.items() if c == top), hist, _majority(votes)  # type: ignore[arg-type]


def relabel_isolated(scene: Scene, labels: Labels, *, min_degree: int = 2, max_degree: int = 4) -> Labels:
    """Step 2: nodes with min_degree <= degree <= max_degree whose label differs from every neighbour's
    take their neighbours' majority (all nodes decided on the input labels, at once)."""
    g = scene.graph
    out = dict(labels)
    for n in sorted(g.nodes):
        if not min_degree <= g.degree(n) <= max_degree or labels.get(n) is None:
            continue
        neighbour_labels = {labels.get(m) for m in g[n]}
        if labels[n] not in neighbour_labels:
            _, _, winner = _neighbour_vote(g, n, labels)
            if winner is not None:
                out[n] = winner
    return out


def keep_largest_pieces(scene: Scene, labels: Labels) -> Labels:
    """Step 3: per label keep the largest connected piece of its nodes (ties: the piece with the lowest
    node id); nodes of the other pieces become unlabelled (None)."""
    g = scene.graph
    out: Labels = dict(labels)
    by_label: dict[str, list[int]] = {}
    for n in sorted(g.nodes):
        if labels.get(n) is not None:
            by_label.setdefault(labels[n], []).append(n)  # type: ignore[arg-type]
    for nodes in by_label.values():
        pieces = sorted(nx.connected_components(g.subgraph(nodes)), key=lambda c: (-len(c), min(c)))
        for piece in pieces[1:]:
            for n in piece:
                out[n] = None
    return out


def as_hook(llm: LLMHook | object | None) -> LLMHook | None:
    """`llm` as a prompt -> reply callable: a callable stays, a ChatModel (with `.chat`) is wrapped."""
    if llm is None or (callable(llm) and not hasattr(llm, "chat")):
        return llm  # type: ignore[return-value]
    if hasattr(llm, "chat"):

        def ask(prompt: str) -> str:
            (c,) = llm.chat([{"role": "user", "content": prompt}], max_tokens=16, temperature=0.0)  # type: ignore[attr-defined]
            return c.text

        return ask
    raise TypeError(
        f"llm must be a callable(prompt) -> str or a core.llm ChatModel; got {type(llm).__name__}"
    )


def _prompt(scene: Scene, n: int, hist: Counter[str], candidates: list[str], nearby: list[str]) -> str:
    x, y = scene.graph.nodes[n]["pos"]
    seen = ", ".join(f"{lab} x{c}" for lab, c in sorted(hist.items())) or "none"
    return (
        f"A walkable point at ({x:.1f}, {y:.1f}) m in a house. Its neighbouring points are labelled: {seen}. "
        f"Objects nearby: {', '.join(nearby) or 'none'}. Which region is the point in? "
        f"Answer with exactly one of: {', '.join(candidates)}."
    )


def _parse(reply: str, candidates: list[str]) -> str | None:
    """The candidate the reply names (case, quotes and a final full stop ignored), else None."""
    r = reply.strip().strip("\"'`").rstrip(".").strip().lower()
    hits = [c for c in candidates if c.lower() == r]
    return hits[0] if len(hits) == 1 else None


def fill_from_neighbours(
    scene: Scene,
    labels: Labels,
    *,
    llm: LLMHook | object | None = None,
    fallback: Mapping[int, str] | None = None,
    objects: Mapping[str, str] | None = None,
) -> dict[int, str]:
    """Step 4: unlabelled nodes take their labelled neighbours' majority, round after round (each round
    decided on the previous round's labels) until no node changes.

    `llm` is asked where the histogram is tied (candidates: the tied labels), and at the end for nodes
    with no labelled neighbour at all (candidates: every label in use); a reply that is not a candidate
    is ignored. Without an answer, ties go to the nearest neighbour and nodes left unlabelled take
    `fallback[n]` (e.g. step 1's vote), else the most common label. `objects` (object id -> label)
    only adds the nearest objects to the prompts.
    """
    g = scene.graph
    ask = as_hook(llm)
    out: Labels = dict(labels)
    for n in g.nodes:
        out.setdefault(n, None)
    nearby = _nearby_objects(scene, objects or {}) if ask is not None else {}

    def decide(n: int, hist: Counter[str], candidates: list[str], default: str) -> str:
        if ask is not None and len(candidates) > 1:
            answer = _parse(ask(_prompt(scene, n, hist, candidates, nearby.get(n, []))), candidates)
            if answer is not None:
                return answer
        return default

    while True:
        changes: dict[int, str] = {}
        for n in sorted(g.nodes):
            if out[n] is not None:
                continue
            tied, hist, winner = _neighbour_vote(g, n, out)
            if winner is not None:
                changes[n] = decide(n, hist, tied, winner)
        if not changes:
            break
        out.update(changes)
    rest = sorted(n for n, lab in out.items() if lab is None)
    if rest:
        used = Counter(lab for lab in out.values() if lab is not None) or Counter(
            fallback.values() if fallback else []
        )
        if not used:
            raise ValueError(f"scene {scene.id}: no node is labelled, so step 4 has nothing to spread")
        common = min(used, key=lambda lab: (-used[lab], lab))
        for n in rest:
            default = fallback[n] if fallback and fallback.get(n) is not None else common
            out[n] = decide(n, Counter(), sorted(used), default)
    return out  # type: ignore[return-value]


def _nearby_objects(scene: Scene, labels: Mapping[str, str], k: int = 3) -> dict[int, list[str]]:
    """For prompts: each node's k nearest objects as "name (label)"."""
    nodes, npos = _node_positions(scene)
    ids, opos, olab = _labelled_objects(scene, labels)
    if not ids:
        return {}
    names = {o.id: o.name for o in scene.objects}
    d = np.hypot(npos[:, None, 0] - opos[None, :, 0], npos[:, None, 1] - opos[None, :, 1])
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    return {n: [f"{names[ids[j]]} ({olab[j]})" for j in order[i]] for i, n in enumerate(nodes)}


def label_regions(
    scene: Scene,
    objects_labels: Mapping[str, str] | None = None,
    *,
    llm: LLMHook | object | None = None,
    metric: str = "geodesic",
) -> dict[int, str]:
    """The four steps: every node's region label from object labels (default: `object_labels(scene)`).

    Parameters
    ----------
    scene : Scene
        Its graph and objects (positions) are read; nothing is written (see `apply_regions`).
    objects_labels : Mapping[str, str], optional
        Object id -> label, possibly noisy; objects missing or mapped to None take no part.
    llm : callable(prompt) -> str or core.llm ChatModel, optional
        Asked in step 4 where the neighbour histogram is tied or empty.
    metric : {"geodesic", "euclidean"}
        Step 1's distance to objects (see `vote_nearest_objects`).
    """
    labels = object_labels(scene) if objects_labels is None else dict(objects_labels)
    voted = vote_nearest_objects(scene, labels, metric=metric)
    labelled = keep_largest_pieces(scene, relabel_isolated(scene, dict(voted)))  # type: ignore[arg-type]
    return fill_from_neighbours(scene, labelled, llm=llm, fallback=voted, objects=labels)


def apply_regions(scene: Scene, labels: Mapping[int, str]) -> None:
    """Write `region_name(label)` into every labelled node's `region` attribute."""
    for n, label in labels.items():
        scene.graph.nodes[n]["region"] = region_name(label)
