"""An episode: what a mission asks of one or two robots, in LH-VLN's JSON shape plus the
collaborative fields. The contract the generator writes, the validator checks, and the simulator
and agents read.

A mission moves an object: the robot(s) start at nodes, the target object `target` (an object id,
at node t) must be picked up and brought to the end object `end` (at node e). Sub-tasks are the
step-by-step protocol, one `SubTask` per leg, in order per robot:

- single (NavCraft-S): primary: move_to(t), pick(target), move_to(e), place(target).
- A1 (the helper fetches): helper: move_to(t), pick, move_to(x), handoff; primary: move_to(x),
  receive, move_to(e), place. The primary's journey is d(s, x) + d(x, e).
- A2 (the primary fetches): primary: move_to(t), pick, move_to(x), handoff; helper: move_to(x),
  receive, move_to(e), place. The primary's journey is d(s, t) + d(t, x).

x is the relay node: the anchor node of the relay object `relay`. A robot that reaches x first
waits there for the other (the rendezvous); `schedule` records every robot's timed visits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("single", "collaborative")
COLLAB_TYPES = ("A1", "A2")
ROBOTS = ("primary", "helper")
ACTIONS = ("move_to", "pick", "place", "handoff", "receive")


@dataclass(frozen=True)
class SubTask:
    """One step of one robot: an action at a node, about an object; `text` is the LH-VLN form
    (e.g. "Move_to('sofa_living room')")."""

    robot: str
    action: str
    node: int
    object: str
    region: str
    text: str


@dataclass(frozen=True)
class Visit:
    """A robot at a node from `arrive` to `depart` seconds (waiting when depart > arrive)."""

    robot: str
    node: int
    arrive: float
    depart: float


@dataclass(frozen=True)
class Episode:
    """One mission. `kind` single: only the primary acts (`collab_type`, `relay` are None)."""

    id: str
    scene: str
    kind: str
    instruction: str  # the high-level protocol's one instruction
    subtasks: tuple[SubTask, ...]  # the step-by-step protocol, all robots, in schedule order
    starts: dict[str, int]  # robot -> start node
    target: str  # the object to move
    end: str  # the object to bring it to
    objects: tuple[tuple[str, str, str], ...]  # (object id, name, region) of every object named
    collab_type: str | None = None
    relay: str | None = None  # the object anchoring the relay zone x
    alpha: float | None = None  # min(J_A1, J_A2) / C_solo (accepted only when < 1)
    solo_cost: float | None = None  # C_solo = d(s, t) + d(t, e), metres
    schedule: tuple[Visit, ...] = ()
    repairs: int = 0  # schedule repairs (waits inserted, reroutes) the generator needed
    meta: dict = field(default_factory=dict)
