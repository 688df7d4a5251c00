"""CoNavBench's figures (ICLR 2026): one episode's run drawn on its house, and single-robot vs
collaborative policies compared by collaboration type.

- `episode_figure`: the house map (rooms, doors, objects; the target t, end e and relay x marked)
  with each robot's true trajectory (and, under actuation noise, its dead-reckoned belief dashed),
  above a timeline of when each robot moves or waits, the handoff marked;
- `comparison_figure`: grouped bars of makespan (s) and of SR / step-level SR (%) with their 95%
  intervals, per collaboration type (A1, A2, all) and policy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iclr26.conavbench.episode import Episode
from iclr26.conavbench.scene import Scene
from iclr26.conavbench.sim import SimResult
from iclr26.core.records import pyplot, save_figure

ROBOT_COLOURS = {"primary": "tab:blue", "helper": "tab:red"}
ROOM_COLOURS = (
    "#fdf3d8", "#e3f1fb", "#e8f6e3", "#f9e4ec", "#ece6f8", "#f1f1f1", "#fbe9dc", "#e0f4f2", "#f4f0dc",
    "#e9edf5",
)  # fmt: skip
GROUP_ORDER = ("A1", "A2", "all")
MARKS = {"pick": "P", "place": "s", "handoff": "D", "receive": "D"}


def _segments(activity: Sequence[str], dt: float) -> dict[str, list[tuple[float, float]]]:
    """Runs of equal activity as (start s, duration s) per activity; tick k covers [k dt, (k+1) dt)."""
    out: dict[str, list[tuple[float, float]]] = {}
    k = 0
    while k < len(activity):
        j = k
        while j < len(activity) and activity[j] == activity[k]:
            j += 1
        out.setdefault(activity[k], []).append((k * dt, (j - k) * dt))
        k = j
    return out


def _door_segment(scene: Scene, door: Any) -> tuple[list[float], list[float]]:
    """The door's opening as a segment along its wall."""
    ra, rb = (next(r for r in scene.rooms if r.id == i) for i in (door.a, door.b))
    x, y = door.pos
    w = door.width / 2
    vertical = min(abs(ra.x1 - rb.x0), abs(rb.x1 - ra.x0)) < min(abs(ra.y1 - rb.y0), abs(rb.y1 - ra.y0))
    return ([x, x], [y - w, y + w]) if vertical else ([x - w, x + w], [y, y])


def episode_figure(
    scene: Scene, episode: Episode, run: SimResult, run_dir: Path | str, name: str | None = None
) -> str:
    """Draw `run` (a `SimResult` of `episode`, e.g. `evaluate(..., keep_runs=True).runs[0]`) on
    `scene` and save `run_dir/<name>.png` (default name `episode_<id>`); returns the file name."""
    if episode.scene != scene.id:
        raise ValueError(f"episode {episode.id} is in scene {episode.scene!r}, not {scene.id!r}")
    x0, x1 = min(r.x0 for r in scene.rooms), max(r.x1 for r in scene.rooms)
    y0, y1 = min(r.y0 for r in scene.rooms), max(r.y1 for r in scene.rooms)
    map_h = min(9.0, 7.0 * (y1 - y0 + 1) / (x1 - x0 + 1))  # inches, for a 7-inch-wide map
    plt = pyplot()
    fig, (ax, tl) = plt.subplots(
        2, 1, figsize=(9, map_h + 2.2), gridspec_kw={"height_ratios": [map_h, 1.6]}, constrained_layout=True
    )
    types = sorted({r.type for r in scene.rooms})
    for r in scene.rooms:
        colour = ROOM_COLOURS[types.index(r.type) % len(ROOM_COLOURS)]
        ax.add_patch(plt.Rectangle((r.x0, r.y0), r.x1 - r.x0, r.y1 - r.y0, fc=colour, ec="0.35", lw=1.2))
        ax.text(
            (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, r.type, ha="center", va="center", fontsize=7, color="0.4"
        )
    for d in scene.doors:
        xs, ys = _door_segment(scene, d)
        ax.plot(xs, ys, color="white", lw=3.5, solid_capstyle="butt", zorder=2)
        ax.plot(xs, ys, color="0.35", lw=0.8, ls=":", zorder=2)
    ox = [o.pos[0] for o in scene.objects]
    oy = [o.pos[1] for o in scene.objects]
    ax.scatter(ox, oy, s=6, color="0.55", zorder=3)
    roles = [("t", episode.target, "*", "gold"), ("e", episode.end, "s", "tab:green")]
    if episode.relay is not None:
        roles.append(("x", episode.relay, "D", "tab:purple"))
    for label, oid, marker, colour in roles:
        o = scene.object(oid)
        ax.scatter([o.pos[0]], [o.pos[1]], s=140, marker=marker, color=colour, ec="k", lw=0.8, zorder=6)
        ax.annotate(
            f"{label}: {o.name}", o.pos, xytext=(6, 6), textcoords="offset points", fontsize=8, weight="bold"
        )
    for robot, tr in run.traces.items():
        colour = ROBOT_COLOURS.get(robot, "tab:gray")
        if not tr.positions:
            continue
        xs, ys = zip(*tr.positions, strict=True)
        ax.plot(xs, ys, color=colour, lw=1.6, alpha=0.9, zorder=4, label=f"{robot} (true)")
        if tr.beliefs and tr.beliefs != tr.positions:
            bx, by = zip(*tr.beliefs, strict=True)
            ax.plot(bx, by, color=colour, lw=0.9, ls="--", alpha=0.6, zorder=4, label=f"{robot} (belief)")
        ax.scatter([xs[0]], [ys[0]], s=70, marker="o", color=colour, ec="k", zorder=7)
        ax.annotate(f"{robot} start", (xs[0], ys[0]), xytext=(5, -11), textcoords="offset points", fontsize=7)
        ax.scatter([xs[-1]], [ys[-1]], s=45, marker="X", color=colour, ec="k", lw=0.5, zorder=7)
    ax.set_xlim(x0 - 0.5, x1 + 0.5)
    ax.set_ylim(y0 - 0.5, y1 + 0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    kind = episode.collab_type or episode.kind
    ok = "delivered" if run.delivered else "not delivered"
    ax.set_title(f"{episode.id} ({kind}): makespan {run.makespan:.1f} s, {ok}", fontsize=10)
    _timeline(tl, run)
    return save_figure(fig, run_dir, name or f"episode_{episode.id}")


def _timeline(ax: Any, run: SimResult) -> None:
    """Per robot, bars for moving and waiting over time; interactions marked, the handoff by a line."""
    robots = list(run.traces)
    for k, robot in enumerate(robots):
        tr = run.traces[robot]
        colour = ROBOT_COLOURS.get(robot, "tab:gray")
        segs = _segments(tr.activity, run.dt)
        ax.broken_barh(segs.get("move", []), (k - 0.3, 0.6), color=colour, label="moving" if k == 0 else None)
        ax.broken_barh(
            segs.get("wait", []), (k - 0.3, 0.6), fc="0.85", ec="0.5", hatch="///", lw=0.5,
            label="waiting" if k == 0 else None,
        )  # fmt: skip
    handoff = None
    for sub, res in zip(run.plan, run.subtasks, strict=False):
        if sub.action not in MARKS or math.isnan(res.end_time) or sub.robot not in robots:
            continue
        k = robots.index(sub.robot)
        ax.scatter(
            [res.end_time], [k], marker=MARKS[sub.action], s=45, zorder=5,
            color="w" if not res.success else "k", ec="k",
        )  # fmt: skip
        if sub.action == "handoff":
            handoff = res
    if handoff is not None:
        ax.axvline(handoff.end_time, color="tab:purple", lw=1.2, ls="--")
        ax.annotate(
            f"handoff {'ok' if handoff.success else 'failed'} @ {handoff.end_time:.1f} s",
            (handoff.end_time, len(robots) - 0.5), xytext=(4, 0), textcoords="offset points", fontsize=8,
            color="tab:purple", va="top",
        )  # fmt: skip
    ax.set_yticks(range(len(robots)), robots)
    ax.set_ylim(-0.6, len(robots) - 0.4)
    ax.set_xlim(0, max(run.makespan, run.dt) * 1.02)
    ax.set_xlabel("time (s)  (markers: P pick, D handoff/receive, square place; hollow = failed)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)


def _bar(ax: Any, x: float, w: float, value: float, lo: float, hi: float, **kw: Any) -> None:
    if value is None or math.isnan(value):
        return
    err = None
    if lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi)):
        err = [[max(0.0, value - lo)], [max(0.0, hi - value)]]
    ax.bar([x], [value], w, yerr=err, capsize=2, **kw)


def comparison_figure(
    rows: Sequence[Mapping[str, Any]], run_dir: Path | str, name: str = "comparison"
) -> str:
    """Grouped bars of makespan and SR / step-level SR, by collaboration type and policy.

    Each row: {"group": "A1" | "A2" | "all" (any label), "policy": a name (e.g. "greedy",
    "collaborative"), "metrics": the high-protocol `evaluate(...).metrics` (uses makespan,
    makespan_lo, makespan_hi, sr, sr_lo, sr_hi), "step": the step-protocol metrics (step_sr,
    step_sr_lo, step_sr_hi) or {} when not run}. Groups are ordered A1, A2, all, then the rest.
    Saves `run_dir/<name>.png`; returns the file name.
    """
    if not rows:
        raise ValueError("comparison_figure needs at least one row; rows is empty")
    for r in rows:
        missing = {"group", "policy", "metrics"} - set(r)
        if missing:
            raise ValueError(
                f"each row needs group, policy and metrics; a row lacks {sorted(missing)}: {r!r}"
            )
    seen_groups = list(dict.fromkeys(r["group"] for r in rows))
    groups = [g for g in GROUP_ORDER if g in seen_groups] + [g for g in seen_groups if g not in GROUP_ORDER]
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    by = {(r["group"], r["policy"]): r for r in rows}
    plt = pyplot()
    fig, (ax_m, ax_s) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    colours = [f"C{k}" for k in range(len(policies))]
    w = 0.8 / len(policies)
    for gi, g in enumerate(groups):
        for pi, p in enumerate(policies):
            r = by.get((g, p))
            if r is None:
                continue
            m = r["metrics"]
            x = gi + (pi - (len(policies) - 1) / 2) * w
            _bar(ax_m, x, w, m.get("makespan", math.nan), m.get("makespan_lo"), m.get("makespan_hi"),
                 color=colours[pi], label=p if gi == 0 else None)  # fmt: skip
    ax_m.set_xticks(range(len(groups)), groups)
    ax_m.set_ylabel("makespan (s)")
    ax_m.set_title("Makespan (mean, 95% bootstrap CI)")
    ax_m.legend(fontsize=8)
    w2 = 0.8 / (2 * len(policies))
    for gi, g in enumerate(groups):
        for pi, p in enumerate(policies):
            r = by.get((g, p))
            if r is None:
                continue
            m, s = r["metrics"], r.get("step") or {}
            for mi, (src, key, hatch, label) in enumerate(
                ((m, "sr", None, "SR"), (s, "step_sr", "//", "step-level SR"))
            ):
                x = gi + (2 * pi + mi - (2 * len(policies) - 1) / 2) * w2
                v = src.get(key)
                if v is None:
                    continue
                _bar(ax_s, x, w2, 100 * v, 100 * src.get(f"{key}_lo", math.nan),
                     100 * src.get(f"{key}_hi", math.nan), color=colours[pi], hatch=hatch, ec="k", lw=0.4,
                     label=f"{p}: {label}" if gi == 0 else None)  # fmt: skip
    ax_s.set_xticks(range(len(groups)), groups)
    ax_s.set_ylabel("%")
    ax_s.set_ylim(0, 105)
    ax_s.set_title("SR and step-level SR (95% Wilson CI)")
    ax_s.legend(fontsize=7, ncol=2)
    return save_figure(fig, run_dir, name)
