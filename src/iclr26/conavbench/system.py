"""`iclr26 run conavbench`: generate and validate the split (NavCraft-S and -C over generated houses),
then run the study (`core.study`): every policy on every episode of the evaluated split, under both
protocols. The arms: the collaborative planner (the method), the greedy single robot (its named
baseline), the LLM policy, the floors (stay-in-place; uniform random actions) and the suite's
oracle (noise-free, must complete every mission) and null (stops at once, must complete none).

The claim compares the planners on a common trial set: the step-level SR on each collaborative
episode's reference legs, the same legs for both planners, paired over the episodes; beside it the
mission success and the noise-free makespan on the same episodes. (The old claim scored each planner
on its own legs: 2 long legs per episode for the single robot against 4 shorter ones, and under the
actuation noise shorter legs fail less, so it "held" by construction.)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iclr26.catalog import implemented_system
from iclr26.conavbench import agents as A
from iclr26.conavbench.config import NavConfig
from iclr26.conavbench.episode import COLLAB_TYPES, Episode, SubTask
from iclr26.conavbench.metrics import EpisodeRecord, episode_success
from iclr26.conavbench.sim import RobotView, SceneIndex
from iclr26.conavbench.splits import build_split
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import markdown_table
from iclr26.core.study import Arm, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table

PAPER_ROWS = [
    ("random, single (paper)", 0.00, 1.26),
    ("Qwen2.5-VL-3B fine-tuned, single (paper)", 12.90, 29.65),
    ("Qwen2.5-VL-3B fine-tuned, collaborative (paper)", 11.11, 35.02),
]
"""The paper's (high-level SR, step-level SR) rows, in %."""

ARMS = {
    "oracle": Arm("oracle", "oracle"),
    "null": Arm("null", "null"),
    "stay": Arm("stay", "floor", floor="stay-in-place"),
    "random": Arm("random", "floor", floor="random action"),
    "greedy": Arm("greedy", "baseline"),
    "collaborative": Arm("collaborative", "method"),
    "llm": Arm("llm", "baseline"),
}
"""The arms by config name. `stay` and `null` are one policy (stop at once): null is the suite's check
(noise-free, it must complete no mission), stay the claim's floor (under the planners' noise)."""
NOISE_FREE = ("oracle", "null")


def _pct(x: float) -> float:
    return round(100 * x, 1)


def _policy(name: str, cfg: NavConfig, ctx: RunContext) -> A.NavPolicy:
    if name == "oracle":
        return A.OraclePolicy()
    if name in ("null", "stay"):
        return A.NullPolicy()
    if name == "random":
        return A.RandomPolicy(seed=cfg.seed)
    if name == "greedy":
        return A.GreedySinglePolicy()
    if name == "collaborative":
        return A.CollaborativePlanner()
    return A.LLMPolicy(ctx.chat_model())


class OnReferenceLegs(A.NavPolicy):
    """A policy run on the episode's reference sub-tasks instead of its own plan: the common trial
    set, the same legs for every policy (it still plans, so that its per-episode state is set)."""

    def __init__(self, policy: A.NavPolicy) -> None:
        self.policy, self.name = policy, policy.name

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """The policy plans (and forgets the plan); the reference sub-tasks."""
        self.policy.plan(episode, index, protocol)
        return episode.subtasks

    def begin(
        self, index: SceneIndex, plan: Sequence[SubTask], starts: Mapping[str, tuple[float, float]]
    ) -> None:
        """The policy's own reset."""
        self.policy.begin(index, plan, starts)

    def act(self, view: RobotView) -> str:
        """The policy's action."""
        return self.policy.act(view)


def _noise_free(cfg: A.EvalConfig) -> A.EvalConfig:
    return dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, forward_noise=0.0, turn_noise=0.0))


def study(
    cfg: NavConfig,
    episodes: Sequence[Episode],
    indices: Mapping[str, SceneIndex],
    split: Any = None,
    gen_seconds: float = 0.0,
) -> Study:
    """conavbench as a study: the units are the houses (scenes) of the evaluated episodes, a cell one
    policy on every episode of one house, the arms the policies. With both planners on, the claims
    compare the collaborative planner with the greedy single robot on the collaborative episodes,
    paired over the houses: the step-level SR on the reference legs (the same legs for both; a
    bootstrap interval, stay-in-place its floor), the mission success on the same missions, the
    noise-free makespan (lower is better)."""
    arms = [ARMS[a] for a in cfg.agents]
    units = [Unit(scene, cfg.seed) for scene in dict.fromkeys(e.scene for e in episodes)]
    names = set(cfg.agents)
    claims = []
    if {"greedy", "collaborative"} <= names:
        floor = "stay" if "stay" in names else None
        same = (
            "step-level SR on the collaborative episodes' reference legs (the same legs for both), per house"
        )
        claims = [
            Claim("same_legs_sr", "collaborative", ("greedy",), interval="bootstrap", floor_arm=floor,
                  label=same),
            Claim("collab_success", "collaborative", ("greedy",), interval="bootstrap", floor_arm=floor,
                  label="mission success (high-level SR) on the same collaborative episodes, per house"),
            Claim("makespan", "collaborative", ("greedy",), higher_is_better=False,
                  label="makespan (s, noise-free) on the same collaborative episodes, per house"),
        ]  # fmt: skip
    collab = [e for e in episodes if e.kind == "collaborative"]
    llm_ids = {e.id for e in (collab[: cfg.llm_episodes] if cfg.llm_episodes else collab)}
    by_scene: dict[str, list[Episode]] = {}
    for e in episodes:
        by_scene.setdefault(e.scene, []).append(e)
    measure = functools.partial(_measure, cfg, by_scene, indices, llm_ids)
    metrics = ("success", "step_sr", "same_legs_sr", "collab_success", "makespan")
    views = functools.partial(_views, cfg, episodes, indices, split, gen_seconds)
    return Study("conavbench", arms, units, measure, claims=claims, metrics=metrics, pass_metric="passed",
                 config=cfg, seed=cfg.seed, views=views)  # fmt: skip


def run(cfg: NavConfig, ctx: RunContext) -> Report:
    """Generate (or resume) the split, then run the study (`core.study.run_study`: resumable from
    `cells.jsonl`, `--jobs` cells at once)."""
    root = Path(cfg.data_dir) if cfg.data_dir else ctx.out_dir / "data"
    root = root if cfg.acceptance == "paper" else root / f"{cfg.acceptance}_rule"  # one rule per folder
    t0 = time.perf_counter()
    split = build_split(cfg.seed, n_single=cfg.n_single, n_collab=cfg.n_collab, n_scenes=cfg.n_scenes,
                        jobs=cfg.jobs, out=root, rule=cfg.acceptance)  # fmt: skip
    gen_seconds = time.perf_counter() - t0
    if cfg.experiment == "learned":
        from iclr26.conavbench import learned

        indices = A.index_scenes(split.scenes)
        weights, rows = learned.train_all(cfg, split.episodes["train"], indices, ctx)
        return run_study(learned.study(cfg, split, indices, weights, rows), ctx).report
    episodes: list[Episode] = split.all if cfg.eval_split == "all" else split.episodes[cfg.eval_split]
    if not episodes:
        raise ValueError(f"the {cfg.eval_split} split has no episodes; generate more (n_single, n_collab)")
    return run_study(study(cfg, episodes, A.index_scenes(split.scenes), split, gen_seconds), ctx).report


def _records(ev: A.Evaluation) -> list[dict[str, Any]]:
    return [dataclasses.asdict(r) for r in ev.records]


def _measure(
    cfg: NavConfig,
    by_scene: Mapping[str, list[Episode]],
    indices: Mapping[str, SceneIndex],
    llm_ids: set[str],
    arm: Arm,
    unit: Unit,
    ctx: RunContext,
) -> dict[str, Any]:
    """One policy on every episode of one house, under each protocol; on its collaborative episodes
    also the step trials on their reference legs and, for the planners, the noise-free makespan. The
    llm arm runs only its `llm_episodes` (a house with none of them: an empty cell). `passed`, the
    suite's check: every mission and step trial succeeded (an oracle must, in every house), or for the
    null arm any one did (it must not, in any house)."""
    eps = [e for e in by_scene[unit.key] if arm.name != "llm" or e.id in llm_ids]
    if not eps:
        return {}
    collab = [e for e in eps if e.kind == "collaborative"]
    policy = _policy(arm.name, cfg, ctx)
    ev_cfg = _noise_free(cfg.evaluation) if arm.name in NOISE_FREE else cfg.evaluation
    rule = ev_cfg.success_rule
    out: dict[str, Any] = {"records": {}, "seconds": {}}

    def evaluate(name: str, episodes: list[Episode], agent: A.NavPolicy, protocol: str, config: A.EvalConfig):
        ev = A.evaluate(episodes, indices, agent, protocol=protocol, config=config)
        out["records"][name], out["seconds"][name] = _records(ev), ev.seconds
        return ev

    rates = []
    for protocol in cfg.protocols:
        ev = evaluate(protocol, eps, policy, protocol, ev_cfg)
        key, rate = ("success", "sr") if protocol == "high" else ("step_sr", "step_sr")
        out[key] = ev.metrics[rate]
        sub = [r for r in ev.records if r.kind == "collaborative"]
        if sub:
            m = A.protocol_metrics(sub, protocol, success_rule=rule)
            out["collab_success" if protocol == "high" else "same_legs_sr"] = m[rate]
        rates += [_passed(r, protocol, rule) for r in ev.records]
    out["passed"] = int(any(rates)) if arm.name == "null" else int(all(rates))
    if collab and arm.name in ("greedy", "collaborative"):
        # makespan is the schedule's: measured noise-free (a noisy run that fails spends its whole
        # step budget, which would count against whichever policy fails more); the same legs are the
        # episodes' reference sub-tasks, not the planner's own
        out["makespan"] = evaluate("clean", collab, policy, "high", _noise_free(ev_cfg)).metrics["makespan"]
        same = evaluate("same_legs", collab, OnReferenceLegs(policy), "step", ev_cfg)
        out["same_legs_sr"] = same.metrics["step_sr"]
    return out


def _passed(record: EpisodeRecord, protocol: str, rule: str) -> bool:
    """A mission (high) or a step trial (step, one leg) that succeeded."""
    if protocol == "step":
        return all(record.subtask_successes)
    return episode_success(record.subtask_successes, record.final, rule)


def _row(name: str, protocol: str, ev: A.Evaluation) -> list:
    m = ev.metrics
    step = (
        f"{_pct(m['step_sr'])} [{_pct(m['step_sr_lo'])}, {_pct(m['step_sr_hi'])}]" if "step_sr" in m else None
    )
    return [name, protocol, int(m["episodes"]), f"{_pct(m['sr'])} [{_pct(m['sr_lo'])}, {_pct(m['sr_hi'])}]",
            _pct(m["osr"]), _pct(m["spl"]), round(m["ne"], 2), _pct(m["isr"]), _pct(m["csr"]), _pct(m["cgt"]),
            _pct(m["tar"]), step, round(m["makespan"], 1) if not math.isnan(m["makespan"]) else None,
            round(m["interference"], 2), round(ev.seconds, 1)]  # fmt: skip


COLUMNS = ["agent", "protocol", "episodes", "SR [95% CI]", "OSR", "SPL", "NE (m)", "ISR", "CSR", "CGT", "TAR",
           "step-level SR [95% CI]", "makespan (s)", "interference", "seconds"]  # fmt: skip


def _claim_rows(evals: dict[tuple[str, str, str], dict[str, float]]) -> tuple[list[list], list[dict]]:
    """Single-robot vs collaborative on the collaborative episodes, by type and overall."""
    rows, figure_rows = [], []
    for group in ("all", *COLLAB_TYPES):
        for agent in ("greedy", "collaborative"):
            high, step = evals.get((agent, "high", group)), evals.get((agent, "step", group))
            clean = evals.get((agent, "clean", group))
            if high is None or clean is None:
                continue
            m = {**high, **{k: clean[k] for k in ("makespan", "makespan_lo", "makespan_hi")}}
            s = step or {}
            rows.append([group, agent, int(m["episodes"]), round(m["makespan"], 1),
                         f"[{round(m['makespan_lo'], 1)}, {round(m['makespan_hi'], 1)}]", _pct(m["sr"]),
                         _pct(s["step_sr"]) if s else None,
                         f"[{_pct(s['step_sr_lo'])}, {_pct(s['step_sr_hi'])}]" if s else None])  # fmt: skip
            figure_rows.append({"group": group, "policy": agent, "metrics": m, "step": s})
    return rows, figure_rows


def _by_group(ev: A.Evaluation, protocol: str, rule: str) -> dict[str, dict[str, float]]:
    """The metrics of `ev`'s collaborative records, all together and per collaboration type."""
    collab = [r for r in ev.records if r.kind == "collaborative"]
    groups = {"all": collab, **{t: [r for r in collab if r.collab_type == t] for t in COLLAB_TYPES}}
    return {g: A.protocol_metrics(rs, protocol, success_rule=rule) for g, rs in groups.items() if rs}


def _record(d: Mapping[str, Any]) -> EpisodeRecord:
    return EpisodeRecord(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


def _evaluation(
    result: StudyResult, arm: str, run: str, rule: str, order: Sequence[str]
) -> A.Evaluation | None:
    """The arm's evaluation `run` (a protocol, "clean" or "same_legs") from its cells, as one `evaluate`
    over the episodes in `order` gives it (each record depends only on its episode)."""
    by_episode: dict[str, list[EpisodeRecord]] = {}
    seconds = 0.0
    for cell in result.records(arm):
        if run in cell.metrics.get("records", {}):
            for d in cell.metrics["records"][run]:
                by_episode.setdefault(d["episode"], []).append(_record(d))
            seconds += cell.metrics["seconds"][run]
    records = [r for e in order for r in by_episode.get(e, [])]
    if not records:
        return None
    protocol = {"clean": "high", "same_legs": "step"}.get(run, run)
    metrics = A.protocol_metrics(records, protocol, success_rule=rule)
    return A.Evaluation(arm, protocol, metrics, records, seconds)


def _views(
    cfg: NavConfig,
    episodes: Sequence[Episode],
    indices: Mapping[str, SceneIndex],
    split: Any,
    gen_seconds: float,
    result: StudyResult,
    ctx: RunContext,
) -> Report:
    """conavbench's own tables and figures from the cells: every agent under each protocol (LH-VLN's
    metrics), single robot vs collaboration by collaboration type, the step-level SR on the same legs
    against each planner's own, the generation, the paper's rows."""
    rule = cfg.evaluation.success_rule
    order = [e.id for e in episodes]
    table_rows: list[list] = []
    evals: dict[tuple[str, str, str], dict[str, float]] = {}  # (agent, run, group) -> metrics
    for name in cfg.agents:
        runs = [*cfg.protocols, *(("clean", "same_legs") if name in ("greedy", "collaborative") else ())]
        for run in runs:
            ev = _evaluation(result, name, run, rule, order)
            if ev is None:
                continue
            if run in cfg.protocols:
                table_rows.append(_row(name, run, ev))
            if name in ("greedy", "collaborative"):  # the comparison's groups
                for group, m in _by_group(ev, ev.protocol, rule).items():
                    evals[(name, run, group)] = m
    main = Table(f"Every agent on the {cfg.eval_split} split ({len(episodes)} episodes)", COLUMNS, table_rows,
                 caption="SR, OSR, SPL, ISR, CSR, CGT, TAR, step-level SR in %; the oracle and null rows run "
                         "noise-free")  # fmt: skip
    ctx.log(f"{main.title}\n{markdown_table(main.columns, main.rows)}")
    tables = [main]
    notes = [f"split generated (or resumed) in {gen_seconds:.1f} s with {cfg.jobs} workers"]
    rows, figure_rows = _claim_rows(evals)
    if evals:
        tables.append(Table("Single robot vs collaboration on the collaborative episodes",
                            ["type", "policy", "episodes", "makespan (s, noise-free)", "makespan 95% CI",
                             "SR (high)",
                             "step-level SR", "step-level SR 95% CI"], rows))  # fmt: skip
        tables.append(_legs_table(evals))
        for run, what in (("step", "each planner's own legs"), ("same_legs", "the same reference legs")):
            s, c = evals.get(("greedy", run, "all")), evals.get(("collaborative", run, "all"))
            if s and c and s["step_sr"]:
                rel = 100 * (c["step_sr"] - s["step_sr"]) / s["step_sr"]
                notes.append(
                    f"relative step-level SR change on {what}: {rel:+.1f}% (paper: +18.11%, 35.02 vs 29.65, "
                    "trained policies on one trial set)"
                )
        if split is not None:
            tables.append(_generation_table(split.stats))
    tables.append(Table("The paper's rows (HM3D, not measured here)", ["model", "SR (high)", "step-level SR"],
                        [list(r) for r in PAPER_ROWS]))  # fmt: skip
    collab = [e for e in episodes if e.kind == "collaborative"]
    figures = _figures(cfg, ctx, split, indices, collab, figure_rows) if split is not None else []
    return Report(tables=tables, figures=figures, notes=notes)


def _legs_table(evals: Mapping[tuple[str, str, str], Mapping[str, float]]) -> Table:
    """Step-level SR per planner on its own legs and on the episode's reference legs (the common set)."""
    rows = []
    for group in ("all", *COLLAB_TYPES):
        for agent in ("greedy", "collaborative"):
            own, same = evals.get((agent, "step", group)), evals.get((agent, "same_legs", group))
            if same is None:
                continue
            interval = f"[{_pct(same['step_sr_lo'])}, {_pct(same['step_sr_hi'])}]"
            rows.append(
                [group, agent, _pct(own["step_sr"]) if own else None, _pct(same["step_sr"]), interval]
            )
    return Table(
        "Step-level SR on the same legs (each collaborative episode's reference sub-tasks)",
        ["type", "policy", "step-level SR, own legs", "step-level SR, same legs", "same legs 95% CI"],
        rows,
        caption="own legs: the legs of the planner's own plan (the greedy robot's 2 per episode, the "
        "collaborative planner's 4), the old claim's trial sets; same legs: the episode's reference "
        "sub-tasks for both, the common trial set the claim is judged on",
    )


def _generation_table(stats: dict) -> Table:
    rejected = ", ".join(f"{k} {v}" for k, v in sorted(stats["rejected"].items(), key=lambda kv: -kv[1]))
    rows = [["single episodes", stats["single"]], ["collaborative episodes", stats["collaborative"]],
            ["collaborative proposals", stats["proposed"]],
            ["accepted by the rule and guards", f"{stats['accepted']} ({_pct(stats['acceptance_rate'])}%)"],
            ["kept after schedule repair", stats["kept"]], ["rejected, by reason", rejected or "—"],
            ["schedule repairs (episodes repaired)", f"{stats['repairs']} ({stats['repaired_episodes']})"],
            ["episodes by split", ", ".join(f"{k} {v}" for k, v in stats["by_split"].items())]]  # fmt: skip
    return Table("Generation", ["", "count"], rows)


def _figures(
    cfg: NavConfig, ctx: RunContext, split: Any, indices: Any, collab: list[Episode], figure_rows: list[dict]
) -> list[str]:
    from iclr26.conavbench import figures

    out = []
    if collab:
        ep = max(collab[:50], key=lambda e: e.alpha or 0.0)  # a clear case: the largest alpha shown
        ev = A.evaluate([ep], indices, A.CollaborativePlanner(), protocol="high", config=cfg.evaluation,
                        keep_runs=True)  # fmt: skip
        out.append(figures.episode_figure(split.scenes[ep.scene], ep, ev.runs[0], ctx.out_dir))
    if figure_rows:
        out.append(figures.comparison_figure(figure_rows, ctx.out_dir))
    return out


_SMALL = {"n_single": 24, "n_collab": 24, "n_scenes": 6, "jobs": 1}
PRESETS = preset_table(
    bench=NavConfig(),
    smoke={**_SMALL, "agents": ("oracle", "null", "stay", "greedy", "collaborative")},
    # the tour: 600 episodes over 32 houses, every planner, both protocols
    demo={"n_single": 360, "n_collab": 240, "n_scenes": 32},
    # the paper's scale is the bench's split; add the llm agent on every collaborative episode
    paper={"agents": ("oracle", "null", "stay", "random", "greedy", "collaborative", "llm"),
           "llm_episodes": 0},
)  # fmt: skip
SYSTEM = implemented_system("conavbench", presets=PRESETS, run=run)
