"""NavCraft (CoNavBench, ICLR 2026): single-robot missions (NavCraft-S) and their collaborative
extensions (NavCraft-C).

NavCraft-S samples (s, t, e): a start node s, the target object's anchor t, the end object's anchor
e, each leg (s -> t, t -> e) connected and at least max(2, tau) region hops long (tau = 2; hops
counted by `region_hops` along the shortest path). Instructions come in two protocols: one
high-level sentence from templates, and LH-VLN-style step-by-step sub-tasks
(`Move_to('sofa_living room')`, `Pick('cup')`, ...). An optional LLM agent (`propose_instruction`)
writes the high-level sentence and the sub-tasks; its proposal must pass `check_proposal`.

NavCraft-C adds a helper at node h and a relay object anchored at x and scores (acceptance rule):
    C_solo = d(s, t) + d(t, e)                       (Eq. C_solo)
    J_A1 = d(s, x) + d(x, e)     (helper fetches t, hands over at x; primary delivers)
    J_A2 = d(s, t) + d(t, x)     (primary fetches t, hands over at x; helper delivers)
    accept iff min(J_A1, J_A2) < C_solo;  alpha = min(J) / C_solo;  type = argmin (ties: A1).
Guards: x != t, the relay object exists, both robots reach x, the helper reaches t (A1) or e (A2);
ours: x != e and x != s (a relay there lets one robot do the whole job), and the helper starts on
none of s, t, x, e. Both robots' timed
paths (`tools.timed_path`) meet at x, where the first to arrive waits; `tools.repair` removes
their conflicts. The makespan is when the object is placed at e.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from iclr26.conavbench import tools
from iclr26.conavbench.episode import ROBOTS, Episode, SubTask, Visit
from iclr26.conavbench.scene import Scene, SceneObject, region_hops
from iclr26.core.jsontext import json_objects

TAU = 2
"""The paper's tau: the minimum region hops of a leg is max(2, tau)."""
MIN_HOPS = max(2, TAU)

SINGLE_TEMPLATES = (
    "Bring the {t} from the {rt} to the {e} in the {re}.",
    "Take the {t} in the {rt} to the {e} in the {re}.",
    "Go to the {rt}, pick up the {t}, and bring it to the {e} in the {re}.",
    "Fetch the {t} from the {rt} and put it by the {e} in the {re}.",
)
COLLAB_TEMPLATES = {
    "A1": "{base} The helper fetches the {t} and hands it to you at the {x} in the {rx}.",
    "A2": "{base} Hand the {t} to the helper at the {x} in the {rx}; the helper delivers it.",
}
ACTION_WORD = {
    "move_to": "Move_to",
    "pick": "Pick",
    "place": "Place",
    "handoff": "Handoff",
    "receive": "Receive",
}
ACTION_RANK = {"move_to": 0, "pick": 1, "handoff": 2, "receive": 3, "place": 4}
"""Order of sub-tasks that finish at the same time (the giver hands over before the taker receives)."""


@dataclass(frozen=True)
class Triple:
    """A NavCraft-S mission: start node s, target object id, end object id."""

    start: int
    target: str
    end: str


def object_region(scene: Scene, obj: SceneObject) -> str:
    """An object's region: the label of its anchor node."""
    return str(scene.graph.nodes[obj.node]["region"])


def subtask_text(action: str, name: str, region: str | None = None) -> str:
    """LH-VLN's step form: Move_to('<name>_<region>'); the other actions name the carried object."""
    return (
        f"{ACTION_WORD[action]}('{name}_{region}')"
        if action == "move_to"
        else f"{ACTION_WORD[action]}('{name}')"
    )


def leg_hops(scene: Scene, sp: tools.ShortestPaths, a: int, b: int) -> int:
    """Region hops along the shortest path a -> b (-1 when unreachable)."""
    if sp.distance(a, b) == float("inf"):
        return -1
    return region_hops(scene, sp.path(a, b))


def legs_valid(scene: Scene, sp: tools.ShortestPaths, s: int, t: int, e: int, tau: int = TAU) -> bool:
    """The hop rule: both legs s -> t and t -> e connected and >= max(2, tau) region hops."""
    need = max(2, tau)
    return leg_hops(scene, sp, t, s) >= need and leg_hops(scene, sp, t, e) >= need


def sample_triple(
    rng: np.random.Generator, scene: Scene, sp: tools.ShortestPaths, *, tau: int = TAU, tries: int = 200
) -> Triple | None:
    """A random (s, t, e) obeying the hop rule, or None after `tries` draws."""
    objs = scene.objects
    starts = sorted(n for n, d in scene.graph.nodes(data=True) if not d.get("door"))
    if len(objs) < 2 or not starts:
        return None
    for _ in range(tries):
        i, j = rng.choice(len(objs), size=2, replace=False)
        t, e = objs[int(i)], objs[int(j)]
        s = starts[int(rng.integers(len(starts)))]
        if t.node != e.node and legs_valid(scene, sp, s, t.node, e.node, tau):
            return Triple(s, t.id, e.id)
    return None


@dataclass(frozen=True)
class Acceptance:
    """The acceptance rule's verdict: C_solo, J_A1, J_A2, accepted, type = argmin J, alpha."""

    c_solo: float
    j_a1: float
    j_a2: float

    @property
    def collab_type(self) -> str:
        return "A1" if self.j_a1 <= self.j_a2 else "A2"  # ties: A1

    @property
    def alpha(self) -> float:
        return min(self.j_a1, self.j_a2) / self.c_solo  # alpha = min(J) / C_solo

    @property
    def accepted(self) -> bool:
        return min(self.j_a1, self.j_a2) < self.c_solo  # accept iff min(J_A1, J_A2) < C_solo


def acceptance(sp: tools.ShortestPaths, s: int, t: int, e: int, x: int) -> Acceptance:
    """C_solo = d(s,t) + d(t,e), J_A1 = d(s,x) + d(x,e), J_A2 = d(s,t) + d(t,x)."""
    return Acceptance(
        c_solo=sp.distance(t, s) + sp.distance(t, e),
        j_a1=sp.distance(x, s) + sp.distance(x, e),
        j_a2=sp.distance(t, s) + sp.distance(t, x),
    )


MIN_LEG = 2.0
"""Metres every leg of a collaborative mission must span: twice the 1 m success radius, so no leg
is done where it starts (a null agent must fail every step)."""


def guard_failure(
    sp: tools.ShortestPaths, collab_type: str, s: int, h: int, t: int, e: int, x: int
) -> str | None:
    """Which guard fails (None when all hold): x != t, x != e, x != s, h not in {s, t, x, e}, both
    robots reach x, the helper reaches t (A1) or e (A2), every leg at least `MIN_LEG` long."""
    inf = float("inf")
    if x == t:
        return "relay x is the target's node t"
    if x == e:
        return "relay x is the end node e"
    if x == s:
        return "relay x is the primary's start s"
    if h in (s, t, e, x):
        return "the helper starts on a waypoint"
    if sp.distance(x, s) == inf:
        return "the primary cannot reach the relay"
    if sp.distance(x, h) == inf:
        return "the helper cannot reach the relay"
    if collab_type == "A1" and sp.distance(t, h) == inf:
        return "the helper cannot reach the target (A1)"
    if collab_type == "A2" and sp.distance(x, e) == inf:
        return "the helper cannot reach the end (A2)"
    legs = ((h, t), (t, x), (s, x), (x, e)) if collab_type == "A1" else ((s, t), (t, x), (h, x), (x, e))
    if any(sp.distance(a, b) < MIN_LEG for a, b in legs):  # ours: a leg must not start at its goal
        return f"a leg is shorter than {MIN_LEG} m"
    return None


def _walk(sp: tools.ShortestPaths, *stops: int) -> tuple[list[int], list[int]]:
    """The concatenated shortest paths through `stops` and the indices where each stop is reached."""
    nodes, marks = [stops[0]], [0]
    for a, b in pairwise(stops):
        nodes += sp.path(a, b)[1:]
        marks.append(len(nodes) - 1)
    return nodes, marks


def _objects(scene: Scene, ids: Sequence[str]) -> tuple[tuple[str, str, str], ...]:
    return tuple((o.id, o.name, object_region(scene, o)) for o in (scene.object(i) for i in ids))


def _step(
    scene: Scene, robot: str, action: str, node: int, obj: SceneObject, carried: SceneObject
) -> SubTask:
    region = str(scene.graph.nodes[node]["region"])
    if action == "move_to":
        return SubTask(
            robot,
            action,
            node,
            obj.id,
            object_region(scene, obj),
            subtask_text(action, obj.name, object_region(scene, obj)),
        )
    return SubTask(robot, action, node, carried.id, region, subtask_text(action, carried.name))


def _schedule(paths: dict[str, tools.TimedPath]) -> tuple[Visit, ...]:
    """Every robot's visits merged by arrival (stable: each robot's own order is kept)."""
    visits = [v for r in ROBOTS if r in paths for v in paths[r].visits]
    return tuple(sorted(visits, key=lambda v: (v.arrive, ROBOTS.index(v.robot))))


def high_level(scene: Scene, triple: Triple, template: int = 0) -> str:
    """The high-level instruction from `SINGLE_TEMPLATES[template]`."""
    t, e = scene.object(triple.target), scene.object(triple.end)
    fill = {"t": t.name, "rt": object_region(scene, t), "e": e.name, "re": object_region(scene, e)}
    return SINGLE_TEMPLATES[template % len(SINGLE_TEMPLATES)].format(**fill)


def single_subtasks(scene: Scene, triple: Triple) -> tuple[SubTask, ...]:
    """NavCraft-S's step protocol: move_to(t), pick, move_to(e), place."""
    t, e = scene.object(triple.target), scene.object(triple.end)
    return (
        _step(scene, "primary", "move_to", t.node, t, t),
        _step(scene, "primary", "pick", t.node, t, t),
        _step(scene, "primary", "move_to", e.node, e, t),
        _step(scene, "primary", "place", e.node, e, t),
    )


def single_episode(
    scene: Scene, triple: Triple, episode_id: str, sp: tools.ShortestPaths, *, template: int = 0
) -> Episode:
    """The NavCraft-S episode of a valid triple, with the primary's timed shortest path s -> t -> e."""
    t, e = scene.object(triple.target), scene.object(triple.end)
    nodes, marks = _walk(sp, triple.start, t.node, e.node)
    tp = tools.timed_path(scene, "primary", nodes, pins=marks)
    return Episode(
        id=episode_id,
        scene=scene.id,
        kind="single",
        instruction=high_level(scene, triple, template),
        subtasks=single_subtasks(scene, triple),
        starts={"primary": triple.start},
        target=t.id,
        end=e.id,
        objects=_objects(scene, [t.id, e.id]),
        solo_cost=sp.distance(t.node, triple.start) + sp.distance(t.node, e.node),
        schedule=_schedule({"primary": tp}),
        meta={"makespan": round(tp.visits[-1].arrive, 6)},
    )


@dataclass
class Proposals:
    """Counts of NavCraft-C proposals: made, accepted by the rule and guards, kept after repair."""

    proposed: int = 0
    accepted: int = 0
    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)

    def reject(self, why: str) -> None:
        self.rejected[why] = self.rejected.get(why, 0) + 1


def collaborative_episode(
    scene: Scene,
    triple: Triple,
    helper_start: int,
    relay: str,
    episode_id: str,
    sp: tools.ShortestPaths,
    *,
    template: int = 0,
    counts: Proposals | None = None,
    rule: str = "paper",
) -> Episode | None:
    """The NavCraft-C episode of (s, t, e) with helper start h and relay object `relay`, or None when
    the acceptance rule, a guard or the schedule repair rejects it (the reason counted in `counts`).

    `rule="makespan"` (ours) also requires the repaired schedule to place the object sooner than the
    primary alone would (makespan < C_solo / speed): the paper's rule counts only the primary's
    distance, so a helper that walks across the house can still be "accepted"."""
    counts = counts if counts is not None else Proposals()
    counts.proposed += 1
    t, e, xo = scene.object(triple.target), scene.object(triple.end), scene.object(relay)
    s, h, x = triple.start, helper_start, xo.node
    if x == t.node:  # the guard x != t comes first: J is meaningless at x = t
        counts.reject("relay x is the target's node t")
        return None
    acc = acceptance(sp, s, t.node, e.node, x)
    if not acc.accepted:
        counts.reject("min(J) >= C_solo")
        return None
    kind = acc.collab_type
    why = guard_failure(sp, kind, s, h, t.node, e.node, x)
    if why:
        counts.reject(why)
        return None
    counts.accepted += 1
    if kind == "A1":  # helper: h -> t -> x; primary: s -> x -> e
        (hn, hm), (pn, pm) = _walk(sp, h, t.node, x), _walk(sp, s, x, e.node)
        hp = tools.timed_path(scene, "helper", hn, pins=hm, meet=hm[-1])
        pp = tools.timed_path(scene, "primary", pn, pins=pm, meet=pm[1])
    else:  # primary: s -> t -> x; helper: h -> x -> e
        (pn, pm), (hn, hm) = _walk(sp, s, t.node, x), _walk(sp, h, x, e.node)
        pp = tools.timed_path(scene, "primary", pn, pins=pm, meet=pm[-1])
        hp = tools.timed_path(scene, "helper", hn, pins=hm, meet=hm[1])
    try:
        fixed = tools.repair(scene, {"primary": pp, "helper": hp}, exempt={x})
    except tools.ScheduleError:
        counts.reject("schedule repair failed")
        return None
    counts.kept += 1
    paths = fixed.paths
    fetcher, carrier = ("helper", "primary") if kind == "A1" else ("primary", "helper")
    fp, cp = paths[fetcher], paths[carrier]
    sync = cp.visits[cp.meet].depart  # type: ignore[index]
    pin_time = {r: [tp.visits[k].arrive for k in tp.pins] for r, tp in paths.items()}
    # (time, rank, robot rank) orders the two robots' sub-tasks; the pins are start, t | x, x | e
    steps = [
        (pin_time[fetcher][1], _step(scene, fetcher, "move_to", t.node, t, t)),
        (pin_time[fetcher][1], _step(scene, fetcher, "pick", t.node, t, t)),
        (pin_time[fetcher][2], _step(scene, fetcher, "move_to", x, xo, t)),
        (sync, _step(scene, fetcher, "handoff", x, xo, t)),
        (pin_time[carrier][1], _step(scene, carrier, "move_to", x, xo, t)),
        (sync, _step(scene, carrier, "receive", x, xo, t)),
        (pin_time[carrier][2], _step(scene, carrier, "move_to", e.node, e, t)),
        (pin_time[carrier][2], _step(scene, carrier, "place", e.node, e, t)),
    ]
    steps.sort(key=lambda p: (round(p[0], 6), ACTION_RANK[p[1].action], ROBOTS.index(p[1].robot)))
    base = high_level(scene, triple, template)
    if rule == "makespan" and cp.visits[-1].arrive >= acc.c_solo / tools.SPEED:
        counts.reject("makespan >= solo (makespan rule)")
        return None
    instruction = COLLAB_TEMPLATES[kind].format(base=base, t=t.name, x=xo.name, rx=object_region(scene, xo))
    return Episode(
        id=episode_id,
        scene=scene.id,
        kind="collaborative",
        instruction=instruction,
        subtasks=tuple(st for _, st in steps),
        starts={"primary": s, "helper": h},
        target=t.id,
        end=e.id,
        objects=_objects(scene, [t.id, e.id, xo.id]),
        collab_type=kind,
        relay=xo.id,
        alpha=round(acc.alpha, 9),
        solo_cost=round(acc.c_solo, 9),
        schedule=_schedule(paths),
        repairs=fixed.repairs,
        meta={
            "makespan": round(cp.visits[-1].arrive, 6),
            "handoff_time": round(sync, 6),
            "meet": {fetcher: fp.meet, carrier: cp.meet},
            "repair_kinds": list(fixed.kinds),
            "j_a1": round(acc.j_a1, 9),
            "j_a2": round(acc.j_a2, 9),
            "solo_makespan": round(acc.c_solo / tools.SPEED, 6),
        },
    )


def propose_collaborative(
    rng: np.random.Generator,
    scene: Scene,
    triple: Triple,
    episode_id: str,
    sp: tools.ShortestPaths,
    *,
    tries: int = 20,
    template: int = 0,
    counts: Proposals | None = None,
    rule: str = "paper",
) -> Episode | None:
    """Random (helper start, relay object) proposals for one triple until one is kept (None after `tries`)."""
    starts = sorted(n for n, d in scene.graph.nodes(data=True) if not d.get("door") and n != triple.start)
    if not starts:
        return None
    for _ in range(tries):
        h = starts[int(rng.integers(len(starts)))]
        relay = scene.objects[int(rng.integers(len(scene.objects)))].id
        ep = collaborative_episode(
            scene, triple, h, relay, episode_id, sp, template=template, counts=counts, rule=rule
        )
        if ep is not None:
            return ep
    return None


RULES = ("paper", "makespan")
"""NavCraft-C acceptance: the paper's min(J_A1, J_A2) < C_solo, or that and a shorter makespan (ours)."""


def scene_episodes(
    rng: np.random.Generator,
    scene: Scene,
    n_single: int,
    n_collab: int,
    *,
    tau: int = TAU,
    rule: str = "paper",
) -> tuple[list[Episode], Proposals]:
    """`n_single` NavCraft-S and `n_collab` NavCraft-C episodes of one scene (fewer when the scene
    cannot supply them), distinct triples per kind; and the collaborative proposal counts."""
    sp = tools.ShortestPaths(scene)
    counts = Proposals()
    out: list[Episode] = []
    for kind, n in (("single", n_single), ("collaborative", n_collab)):
        seen: set[Triple] = set()
        for _ in range(20 * n):
            if len(seen) == n:
                break
            triple = sample_triple(rng, scene, sp, tau=tau)
            if triple is None:
                break
            if triple in seen:
                continue
            eid = f"{scene.id}_{'s' if kind == 'single' else 'c'}{len(seen):03d}"
            template = int(rng.integers(len(SINGLE_TEMPLATES)))
            if kind == "single":
                ep = single_episode(scene, triple, eid, sp, template=template)
            else:
                ep = propose_collaborative(
                    rng, scene, triple, eid, sp, template=template, counts=counts, rule=rule
                )
            if ep is not None:
                seen.add(triple)
                out.append(ep)
    return out, counts


# --- the optional LLM generation agent ---------------------------------------------------------

_STEP = re.compile(r"^\s*([A-Za-z_]+)\('([^']*)'\)\s*$")
PROMPT = (
    "You write navigation missions for a home robot. Objects (name: region): {objects}.\n"
    "Mission: bring the {t} (in the {rt}) to the {e} (in the {re}).\n"
    'Reply with JSON: {{"instruction": one sentence naming both objects and both regions, '
    "\"subtasks\": the steps, each one of Move_to('<object>_<region>'), Pick('<object>'), "
    "Place('<object>')}}."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "instruction": {"type": "string"},
        "subtasks": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["instruction", "subtasks"],
}


@dataclass(frozen=True)
class Proposal:
    """An LLM's mission text, and whether it passed `check_proposal` (`reason` when not)."""

    instruction: str
    subtasks: tuple[str, ...]
    ok: bool
    reason: str = ""


def _norm(step: str) -> str:
    m = _STEP.match(step)
    return f"{m.group(1).lower()}({m.group(2).strip().lower()})" if m else ""


def check_proposal(scene: Scene, triple: Triple, instruction: str, subtasks: Sequence[str]) -> str | None:
    """Why a proposed instruction fails the validator (None when it passes): it must name the target,
    the end and both their regions, and its sub-tasks must parse to the template's sub-tasks."""
    t, e = scene.object(triple.target), scene.object(triple.end)
    text = instruction.lower()
    for what, word in (
        ("target", t.name),
        ("target region", object_region(scene, t)),
        ("end", e.name),
        ("end region", object_region(scene, e)),
    ):
        if word.lower() not in text:
            return f"the instruction does not name the {what} {word!r}"
    want = [_norm(st.text) for st in single_subtasks(scene, triple)]
    got = [_norm(s) for s in subtasks]
    if "" in got:
        return f"sub-task {subtasks[got.index('')]!r} does not parse as Action('argument')"
    if got != want:
        return (
            f"the sub-tasks {list(subtasks)} differ from {[st.text for st in single_subtasks(scene, triple)]}"
        )
    return None


def propose_instruction(model: Any, scene: Scene, triple: Triple, *, seed: int | None = None) -> Proposal:
    """Ask a `core.llm` ChatModel for the mission's instruction and sub-tasks; validate the reply."""
    t, e = scene.object(triple.target), scene.object(triple.end)
    objects = ", ".join(f"{o.name}: {object_region(scene, o)}" for o in scene.objects)
    prompt = PROMPT.format(
        objects=objects, t=t.name, rt=object_region(scene, t), e=e.name, re=object_region(scene, e)
    )
    kwargs: dict[str, Any] = {"max_tokens": 256, "seed": seed}
    if getattr(model, "supports_json_schema", False):
        kwargs["json_schema"] = SCHEMA
    reply = model.chat([{"role": "user", "content": prompt}], **kwargs)[0].text
    try:
        data = json_objects(reply)[0]
        instruction, subtasks = str(data["instruction"]), tuple(str(s) for s in data["subtasks"])
    except (IndexError, KeyError, TypeError) as err:
        return Proposal(reply, (), False, f"reply is not the JSON asked for ({type(err).__name__})")
    why = check_proposal(scene, triple, instruction, subtasks)
    return Proposal(instruction, subtasks, why is None, why or "")


def generation_success_rate(model: Any, scene: Scene, triples: Sequence[Triple]) -> float:
    """The share of the LLM agent's proposals that pass the validator (the paper's GPT-4o-mini: 64%)."""
    if not triples:
        raise ValueError("triples must not be empty")
    return sum(propose_instruction(model, scene, tr, seed=k).ok for k, tr in enumerate(triples)) / len(
        triples
    )
