"""One RLVR experiment, the harness `scaf_grpo` and `repro_reward` share: warm-start a policy on easy
problems, then train each method's GRPO arm from a copy of it for several seeds under the same
rollout budget, and evaluate every arm on the same held-out problems per level.

A system's config extends `RLVRConfig` (the policy, the warm start, GRPO, the levels and the
evaluation budget) with its own fields. A method is plain GRPO plus what its `ArmSetup` attaches to
the fresh trainer (a `guide` or `token_advantages` hook) and returns as an `Arm`: extra metrics per
step, state to keep in the checkpoint, a summary to keep with the results.

Randomness comes from named seed streams (`SEED_STREAMS`): each is an offset added to the run's
seed or to the level, so every arm of one seed sees the same questions and evaluation samples,
and the held-out problems of a level are the same for every seed and arm.

Finished (method, seed) runs are the cells of a study (`core.study`), kept in the run folder's
`cells.jsonl` and reused; an interrupted one resumes from its checkpoint (`rlvr.loop.train_steps`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from iclr26.core.device import resolve_device
from iclr26.core.distributed import init_distributed
from iclr26.core.seeding import set_seed
from iclr26.core.study import Arm as StudyArm
from iclr26.core.study import Study, Unit, run_study
from iclr26.core.system import RunContext
from iclr26.core.validation import check_in, check_int
from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer
from iclr26.rlvr.loop import train_steps
from iclr26.rlvr.policies import PolicyConfig, policy_from_config
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.sft import HintSampler, SFTConfig, Transform, pretrain
from iclr26.rlvr.tasks import GENERATORS, STYLES, Problem, check_levels, make_problems


@dataclass(frozen=True)
class SeedStream:
    """How one stream's seed is derived: `offset + key`, the key being the run's seed or a level."""

    offset: int
    key: Literal["seed", "level"]
    use: str


SEED_STREAMS: dict[str, SeedStream] = {
    "init": SeedStream(0, "seed", "the global torch / NumPy seed, set once: the policy's initial weights"),
    "pretrain": SeedStream(0, "seed", "the warm start's batches"),
    "rl": SeedStream(0, "seed", "one RL run: its questions' levels and problems, and its rollouts"),
    "eval": SeedStream(10_000, "seed", "the samples drawn when evaluating after RL with that seed"),
    "heldout": SeedStream(99_000, "level", "the held-out problems of a level (every seed and arm)"),
}


def stream_seed(stream: str, key: int) -> int:
    """The seed of `stream` (a name in `SEED_STREAMS`) for `key`: the run's seed, or the level."""
    check_in("stream", stream, SEED_STREAMS)
    check_int(SEED_STREAMS[stream].key, key, 0)
    return SEED_STREAMS[stream].offset + key


@dataclass(frozen=True)
class RLVRConfig:
    """The experiment's settings; a system's config extends it with its own."""

    seed: int = 0
    """seed of the warm start and of the first RL run (rlvr.experiment.SEED_STREAMS)"""
    seeds: int = 1
    """independent RL runs per method, seeds seed, seed + 1, ... (the pretrained model is shared)"""
    task: str = "addition"
    """the RL task: addition, multiplication, countdown or gsm (rlvr.tasks)"""
    style: str = "scratchpad"
    """prompt style: scratchpad (Q:/A:, for a model warm-started on it) or natural (a chat model)"""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """the policy: a character transformer, SmolLM2 or a local checkpoint"""
    sft: SFTConfig = field(default_factory=lambda: SFTConfig(batch_size=32))
    """the supervised warm start"""
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    """GRPO, the same for every method"""
    rl_steps: int = 100
    """GRPO updates per (method, seed)"""
    train_levels: tuple[int, ...] = (2, 3)
    """RL problems: each question's level is drawn uniformly from these"""
    eval_levels: tuple[int, ...] = (1, 2, 3)
    """levels evaluated after the warm start and after RL"""
    eval_problems: int = 48
    """held-out problems per evaluated level"""
    eval_k: int = 8
    """samples per held-out problem (pass@1 is their mean)"""
    device: str = "cpu"
    """torch device: cpu, cuda, cuda:N or auto (under torchrun: one GPU per process)"""
    threads: int = 2
    """CPU threads torch may use"""
    checkpoint_every: int = 10
    """RL steps between checkpoints (and one at the end): 1 where a step takes minutes"""

    def __post_init__(self) -> None:
        check_in("task", self.task, GENERATORS)
        check_in("style", self.style, STYLES)
        for name in ("train_levels", "eval_levels"):
            check_levels(self.task, name, getattr(self, name))
        for name in ("seeds", "rl_steps", "eval_problems", "eval_k", "threads", "checkpoint_every"):
            check_int(name, getattr(self, name), 1)
        check_int("seed", self.seed, 0)


# The `smoke` presets' tiny experiment (seconds on a CPU, every code path), as changes to an
# `RLVRConfig`; a system's smoke preset adds its own levels and steps.
SMOKE_SIZE: dict[str, Any] = {
    "policy.dim": 32,
    "policy.layers": 1,
    "policy.heads": 2,
    "sft.steps": 20,
    "sft.batch_size": 16,
    "grpo.questions_per_step": 2,
    "grpo.group_size": 4,
    "grpo.max_new_tokens": 48,
    "eval_problems": 4,
    "eval_k": 2,
}

# The `paper` presets' scale with the checkpoint we ship: SmolLM2-135M-Instruct in bf16 on a GPU,
# as it is (no warm start: a pretrained model's latent skills are the point), prompted in words
# (`style="natural"`), 3 seeds of 500 RL steps × 32 questions × 8 rollouts; a system's paper preset
# adds its task and levels. Temperature 0.7: at the release's 1.0 the 135M model's samples we read
# were mostly incoherent (not measured by a benchmark; the cliff in cliff_smollm2.py is at 0.7).
SMOLLM2_SCALE: dict[str, Any] = {
    "seeds": 3,
    "policy.model": "smollm2",
    "policy.dtype": "bfloat16",
    "style": "natural",
    "sft.steps": 0,
    "rl_steps": 500,
    "grpo.questions_per_step": 32,
    "grpo.lr": 2e-5,  # tuned for 135M (benchmarks/scaf_grpo/smollm2_lr.py; the release's 1e-6 is for 7B)
    "grpo.temperature": 0.7,
    "grpo.max_new_tokens": 128,
    "grpo.micro_batch": 64,  # rows per forward/backward: bounds the update's memory, same gradient
    "eval_problems": 200,
    "device": "cuda",
    "checkpoint_every": 25,
}

# The same experiment at a CPU budget (2 cores, float32): G = 8 rollouts as released, but 4
# questions per step, 64 new tokens, 20 steps, 2 seeds, 16 held-out problems × 4 samples per level.
# A step at the paper's 8 × 8 size is timed by benchmarks/scaf_grpo/smollm2_step.py. Use as `--set`
# overrides on top of the paper preset (benchmarks/scaf_grpo/smollm2_rl.py --cpu does).
SMOLLM2_CPU: dict[str, Any] = {
    "seeds": 2,
    "policy.dtype": "float32",
    "device": "cpu",
    "rl_steps": 20,
    "grpo.questions_per_step": 4,
    "grpo.max_new_tokens": 64,
    "grpo.micro_batch": 8,  # a float32 update of 64 rows at once took over 22 GB (OOM-killed)
    "eval_problems": 16,
    "eval_k": 4,
    "checkpoint_every": 1,  # a step takes minutes
}


@dataclass
class Arm:
    """What a method adds to plain GRPO in one (method, seed) run."""

    record: Callable[[], dict[str, float]] | None = None
    """metrics added to each step's"""
    save_extra: Callable[[], dict[str, Any]] | None = None
    """state of the method's own kept in the checkpoint"""
    load_extra: Callable[[dict[str, Any]], None] | None = None
    """restores that state from a checkpoint"""
    summary: Callable[[], dict[str, Any]] | None = None
    """kept with the results as `extra` once the run is done"""


# (method, a fresh trainer on a copy of the pretrained policy) -> its Arm; may set the trainer's
# `guide` / `token_advantages` hooks
ArmSetup = Callable[[str, GRPOTrainer], Arm]
# (trainer, the held-out problems of one level, the evaluation stream) -> metrics of that level
Score = Callable[[GRPOTrainer, list[Problem], torch.Generator], dict[str, float]]


def launched() -> bool:
    """True under torchrun/accelerate (more than one process described in the environment)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


class Experiment:
    """The warm-started policy of one run of `cfg`, and the GRPO arms trained from it.

    Sets torch's threads and the global seed, then builds the policy on `cfg.device`; with
    `data_parallel`, a run under torchrun joins the process group first (GRPO then trains
    data-parallel: `rlvr.grpo.GRPOTrainer`).
    """

    def __init__(self, cfg: RLVRConfig, ctx: RunContext, *, data_parallel: bool = False) -> None:
        if not isinstance(cfg, RLVRConfig):
            raise TypeError(f"cfg must be an RLVRConfig, got {type(cfg).__name__}")
        self.cfg, self.ctx = cfg, ctx
        torch.set_num_threads(cfg.threads)
        if data_parallel and launched():
            device = init_distributed(cfg.device).device
        else:
            device = resolve_device(cfg.device)
        set_seed(stream_seed("init", cfg.seed))
        self.policy: Policy = policy_from_config(cfg.policy, device)
        self._untrained: dict[tuple[int, Score | None], dict[str, dict[str, float]]] = {}

    def pretrain(
        self, *, hint_sampler: HintSampler | None = None, transform: Transform | None = None
    ) -> dict[str, float]:
        """The warm start of `self.policy` (resumable from the run folder); its final loss and time.
        With `sft.steps` 0 the policy stays as loaded (loss nan)."""
        if self.cfg.sft.steps == 0:
            return {"loss": float("nan"), "seconds": 0.0}
        with self.ctx.progress("pretraining (steps)", total=self.cfg.sft.steps) as advance:
            return pretrain(
                self.policy,
                self.cfg.sft,
                seed=stream_seed("pretrain", self.cfg.seed),
                hint_sampler=hint_sampler,
                transform=transform,
                checkpoint=self.ctx.checkpoint_dir / "sft.pt",
                on_step=advance,
            )

    def trainer(self, policy: Policy | None = None) -> GRPOTrainer:
        """A GRPO trainer with `cfg.grpo` on `policy` (default: the pretrained policy itself)."""
        return GRPOTrainer(self.policy if policy is None else policy, self.cfg.grpo)

    def heldout(self, level: int) -> list[Problem]:
        """The held-out evaluation problems of `level`."""
        cfg = self.cfg
        return make_problems(
            cfg.task, level, cfg.eval_problems, seed=stream_seed("heldout", level), style=cfg.style
        )

    def evaluate(
        self, trainer: GRPOTrainer, seed: int, score: Score | None = None
    ) -> dict[str, dict[str, float]]:
        """`score` of `trainer` on each evaluated level's held-out problems, keyed by str(level);
        the default score is `GRPOTrainer.evaluate` (pass@1, pass@k, greedy) with k = `eval_k`."""
        if score is None:

            def score(t: GRPOTrainer, problems: list[Problem], gen: torch.Generator) -> dict[str, float]:
                return t.evaluate(problems, self.cfg.eval_k, gen)

        gen = torch.Generator().manual_seed(stream_seed("eval", seed))
        return {str(level): score(trainer, self.heldout(level), gen) for level in self.cfg.eval_levels}

    def untrained(self, seed: int, score: Score | None = None) -> dict[str, dict[str, float]]:
        """`evaluate` of the policy as it is (the warm start, no RL step) with `seed`'s evaluation
        stream: the untrained floor of every RL arm; computed once per seed and score."""
        key = (seed, score)
        if key not in self._untrained:
            self._untrained[key] = self.evaluate(self.trainer(), seed, score)
        return self._untrained[key]

    def measure(self, setup: ArmSetup, score: Score | None = None) -> Callable[..., dict[str, Any]]:
        """The study's `measure` of an RL arm on a seed (`core.study`: arms = methods, units = seeds):
        a `floor` arm is the untrained policy (`untrained`: evaluated, no RL); any other arm trains
        its method from a copy of the pretrained policy (resumable from its checkpoint) and is
        evaluated. The cell: `eval` (as `evaluate`), `history` (metrics per step), `extra` (the
        arm's summary)."""
        cfg = self.cfg

        def measure(arm: StudyArm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
            if arm.role == "floor":
                return {"eval": self.untrained(unit.seed, score), "history": [], "extra": {}}
            name = f"{arm.name.replace('+', '_')}-s{unit.seed}"
            trainer = self.trainer(copy.deepcopy(self.policy))
            hooks = setup(arm.name, trainer)
            history = train_steps(
                trainer,
                cfg.task,
                cfg.train_levels,
                cfg.rl_steps,
                stream_seed("rl", unit.seed),
                ctx.checkpoint_dir / f"{name}.pt",
                lambda n=1: None,
                record=hooks.record,
                save_extra=hooks.save_extra,
                load_extra=hooks.load_extra,
                style=cfg.style,
                checkpoint_every=cfg.checkpoint_every,
            )
            extra = hooks.summary() if hooks.summary else {}
            return {"eval": self.evaluate(trainer, unit.seed, score), "history": history, "extra": extra}

        return measure

    def units(self) -> list[Unit]:
        """The study's units: one per RL seed (`s<seed>`), seeds seed, seed + 1, ..."""
        return [Unit(f"s{s}", s) for s in range(self.cfg.seed, self.cfg.seed + self.cfg.seeds)]

    def run_arms(
        self,
        methods: Sequence[str],
        setup: ArmSetup,
        *,
        score: Score | None = None,
        describe: Callable[[dict[str, Any]], str] | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Train and evaluate every method for every seed, seed after seed; per method, one record
        per seed (as `measure`). A study (`core.study`: arms = methods, units = seeds) runs them:
        each finished run is a cell of the run folder's `cells.jsonl`, which a resume reads back
        instead of training again. A system's own study (with its floor and claim) uses `measure`
        and `units` directly. `describe(record)` gives the text logged for each run.
        """
        cfg, ctx = self.cfg, self.ctx
        arms = [StudyArm(m, "method") for m in methods]
        units = self.units()
        measure = self.measure(setup, score)
        study = Study("RL", arms, units, measure, config=cfg, seed=cfg.seed, unit_major=True)
        result = run_study(study, ctx, jobs=1)
        records = {m: [dict(c.metrics) for c in result.records(m)] for m in methods}
        if describe is not None:
            for unit in units:
                for m in methods:
                    ctx.log(f"{m} seed {unit.seed}: {describe(records[m][units.index(unit)])}")
        return records
