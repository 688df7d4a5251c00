"""The counter-prior experiment (issue 61): does token grounding catch the hallucinations that text
confidence misses?

The paper's gloss-based hallucinations are language-prior guesses: confident tokens the video does not
support (its confidence AUC is 0.62). Our default grammars draw every entity uniformly and
independently, so a decoder that cannot read a sign spreads its probability and every hallucination is
low-confidence. Here the phoenix_like grammar is drawn with an entity prior (`data.EntityPrior`):
translations name the place first, and under `skewed` each place has a dominant weather and usual
temperatures, so a decoder that cannot read the weather sign can still guess it confidently from the
place it has written; 30% of the test sentences go against the prior (`Sample.counter_prior`). The
`uniform` corpora have the same word order and the same counter-prior share with no prior, as the
control.

Units: prior × architecture × seed (the seed draws the corpus, its prior and the translator's
initialisation). Arms: the detectors of `detectors.METHODS` (grounding and META the methods, confidence
the named baseline, perplexity and entropy baselines), the token signals alone (`SIGNAL_ARMS`, no
claim) and two floors: `length` (the hypothesis length, oriented by cross-fitting) and `chance` (a
seeded random score). Metrics, per prior p:

- `auc_{p}`: hallucination-detection AUC on every test sentence (cross-fitted as the main run);
- `auc_counter_{p}` / `auc_usual_{p}`: the same scores on the counter-prior / the other test sentences;
- `auc_noisy_{p}`: detection AUC on the test videos under keypoint noise (`stress_noise`), detectors
  fitted on all clean test sentences;
- `fall_{p}`: how reliably the detector's score rises when the video is degraded: the share of test
  sentences whose hallucination score is higher on the noisy video than on the clean one (ties count
  one half). A scale-free ΔR: R contains p_vid, so R falling under noise is guaranteed; the claim is
  whether it falls more reliably than confidence.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.errors import UserError
from iclr26.core.intervals import bootstrap_interval
from iclr26.core.study import Arm, Role, Study, StudyResult, Unit, run_study
from iclr26.slt_reliability.config import SLTConfig
from iclr26.slt_reliability.data import check_samples, make_corpus
from iclr26.slt_reliability.degrade import degrade
from iclr26.slt_reliability.detectors import METHODS, Detectors, auc, crossfit, fold_indices
from iclr26.slt_reliability.score import Scored, rest_pose, score_split
from iclr26.slt_reliability.train import train_translator

PRIORS: tuple[str, ...] = ("uniform", "skewed")
"""the corpora of the experiment: the same place-first grammar without and with an entity prior"""
FLOORS: dict[str, str] = {"length": "hypothesis length", "chance": "random score"}
SIGNAL_ARMS: tuple[str, ...] = ("s_hid", "s_attn", "s_log", "d_clean", "d_mis", "p_vid")
"""token signals alone (the visual ones, and p_vid, the clean-video probability inside R), oriented on
the fitting folds and tail-pooled like R: shown beside grounding, no claim (added after the first bench
run, to see which part of R follows the prior)"""
ROLES: dict[str, Role] = {
    "grounding": "method",
    "META": "method",
    "confidence": "baseline",
    "perplexity": "baseline",
    "entropy": "baseline",
    **dict.fromkeys(SIGNAL_ARMS, "method"),
}
ARMS: tuple[str, ...] = (*METHODS, *SIGNAL_ARMS, *FLOORS)
KINDS_OF_METRIC = ("auc", "auc_counter", "auc_usual", "auc_noisy", "fall")
BOOTSTRAP = 1000


def metric(name: str, prior: str) -> str:
    """The cell metric `name` (one of `KINDS_OF_METRIC`) on corpora with `prior`."""
    return f"{name}_{prior}"


def rise_share(clean: np.ndarray, noisy: np.ndarray) -> float:
    """The share of sentences whose score is higher on the noisy video than on the clean one (ties
    count one half): 0.5 when degradation does not move the score, 1 when it raises every one."""
    clean, noisy = np.asarray(clean, dtype=float), np.asarray(noisy, dtype=float)
    return float(np.mean((noisy > clean) + 0.5 * (noisy == clean)))


def oriented_crossfit(y: np.ndarray, x: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """`x` as a hallucination score, its sign chosen on the other folds of each sentence (the sign with
    the higher AUC there), so that a trivial feature gets its best orientation without seeing the
    scored sentence's label."""
    out = np.empty(len(y))
    x = np.asarray(x, dtype=float)
    for fit, held in fold_indices(y, folds, seed):
        sign = 1.0 if np.nan_to_num(auc(y[fit], x[fit]), nan=0.5) >= 0.5 else -1.0
        out[held] = sign * x[held]
    return out


def _subset_auc(y: np.ndarray, s: np.ndarray, keep: np.ndarray) -> float | None:
    v = auc(y[keep], s[keep]) if keep.any() else float("nan")
    return None if not np.isfinite(v) else float(v)


def _gap(y: np.ndarray, a: np.ndarray, b: np.ndarray, seed: int) -> list[float | None]:
    """AUC(a) − AUC(b) on the same sentences and its paired-bootstrap 95% interval."""
    if len(np.unique(y)) < 2:
        return [None, None, None]
    lo, hi = bootstrap_interval(lambda y, a, b: auc(y, a) - auc(y, b), (y, a, b), BOOTSTRAP, seed)
    return [auc(y, a) - auc(y, b), lo, hi]


@dataclass
class PriorRun:
    """One translator of the experiment, reduced to what the cells need: every arm's scores on the clean
    test (out of fold), on the noisy test, and the unit's summary figures."""

    prior: str
    clean: dict[str, np.ndarray]
    """hallucination score per arm, cross-fitted on the clean test"""
    refit_clean: dict[str, np.ndarray]
    """per arm, detectors fitted on all clean test sentences, scored on them (for the fall)"""
    noisy: dict[str, np.ndarray]
    """per arm, the same detectors scored on the noisy test"""
    y: np.ndarray
    y_noisy: np.ndarray
    counter: np.ndarray
    summary: dict[str, Any]


def _arm_scores(det: Detectors, sc: Scored, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {k: v for k, v in det.scores(sc).items() if k in METHODS or k in SIGNAL_ARMS}
    out["length"] = np.array([len(h) for h in sc.hyps], dtype=float)
    out["chance"] = rng.random(len(sc.y))
    return out


def fit_unit(cfg: SLTConfig, unit: Unit, ctx: RunContext) -> PriorRun:
    """Build the unit's corpus, train (or resume) its translator, score clean and noisy test, fit the
    detectors (cross-fitted on clean test; refitted on all of it for the noisy test) and summarise."""
    prior, kind, seed = unit.params["prior"], unit.params["kind"], unit.seed
    corpus_cfg = replace(cfg.corpus, entity_prior=prior)
    corpus = make_corpus(
        "phoenix_like", seed=seed, n_train=cfg.n_train, n_dev=cfg.n_dev, n_test=cfg.n_test, config=corpus_cfg
    )
    for split in (corpus.train, corpus.dev, corpus.test):
        check_samples(split, min_frames=cfg.train.stride)
    train_cfg = replace(cfg.train, seed=seed)
    rel_cfg = replace(cfg.reliability, seed=seed)
    t0 = time.perf_counter()
    with ctx.progress(f"training {unit.key}", train_cfg.epochs) as advance:
        model = train_translator(
            kind, corpus, train_cfg, ctx.checkpoint_dir / unit.key.replace("/", "-"),
            on_epoch=lambda _: advance(1),
        )  # fmt: skip
    train_s = time.perf_counter() - t0
    rest = rest_pose(corpus.train)
    test = score_split(model, corpus.test, corpus.entity_words, rest, rel_cfg, max_len=train_cfg.max_len)
    noisy_samples = degrade(corpus.test, "noise", cfg.stress_noise, seed=seed, min_frames=model.stride)
    noisy = score_split(model, noisy_samples, corpus.entity_words, rest, rel_cfg, max_len=train_cfg.max_len)
    try:
        ev = crossfit(test, rel_cfg, cfg.meta_C, cfg.folds, seed)
        det = Detectors.fit(test, rel_cfg, cfg.meta_C)
    except UserError as e:
        raise UserError(f"{unit.key}: {e}") from None
    rng = np.random.default_rng([seed, 61])
    clean = {k: ev.score[k] for k in (*METHODS, *SIGNAL_ARMS)}
    clean["length"] = oriented_crossfit(test.y, [len(h) for h in test.hyps], cfg.folds, seed)
    clean["chance"] = rng.random(len(test.y))
    refit = _arm_scores(det, test, np.random.default_rng([seed, 62]))
    on_noisy = _arm_scores(det, noisy, np.random.default_rng([seed, 63]))
    counter = np.array([s.counter_prior for s in corpus.test])
    y = test.y
    big_r = 1.0 - refit["grounding"]
    big_r_noisy = 1.0 - on_noisy["grounding"]
    conf, conf_noisy = 1.0 - refit["confidence"], 1.0 - on_noisy["confidence"]
    summary = {
        "test_bleu": test.bleu,
        "noisy_bleu": noisy.bleu,
        "n_test": len(y),
        "n_hallucinated": int(y.sum()),
        "n_counter": int(counter.sum()),
        "n_counter_hallucinated": int(y[counter].sum()),
        "n_noisy_hallucinated": int(noisy.y.sum()),
        "mean_R_clean": float(big_r.mean()),
        "mean_R_noisy": float(big_r_noisy.mean()),
        "mean_confidence_clean": float(conf.mean()),
        "mean_confidence_noisy": float(conf_noisy.mean()),
        "gap_all": _gap(y, clean["grounding"], clean["confidence"], seed),
        "gap_counter": _gap(y[counter], clean["grounding"][counter], clean["confidence"][counter], seed),
        "train_s": train_s,
    }
    return PriorRun(prior, clean, refit, on_noisy, y, noisy.y, counter, summary)


class Runs:
    """The translator of the unit being measured, fitted on its first cell (the study runs unit after
    unit, so one is held at a time)."""

    def __init__(self, cfg: SLTConfig):
        self.cfg = cfg
        self._lock = threading.Lock()
        self._key: str | None = None
        self._run: PriorRun | None = None

    def get(self, unit: Unit, ctx: RunContext) -> PriorRun:
        with self._lock:
            if self._key != unit.key or self._run is None:
                self._run = fit_unit(self.cfg, unit, ctx)
                self._key = unit.key
            return self._run


def _finite(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def measure(runs: Runs, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One arm on one translator: the metrics of `KINDS_OF_METRIC` under the unit's prior (the other
    prior's are None), and the unit's summary figures."""
    r = runs.get(unit, ctx)
    a = arm.name
    p = r.prior
    out: dict[str, Any] = {metric(k, q): None for k in KINDS_OF_METRIC for q in PRIORS}
    out[metric("auc", p)] = _finite(auc(r.y, r.clean[a]))
    out[metric("auc_counter", p)] = _subset_auc(r.y, r.clean[a], r.counter)
    out[metric("auc_usual", p)] = _subset_auc(r.y, r.clean[a], ~r.counter)
    out[metric("auc_noisy", p)] = _finite(auc(r.y_noisy, r.noisy[a]))
    out[metric("fall", p)] = rise_share(r.refit_clean[a], r.noisy[a])
    return {**out, **{f"unit_{k}": v for k, v in r.summary.items()}}


def study(cfg: SLTConfig, runs: Runs | None = None, views: Any = None) -> Study:
    """The experiment as a study over prior × architecture × seed; claims, each paired over the six
    translators of one prior: grounding (and META) against confidence on the counter-prior sentences,
    on every sentence, and in how reliably the score rises under noise; the `length` floor arm."""
    arms = [Arm(k, ROLES[k]) if k in ROLES else Arm(k, "floor", floor=FLOORS[k]) for k in ARMS]
    units = [
        Unit(f"{p}/{k}/seed{s}", s, {"prior": p, "kind": k})
        for p in cfg.priors
        for k in cfg.architectures
        for s in cfg.seeds
    ]
    claims = []
    for p in sorted(cfg.priors, key=lambda q: q != "skewed"):  # the skewed corpora's claims first
        for name, label in (
            ("auc_counter", "AUC on counter-prior test sentences"),
            ("auc", "AUC on every test sentence"),
            ("fall", f"share of sentences whose score rises under noise {cfg.stress_noise}"),
        ):
            methods = ("grounding", "META") if name == "auc_counter" else ("grounding",)
            for m in methods:
                claims.append(
                    Claim(metric(name, p), m, ("confidence",), floor=0.5, floor_arm="length",
                          label=f"{label} ({p} prior), paired per translator")
                )  # fmt: skip
    metrics = [metric(k, p) for p in cfg.priors for k in KINDS_OF_METRIC]
    return Study(
        "slt_reliability_counter_prior",
        arms,
        units,
        functools.partial(measure, runs or Runs(cfg)),
        claims=claims,
        metrics=metrics,
        config=cfg,
        seed=cfg.seed,
        views=views,
        unit_major=True,
    )


def _fmt_gap(g: list) -> str:
    if not g or g[0] is None:
        return "n/a"
    return f"{g[0]:+.3f} [{g[1]:+.3f}, {g[2]:+.3f}]"


def _r(x: Any, digits: int = 3) -> Any:
    return None if x is None else round(float(x), digits)


def _views(result: StudyResult, ctx: RunContext) -> Report:
    """Per translator: BLEU, hallucinated sentences (all, counter-prior, noisy), the grounding −
    confidence gap with its paired-bootstrap interval over sentences (all and counter-prior), and the
    raw mean R and confidence, clean and noisy; then each arm's AUC on the counter-prior and usual
    sentences per prior."""
    rows, detail = [], []
    for u in result.study.units:
        cell = result.cells[("grounding", u.key)].metrics
        s = {k[len("unit_") :]: v for k, v in cell.items() if k.startswith("unit_")}
        rows.append(
            [
                u.key,
                *(_r(s["test_bleu"], 1), s["n_hallucinated"], s["n_test"]),
                *(f"{s['n_counter_hallucinated']}/{s['n_counter']}", _fmt_gap(s["gap_all"])),
                _fmt_gap(s["gap_counter"]),
                *(_r(s["noisy_bleu"], 1), s["n_noisy_hallucinated"]),
                *(_r(s["mean_R_clean"]), _r(s["mean_R_noisy"])),
                *(_r(s["mean_confidence_clean"]), _r(s["mean_confidence_noisy"])),
            ]
        )
        p = u.params["prior"]
        for a in ARMS:
            m = result.cells[(a, u.key)].metrics
            detail.append([u.key, a, *(_r(m[metric(k, p)]) for k in KINDS_OF_METRIC)])
    units = Table(
        "Counter-prior experiment: translators (test, held-out signers)",
        ["translator", "test BLEU", "hallucinated", "test sentences", "counter-prior hallucinated",
         "grounding − confidence AUC [95% CI]", "same, counter-prior sentences", "noisy BLEU",
         "noisy hallucinated", "mean R clean", "mean R noisy", "mean confidence clean",
         "mean confidence noisy"],
        rows,
        caption="intervals: paired bootstrap over the translator's test sentences; noisy: keypoint noise "
        "of the run's stress_noise; mean R and mean confidence (mean token probability) from detectors "
        "fitted on all clean test sentences",
    )  # fmt: skip
    arms = Table(
        "Counter-prior experiment: every arm per translator",
        ["translator", "arm", *KINDS_OF_METRIC],
        detail,
        caption="auc: every test sentence (cross-fitted); auc_counter / auc_usual: the counter-prior / other "
        "test sentences; auc_noisy: detection on the noisy test; fall: share of sentences whose score rises "
        "under noise (0.5: no movement)",
    )
    return Report(tables=[units, arms])


def run(cfg: SLTConfig, ctx: RunContext) -> Report:
    """The counter-prior study and its views."""
    if cfg.data_root:
        raise UserError("experiment=counter_prior builds its own corpora; unset data_root")
    return run_study(study(cfg, Runs(cfg), _views), ctx).report
