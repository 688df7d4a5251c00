"""`iclr26 run conavbench`: generate and validate the split (NavCraft-S and -C over generated
houses), run every agent under both protocols, and test the claim on the collaborative episodes:
does the collaborative planner lower makespan and raise step-level SR over the best single-robot
policy? Two rows test the benchmark itself: the noise-free oracle must succeed on every episode
and the null agent (stops at once) on none.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

from iclr26.catalog import implemented_system
from iclr26.conavbench import agents as A
from iclr26.conavbench.config import NavConfig
from iclr26.conavbench.episode import COLLAB_TYPES, Episode
from iclr26.conavbench.splits import build_split
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.records import markdown_table
from iclr26.core.system import preset_table

PAPER_ROWS = [
    ("random, single (paper)", 0.00, 1.26),
    ("Qwen2.5-VL-3B fine-tuned, single (paper)", 12.90, 29.65),
    ("Qwen2.5-VL-3B fine-tuned, collaborative (paper)", 11.11, 35.02),
]
"""The paper's (high-level SR, step-level SR) rows, in %."""


def _pct(x: float) -> float:
    return round(100 * x, 1)


def _agent(name: str, cfg: NavConfig, ctx: RunContext) -> A.NavPolicy:
    if name == "oracle":
        return A.OraclePolicy()
    if name == "null":
        return A.NullPolicy()
    if name == "random":
        return A.RandomPolicy(seed=cfg.seed)
    if name == "greedy":
        return A.GreedySinglePolicy()
    if name == "collaborative":
        return A.CollaborativePlanner()
    model = ctx.chat_model()
    return A.LLMPolicy(model)


def _noise_free(cfg: A.EvalConfig) -> A.EvalConfig:
    return dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, forward_noise=0.0, turn_noise=0.0))


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


def run(cfg: NavConfig, ctx: RunContext) -> Report:
    """Generate, evaluate, compare, draw."""
    root = Path(cfg.data_dir) if cfg.data_dir else ctx.out_dir / "data"
    root = root if cfg.acceptance == "paper" else root / f"{cfg.acceptance}_rule"  # one rule per folder
    t0 = time.perf_counter()
    split = build_split(cfg.seed, n_single=cfg.n_single, n_collab=cfg.n_collab, n_scenes=cfg.n_scenes,
                        jobs=cfg.jobs, out=root, rule=cfg.acceptance)  # fmt: skip
    gen_seconds = time.perf_counter() - t0
    episodes: list[Episode] = split.all if cfg.eval_split == "all" else split.episodes[cfg.eval_split]
    if not episodes:
        raise ValueError(f"the {cfg.eval_split} split has no episodes; generate more (n_single, n_collab)")
    indices = A.index_scenes(split.scenes)
    collab = [e for e in episodes if e.kind == "collaborative"]
    table_rows: list[list] = []
    evals: dict[tuple[str, str, str], dict[str, float]] = {}  # (agent, protocol, group) -> metrics
    for name in cfg.agents:
        agent = _agent(name, cfg, ctx)
        eval_cfg = _noise_free(cfg.evaluation) if name in ("oracle", "null") else cfg.evaluation
        eps = episodes
        if name == "llm":
            eps = collab[: cfg.llm_episodes] if cfg.llm_episodes else collab
        for protocol in cfg.protocols:
            ev = A.evaluate(eps, indices, agent, protocol=protocol, config=eval_cfg)
            table_rows.append(_row(name, protocol, ev))
            ctx.log(
                f"{name} / {protocol}: SR {_pct(ev.metrics['sr'])}% on {len(eps)} episodes, "
                f"{ev.seconds:.0f} s"
            )
            if name in ("greedy", "collaborative"):  # the claim's groups, from this run's records
                for group, m in _by_group(ev, protocol, eval_cfg.success_rule).items():
                    evals[(name, protocol, group)] = m
        if name in ("greedy", "collaborative") and collab:
            # makespan is the schedule's: measured noise-free (a noisy run that fails spends its
            # whole step budget, which would count against whichever policy fails more)
            clean = A.evaluate(collab, indices, agent, protocol="high", config=_noise_free(eval_cfg))
            for group, m in _by_group(clean, "high", eval_cfg.success_rule).items():
                evals[(name, "clean", group)] = m
    main = Table(f"Every agent on the {cfg.eval_split} split ({len(episodes)} episodes)", COLUMNS, table_rows,
                 caption="SR, OSR, SPL, ISR, CSR, CGT, TAR, step-level SR in %; the oracle and null rows run "
                         "noise-free")  # fmt: skip
    ctx.log(f"{main.title}\n{markdown_table(main.columns, main.rows)}")
    tables = [main]
    claim = None
    notes = [f"split generated (or resumed) in {gen_seconds:.1f} s with {cfg.jobs} workers"]
    rows, figure_rows = _claim_rows(evals)
    if evals:
        tables.append(Table("Single robot vs collaboration on the collaborative episodes",
                            ["type", "policy", "episodes", "makespan (s, noise-free)", "makespan 95% CI",
                             "SR (high)",
                             "step-level SR", "step-level SR 95% CI"], rows))  # fmt: skip
        s, c = evals.get(("greedy", "step", "all")), evals.get(("collaborative", "step", "all"))
        if s and c:
            margin = max(c["step_sr_hi"] - c["step_sr"], c["step_sr"] - c["step_sr_lo"])
            claim = ClaimCheck("step-level SR % on the collaborative episodes", "collaborative planner",
                               _pct(c["step_sr"]), "greedy single robot", _pct(s["step_sr"]),
                               margin=_pct(margin))  # fmt: skip
            rel = (c["step_sr"] - s["step_sr"]) / s["step_sr"] if s["step_sr"] else math.nan
            notes.append(f"relative step-level SR change: {100 * rel:+.1f}% (paper: +18.11%, 35.02 vs 29.65)")
        tables.append(_generation_table(split.stats))
    tables.append(Table("The paper's rows (HM3D, not measured here)", ["model", "SR (high)", "step-level SR"],
                        [list(r) for r in PAPER_ROWS]))  # fmt: skip
    figures = _figures(cfg, ctx, split, indices, collab, figure_rows)
    return Report(tables=tables, figures=figures, claim_check=claim, notes=notes)


def _generation_table(stats: dict) -> Table:
    rejected = ", ".join(f"{k} {v}" for k, v in sorted(stats["rejected"].items(), key=lambda kv: -kv[1]))
    rows = [["single episodes", stats["single"]], ["collaborative episodes", stats["collaborative"]],
            ["collaborative proposals", stats["proposed"]],
            ["accepted by the rule and guards", f"{stats['accepted']} ({_pct(stats['acceptance_rate'])}%)"],
            ["kept after schedule repair", stats["kept"]], ["rejected, by reason", rejected or "—"],
            ["schedule repairs (episodes repaired)", f"{stats['repairs']} ({stats['repaired_episodes']})"],
            ["episodes by split", ", ".join(f"{k} {v}" for k, v in stats["by_split"].items())]]  # fmt: skip
    return Table("Generation", ["", "count"], rows)


def _figures(cfg: NavConfig, ctx: RunContext, split, indices, collab, figure_rows: list[dict]) -> list[str]:
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
    smoke={**_SMALL, "agents": ("oracle", "null", "greedy", "collaborative")},
    # the tour: 1,200 episodes over 64 houses, every planner, both protocols
    demo={"n_single": 720, "n_collab": 480, "n_scenes": 64},
    # the paper's scale is the bench's split; add the llm agent on every collaborative episode
    paper={"agents": ("oracle", "null", "random", "greedy", "collaborative", "llm"), "llm_episodes": 0},
)  # fmt: skip
SYSTEM = implemented_system("conavbench", presets=PRESETS, run=run)
