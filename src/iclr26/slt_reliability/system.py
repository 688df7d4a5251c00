"""`iclr26 run slt_reliability`: build both corpora, train both translators on each, score every
test token's reliability (three batched teacher-forced passes), and measure how well it detects
CHAIR hallucinations against text confidence, perplexity, entropy and META; then the analyses:
video degradations, a wrong starting prompt, and transfer of the fitted weights across datasets
and architectures (arXiv 2510.18439).

The weights of r_t, META and every calibration are fitted on dev (seen signers); every figure is
measured on test (held-out signers).
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.errors import UserError
from iclr26.core.intervals import bootstrap_interval
from iclr26.core.records import markdown_table
from iclr26.core.study import Arm, Reference, Role, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.slt_reliability import counter_prior
from iclr26.slt_reliability import hallucination as H
from iclr26.slt_reliability.config import SLTConfig
from iclr26.slt_reliability.data import Corpus, check_samples, make_corpus
from iclr26.slt_reliability.degrade import degrade
from iclr26.slt_reliability.detectors import METHODS, SIGNALS, Detectors, Evaluation, auc, crossfit, evaluate
from iclr26.slt_reliability.figures import (
    RocCurve,
    TokenExample,
    degradation_figure,
    roc_figure,
    token_figure,
)
from iclr26.slt_reliability.loader import load_keypoint_corpus
from iclr26.slt_reliability.models import Translator, n_parameters
from iclr26.slt_reliability.reliability import TokenReliability
from iclr26.slt_reliability.score import Scored, rest_pose, score_split
from iclr26.slt_reliability.train import train_translator

PAPER_AUC = {
    ("phoenix_like", "gloss_based"): (0.827, 0.618, 0.899),
    ("phoenix_like", "gloss_free"): (0.918, 0.926, 0.940),
    ("csl_like", "gloss_based"): (0.803, 0.647, 0.865),
    ("csl_like", "gloss_free"): (0.951, 0.953, 0.963),
}
"""The paper's AUCs (grounding, confidence, META) on PHOENIX-2014T and CSL-Daily, by role."""
BOOTSTRAP = 1000


@dataclass
class Fitted:
    """One translator on one corpus: its scored dev and test splits, the detectors fitted on the fitting
    split (dev, or all of test under cross-fitting) and the main evaluation (no sentence scored by
    detectors fitted on its own label)."""

    dataset: str
    kind: str
    model: Translator
    corpus: Corpus
    rest: torch.Tensor
    dev: Scored
    test: Scored
    detectors: Detectors
    evaluation: Evaluation
    train_seconds: float

    @property
    def label(self) -> str:
        return f"{self.dataset} / {self.kind}"

    @property
    def reliability(self) -> TokenReliability:
        return self.detectors.reliability


def _corpora(cfg: SLTConfig) -> dict[str, Corpus]:
    """The synthetic corpora (or the real one under data_root), every sample checked."""
    if cfg.data_root:
        entity_file = cfg.entity_file or None
        corpora = {"phoenix": load_keypoint_corpus(cfg.data_root, entity_file=entity_file)}
    else:
        corpora = {
            d: make_corpus(
                d, seed=cfg.seed, n_train=cfg.n_train, n_dev=cfg.n_dev, n_test=cfg.n_test, config=cfg.corpus
            )
            for d in cfg.datasets
        }
    for corpus in corpora.values():
        for split in (corpus.train, corpus.dev, corpus.test):
            check_samples(split, min_frames=cfg.train.stride)
    return corpora


def _fit(dataset: str, kind: str, corpus: Corpus, cfg: SLTConfig, ctx: RunContext) -> Fitted:
    """Train (or resume) one translator, score dev and test, fit and evaluate the detectors."""
    t0 = time.perf_counter()
    with ctx.progress(f"training {dataset} / {kind}", cfg.train.epochs) as advance:
        model = train_translator(
            kind, corpus, cfg.train, ctx.checkpoint_dir / f"{dataset}-{kind}", on_epoch=lambda _: advance(1)
        )
    seconds = time.perf_counter() - t0
    rest = rest_pose(corpus.train)
    dev, test = (
        score_split(model, split, corpus.entity_words, rest, cfg.reliability, max_len=cfg.train.max_len)
        for split in (corpus.dev, corpus.test)
    )
    try:
        if cfg.fit_on == "dev":
            evaluation = evaluate(dev, test, cfg.reliability, cfg.meta_C)
            detectors = Detectors.fit(dev, cfg.reliability, cfg.meta_C)
        else:
            evaluation = crossfit(test, cfg.reliability, cfg.meta_C, cfg.folds, cfg.seed)
            detectors = Detectors.fit(test, cfg.reliability, cfg.meta_C)
    except UserError as e:
        raise UserError(f"{dataset} / {kind}: {e}") from None
    return Fitted(dataset, kind, model, corpus, rest, dev, test, detectors, evaluation, seconds)


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), digits)


def auc_difference(y: np.ndarray, a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """AUC(a) − AUC(b) on the same sentences and its paired-bootstrap 95% interval."""
    lo, hi = bootstrap_interval(lambda y, a, b: auc(y, a) - auc(y, b), (y, a, b), BOOTSTRAP, seed)
    return auc(y, a) - auc(y, b), lo, hi


def _main_table(models: list[Fitted], seed: int) -> Table:
    rows = []
    for m in models:
        ev = m.evaluation
        d, lo, hi = auc_difference(ev.y, ev.score["grounding"], ev.score["confidence"], seed)
        paper = PAPER_AUC.get((m.dataset, m.kind), (None, None, None))
        rows.append(
            [
                *(m.dataset, m.kind, round(m.test.bleu, 1), round(100 * float(m.test.y.mean()), 1)),
                *(_r(auc(ev.y, ev.score[k])) for k in METHODS),
                *(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]", *paper),
            ]
        )
    cols = ["dataset", "architecture", "test BLEU", "hallucinated %"]
    cols += [f"AUC {k}" for k in METHODS]
    cols += ["grounding − confidence [95% CI]", "paper grounding", "paper confidence", "paper META"]
    caption = (
        f"test split (held-out signers); r_t, META and calibrations {models[0].evaluation.how}; the "
        "paper's columns are its PHOENIX-2014T (phoenix_like) and CSL-Daily (csl_like) figures, not "
        "measured here"
    )
    return Table("Hallucination detection AUC (test)", cols, rows, caption=caption)


DETAIL = ("auc", "ap", "accuracy", "pearson", "spearman", "r2")
"""What each cell measures: a detector's AUC, average precision, accuracy of its isotonic rate at 0.5,
Pearson and Spearman against CHAIR, and the R² of an isotonic fit of CHAIR on its score."""


def _detail_table(result: StudyResult) -> Table:
    rows = []
    for u in result.study.units:
        for k in METHODS:
            cell = result.cells[(k, u.key)].metrics
            rows.append([f"{u.params['dataset']} / {u.params['kind']}", k, *(_r(cell[x]) for x in DETAIL)])
    cols = ["model", "method", "AUC", "AP", "accuracy @0.5", "Pearson vs CHAIR", "Spearman vs CHAIR"]
    cols += ["isotonic R² vs CHAIR"]
    caption = (
        "accuracy of the isotonic hallucination rate at 0.5; Pearson/Spearman of the score against the "
        "sentence's CHAIR; R² of an isotonic fit of CHAIR on the score; every fit out of the scored "
        "sentence's fold"
    )
    return Table("Detection and regression against CHAIR (test)", cols, rows, caption=caption)


def _signal_table(models: list[Fitted]) -> Table:
    rows = [[m.label, *(_r(auc(m.evaluation.y, m.evaluation.score[k])) for k in SIGNALS)] for m in models]
    caption = "each token feature alone, oriented where fitted and tail-pooled (the lowest ⌈0.1·T⌉ tokens)"
    return Table("AUC of each signal alone (test)", ["model", *SIGNALS], rows, caption=caption)


def _translation_table(models: list[Fitted]) -> Table:
    rows = []
    for m in models:
        history = getattr(m.model, "history", [])
        rows.append(
            [
                *(m.dataset, m.kind, n_parameters(m.model), len(history), round(m.train_seconds, 1)),
                *(round(m.dev.bleu, 1), round(m.test.bleu, 1)),
                *(round(100 * float(m.dev.y.mean()), 1), round(100 * float(m.test.y.mean()), 1)),
            ]
        )
    cols = ["dataset", "architecture", "parameters", "epochs", "train s (this run)", "dev BLEU", "test BLEU"]
    cols += ["hallucinated dev %", "hallucinated test %"]
    caption = "BLEU: sacrebleu corpus BLEU-4 of greedy translations; test signers are unseen in training"
    return Table("Translators", cols, rows, caption=caption)


def _degradations(models: list[Fitted], cfg: SLTConfig, ctx: RunContext) -> tuple[Table, list[dict]]:
    """Reliability, hallucination and BLEU on the test videos under each degradation strength."""
    plan = [("noise", s) for s in cfg.noise] + [("downsample", float(k)) for k in cfg.downsample]
    plan += [("drop", r) for r in cfg.drop]
    rows: list[dict] = []
    with ctx.progress("degradations", len(plan) * len(models)) as advance:
        for m in models:
            for kind, strength in plan:
                clean = strength == (1.0 if kind == "downsample" else 0.0)
                if clean:
                    sc = m.test
                else:
                    samples = degrade(
                        m.test.samples, kind, strength, seed=cfg.seed, min_frames=m.model.stride
                    )
                    sc = score_split(
                        m.model,
                        samples,
                        m.corpus.entity_words,
                        m.rest,
                        cfg.reliability,
                        max_len=cfg.train.max_len,
                    )
                big_r = m.reliability.sentence_score(sc.passes).numpy()
                rows.append(
                    dict(
                        model=m.label,
                        degradation=kind,
                        strength=strength,
                        reliability=float(big_r.mean()),
                        hallucinated=float(sc.y.mean()),
                        bleu=sc.bleu,
                        auc=auc(sc.y, 1.0 - big_r),
                    )
                )
                advance(1)
    table = Table(
        "Reliability under video degradation (test)",
        ["model", "degradation", "strength", "mean R", "hallucinated %", "BLEU", "AUC grounding"],
        [
            [
                *(r["model"], r["degradation"], r["strength"], _r(r["reliability"])),
                *(round(100 * r["hallucinated"], 1), round(r["bleu"], 1), _r(r["auc"])),
            ]
            for r in rows
        ],
        caption="noise in shoulder widths; downsample keeps every k-th frame; drop removes frames at random",
    )
    return table, rows


def wrong_prompts(samples: list, k: int) -> tuple[list[list[str]], list[list[str]]]:
    """(the correct prompt, a wrong prompt) of each sample: the first k words of its own reference, and
    of the nearest following sample whose first k words differ."""
    right = [list(s.text[:k]) for s in samples]
    wrong = []
    for i in range(len(samples)):
        j = next(
            (
                (i + d) % len(samples)
                for d in range(1, len(samples))
                if right[(i + d) % len(samples)] != right[i]
            ),
            None,
        )
        wrong.append(right[j] if j is not None else [])
    return right, wrong


def _prompt_table(models: list[Fitted], cfg: SLTConfig, ctx: RunContext) -> Table:
    """Reliability of the words generated after no prompt, the correct one, and a wrong one."""
    rows = []
    with ctx.progress("starting prompts", 2 * len(models)) as advance:
        for m in models:
            right, wrong = wrong_prompts(m.test.samples, cfg.prompt_words)
            for name, prefix in (("none", None), ("correct", right), ("wrong", wrong)):
                if prefix is None:
                    sc = m.test
                else:
                    sc = score_split(
                        m.model,
                        m.test.samples,
                        m.corpus.entity_words,
                        m.rest,
                        cfg.reliability,
                        prefix=prefix,
                        max_len=cfg.train.max_len,
                    )
                    advance(1)
                r_t = m.reliability.token_reliability(sc.passes)
                mask = sc.passes.mask.bool()
                big_r = m.reliability.sentence_score(sc.passes).numpy()
                rows.append(
                    [
                        *(m.label, name, _r(float(big_r.mean())), _r(float(r_t[mask].mean()))),
                        *(round(100 * float(sc.y.mean()), 1), _r(auc(sc.y, 1.0 - big_r))),
                    ]
                )
    caption = (
        f"the decoder is forced to start with {cfg.prompt_words} words (its own reference's, or another test "
        "sentence's); only the words it generates afterwards are scored and checked by CHAIR"
    )
    return Table(
        "Reliability after a wrong starting prompt (test)",
        ["model", "prompt", "mean R", "mean r_t", "hallucinated %", "AUC grounding"],
        rows,
        caption=caption,
    )


def _transfer_table(models: list[Fitted]) -> Table:
    """AUC of r_t fitted on one model's dev, applied to another model's test."""
    rows = []
    for src in models:
        row: list = [src.label]
        for tgt in models:
            if tgt is src:
                row.append(_r(auc(tgt.evaluation.y, tgt.evaluation.score["grounding"])))
            else:
                row.append(_r(auc(tgt.test.y, 1.0 - src.reliability.sentence_score(tgt.test.passes).numpy())))
        rows.append(row)
    return Table(
        "Transfer: r_t fitted on one model (rows), tested on another (columns), grounding AUC",
        ["fitted on", *(f"→ {m.label}" for m in models)],
        rows,
        caption=(
            "off the diagonal, r_t fitted on all of the row model's fitting split, applied to the column "
            "model's test; the diagonal is the main table's grounding AUC"
        ),
    )


def _token_examples(m: Fitted) -> list[TokenExample]:
    """The least reliable hallucinated test sentence and the most reliable grounded one."""
    sc = m.test
    r_t = m.reliability.token_reliability(sc.passes)
    big_r = m.reliability.sentence_score(sc.passes).numpy()
    out = []
    for label, want, pick in (("hallucinated", 1, np.argmin), ("grounded", 0, np.argmax)):
        idx = [i for i in np.flatnonzero(sc.y == want) if len(sc.hyps[i]) >= 3]
        if not idx:
            continue
        i = int(idx[int(pick(big_r[idx]))])
        words = tuple(sc.hyps[i])
        flagged = tuple(w in m.corpus.entity_words and w not in sc.samples[i].entities for w in words)
        out.append(
            TokenExample(
                title=f"{m.label}: {label} (CHAIR {sc.chair[i]:.2f}), R = {big_r[i]:.2f}",
                words=words,
                reliability=tuple(float(v) for v in r_t[i, : len(words)].clamp(0, 1)),
                reference=tuple(sc.samples[i].text),
                flagged=flagged,
            )
        )
    return out


class Models:
    """What the cells of one process share: the corpora, built once, and each translator fitted (trained or
    resumed from its checkpoint, scored, its detectors fitted) on its first cell."""

    def __init__(self, cfg: SLTConfig):
        self.cfg = cfg
        self._lock = threading.Lock()
        self._corpora: dict[str, Corpus] | None = None
        self._fitted: dict[str, Fitted] = {}

    def get(self, unit: Unit, ctx: RunContext) -> Fitted:
        """The translator of `unit`, fitted on the first call."""
        with self._lock:
            if unit.key not in self._fitted:
                if self._corpora is None:
                    self._corpora = _corpora(self.cfg)
                dataset, kind = unit.params["dataset"], unit.params["kind"]
                self._fitted[unit.key] = _fit(dataset, kind, self._corpora[dataset], self.cfg, ctx)
            return self._fitted[unit.key]


def measure(models: Models, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, float | None]:
    """One detector on one translator's test sentences: the metrics of `DETAIL` (None where undefined)."""
    ev = models.get(unit, ctx).evaluation
    met = H.detection_metrics(ev.y, ev.score[arm.name], rate=ev.rate[arm.name], chair_values=ev.chair)
    resid = ev.chair - ev.chair_fit[arm.name]
    total = max(float(((ev.chair - ev.chair.mean()) ** 2).sum()), 1e-12)
    met["r2"] = 1.0 - float((resid**2).sum()) / total
    return {k: None if met[k] is None or not np.isfinite(met[k]) else float(met[k]) for k in DETAIL}


ROLES: dict[str, Role] = {
    "grounding": "method",
    "META": "method",
    "perplexity": "baseline",
    "entropy": "baseline",
}
"""The detectors' roles; `confidence` (text confidence alone) is the floor they are judged against."""


def study(cfg: SLTConfig, models: Models | None = None, views: Any = None) -> Study:
    """slt_reliability as a study over the translators (dataset × architecture): every detector's test AUC;
    the claims are grounding (token reliability R) and META against confidence alone, paired per
    translator, with AUC 0.5 (chance) as the floor of the metric."""
    datasets = ("phoenix",) if cfg.data_root else cfg.datasets
    arms = [Arm(k, ROLES[k]) if k in ROLES else Arm(k, "floor", floor="confidence alone") for k in METHODS]
    units = [
        Unit(f"{d}/{k}", cfg.seed, {"dataset": d, "kind": k}) for d in datasets for k in cfg.architectures
    ]
    label = "hallucination-detection AUC (test), paired per translator"
    claims = [Claim("auc", m, ("confidence",), floor=0.5, label=label) for m in ("grounding", "META")]
    references = [
        Reference(f"paper {k} ({d}, {kind})", {"auc": v}, "arXiv 2510.18439")
        for (d, kind), values in PAPER_AUC.items()
        for k, v in zip(("grounding", "confidence", "META"), values, strict=True)
    ]
    return Study(
        "slt_reliability",
        arms,
        units,
        functools.partial(measure, models or Models(cfg)),
        claims=claims,
        references=references,
        config=cfg,
        seed=cfg.seed,
        views=views,
    )


def run(cfg: SLTConfig, ctx: RunContext) -> Report:
    """The study (every detector on every translator), then the system's views: detection tables,
    analyses and figures from the same fitted translators."""
    if cfg.experiment == "counter_prior":
        return counter_prior.run(cfg, ctx)
    models = Models(cfg)
    return run_study(study(cfg, models, functools.partial(_views, cfg, models)), ctx).report


def _views(cfg: SLTConfig, cache: Models, result: StudyResult, ctx: RunContext) -> Report:
    """The paper's tables (per translator: BLEU, hallucination, every detector's AUC, the grounding −
    confidence gap with its paired-bootstrap interval over sentences), the translators, the detail and
    per-signal tables, the degradations, the wrong prompts, the transfer, and the figures."""
    models = [cache.get(u, ctx) for u in result.study.units]
    main = _main_table(models, cfg.seed)
    ctx.log(f"{main.title}\n{markdown_table(main.columns, main.rows)}")
    tables = [main, _translation_table(models), _detail_table(result), _signal_table(models)]
    degradation_rows: list[dict] = []
    if len(cfg.noise) + len(cfg.downsample) + len(cfg.drop) > 0:
        table, degradation_rows = _degradations(models, cfg, ctx)
        tables.append(table)
    if cfg.prompt_words:
        tables.append(_prompt_table(models, cfg, ctx))
    if cfg.transfer and len(models) > 1:
        tables.append(_transfer_table(models))
    figures: list[str] = []
    if cfg.figures:
        examples = [e for m in models for e in _token_examples(m)[:2]][:4]
        if examples:
            figures.append(token_figure(examples, ctx.out_dir / "tokens.png"))
        curves = {}
        for m in models:
            ev = m.evaluation
            curves[m.label] = {
                k: RocCurve(*H.roc_points(ev.y, ev.score[k]), auc=auc(ev.y, ev.score[k]))
                for k in (*METHODS, "s_hid", "s_attn", "s_log")
            }
        if curves:
            figures.append(roc_figure(curves, ctx.out_dir / "roc.png"))
        if degradation_rows:
            figures.append(degradation_figure(degradation_rows, ctx.out_dir / "degradation.png"))
    notes = [
        f"{m.label}: {m.dev.passes.n_sentences} dev / {m.test.passes.n_sentences} test sentences, "
        f"hallucinated {100 * m.dev.y.mean():.0f}% / {100 * m.test.y.mean():.0f}%"
        for m in models
    ]
    return Report(tables=tables, figures=figures, notes=notes)


_TINY = {
    "train.d_model": 64,
    "train.d_ff": 128,
    "train.layers": 1,
    "train.heads": 2,
    "train.warmup": 50,
    "train.lr": 2e-3,
}
_TWO_STRENGTHS = {"noise": (0.0, 0.1), "downsample": (1, 2), "drop": (0.0, 0.3)}
_DEMO_STRENGTHS = {"noise": (0.0, 0.2), "downsample": (1, 4), "drop": (0.0, 0.6)}
PRESETS = preset_table(
    bench=SLTConfig(),
    smoke={"n_train": 400, "n_dev": 80, "n_test": 60, "train.epochs": 20, **_TINY, **_TWO_STRENGTHS},
    # the tour: both corpora, both translators (4 models, half width), the strongest degradations
    demo={
        **{"n_train": 700, "n_dev": 80, "n_test": 160, "folds": 3, "train.epochs": 8, "train.lr": 2e-3},
        **{"train.d_model": 64, "train.d_ff": 128, "train.warmup": 100, **_DEMO_STRENGTHS},
    },
    # PHOENIX-2014T's size (7,096 train, 519 dev, 642 test sentences); real data via data_root=...
    paper={"n_train": 7096, "n_dev": 519, "n_test": 642, "train.epochs": 40},
)
SYSTEM = implemented_system("slt_reliability", presets=PRESETS, run=run)
