"""The CoNavBench episode validator and JSON form (ICLR 2026; LH-VLN's episode shape).

`validate(episode, scene)` re-runs every generation check and raises `EpisodeError`, one line
naming the episode and the failed check: field types and values, the scene's connectivity, the
hop rule on both legs (>= max(2, tau) region hops), the acceptance rule with alpha and C_solo
recomputed, the guards, the sub-task sequence of the collaboration type, and the schedule (walks
along edges at the robots' speed, times non-decreasing, the first robot at the relay waits for
the other, no conflicts left). `episode_to_json` / `episode_from_json` convert losslessly with a
fixed key order, so `json.dumps` of a generated split repeats byte for byte.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import networkx as nx

from iclr26.conavbench import missions, tools
from iclr26.conavbench.episode import ACTIONS, COLLAB_TYPES, KINDS, ROBOTS, Episode, SubTask, Visit
from iclr26.conavbench.scene import Scene
from iclr26.core.errors import UserError

TOL = 1e-6
"""Relative tolerance of recomputed distances, alpha and times."""


class EpisodeError(UserError):
    """An episode that fails a check: the message names the episode and the check."""


def _fail(ep: Episode, check: str, why: str) -> None:
    raise EpisodeError(f"episode {ep.id!r}: {check} check failed: {why}")


def _close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def _expected_steps(ep: Episode, scene: Scene) -> dict[str, list[tuple[str, int, str]]]:
    """Per robot, the (action, node, object) sequence the kind and type prescribe."""
    t, e = scene.object(ep.target), scene.object(ep.end)
    if ep.kind == "single":
        return {
            "primary": [
                ("move_to", t.node, t.id),
                ("pick", t.node, t.id),
                ("move_to", e.node, e.id),
                ("place", e.node, t.id),
            ]
        }
    x = scene.object(ep.relay)  # type: ignore[arg-type]
    fetcher, carrier = ("helper", "primary") if ep.collab_type == "A1" else ("primary", "helper")
    return {
        fetcher: [
            ("move_to", t.node, t.id),
            ("pick", t.node, t.id),
            ("move_to", x.node, x.id),
            ("handoff", x.node, t.id),
        ],
        carrier: [
            ("move_to", x.node, x.id),
            ("receive", x.node, t.id),
            ("move_to", e.node, e.id),
            ("place", e.node, t.id),
        ],
    }


def validate(ep: Episode, scene: Scene, *, tau: int = missions.TAU) -> None:
    """Raise `EpisodeError` at the first failed check of `ep` against `scene`; return None when valid."""
    # fields: types and values
    if not isinstance(ep, Episode):
        raise EpisodeError(f"expected an Episode, got {type(ep).__name__}")
    if ep.scene != scene.id:
        _fail(ep, "scene", f"episode names scene {ep.scene!r}, validated against {scene.id!r}")
    if ep.kind not in KINDS:
        _fail(ep, "kind", f"kind {ep.kind!r} is not one of {KINDS}")
    collab = ep.kind == "collaborative"
    if collab and ep.collab_type not in COLLAB_TYPES:
        _fail(ep, "collab_type", f"unknown collaboration type {ep.collab_type!r}; known: {COLLAB_TYPES}")
    if not collab and (ep.collab_type is not None or ep.relay is not None):
        _fail(ep, "collab_type", "a single episode has collab_type and relay None")
    want_robots = set(ROBOTS) if collab else {"primary"}
    if set(ep.starts) != want_robots:
        _fail(ep, "robots", f"starts has robots {sorted(ep.starts)}, expected {sorted(want_robots)}")
    g = scene.graph
    for r, n in ep.starts.items():
        if n not in g:
            _fail(ep, "nodes", f"{r}'s start node {n} is not in scene {scene.id}")
    names = [ep.target, ep.end] + ([ep.relay] if collab else [])
    for oid in names:
        try:
            scene.object(oid)  # type: ignore[arg-type]
        except KeyError:
            _fail(ep, "objects", f"object {oid!r} does not exist in scene {scene.id}")
    listed = {o[0]: o for o in ep.objects}
    for oid in names:
        o = scene.object(oid)  # type: ignore[arg-type]
        want = (o.id, o.name, missions.object_region(scene, o))
        if listed.get(o.id) != want:
            _fail(ep, "objects", f"object {o.id!r} is listed as {listed.get(o.id)}, the scene has {want}")
    if not isinstance(ep.instruction, str) or not ep.instruction.strip():
        _fail(ep, "instruction", "the instruction is empty")
    for _, name, region in ep.objects:
        if name.lower() not in ep.instruction.lower() or region.lower() not in ep.instruction.lower():
            _fail(ep, "instruction", f"the instruction does not name {name!r} in the {region!r}")
    if not nx.is_connected(g):
        _fail(
            ep, "connectivity", f"scene {scene.id}'s graph has {nx.number_connected_components(g)} components"
        )

    # the hop rule on both legs: >= max(2, tau) region hops along shortest paths
    sp = tools.ShortestPaths(scene)
    s, t, e = ep.starts["primary"], scene.object(ep.target).node, scene.object(ep.end).node
    for leg, (a, b) in (("s->t", (t, s)), ("t->e", (t, e))):
        hops = missions.leg_hops(scene, sp, a, b)
        if hops < max(2, tau):
            _fail(ep, "hops", f"leg {leg} has {hops} region hops, needs >= {max(2, tau)}")
    c_solo = sp.distance(t, s) + sp.distance(t, e)
    if not _close(ep.solo_cost, c_solo):
        _fail(ep, "solo_cost", f"solo_cost {ep.solo_cost} != C_solo = d(s,t) + d(t,e) = {c_solo:.6f}")

    # the guards and the acceptance rule, recomputed
    if collab:
        x, h = scene.object(ep.relay).node, ep.starts["helper"]  # type: ignore[arg-type]
        acc = missions.acceptance(sp, s, t, e, x) if x != t else None
        why = missions.guard_failure(sp, acc.collab_type if acc else "A1", s, h, t, e, x)
        if why:
            _fail(ep, "guards", why)
        assert acc is not None
        if not acc.accepted:
            _fail(
                ep,
                "acceptance",
                f"min(J_A1, J_A2) = {min(acc.j_a1, acc.j_a2):.3f} >= C_solo = {acc.c_solo:.3f}",
            )
        if ep.collab_type != acc.collab_type:
            _fail(
                ep,
                "acceptance",
                f"type {ep.collab_type} but argmin J is {acc.collab_type} "
                f"(J_A1 = {acc.j_a1:.3f}, J_A2 = {acc.j_a2:.3f})",
            )
        if not _close(ep.alpha, acc.alpha):
            _fail(ep, "alpha", f"alpha {ep.alpha} != min(J) / C_solo = {acc.alpha:.6f}")
    elif ep.alpha is not None:
        _fail(ep, "alpha", "a single episode has alpha None")

    # sub-tasks: types, values, the type's per-robot sequence
    for st in ep.subtasks:
        if not isinstance(st, SubTask) or st.robot not in want_robots or st.action not in ACTIONS:
            _fail(ep, "subtasks", f"bad sub-task {st!r} (robots {sorted(want_robots)}, actions {ACTIONS})")
        if st.node not in g:
            _fail(ep, "nodes", f"sub-task {st.text!r} is at node {st.node}, not in scene {scene.id}")
    for robot, want in _expected_steps(ep, scene).items():
        got = [(st.action, st.node, st.object) for st in ep.subtasks if st.robot == robot]
        if got != want:
            _fail(ep, "subtasks", f"{robot}'s sub-tasks {got} are not {ep.collab_type or 'single'}'s {want}")

    # the schedule: walks along edges at the robots' speed, starting at the starts
    if not ep.schedule or not all(isinstance(v, Visit) for v in ep.schedule):
        _fail(ep, "schedule", "the schedule is empty or holds non-Visits")
    paths: dict[str, tools.TimedPath] = {}
    for robot in sorted(want_robots, key=ROBOTS.index):
        vs = [v for v in ep.schedule if v.robot == robot]
        if not vs or vs[0].node != ep.starts[robot]:
            _fail(ep, "schedule", f"{robot}'s visits do not begin at its start node {ep.starts[robot]}")
        for a, b in pairwise(vs):
            if b.arrive < a.depart - TOL or a.depart < a.arrive - TOL:
                _fail(
                    ep,
                    "schedule",
                    f"{robot}'s times decrease at node {b.node} ({a.depart:.3f} -> {b.arrive:.3f})",
                )
        try:
            tp = tools.timed_path(
                scene, robot, [v.node for v in vs], vs[0].arrive, [max(0.0, v.depart - v.arrive) for v in vs]
            )
        except ValueError as err:
            _fail(ep, "schedule", str(err))
        for v, w in zip(vs, tp.visits, strict=True):
            if not _close(v.arrive, w.arrive):
                _fail(
                    ep,
                    "schedule",
                    f"{robot} reaches node {v.node} at {v.arrive:.3f}, its walk gets there at {w.arrive:.3f}",
                )
        paths[robot] = tp
    if collab:
        x = scene.object(ep.relay).node  # type: ignore[arg-type]
        meet = ep.meta.get("meet", {})
        if set(meet) != set(ROBOTS):
            _fail(ep, "schedule", f"meta['meet'] must give both robots' relay visit index, got {meet!r}")
        at = {
            r: paths[r].visits[int(k)] if 0 <= int(k) < len(paths[r].visits) else None
            for r, k in meet.items()
        }
        if any(v is None or v.node != x for v in at.values()):
            _fail(ep, "schedule", f"the meet visits {at} are not at the relay node {x}")
        sync = max(v.arrive for v in at.values())  # type: ignore[union-attr]
        if not all(_close(v.depart, sync) for v in at.values()):  # type: ignore[union-attr]
            _fail(ep, "rendezvous", f"the first robot at the relay must wait until {sync:.3f}: {at}")
        found = tools.conflicts(scene, paths["primary"], paths["helper"], exempt={x})
        if found:
            c = found[0]
            _fail(
                ep,
                "conflicts",
                f"{len(found)} left, first a {c.kind} conflict at {c.a.where} at {c.start:.2f} s",
            )
    if ep.repairs < 0:
        _fail(ep, "repairs", f"repairs must be >= 0, got {ep.repairs}")


# --- JSON ---------------------------------------------------------------------------------------


def episode_to_json(ep: Episode) -> dict[str, Any]:
    """LH-VLN's keys ("Task instruction", "Subtask list", "Object", "Robot", "Scene") then ours."""
    return {
        "id": ep.id,
        "Scene": ep.scene,
        "Task instruction": ep.instruction,
        "Subtask list": [st.text for st in ep.subtasks],
        "Object": [[oid, name, region] for oid, name, region in ep.objects],
        "Robot": {r: ep.starts[r] for r in ROBOTS if r in ep.starts},
        "kind": ep.kind,
        "target": ep.target,
        "end": ep.end,
        "collab_type": ep.collab_type,
        "relay": ep.relay,
        "alpha": ep.alpha,
        "solo_cost": ep.solo_cost,
        "repairs": ep.repairs,
        "subtasks": [
            {
                "robot": st.robot,
                "action": st.action,
                "node": st.node,
                "object": st.object,
                "region": st.region,
                "text": st.text,
            }
            for st in ep.subtasks
        ],
        "schedule": [[v.robot, v.node, v.arrive, v.depart] for v in ep.schedule],
        "meta": ep.meta,
    }


def episode_from_json(d: Mapping[str, Any]) -> Episode:
    """The inverse of `episode_to_json` (EpisodeError naming the missing key)."""
    try:
        return Episode(
            id=str(d["id"]),
            scene=str(d["Scene"]),
            kind=str(d["kind"]),
            instruction=str(d["Task instruction"]),
            subtasks=tuple(
                SubTask(s["robot"], s["action"], int(s["node"]), s["object"], s["region"], s["text"])
                for s in d["subtasks"]
            ),
            starts={str(r): int(n) for r, n in d["Robot"].items()},
            target=str(d["target"]),
            end=str(d["end"]),
            objects=tuple((str(a), str(b), str(c)) for a, b, c in d["Object"]),
            collab_type=d["collab_type"],
            relay=d["relay"],
            alpha=d["alpha"],
            solo_cost=d["solo_cost"],
            schedule=tuple(Visit(str(r), int(n), float(a), float(b)) for r, n, a, b in d["schedule"]),
            repairs=int(d["repairs"]),
            meta=dict(d.get("meta", {})),
        )
    except KeyError as err:
        raise EpisodeError(f"episode {d.get('id', '?')!r}: JSON lacks key {err}") from err
