"""The `vincie` system: train the session transformer on video sessions made here (and, with the
same budget, the pairwise editor and the proxy-task ablations), then run the study (`core.study`):
every method, the true images (the judge's oracle) and copy-the-input (the floor) edit each held-out
session for five turns in MSE-Bench's protocol; the claim vincie vs pairwise on success at the last
turn, with the one claim rule; tables of success at turn k, the judge's scores and pixel metrics."""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.checkpoint import load_checkpoint
from iclr26.core.claim import Claim
from iclr26.core.config import with_changes
from iclr26.core.distributed import DistInfo, init_distributed
from iclr26.core.parallel import parallel_map
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit, cell_threads, run_study
from iclr26.core.system import preset_table
from iclr26.vincie.config import LEARNED, VincieConfig
from iclr26.vincie.editing import Outputs, copy_previous, model_editor
from iclr26.vincie.figures import session_figure, success_figure
from iclr26.vincie.judge import LLMJudge, TurnScore, cumulative_success, mask_iou, score_turn
from iclr26.vincie.model import SessionDiT
from iclr26.vincie.sequence import Tokenizer
from iclr26.vincie.train import train_session_model
from iclr26.vincie.video import Session, edit_session, load_sessions, paraphrase, words

EVAL_CHUNK = 16  # sessions sampled together (the sampler's noise depends on the chunk)
ORACLE = Arm("oracle", "oracle")
"""The true images: the judge must pass every turn of every session."""
COPY = "copy"  # copy-the-input: returns its input unchanged, the floor every editor must rise above
LABELS = {ORACLE.name: "oracle (true images)"}  # a row's name in the system's own tables


def bench_sessions(cfg: VincieConfig) -> list[Session]:
    """The held-out benchmark: `bench_sessions` fresh scenes with `turns` complete edits each."""
    out = []
    for i in range(cfg.bench_sessions):
        rng = np.random.default_rng(derive_seed(cfg.seed, "bench", i))
        out.append(edit_session(rng, cfg.model.image_size, cfg.turns, f"bench-{i}")[0])
    return out


def judge_outputs(
    sessions: list[Session], outputs: Outputs, turns: int, llm: LLMJudge | None = None
) -> list[list[TurnScore]]:
    """Score every turn of every session (all turns, so drift is measured past a failure too)."""
    table = []
    for s, images in zip(sessions, outputs.images, strict=True):
        row, prev = [], s.images[0]
        for k in range(turns):
            sc = score_turn(
                images[k], prev, s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k]
            )
            if llm is not None:
                pf, cs = llm.score(s.instructions[: k + 1], [s.images[0], *images[: k + 1]])
                sc = dataclasses.replace(sc, prompt_following=pf, consistency=cs)
            row.append(sc)
            prev = images[k]
        table.append(row)
    return table


def _train_one(
    job: tuple, info: DistInfo | None = None, on_step: Callable[[int, float], None] | None = None
) -> tuple[dict, list[float], float]:
    """Train one learned method (resuming from its checkpoint): (its weights, losses, seconds).
    On a Ray worker it takes one CPU thread."""
    method, cfg, data, checkpoint = job
    if info is None:  # a Ray task: one of several side by side
        torch.set_num_threads(1)
    t0 = time.perf_counter()
    net, losses = train_session_model(
        cfg.model, with_changes(cfg.proxy, LEARNED[method]), cfg.train, seed=cfg.seed,
        checkpoint=checkpoint, info=info, on_step=on_step, data=data,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    if checkpoint.exists():  # the training's own wall time, summed over the runs that resumed it
        seconds = float(load_checkpoint(checkpoint).get("seconds", seconds))
    return {k: v.cpu() for k, v in net.state_dict().items()}, losses, seconds


JUDGE_NEEDS = "the LLM judge (judge=llm)"


def _method(cfg: VincieConfig) -> str:
    """The study's method: vincie, or the first other editor run."""
    return "vincie" if "vincie" in cfg.methods else next((m for m in cfg.methods if m != COPY), "")


def study(
    cfg: VincieConfig,
    sessions: list[Session] | None = None,
    models: dict[str, SessionDiT] | None = None,
    train_rows: list[list] | None = None,
) -> Study:
    """vincie as a study over the held-out sessions: the method (vincie), the other editors as
    baselines, the true images as the judge's oracle (they must pass every turn) and copy-the-input as
    the floor. The claim: vincie above pairwise on success at the last turn (0/1 per session, a paired
    bootstrap); without pairwise, the method above copy at turn 1. Both at copy's level on every
    session (0 vs 0) is uninformative. `sessions` (default: `bench_sessions(cfg)`), the trained `models`
    and the training table's rows come from `run`."""
    sessions = bench_sessions(cfg) if sessions is None else sessions
    method = _method(cfg)
    arms = [ORACLE]
    for m in cfg.methods:
        if m == COPY:
            arms.append(Arm(m, "floor", floor="copy the input"))
        else:
            arms.append(Arm(m, "method" if m == method else "baseline"))
    units = [Unit(s.ident, cfg.seed, {"index": i}) for i, s in enumerate(sessions)]
    K = cfg.turns
    floor = COPY if COPY in cfg.methods else None
    claims = []
    # vincie vs pairwise at the last turn; else the demo bar: the method vs copy at turn 1
    k, base = (K, "pairwise") if method == "vincie" and "pairwise" in cfg.methods else (1, floor)
    if method and base:
        label = f"success at turn {k}"
        claims.append(
            Claim(f"success_t{k}", method, (base,), interval="bootstrap", floor_arm=floor, label=label)
        )
    editors = _Editors(cfg, sessions, models or {})
    return Study(
        "vincie", arms, units, functools.partial(_measure, cfg, sessions, editors), claims=claims,
        metrics=(*tuple(f"success_t{k}" for k in range(1, K + 1)), "cs_t1", "psnr_t1", f"psnr_t{K}"),
        pass_metric=f"success_t{K}", config=cfg, seed=cfg.seed,
        views=functools.partial(_views, cfg, sessions, editors, train_rows or []),
    )  # fmt: skip


class _Editors:
    """Each method's outputs on the chunk of sessions sampled together, made once per process."""

    def __init__(self, cfg: VincieConfig, sessions: list[Session], models: dict[str, SessionDiT]):
        self.cfg, self.sessions, self.models = cfg, sessions, models
        self.made: dict[tuple[str, int], Outputs] = {}
        self.judges: dict[int, LLMJudge] = {}

    def outputs(self, m: str, i: int) -> tuple[Outputs, int]:
        """The outputs of the chunk holding session `i` under method `m`, and `i`'s place in it."""
        start = i - i % EVAL_CHUNK
        if (m, start) not in self.made:
            chunk = self.sessions[start : start + EVAL_CHUNK]
            self.made[(m, start)] = self.editor(m)(chunk, self.cfg.turns)
        return self.made[(m, start)], i - start

    def editor(self, m: str) -> Callable[[list[Session], int], Outputs]:
        cfg = self.cfg
        trained = "vincie" if m == "vincie_image_only" else m  # the model this method samples
        sampler = with_changes(cfg.sampler, {"order": "image_only"}) if trained != m else cfg.sampler
        tasks = with_changes(cfg.proxy, LEARNED[trained]).tasks
        return model_editor(
            self.models[trained], sampler, pairwise=m == "pairwise", seed=derive_seed(cfg.seed, "sampler"),
            tasks=tasks,
        )  # fmt: skip

    def judge(self, ctx: RunContext) -> LLMJudge | None:
        """The LLM judge on the run's model (opened once per context), or None for the scene judge."""
        if self.cfg.judge != "llm":
            return None
        if id(ctx) not in self.judges:
            self.judges[id(ctx)] = LLMJudge(ctx.chat_model(images=JUDGE_NEEDS))
        return self.judges[id(ctx)]


def _measure(
    cfg: VincieConfig, sessions: list[Session], editors: _Editors, arm: Arm, unit: Unit, ctx: RunContext
) -> dict[str, Any]:
    """One cell: the arm edits the unit's session for every turn (a learned method samples the chunk
    of sessions it belongs to), and the judge scores each turn."""
    # a cell forked by --jobs N takes one thread: the parent's OpenMP pool (training) does not
    # survive the fork, and a second thread would wait on it for ever
    torch.set_num_threads(cell_threads(cfg.threads))
    i = unit.params["index"]
    s = sessions[i]
    K = cfg.turns
    if arm.name == ORACLE.name:
        out, j = Outputs([list(s.images[1:])]), 0
    elif arm.name == COPY:
        out, j = copy_previous([s], K), 0
    else:
        out, j = editors.outputs(arm.name, i)
    row = judge_outputs([s], Outputs([out.images[j]]), K, editors.judge(ctx))[0]
    success = cumulative_success([[t.passed for t in row]], K)

    def iou(which: str, truth: np.ndarray) -> float | None:
        masks = getattr(out, which)
        return None if not masks or masks[j][0] is None else mask_iou(masks[j][0], truth)

    first, last = row[0], row[K - 1]
    return {
        **{f"success_t{k + 1}": v for k, v in enumerate(success)},
        "pf_t1": first.prompt_following, "cs_t1": first.consistency, "l1_t1": first.l1,
        "psnr_t1": first.psnr, "ssim_t1": first.ssim, f"psnr_t{K}": last.psnr,
        "mask_iou_current_t1": iou("masks_current", s.masks_current[0]),
        "mask_iou_next_t1": iou("masks_next", s.masks_next[0]),
        "s_per_turn": out.seconds_per_turn,
        "turns": [t.__dict__ | {"passed": t.passed} for t in row],
    }  # fmt: skip


def run(cfg: VincieConfig, ctx: RunContext) -> Report:
    """Train the learned methods (resumable), then run the study (`core.study.run_study`: resumable
    from `cells.jsonl`): every method, the oracle and the floor on every held-out session."""
    torch.set_num_threads(cfg.threads)
    info = init_distributed(cfg.device)
    if cfg.judge == "llm":
        ctx.require_images(JUDGE_NEEDS)  # before the training, not after it
    sessions = bench_sessions(cfg)
    if cfg.paraphrase:
        chat = ctx.chat_model()
        for s in sessions:
            worded = [paraphrase(t, chat) for t in s.instructions]
            s.instructions = [
                w if len(words(w)) <= cfg.model.max_words else t
                for w, t in zip(worded, s.instructions, strict=True)
            ]
    data = (
        load_sessions(cfg.train_folder, cfg.model.max_words, cfg.model.image_size)
        if cfg.train_folder
        else None
    )
    learned = [
        m for m in LEARNED if m in cfg.methods or (m == "vincie" and "vincie_image_only" in cfg.methods)
    ]
    jobs = [(m, cfg, data, ctx.checkpoint_dir / f"{m}.pt") for m in learned]
    models, train_rows = {}, []
    if cfg.train_backend == "ray" and info.world_size == 1 and len(jobs) > 1:
        with ctx.progress(f"training {', '.join(learned)} on Ray (methods)", total=len(jobs)) as advance:
            trained = parallel_map(_train_one, jobs, backend="ray", on_result=advance)
    else:
        trained = []
        for job in jobs:
            with ctx.progress(f"training {job[0]} (steps)", total=cfg.train.steps) as advance:
                trained.append(_train_one(job, info, lambda _s, _t: advance(1)))
    for m, (state, losses, seconds) in zip(learned, trained, strict=True):
        net = SessionDiT(cfg.model, len(Tokenizer())).to(info.device)
        net.load_state_dict(state)
        models[m] = net.eval()
        n_params = sum(p.numel() for p in net.parameters())
        train_rows.append([m, cfg.train.steps, float(np.mean(losses[-20:])), n_params, seconds])
        ctx.log(f"{m}: {n_params} parameters, final loss {np.mean(losses[-20:]):.4f}")
    if not info.is_main:
        return Report(notes=[f"rank {info.rank}: trained; rank 0 evaluates"])
    return run_study(study(cfg, sessions, models, train_rows), ctx).report


def _views(
    cfg: VincieConfig,
    sessions: list[Session],
    editors: _Editors,
    train_rows: list[list],
    result: StudyResult,
    ctx: RunContext,
) -> Report:
    """Success at turn k, the judge's scores and pixel metrics, the training table, `scores.json`,
    the success curve and one session drawn (the method's longest run of passed turns)."""
    K = cfg.turns
    names = [ORACLE.name, *cfg.methods]
    cells = {m: [c.metrics for c in result.records(m)] for m in names}

    def mean(m: str, key: str) -> float:
        return float(np.mean([c[key] for c in cells[m]]))

    def masks_iou(m: str, key: str) -> float | str:
        vals = [c[key] for c in cells[m] if c.get(key) is not None]
        return float(np.mean(vals)) if vals else "–"

    def label(m: str) -> str:
        return LABELS.get(m, m)

    tables = [
        Table(
            f"Success at turn k (%), {len(sessions)} held-out sessions of {K} edits",
            ["method", *[f"turn {k}" for k in range(1, K + 1)]],
            [[label(m), *[100 * mean(m, f"success_t{k}") for k in range(1, K + 1)]] for m in names],
            caption="A turn passes when the judge gives both prompt following and consistency above 6; "
            "success at turn k counts sessions whose turns 1..k all passed (MSE-Bench). The oracle row "
            "feeds the true images (the judge must pass it everywhere); copy returns its input "
            "(the floor: it must fail).",
        ),
        Table(
            "Judge scores and pixel metrics",
            [
                "method",
                "PF t1",
                "CS t1",
                "L1 t1 ↓",
                "PSNR t1 ↑",
                "SSIM t1 ↑",
                f"PSNR t{K} ↑",
                "mask IoU cur t1",
                "mask IoU next t1",
                "s / turn",
            ],
            [
                [
                    label(m),
                    mean(m, "pf_t1"),
                    mean(m, "cs_t1"),
                    mean(m, "l1_t1"),
                    mean(m, "psnr_t1"),
                    mean(m, "ssim_t1"),
                    mean(m, f"psnr_t{K}"),
                    masks_iou(m, "mask_iou_current_t1"),
                    masks_iou(m, "mask_iou_next_t1"),
                    mean(m, "s_per_turn"),
                ]
                for m in names
            ],
            caption="PF/CS: the judge's prompt following and consistency (0–10) at turn 1, where every "
            "method edits the same source image; L1, PSNR, SSIM against the true next image (turn 1 and "
            f"turn {K}, every session scored, so drift shows past a failed turn); mask IoU of the generated "
            "current/next masks at turn 1; seconds per turn per session.",
        ),
        Table(
            "Training",
            ["method", "steps", "final loss", "parameters", "seconds"],
            train_rows,
            caption=f"The same model size, data ({cfg.train.sessions} sessions), steps and seed for "
            "every learned method.",
        ),
    ]
    (ctx.out_dir / "scores.json").write_text(
        json.dumps({label(m): [c["turns"] for c in cells[m]] for m in names})
    )
    success = {m: [mean(m, f"success_t{k}") for k in range(1, K + 1)] for m in cfg.methods}
    figures = [success_figure(success, ctx.out_dir)]
    show = next((m for m in ("vincie", *LEARNED) if m in cfg.methods and m in editors.models), None)
    if show is not None:
        passed = [[t["passed"] for t in c["turns"]] for c in cells[show]]
        runs = [next((k for k, p in enumerate(row) if not p), K) for row in passed]
        i = int(np.argmax(runs))  # the session with the longest run of passes (the first on ties)
        out, j = editors.outputs(show, i)  # made again when every cell came from the ledger
        s = sessions[i]
        figures.append(
            session_figure(
                s.instructions,
                s.images,
                out.images[j],
                out.masks_current[j],
                out.masks_next[j],
                passed[i],
                ctx.out_dir,
            )
        )
    return Report(tables=tables, figures=figures)


PRESETS = preset_table(
    bench=VincieConfig(),
    smoke={
        "methods": ("vincie", "pairwise", "copy"),
        "train_backend": "serial",
        "bench_sessions": 2,
        "turns": 2,
        "model.width": 24,
        "model.heads": 1,
        "model.separate_blocks": 1,
        "model.shared_blocks": 1,
        "train.sessions": 50,
        "train.max_images": 3,
        "train.steps": 3,
        "train.batch": 2,
        "train.warmup": 1,
        "sampler.steps": 2,
    },
    # the tour: the vincie model against copy-the-input, a short training (80 steps: 2 minutes at
    # one thread); one chunk of 16 sessions sampled together
    demo={
        "methods": ("vincie", "copy"),
        "train_backend": "serial",
        "bench_sessions": 16,
        "turns": 3,
        "train.steps": 80,
        "sampler.steps": 10,
    },
    # the authors' shape on a GPU: 16 blocks (5 MM-DiT + 11 shared), width 576 at 64 px, sessions
    # up to 8 images, MSE-Bench's 100 sessions, 50 Euler steps, every ablation
    paper={
        "methods": (
            "vincie",
            "pairwise",
            "no_current_mask",
            "no_next_mask",
            "no_masks",
            "vincie_image_only",
            "copy",
        ),
        "bench_sessions": 100,
        "model.image_size": 64,
        "model.width": 576,
        "model.heads": 8,
        "model.separate_blocks": 5,
        "model.shared_blocks": 11,
        "train.sessions": 1_000_000,
        "train.max_images": 8,
        "train.steps": 100_000,
        "train.batch": 64,
        "train.lr": 2e-4,
        "sampler.steps": 50,
        "sampler.guidance": 4.0,
        "train_backend": "serial",
        "device": "cuda",
    },
)
SYSTEM = implemented_system("vincie", presets=PRESETS, run=run)
