"""The `scaf_grpo` system: warm-start a policy on easy problems (a character transformer from
scratch, or a Hugging Face checkpoint), show the learning cliff on hard levels, then the study
(`core.study`): vanilla GRPO vs Scaf-GRPO under the same rollout budget and the untrained policy as
their floor, over seeds, judged by the one claim rule. Runs data-parallel under `torchrun`."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import pyplot, save_figure
from iclr26.core.study import Arm as StudyArm
from iclr26.core.study import Measure, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.rlvr.experiment import SMOKE_SIZE, SMOLLM2_SCALE, Arm, Experiment
from iclr26.rlvr.grpo import GRPOTrainer
from iclr26.scaf_grpo.config import ScafGRPOConfig
from iclr26.scaf_grpo.hints import hint_text, pretraining_hint
from iclr26.scaf_grpo.scaffold import Scaffold

METHODS = ("grpo", "scaf_grpo")
_LEVEL_UNIT = {"countdown": "numbers − 1"}  # what a level counts; digits for arithmetic


def _arm_setup(cfg: ScafGRPOConfig):
    """The `ArmSetup` of the two methods: plain GRPO, or GRPO with the `Scaffold` guide."""

    def setup(method: str, trainer: GRPOTrainer) -> Arm:
        if method == "grpo":
            return Arm(summary=lambda: {"rungs": {}, "failed_ladders": 0})
        scaffold = Scaffold(trainer.policy, trainer.sample, cfg.scaf)
        trainer.guide = scaffold

        def save_extra() -> dict:
            return {"rungs": dict(scaffold.rungs_used), "failed": scaffold.failed_ladders}

        def load_extra(state: dict) -> None:
            scaffold.rungs_used.update(state["rungs"])
            scaffold.failed_ladders = state["failed"]

        def summary() -> dict:
            return {"rungs": dict(scaffold.rungs_used), "failed_ladders": scaffold.failed_ladders}

        return Arm(save_extra=save_extra, load_extra=load_extra, summary=summary)

    return setup


PAST_CLIFF = "pass@1 past the cliff"


def _scores(rec: dict[str, Any], cfg: ScafGRPOConfig, hard: list[int]) -> dict[str, float]:
    """The cell's scalars: pass@1 per evaluated level and the claim's metric, pass@1 past the cliff."""
    ev = rec["eval"]
    out = {f"pass@1 L{lv}": ev[str(lv)]["pass@1"] for lv in cfg.eval_levels}
    return {PAST_CLIFF: float(np.mean([ev[str(lv)]["pass@1"] for lv in hard]))} | out


def _measure(cfg: ScafGRPOConfig, base: Measure, hard: list[int], arm: StudyArm, unit: Unit,
             ctx: RunContext) -> dict[str, Any]:  # fmt: skip
    rec = dict(base(arm, unit, ctx))
    return _scores(rec, cfg, hard) | rec


def study(cfg: ScafGRPOConfig, exp: Experiment, hard: list[int]) -> Study:
    """scaf_grpo as a study: units = RL seeds; arms = Scaf-GRPO (the method), vanilla GRPO (its
    named baseline) and the untrained policy (the floor: the warm start, no RL step), each trained
    from the same pretrained policy under the same rollout budget. The claim: Scaf-GRPO beats GRPO
    on pass@1 at the train levels past the cliff (`hard`, those the pretrained policy never solved:
    fixed from the cliff before any RL), paired over seeds; both at the untrained floor on every
    seed (0 vs 0) is uninformative."""
    arms = [
        StudyArm("grpo", "baseline"),
        StudyArm("scaf_grpo", "method"),
        StudyArm("untrained", "floor", floor="untrained"),
    ]
    label = f"pass@1 on level(s) {hard} (past the cliff)"
    claim = Claim(
        PAST_CLIFF, "scaf_grpo", ("grpo",), interval="bootstrap", floor_arm="untrained", label=label
    )
    measure = functools.partial(_measure, cfg, exp.measure(_arm_setup(cfg)), hard)
    metrics = [PAST_CLIFF, *(f"pass@1 L{lv}" for lv in cfg.eval_levels)]
    return Study("scaf_grpo", arms, exp.units(), measure, claims=[claim], metrics=metrics, config=cfg,
                 seed=cfg.seed, views=functools.partial(_views, cfg), unit_major=True)  # fmt: skip


def run(cfg: ScafGRPOConfig, ctx: RunContext) -> Report:
    """Pretrain, measure the cliff (which fixes the claim's levels), then the study: both methods
    and the untrained floor per seed; tabulate, plot."""
    exp = Experiment(cfg, ctx, data_parallel=True)

    def hint_sampler(problem, rng):
        if problem.level > cfg.sft_plain_max_level:
            return hint_text(problem, "solution", int(rng.integers(cfg.sft_hard_hint_min, 5)))
        return pretraining_hint(problem, rng, cfg.hint_prob)

    sft = exp.pretrain(hint_sampler=hint_sampler)
    n_params = sum(x.numel() for x in exp.policy.module.parameters())
    if cfg.sft.steps:
        ctx.log(f"pretrained {n_params:,} parameters, final loss {sft['loss']:.3f}")
    else:
        ctx.log(f"no warm start: the policy's {n_params:,} parameters as loaded")
    cliff = exp.untrained(cfg.seed)  # the floor's cell of the first seed: computed once
    # the claim is about questions past the cliff: train levels the pretrained policy never solved
    k = cfg.eval_k
    hard = [lv for lv in cfg.train_levels if cliff[str(lv)][f"pass@{k}"] == 0] or list(cfg.train_levels)
    return run_study(study(cfg, exp, hard), ctx, jobs=1).report  # one policy in memory: seed after seed


def _views(cfg: ScafGRPOConfig, result: StudyResult, ctx: RunContext) -> Report:
    """The cliff table (the untrained floor at the first seed), pass@1 / pass@k per method and level
    (the floor's rows last), the training table and the training curves, from the cells."""
    records = {a.name: [dict(c.metrics) for c in result.records(a.name)] for a in result.study.arms}
    cliff = records["untrained"][0]["eval"]
    k = cfg.eval_k
    tables = [
        Table(
            f"The learning cliff: {cfg.task} "
            + (f"after pretraining on {', '.join(cfg.sft.mix)}" if cfg.sft.steps else "(no warm start)"),
            [f"level ({_LEVEL_UNIT.get(cfg.task, 'digits')})", "pass@1", f"pass@{k}", "greedy"],
            [
                [lv, *(cliff[str(lv)][key] for key in ("pass@1", f"pass@{k}", "greedy"))]
                for lv in cfg.eval_levels
            ],
            caption=f"{cfg.eval_problems} held-out {cfg.task} problems per level, "
            f"{k} samples at temperature {cfg.grpo.temperature:g}.",
        )
    ]
    rows = []
    for method in (*METHODS, "untrained"):
        for lv in cfg.eval_levels:
            vals = {
                key: [r["eval"][str(lv)][key] for r in records[method]]
                for key in ("pass@1", f"pass@{k}", "greedy")
            }
            sd = float(np.std(vals["pass@1"])) if cfg.seeds > 1 else None
            rows.append([method, lv, *(float(np.mean(v)) for v in vals.values()), sd])
    tables.append(
        Table(
            f"After {cfg.rl_steps} RL steps on level(s) {list(cfg.train_levels)} "
            f"({cfg.grpo.questions_per_step}×{cfg.grpo.group_size} rollouts per step), "
            f"mean over {cfg.seeds} seed(s)",
            ["method", "level", "pass@1", f"pass@{k}", "greedy", "pass@1 sd"],
            rows,
            caption="untrained: the floor, the pretrained policy with no RL step, evaluated with each "
            "seed's evaluation samples.",
        )
    )
    histories = {m: [r["history"] for r in records[m]] for m in METHODS}
    summ = []
    for method in METHODS:
        hs = [h for run_h in histories[method] for h in run_h]
        rungs: dict[str, int] = {}
        for r in records[method]:
            for key, v in r["extra"]["rungs"].items():
                rungs[key] = rungs.get(key, 0) + v
        summ.append(
            [
                method,
                float(np.mean([h["reward"] for h in hs])),
                float(np.mean([h["frac_zero_std"] for h in hs])),
                float(np.mean([h["frac_zero_std_after_guide"] for h in hs])),
                int(sum(h["guided"] for h in hs)),
                ", ".join(f"{key}:{v}" for key, v in sorted(rungs.items())) or "—",
                len(hs) / max(1e-9, sum(h["seconds"] for h in hs)),
            ]
        )
    tables.append(
        Table(
            "Training: mean rollout reward, share of zero-variance groups (before/after guidance), hinted "
            "replacements and the rungs that earned them",
            ["method", "reward", "zero-std before", "zero-std after", "hinted", "rungs used", "steps/s"],
            summ,
        )
    )
    return Report(tables=tables, figures=[_curves(histories, cfg, ctx)])


def _curves(histories: dict[str, list[list[dict]]], cfg: ScafGRPOConfig, ctx: RunContext) -> str:
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    panels = [
        ("reward", "mean rollout reward (plain prompts)"),
        ("frac_zero_std_after_guide", "zero-variance groups after guidance"),
    ]
    for ax, (key, ylabel) in zip(axes, panels, strict=True):
        for method, runs in histories.items():
            for i, hist in enumerate(runs):
                ax.plot(
                    [h["step"] for h in hist],
                    _smooth([h[key] for h in hist]),
                    label=method if i == 0 else None,
                    color="C0" if method == "grpo" else "C1",
                    alpha=0.8,
                )
        ax.set_ylabel(ylabel)
    for ax in axes:
        ax.set_xlabel("RL step")
        ax.axvline(cfg.scaf.warmup_steps, color="gray", ls=":", lw=1)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"{cfg.task}, level(s) {list(cfg.train_levels)}: dotted line = end of guidance warm-up")
    return save_figure(fig, ctx.out_dir, "training_curves")


def _smooth(xs: list[float], w: int = 5) -> list[float]:
    return [float(np.mean(xs[max(0, i - w + 1) : i + 1])) for i in range(len(xs))]


PRESETS = preset_table(
    bench=ScafGRPOConfig(),
    smoke={
        **SMOKE_SIZE,
        "rl_steps": 4,
        "scaf.warmup_steps": 1,
        "train_levels": (1, 4),
        "eval_levels": (1, 4),
    },
    # the tour: the cliff table and GRPO vs Scaf-GRPO with the untrained floor, shorter pretraining
    # and RL, 3 seeds (fewer cannot test the claim), guidance from step 2; fits 2 minutes at 1 thread
    demo={
        "seeds": 3,
        "sft.steps": 300,
        "rl_steps": 6,
        "scaf.warmup_steps": 2,
        "eval_levels": (1, 2, 3, 4),
        "eval_problems": 16,
        "eval_k": 4,
    },
    # The paper's scale (Qwen2.5-Math-7B on verl, 8 GPUs) with the checkpoint we ship: SmolLM2-135M-
    # Instruct as it is, bf16 on a GPU, prompted in words; levels from its measured cliff
    # (benchmarks/scaf_grpo/cliff_smollm2.py). `--set policy.model=/path/to/checkpoint` takes any
    # local causal LM; `torchrun --nproc-per-node N -m iclr26.cli run scaf_grpo ...` uses N GPUs.
    paper={
        **SMOLLM2_SCALE,
        "task": "addition",
        "train_levels": (1, 2, 3),
        "eval_levels": (1, 2, 3, 4),
        "scaf.warmup_steps": 50,
    },
)
SYSTEM = implemented_system("scaf_grpo", presets=PRESETS, run=run)
