"""The grid-world experiment (issue 61): does in-context training on sessions let the session model
use the history where a pairwise editor cannot?

Every learned arm is the same ~150k-parameter `SessionDiT` trained for the same steps on the same grid
sessions (`grid.grid_session`, 2–4 edits, context-dependent turns included):

- `vincie`: whole sessions, the three proxy tasks (next image, current mask, next mask), masks-first
  inference;
- `no_masks`: whole sessions, next-image prediction only (vincie without masks);
- `pairwise`: single (I_k, T_k, I_{k+1}) pairs, next-image prediction only.

Held-out test sessions of `turns` edits each hold at least one context-dependent turn ("move the red
object back to its first place", "give the red object its first colour"). Each turn is judged with
the true history as context (teacher forcing), by turn type, with the MSE-Bench judge
(`judge.score_turn`) and by exact cells (`grid.decode`); the sessions are also edited for all turns on
the model's own outputs (MSE-Bench's cumulative success). Floors: copy the last image, the untrained
model, and `chance` (the scripted pairwise guess: exact where the pair fixes the edit, a uniform guess
of the history where it does not). The true images are the judge's oracle.

Budgets: equal optimiser steps and examples; the next-image examples differ (vincie spends
mask_rate · 2/3 of its examples on the masks) and both counts are reported.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.core import Report, RunContext, Table
from iclr26.core.checkpoint import load_checkpoint
from iclr26.core.claim import Claim
from iclr26.core.config import ConfigError
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit
from iclr26.core.validation import check_int
from iclr26.vincie.editing import SamplerConfig, edit_turn
from iclr26.vincie.grid import (
    CONTEXT,
    ORDINARY,
    SIZE,
    TURN_TYPES,
    decode,
    grid_session,
    pairwise_guess,
    vocabulary,
)
from iclr26.vincie.judge import score_turn
from iclr26.vincie.model import ModelConfig, SessionDiT
from iclr26.vincie.sequence import ProxyConfig, Tokenizer
from iclr26.vincie.train import TrainConfig, train_session_model
from iclr26.vincie.video import Session

LEARNED = {
    "vincie": ProxyConfig(),
    "no_masks": ProxyConfig(current_mask=False, next_mask=False, mask_rate=0.0),
    "pairwise": ProxyConfig(context=False, current_mask=False, next_mask=False, mask_rate=0.0),
}
EQUAL = {"no_masks_equal": "no_masks", "pairwise_equal": "pairwise"}
"""Arms trained for vincie's next-image budget: the steps times vincie's next-image share."""
TRAINED = (*LEARNED, *EQUAL)
IN_CONTEXT = ("vincie", "no_masks")
"""The arms trained on whole sessions at full budget: the methods of the claims against the pairwise guess."""
SAMPLED = {"vincie_image_only": "vincie"}
"""Arms that sample another arm's model: the vincie model making the image alone (no masks first)."""
FLOORS = {"copy": "copy the last image", "untrained": "untrained model", "chance": "pairwise guess"}


@dataclass(frozen=True)
class GridConfig:
    """The grid experiment's sizes; the defaults are its bench."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """one model per arm and seed, each on its own training sessions"""
    train_sessions: int = 4000
    """training sessions per seed"""
    test_sessions: int = 24
    """held-out test sessions (shared by the seeds)"""
    turns: int = 3
    """edits per test session (training sessions have 1 to turns edits)"""
    context_rate: float = 0.4
    """chance that a turn is context-dependent when one applies (training and test)"""
    model: ModelConfig = field(
        default_factory=lambda: ModelConfig(
            image_size=SIZE,
            patch=2,
            width=48,
            heads=2,
            separate_blocks=1,
            shared_blocks=2,
            max_words=10,
            max_turns=4,
            absolute_positions=True,
        )
    )
    """the session transformer (143k parameters; patch 2: one token per cell; a learned (row, column)
    embedding beside the rotary positions, since the instructions name cells by row and column: without
    it the gate's model placed 12% of its adds and 6% of its moves right)"""
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            sessions=4000, max_images=4, steps=4000, batch=16, warmup=50, lr=5e-3
        )
    )
    """optimisation, the same for every learned arm (`sessions` is ignored: `train_sessions`)"""
    t_mean: float = 1.5
    """mean of the training timesteps' logit-normal (SD3's shift toward noise; at 0, the centred
    default, the model had not learned to copy its context after 800 steps)"""
    sampler: SamplerConfig = field(default_factory=lambda: SamplerConfig(steps=10, guidance=1.0))
    """Euler steps, shift, guidance (1: none) and vincie's order (masks first)"""
    threads: int = 1
    """torch CPU threads"""

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ConfigError("seeds: name at least one seed")
        for name in ("train_sessions", "test_sessions", "turns", "threads"):
            check_int(name, getattr(self, name), 1)
        if self.turns + 1 > self.train.max_images or self.turns > self.model.max_turns:
            raise ConfigError(
                f"turns={self.turns} needs train.max_images ≥ {self.turns + 1} "
                f"and model.max_turns ≥ {self.turns}"
            )
        if self.model.image_size != SIZE:
            raise ConfigError(f"model.image_size must be {SIZE} (the grid's frames)")


def training_sessions(cfg: GridConfig, seed: int) -> list[Session]:
    """Seed `seed`'s training sessions: 1 to `turns` edits each."""
    out = []
    for i in range(cfg.train_sessions):
        rng = np.random.default_rng(derive_seed(seed, "grid-train", i))
        turns = int(rng.integers(1, cfg.turns + 1))
        out.append(grid_session(rng, turns, f"train-{seed}-{i}", cfg.context_rate)[0])
    return out


def test_sessions(cfg: GridConfig) -> list[tuple[Session, list[str]]]:
    """The held-out sessions (from a stream no training seed draws) with each turn's type; each holds
    at least one context-dependent turn."""
    out = []
    for i in range(cfg.test_sessions):
        rng = np.random.default_rng(derive_seed(0, "grid-test", i))
        s, kinds, _ = grid_session(rng, cfg.turns, f"test-{i}", cfg.context_rate, min_context=1)
        out.append((s, kinds))
    return out


def next_image_share(proxy: ProxyConfig) -> float:
    """The share of training examples whose target is the next image."""
    if not proxy.context or proxy.mask_rate == 0:
        return 1.0
    return (1 - proxy.mask_rate) + proxy.mask_rate / len(proxy.tasks)


def proxy_of(arm: str) -> ProxyConfig:
    """The proxy tasks an arm's model trained on."""
    return LEARNED[EQUAL.get(SAMPLED.get(arm, arm), SAMPLED.get(arm, arm))]


def steps_of(cfg: GridConfig, arm: str) -> int:
    """An arm's optimiser steps: the config's, or for an `EQUAL` arm vincie's next-image budget."""
    if arm in EQUAL:
        return round(cfg.train.steps * next_image_share(LEARNED["vincie"]))
    return cfg.train.steps


def train_arm(
    cfg: GridConfig, arm: str, seed: int, data: list[Session], tok: Tokenizer, checkpoint: Path | None = None
) -> tuple[SessionDiT, dict]:
    """One learned arm's model for one seed (resuming from `checkpoint`), and its training row."""
    t0 = time.perf_counter()
    train = dataclasses.replace(cfg.train, steps=steps_of(cfg, arm))
    net, losses = train_session_model(
        cfg.model, proxy_of(arm), train, seed=seed, data=data, tok=tok, t_mean=cfg.t_mean,
        checkpoint=checkpoint,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    if checkpoint is not None and checkpoint.exists():  # the training's own time, over its resumes
        seconds = float(load_checkpoint(checkpoint).get("seconds", seconds))
    info = {
        "arm": arm, "seed": seed, "steps": train.steps, "final_loss": float(np.mean(losses[-50:])),
        "parameters": sum(p.numel() for p in net.parameters()),
        "next_image_examples": round(train.steps * train.batch * next_image_share(proxy_of(arm))),
        "seconds": seconds,
    }  # fmt: skip
    return net, info


def untrained(cfg: GridConfig, seed: int, tok: Tokenizer) -> SessionDiT:
    """The session model at its initialisation (the `untrained` floor)."""
    torch.manual_seed(derive_seed(seed, "init"))
    return SessionDiT(cfg.model, len(tok)).eval()


class Editors:
    """Each arm's images for every test session of one seed, made once per process: per turn with the
    true history (`forced`) and on the arm's own outputs (`own`)."""

    def __init__(
        self,
        cfg: GridConfig,
        tests: list[tuple[Session, list[str]]],
        models: dict[tuple[str, int], SessionDiT],
    ):
        self.cfg, self.tests, self.models = cfg, tests, models
        self.tok = Tokenizer(vocabulary())
        self.made: dict[tuple[str, int], tuple[list[list[np.ndarray]], list[list[np.ndarray]]]] = {}

    def _model(self, arm: str, seed: int) -> SessionDiT:
        if arm == "untrained":
            return untrained(self.cfg, seed, self.tok)
        return self.models[(SAMPLED.get(arm, arm), seed)]

    def outputs(self, arm: str, seed: int) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
        """(forced, own): per session, the image made at each turn."""
        if (arm, seed) not in self.made:
            self.made[(arm, seed)] = self._edit(arm, seed)
        return self.made[(arm, seed)]

    def _edit(self, arm: str, seed: int) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
        sessions = [s for s, _ in self.tests]
        n, K = len(sessions), self.cfg.turns
        if arm == "chance":
            rng = np.random.default_rng(derive_seed(seed, "chance"))
            forced = [
                [pairwise_guess(rng, s.images[k], s.instructions[k]) for k in range(K)] for s in sessions
            ]
            own = []
            for s in sessions:
                img, row = s.images[0], []
                for k in range(K):
                    img = pairwise_guess(rng, img, s.instructions[k])
                    row.append(img)
                own.append(row)
            return forced, own
        model = self._model(arm, seed)
        proxy = LEARNED["no_masks"] if arm == "untrained" else proxy_of(arm)
        pairwise = not proxy.context
        sampler = self.cfg.sampler
        if arm in ("untrained", *SAMPLED) or proxy.tasks == ("next_image",):
            sampler = SamplerConfig(sampler.steps, sampler.shift, sampler.guidance, "image_only")
        tasks = proxy.tasks
        kw = {"pairwise": pairwise, "tasks": tasks, "tok": self.tok}
        gen = torch.Generator().manual_seed(derive_seed(seed, "grid-sampler", arm))
        none = [[None] * K for _ in sessions]
        forced: list[list[np.ndarray]] = [[] for _ in sessions]
        for k in range(K):  # the true images I_0..I_k as context
            imgs = [list(s.images) for s in sessions]
            made = edit_turn(model, sampler, sessions, k, imgs, none, none, gen, **kw)
            for i in range(n):
                forced[i].append(made["next_image"][i])
        imgs = [[s.images[0]] for s in sessions]
        cur: list[list] = [[] for _ in sessions]
        nxt: list[list] = [[] for _ in sessions]
        for k in range(K):  # the arm's own images as context (MSE-Bench)
            made = edit_turn(model, sampler, sessions, k, imgs, cur, nxt, gen, **kw)
            for i in range(n):
                imgs[i].append(made["next_image"][i])
                cur[i].append(made.get("current_mask", [None] * n)[i])
                nxt[i].append(made.get("next_mask", [None] * n)[i])
        return forced, [row[1:] for row in imgs]


def measure(cfg: GridConfig, editors: Editors, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One cell: the arm's images for the unit's session (made with the seed's models), judged per
    turn with the true history, and cumulatively on its own images."""
    torch.set_num_threads(cfg.threads)
    i, seed = unit.params["index"], unit.seed
    s, kinds = editors.tests[i]
    K = cfg.turns
    if arm.name == "oracle":
        forced = own = list(s.images[1:])
    elif arm.name == "copy":
        forced, own = list(s.images[:K]), [s.images[0]] * K
    else:
        f, o = editors.outputs(arm.name, seed)
        forced, own = f[i], o[i]
    passed, exact = [], []
    for k in range(K):
        sc = score_turn(
            forced[k], s.images[k], s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k]
        )
        passed.append(sc.passed)
        exact.append(bool((decode(forced[k]) == decode(s.images[k + 1])).all()))
    prev, own_pass = s.images[0], []
    for k in range(K):
        sc = score_turn(own[k], prev, s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k])
        own_pass.append(sc.passed)
        prev = own[k]

    def share(values: list[bool], types: tuple[str, ...]) -> float | None:
        picked = [v for v, t in zip(values, kinds, strict=True) if t in types]
        return float(np.mean(picked)) if picked else None

    return {
        "ordinary": share(passed, ORDINARY), "context": share(passed, CONTEXT),
        "exact_ordinary": share(exact, ORDINARY), "exact_context": share(exact, CONTEXT),
        **{t: share(passed, (t,)) for t in TURN_TYPES},
        "success_last": float(all(own_pass)),
        "turn_types": kinds, "passed": passed, "exact": exact, "own_passed": own_pass,
    }  # fmt: skip


CLAIMS = (
    # named before the run; the context claims' floor is the pairwise guess, the others' copy
    Claim("context", "vincie", ("pairwise",), interval="bootstrap", floor_arm="chance",
          label="judge success, context-dependent turns (true history)"),
    Claim("context", "vincie", ("no_masks",), interval="bootstrap", floor_arm="chance",
          label="judge success, context-dependent turns (true history)"),
    Claim("context", "vincie", ("no_masks_equal",), interval="bootstrap", floor_arm="chance",
          label="judge success, context-dependent turns (true history)"),
    Claim("ordinary", "vincie", ("pairwise",), interval="bootstrap", floor_arm="copy",
          label="judge success, ordinary turns (true history)"),
    Claim("ordinary", "vincie", ("no_masks",), interval="bootstrap", floor_arm="copy",
          label="judge success, ordinary turns (true history)"),
    Claim("ordinary", "vincie", ("no_masks_equal",), interval="bootstrap", floor_arm="copy",
          label="judge success, ordinary turns (true history)"),
    Claim("success_last", "vincie", ("pairwise",), interval="bootstrap", floor_arm="copy",
          label="session success at the last turn (own images, MSE-Bench)"),
    # does training on sessions let a model read the history at all? each in-context arm against the
    # best a pairwise editor can do (the README named this comparison before the 4,000-step run; these
    # two claims were written after its first seed was seen)
    Claim("context", "vincie", ("chance",), interval="bootstrap",
          label="judge success, context-dependent turns (true history), against the pairwise guess"),
    Claim("context", "no_masks", ("chance",), interval="bootstrap",
          label="judge success, context-dependent turns (true history), against the pairwise guess"),
)  # fmt: skip


def study(
    cfg: GridConfig,
    models: dict[tuple[str, int], SessionDiT],
    train_rows: list[dict],
    arms: tuple[str, ...] = (*TRAINED, *SAMPLED),
) -> Study:
    """The grid experiment as a study: units are (seed, test session); the learned `arms` (vincie and
    no_masks the methods), the true images (oracle) and the three floors."""
    tests = test_sessions(cfg)
    editors = Editors(cfg, tests, models)
    study_arms = [Arm("oracle", "oracle")]
    # no_masks is vincie's ablation in the vincie claims and an in-context method against the pairwise guess
    study_arms += [Arm(a, "method" if a in IN_CONTEXT else "baseline") for a in arms]
    study_arms += [Arm(name, "floor", floor=what) for name, what in FLOORS.items()]
    units = [Unit(f"s{seed}-{i}", seed, {"index": i}) for seed in cfg.seeds for i in range(len(tests))]
    claims = [c for c in CLAIMS if c.method in arms and all(b in arms or b in FLOORS for b in c.baselines)]
    return Study(
        "vincie_grid", study_arms, units, functools.partial(measure, cfg, editors), claims=claims,
        metrics=("context", "ordinary", "success_last", "exact_context", "exact_ordinary", *TURN_TYPES),
        pass_metric="success_last", config=cfg, seed=0, unit_major=False,
        views=functools.partial(views, cfg, tests, train_rows),
    )  # fmt: skip


def views(
    cfg: GridConfig,
    tests: list[tuple[Session, list[str]]],
    train_rows: list[dict],
    result: StudyResult,
    ctx: RunContext,
) -> Report:
    """Judge success by turn type per arm (pooled over seeds, and per seed), and the training table."""
    names = [a.name for a in result.study.arms]

    def pooled(arm: str, metric: str, seed: int | None = None) -> float | str:
        vals = [
            c.metrics[metric]
            for c in result.records(arm)
            if c.metrics.get(metric) is not None and (seed is None or c.unit.startswith(f"s{seed}-"))
        ]
        return 100 * float(np.mean(vals)) if vals else "–"

    counts = {t: sum(k == t for _, kinds in tests for k in kinds) for t in TURN_TYPES}
    by_type = ["context", "ordinary", "success_last"]
    exact_cols = [f"seed {s} {m}" for m in ("context", "ordinary") for s in cfg.seeds]
    seed_cols = [f"seed {s} {m}" for s in cfg.seeds for m in ("context", "ordinary")]
    tables = [
        Table(
            "Judge success by turn type (%), true history, pooled over seeds",
            ["arm", *[f"{t} ({counts[t]})" for t in TURN_TYPES], "context", "ordinary", "last turn (own)"],
            [[n, *[pooled(n, t) for t in (*TURN_TYPES, *by_type)]] for n in names],
            caption="Each turn is edited with the true images I_0..I_k as context and judged by MSE-Bench's "
            "rule (both scores > 6); a type's number of test turns in brackets; per session the mean over "
            "its turns of that type, then the mean over sessions and seeds. 'last turn (own)': the session "
            "edited on the arm's own images, success at the last turn (cumulative).",
        ),
        Table(
            "Exact cells (%), true history",
            ["arm", *exact_cols, "context", "ordinary"],
            [
                [n, *[pooled(n, f"exact_{m}", s) for m in ("context", "ordinary") for s in cfg.seeds],
                 pooled(n, "exact_context"), pooled(n, "exact_ordinary")]
                for n in names
            ],
            caption="The made image decoded cell by cell (nearest of the background and the 6 colours) "
            "equals the true next grid.",
        ),
        Table(
            "Judge success by seed (%), true history",
            ["arm", *seed_cols],
            [[n, *[pooled(n, m, s) for s in cfg.seeds for m in ("context", "ordinary")]] for n in names],
        ),
    ]  # fmt: skip
    if train_rows:
        keys = ("arm", "seed", "steps", "final_loss", "parameters", "next_image_examples", "seconds")
        tables.append(
            Table(
                "Training",
                ["arm", "seed", "steps", "final loss", "parameters", "next-image examples", "seconds"],
                [[r[k] for k in keys] for r in train_rows],
                caption=f"{cfg.train_sessions} training sessions per seed, batch {cfg.train.batch}; the same "
                "steps and examples for every arm, so vincie sees fewer next-image examples (both counts).",
            )
        )
    return Report(tables=tables)


GATE = GridConfig(seeds=(0,), train_sessions=64, test_sessions=1, turns=1)
GATE = dataclasses.replace(GATE, train=dataclasses.replace(GATE.train, sessions=64, max_images=2, steps=6000))
"""The overfit gate's training: 64 one-edit sessions, memorised (`tests/vincie/test_overfit_gate.py`)."""


def gate_draws(n: int = 64) -> list[tuple[Session, list[str]]]:
    """The gate's `n` one-edit grid sessions, each with its turn types."""
    return [
        grid_session(np.random.default_rng(derive_seed(0, "gate", i)), 1, f"gate-{i}")[:2] for i in range(n)
    ]


def gate_sessions(n: int = 64) -> list[Session]:
    """The gate's sessions: `n` one-edit grid sessions."""
    return [s for s, _ in gate_draws(n)]


def gate_scores(model: SessionDiT, sessions: list[Session], sampler: SamplerConfig, tok: Tokenizer) -> dict:
    """Every turn of the sessions made with the true history as context (vincie's masks-first order)
    and judged: the share that passes, the share exact by cells, mean prompt following and consistency,
    and each turn's pass (`passed`, turn by turn, sessions in order)."""
    gen = torch.Generator().manual_seed(0)
    rows = []
    for k in range(max(s.turns for s in sessions)):
        batch = [s for s in sessions if s.turns > k]
        none = [[None] * s.turns for s in batch]
        imgs = [list(s.images) for s in batch]
        made = edit_turn(model, sampler, batch, k, imgs, none, none, gen, tok=tok)
        for s, out in zip(batch, made["next_image"], strict=True):
            sc = score_turn(
                out, s.images[k], s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k]
            )
            exact = bool((decode(out) == decode(s.images[k + 1])).all())
            rows.append((sc.passed, exact, sc.prompt_following, sc.consistency))
    a = np.array(rows, dtype=np.float64)
    return {"success": a[:, 0].mean(), "exact": a[:, 1].mean(), "pf": a[:, 2].mean(), "cs": a[:, 3].mean(),
            "turns": len(rows), "passed": [bool(r[0]) for r in rows]}  # fmt: skip
