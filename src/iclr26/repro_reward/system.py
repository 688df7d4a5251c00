"""The `repro_reward` system: warm-start a policy on arithmetic whose worked solutions sometimes
re-check lines after the answer is determined (`testbed.py`), then GRPO with the outcome reward
alone vs GRPO + RePro's process reward under the same rollout budget; accuracy, response length
and overthinking tokens per level, and their curves over training."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

import numpy as np
import torch

from iclr26.core import ClaimCheck, Report, RunContext, Table, resolve_device, set_seed
from iclr26.core.records import pyplot, save_figure
from iclr26.repro_reward.process_reward import ReProAdvantage, ReProConfig
from iclr26.repro_reward.testbed import overthinking_tokens, with_rechecks
from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer, LossType, Rollout
from iclr26.rlvr.loop import train_steps
from iclr26.rlvr.policies import DTYPES, policy_from_config
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.sft import SFTConfig, parse_mix, pretrain
from iclr26.rlvr.tasks import check_levels, make_problems, verify

METHODS = ("grpo", "grpo+repro")


@dataclass(frozen=True)
class ReProSystemConfig:
    """Everything the run uses; defaults are the `demo` preset."""

    seed: int = 0
    seeds: int = 1  # independent RL seeds (the pretrained model is shared)
    # "char": a character transformer from scratch (dim/layers/heads/max_len); "smollm2"; or a
    # local Hugging Face checkpoint folder (in `dtype`, prompts in its chat template if `chat`)
    policy: str = "char"
    dtype: str = "float32"
    chat: bool = True
    task: str = "addition"
    sft_mix: tuple[str, ...] = ("addition:1-3",)
    recheck_p: float = 0.6  # share of warm-start solutions that re-check after the answer is fixed
    max_rechecks: int = 3
    dim: int = 96
    layers: int = 3
    heads: int = 4
    max_len: int = 192
    sft_steps: int = 1500
    sft_batch: int = 32
    sft_lr: float = 2e-3
    rl_steps: int = 60
    questions_per_step: int = 8
    group_size: int = 8
    lr: float = 1e-4
    loss_type: LossType = "grpo"  # token aggregation of the clipped objective
    max_new_tokens: int = 96
    train_levels: tuple[int, ...] = (2, 3)
    alpha: float = 0.1  # weight of the process return in the token advantage (paper: 0.1)
    w: float = 0.2  # stability weight of the composite score
    top_k: int = 20  # segments (lines) scored per response
    eval_levels: tuple[int, ...] = (1, 2, 3)
    eval_problems: int = 48
    eval_k: int = 4
    device: str = "cpu"
    threads: int = 2

    def __post_init__(self) -> None:
        if self.task not in ("addition", "multiplication"):
            raise ValueError(
                f"task must be addition or multiplication (column scratchpads), got {self.task!r}"
            )
        parse_mix(self.sft_mix)
        for name in ("train_levels", "eval_levels"):
            check_levels(self.task, name, getattr(self, name))
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2, got {self.group_size}")
        if self.seeds < 1 or self.rl_steps < 1:
            raise ValueError("seeds and rl_steps must be >= 1")
        ReProConfig(alpha=self.alpha, w=self.w, top_k=self.top_k)  # validates them
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        if not 0 <= self.recheck_p <= 1 or self.max_rechecks < 1:
            raise ValueError("recheck_p must be in [0, 1] and max_rechecks >= 1")


class _Recorder:
    """A pass-through `guide` hook that records overthinking of each step's rollouts."""

    def __init__(self, policy: Policy) -> None:
        self.policy, self.last = policy, 0.0

    def __call__(self, groups: list[list[Rollout]], step: int, gen: torch.Generator) -> list[list[Rollout]]:
        self.last = float(
            np.mean(
                [
                    overthinking_tokens(
                        r.problem, r.text if r.text is not None else self.policy.decode(r.completion_ids)
                    )
                    for g in groups
                    for r in g
                ]
            )
        )
        return groups


def evaluate(trainer: GRPOTrainer, cfg: ReProSystemConfig, seed: int) -> dict[str, dict[str, float]]:
    """Per level: pass@1 over k samples, mean completion tokens and mean overthinking tokens."""
    policy, gen, out = trainer.policy, torch.Generator().manual_seed(10_000 + seed), {}
    for level in cfg.eval_levels:
        probs = make_problems(cfg.task, level, cfg.eval_problems, seed=99_000 + level)  # held out
        expanded = [p for p in probs for _ in range(cfg.eval_k)]
        comps = trainer.sample([policy.encode_prompt(p.prompt) for p in expanded], gen)
        texts = [policy.decode(c) for c in comps]
        out[str(level)] = {
            "pass@1": float(np.mean([verify(p, t).reward for p, t in zip(expanded, texts, strict=True)])),
            "length": float(np.mean([len(c) for c in comps])),
            "overthinking": float(
                np.mean([overthinking_tokens(p, t) for p, t in zip(expanded, texts, strict=True)])
            ),
        }
    return out


def _train(
    method: str, base: Policy, cfg: ReProSystemConfig, seed: int, ctx: RunContext, advance
) -> tuple[GRPOTrainer, list[dict]]:
    policy = copy.deepcopy(base)
    gcfg = GRPOConfig(
        group_size=cfg.group_size,
        questions_per_step=cfg.questions_per_step,
        lr=cfg.lr,
        max_new_tokens=cfg.max_new_tokens,
        loss_type=cfg.loss_type,
    )
    recorder = _Recorder(policy)
    repro = None
    if method == "grpo+repro":
        rcfg = ReProConfig.arithmetic(alpha=cfg.alpha, w=cfg.w, top_k=cfg.top_k)
        repro = ReProAdvantage(policy, rcfg, cfg.group_size)
    trainer = GRPOTrainer(policy, gcfg, guide=recorder, token_advantages=repro)
    ckpt = ctx.checkpoint_dir / f"{method.replace('+', '_')}-s{seed}.pt"

    def record() -> dict[str, float]:
        return {"overthinking": recorder.last, **(repro.last_metrics if repro else {})}

    history = train_steps(
        trainer, cfg.task, cfg.train_levels, cfg.rl_steps, seed, ckpt, advance, record=record
    )
    return trainer, history


def run(cfg: ReProSystemConfig, ctx: RunContext) -> Report:
    """Pretrain with re-checks, train both arms, evaluate, tabulate, plot."""
    torch.set_num_threads(cfg.threads)
    set_seed(cfg.seed)
    base = policy_from_config(cfg, resolve_device(cfg.device))
    sft_cfg = SFTConfig(
        steps=cfg.sft_steps, batch_size=cfg.sft_batch, lr=cfg.sft_lr, mix=cfg.sft_mix, seed=cfg.seed
    )
    with ctx.progress("pretraining (steps)", total=cfg.sft_steps) as advance:
        pretrain(
            base,
            sft_cfg,
            transform=lambda p, rng: with_rechecks(p, rng, cfg.recheck_p, cfg.max_rechecks),
            checkpoint=ctx.checkpoint_dir / "sft.pt",
            on_step=advance,
        )
    gcfg = GRPOConfig(max_new_tokens=cfg.max_new_tokens)
    start = evaluate(GRPOTrainer(base, gcfg), cfg, cfg.seed)
    results: dict[str, list[dict]] = {m: [] for m in METHODS}
    histories: dict[str, list[list[dict]]] = {m: [] for m in METHODS}
    with ctx.progress("RL (steps)", total=len(METHODS) * cfg.seeds * cfg.rl_steps) as advance:
        for seed in range(cfg.seed, cfg.seed + cfg.seeds):
            for method in METHODS:
                done = ctx.out_dir / "rl" / f"{method.replace('+', '_')}-s{seed}.json"
                if done.exists():
                    rec = json.loads(done.read_text())
                    advance(cfg.rl_steps)
                else:
                    trainer, hist = _train(method, base, cfg, seed, ctx, advance)
                    rec = {"eval": evaluate(trainer, cfg, seed), "history": hist}
                    done.parent.mkdir(exist_ok=True)
                    done.write_text(json.dumps(rec))
                results[method].append(rec["eval"])
                histories[method].append(rec["history"])
                ctx.log(f"{method} seed {seed}: {rec['eval']}")
    rows = [
        [
            "pretrained",
            lv,
            start[str(lv)]["pass@1"],
            None,
            *(start[str(lv)][k] for k in ("length", "overthinking")),
        ]
        for lv in cfg.eval_levels
    ]
    for method in METHODS:
        for lv in cfg.eval_levels:
            vals = {k: [r[str(lv)][k] for r in results[method]] for k in ("pass@1", "length", "overthinking")}
            sd = float(np.std(vals["pass@1"])) if cfg.seeds > 1 else None
            rows.append(
                [
                    method,
                    lv,
                    float(np.mean(vals["pass@1"])),
                    sd,
                    *(float(np.mean(vals[k])) for k in ("length", "overthinking")),
                ]
            )
    table = Table(
        f"After {cfg.rl_steps} RL steps on level(s) {list(cfg.train_levels)} ({cfg.questions_per_step}×"
        f"{cfg.group_size} rollouts per step), mean over {cfg.seeds} seed(s)",
        ["policy", "level", "pass@1", "pass@1 sd", "tokens", "overthinking tokens"],
        rows,
        caption=f"{cfg.eval_problems} held-out problems per level × {cfg.eval_k} samples at temperature 1; "
        "overthinking = tokens of reasoning lines after the last column line, before A:.",
    )
    steps_s = [
        [m, len(h := [x for run_h in histories[m] for x in run_h]) / max(1e-9, sum(x["seconds"] for x in h))]
        for m in METHODS
    ]
    speed = Table("Training speed", ["method", "steps/s"], steps_s)
    # the claim: less overthinking at no cost in accuracy; margin = 2 standard errors of the seeds' paired gap
    per_seed = {
        m: [float(np.mean([r[str(lv)]["overthinking"] for lv in cfg.eval_levels])) for r in results[m]]
        for m in METHODS
    }
    gaps = np.subtract(per_seed["grpo+repro"], per_seed["grpo"])
    claim = ClaimCheck(
        f"overthinking tokens, mean over levels {list(cfg.eval_levels)}",
        "grpo+repro",
        float(np.mean(per_seed["grpo+repro"])),
        "grpo",
        float(np.mean(per_seed["grpo"])),
        higher_is_better=False,
        margin=float(2 * gaps.std(ddof=1) / np.sqrt(len(gaps))) if len(gaps) > 1 else 0.0,
    )
    return Report(tables=[table, speed], figures=[_curves(histories, ctx)], claim_check=claim)


def _curves(histories: dict[str, list[list[dict]]], ctx: RunContext) -> str:
    plt = pyplot()

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (key, label) in zip(
        axes,
        [
            ("reward", "mean outcome reward"),
            ("length", "mean completion tokens"),
            ("overthinking", "overthinking tokens"),
        ],
        strict=True,
    ):
        for method, runs in histories.items():
            for i, hist in enumerate(runs):
                ys = [h[key] for h in hist]
                smooth = [float(np.mean(ys[max(0, j - 4) : j + 1])) for j in range(len(ys))]
                ax.plot(
                    range(1, len(ys) + 1),
                    smooth,
                    color="C0" if method == "grpo" else "C3",
                    alpha=0.8,
                    label=method if i == 0 else None,
                )
        ax.set_xlabel("RL step")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle("GRPO vs GRPO + RePro on rollouts during training (5-step moving mean)")
    return save_figure(fig, ctx.out_dir, "training_curves")
