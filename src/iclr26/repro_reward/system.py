"""The `repro_reward` system: warm-start a policy on arithmetic whose worked solutions sometimes
re-check lines after the answer is determined (`testbed.py`), then GRPO with the outcome reward
alone vs GRPO + RePro's process reward under the same rollout budget, with the untrained policy as
their floor, over seeds (`core.study`, the one claim rule); accuracy, response length and
overthinking tokens per level, and their curves over training."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import pyplot, save_figure
from iclr26.core.study import Arm as StudyArm
from iclr26.core.study import Measure, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.repro_reward.config import ReProSystemConfig
from iclr26.repro_reward.process_reward import ReProAdvantage, ReProConfig
from iclr26.repro_reward.testbed import overthinking_tokens, with_rechecks
from iclr26.rlvr.experiment import SMOKE_SIZE, SMOLLM2_SCALE, Arm, Experiment
from iclr26.rlvr.grpo import GRPOTrainer, Rollout
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.tasks import Problem, verify

METHODS = ("grpo", "grpo+repro")


def token_counter(policy: Policy):
    """Text → its number of `policy` tokens (for the character policy, its characters)."""
    return lambda text: len(policy.encode_target(text)) - 1 if text else 0


class _Recorder:
    """A pass-through `guide` hook that records overthinking of each step's rollouts."""

    def __init__(self, policy: Policy) -> None:
        self.policy, self.last = policy, 0.0
        self.count = token_counter(policy)

    def __call__(self, groups: list[list[Rollout]], step: int, gen: torch.Generator) -> list[list[Rollout]]:
        self.last = float(
            np.mean(
                [
                    overthinking_tokens(
                        r.problem,
                        r.text if r.text is not None else self.policy.decode(r.completion_ids),
                        self.count,
                    )
                    for g in groups
                    for r in g
                ]
            )
        )
        return groups


def _score(k: int):
    """The `Score` of the testbed: per level, pass@1 over `k` samples, mean completion tokens and
    mean overthinking tokens."""

    def score(trainer: GRPOTrainer, problems: list[Problem], gen: torch.Generator) -> dict[str, float]:
        policy = trainer.policy
        expanded = [p for p in problems for _ in range(k)]
        comps = trainer.sample([policy.encode_prompt(p.prompt) for p in expanded], gen)
        texts = [policy.decode(c) for c in comps]
        count = token_counter(policy)
        return {
            "pass@1": float(np.mean([verify(p, t).reward for p, t in zip(expanded, texts, strict=True)])),
            "length": float(np.mean([len(c) for c in comps])),
            "overthinking": float(
                np.mean([overthinking_tokens(p, t, count) for p, t in zip(expanded, texts, strict=True)])
            ),
        }

    return score


def _arm_setup(cfg: ReProSystemConfig):
    """The `ArmSetup` of the two methods: GRPO with the overthinking recorder, and also RePro's
    token advantages for `grpo+repro`."""

    def setup(method: str, trainer: GRPOTrainer) -> Arm:
        recorder = _Recorder(trainer.policy)
        trainer.guide = recorder
        repro = None
        if method == "grpo+repro":
            repro = ReProAdvantage(trainer.policy, cfg.repro, cfg.grpo.group_size)
            trainer.token_advantages = repro

        def record() -> dict[str, float]:
            return {"overthinking": recorder.last, **(repro.last_metrics if repro else {})}

        return Arm(record=record)

    return setup


OVERTHINKING = "overthinking"
"""The claim's metric: overthinking tokens, mean over the evaluated levels."""


def _measure(
    cfg: ReProSystemConfig, base: Measure, arm: StudyArm, unit: Unit, ctx: RunContext
) -> dict[str, Any]:
    """One cell (`Experiment.measure`) with its scalars: per-level means over the evaluated levels."""
    rec = dict(base(arm, unit, ctx))
    ev = rec["eval"]
    means = {k: float(np.mean([ev[str(lv)][k] for lv in cfg.eval_levels])) for k in ("pass@1", "length")}
    over = float(np.mean([ev[str(lv)][OVERTHINKING] for lv in cfg.eval_levels]))
    return {OVERTHINKING: over, **means} | rec


def study(cfg: ReProSystemConfig, exp: Experiment) -> Study:
    """repro_reward as a study: units = RL seeds; arms = GRPO + RePro (the method), GRPO with the
    outcome reward alone (its named baseline) and the untrained policy (the floor: the warm start
    with re-checks, no RL step). The claim: fewer overthinking tokens than GRPO (mean over the
    evaluated levels), paired over seeds; both arms at or above the untrained policy's overthinking
    on every seed is uninformative."""
    arms = [
        StudyArm("grpo", "baseline"),
        StudyArm("grpo+repro", "method"),
        StudyArm("pretrained", "floor", floor="untrained"),
    ]
    label = f"overthinking tokens, mean over levels {list(cfg.eval_levels)}"
    claim = Claim(OVERTHINKING, "grpo+repro", ("grpo",), higher_is_better=False, floor_arm="pretrained",
                  label=label)  # fmt: skip
    measure = functools.partial(_measure, cfg, exp.measure(_arm_setup(cfg), _score(cfg.eval_k)))
    return Study("repro_reward", arms, exp.units(), measure, claims=[claim],
                 metrics=[OVERTHINKING, "pass@1", "length"], config=cfg, seed=cfg.seed,
                 views=functools.partial(_views, cfg), unit_major=True)  # fmt: skip


def run(cfg: ReProSystemConfig, ctx: RunContext) -> Report:
    """Pretrain with re-checks, then the study: both arms and the untrained floor per seed;
    tabulate, plot."""
    exp = Experiment(cfg, ctx)
    exp.pretrain(transform=lambda p, rng: with_rechecks(p, rng, cfg.recheck_p, cfg.max_rechecks))
    return run_study(study(cfg, exp), ctx, jobs=1).report  # one policy in memory: seed after seed


def _views(cfg: ReProSystemConfig, result: StudyResult, ctx: RunContext) -> Report:
    """The per-level table (the untrained floor first, as `pretrained`), training speed and the
    curves, from the cells."""
    records = {a.name: [dict(c.metrics) for c in result.records(a.name)] for a in result.study.arms}
    start = records["pretrained"][0]["eval"]  # the first seed's evaluation of the warm start
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
    results = {m: [r["eval"] for r in records[m]] for m in METHODS}
    histories = {m: [r["history"] for r in records[m]] for m in METHODS}
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
        f"After {cfg.rl_steps} RL steps on level(s) {list(cfg.train_levels)} ({cfg.grpo.questions_per_step}×"
        f"{cfg.grpo.group_size} rollouts per step), mean over {cfg.seeds} seed(s)",
        ["policy", "level", "pass@1", "pass@1 sd", "tokens", "overthinking tokens"],
        rows,
        caption=f"{cfg.eval_problems} held-out problems per level × {cfg.eval_k} samples at temperature "
        f"{cfg.grpo.temperature:g}; pretrained: the floor, the warm start with no RL step (the first "
        "seed's evaluation samples); overthinking = "
        + (
            "tokens after the response first states its final answer, up to the last Answer line."
            if cfg.style == "natural"
            else "tokens of reasoning lines after the last column line, before A:."
        ),
    )
    steps_s = [
        [m, len(h := [x for run_h in histories[m] for x in run_h]) / max(1e-9, sum(x["seconds"] for x in h))]
        for m in METHODS
    ]
    speed = Table("Training speed", ["method", "steps/s"], steps_s)
    return Report(tables=[table, speed], figures=[_curves(histories, ctx)])


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


PRESETS = preset_table(
    bench=ReProSystemConfig(),
    smoke={
        **SMOKE_SIZE,
        "rl_steps": 3,
        "eval_levels": (1, 2),
        "train_levels": (1, 2),
    },
    # the tour: GRPO vs GRPO + RePro and the untrained floor with shorter pretraining and RL, over
    # 3 seeds (fewer cannot test the claim); about the CPU time of the 1-seed tour it replaces
    demo={
        "seeds": 3,
        "sft.steps": 400,
        "rl_steps": 10,
        "eval_problems": 24,
    },
    # The paper's setting with the checkpoint we ship: SmolLM2-135M-Instruct as it is, bf16 on a
    # GPU, prompted in words, RePro's segments as sentences; `--set policy.model=/path/to/checkpoint`
    # takes any local causal LM.
    paper={
        **SMOLLM2_SCALE,
        "task": "addition",
        "train_levels": (1, 2, 3),
        "eval_levels": (1, 2, 3),
        "repro": ReProConfig.natural(),
    },
)
SYSTEM = implemented_system("repro_reward", presets=PRESETS, run=run)
