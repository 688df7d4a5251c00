"""`iclr26 run lfqa_e`: load a release file (or build the Python-documentation set), split it by
question, and run the study (`core.study`): every chosen metric of the five families is an arm, and
the units are the test comparisons, so every arm is paired with every other over the same items.
Beside the metrics, three floors a reader judges every row against: always "response_a", a seeded
coin flip between a and b, and the training split's majority label. A cell is one metric's preference
on one comparison and whether it agrees with the label (`correct`); the LLM judges (the run's model,
`--llm`) see the first `judge_items` test comparisons, both orders. From the cells: how often each
metric agrees with the label (accuracy, macro-F1 over three classes, ties, bootstrap 95% intervals),
by comparison type, language and topic, the judges' position bias, the agreement between metrics,
the pairs every metric gets wrong, and the preference for the longer answer.

Every cell is a line of `cells.jsonl` in the run folder and every judge reply is in the run's LLM
cache, so `--out` on the same folder resumes; the models fine-tuned here keep their own checkpoints.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import statistics
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.config import with_changes
from iclr26.core.llm.base import ChatModel
from iclr26.core.records import pyplot, save_figure
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Reference, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.lfqa_e.build import build_comparisons, python_topics
from iclr26.lfqa_e.config import FAMILY_OF, JUDGES, TRAINED, LFQAConfig
from iclr26.lfqa_e.data import (
    LABELS,
    Comparison,
    label_counts,
    load_comparisons,
    save_comparisons,
    split_by_question,
)
from iclr26.lfqa_e.evaluator import fit_preferences, tie_margin_of
from iclr26.lfqa_e.judges import (
    JudgeConfig,
    PairVerdict,
    RubricVerdict,
    judge_logprob,
    judge_pairs,
    judge_rubric,
    position_bias_summary,
)
from iclr26.lfqa_e.reward import RewardModel
from iclr26.lfqa_e.scoring import Agreement, agreement, breakdown, confusion, preferences
from iclr26.lfqa_e.static import STATIC_METRICS, length, score_static

# the paper's anchors (AvgAcc, AvgF1 over English and Chinese; Table 2), for the report's reference rows
PAPER = {
    "human": (79.9, 73.3),
    "ROUGE": (52.6, 35.8),
    "BERTScore": (53.3, 36.3),
    "GPT-4o": (57.5, 44.5),
    "o1-mini (best)": (60.9, 45.6),
}
FLOORS = (
    Arm("always_a", "floor", floor='always "a"'),
    Arm("coin_flip", "floor", floor="coin flip"),
    Arm("majority", "floor", floor="majority class"),
)
"""Preferences that read nothing of the responses: always response_a; a fair coin between a and b,
seeded per comparison; the label most frequent among the training comparisons (the test labels'
when there is no training split)."""
ROUGE_BASELINES = ("rouge1", "rougeL", "rouge2")
"""The claim's baseline, the first of these the run scores: the paper's static anchor is ROUGE."""


def _comparisons(cfg: LFQAConfig, model: ChatModel | None) -> list[Comparison]:
    if cfg.data:
        comps = load_comparisons(cfg.data, cfg.language or None)
    else:
        n = cfg.n_questions or len(python_topics())
        comps = build_comparisons(
            n, seed=cfg.seed, model=model, pairs_per_question=cfg.pairs_per_question,
            max_concurrency=cfg.max_concurrency,
        )  # fmt: skip
    if cfg.limit and cfg.limit < len(comps):
        comps = random.Random(cfg.seed).sample(comps, cfg.limit)
    return comps


def _judge_config(cfg: LFQAConfig, metric: str) -> JudgeConfig:
    kind = {"judge_reasoning": "reasoning", "judge_rubric": "rubric"}.get(metric, "pairwise")
    tokens = {"pairwise": cfg.pairwise_tokens, "reasoning": cfg.reasoning_tokens, "rubric": cfg.rubric_tokens}
    return JudgeConfig(
        kind=kind, use_reference=metric != "judge_pairwise_noref", max_tokens=tokens[kind],
        both_orders=cfg.both_orders, max_concurrency=cfg.max_concurrency,
    )  # fmt: skip


class Bench:
    """What the cells of one process share, made on first use: the static metrics' preferences (one
    pass for all of them: BERTScore and the cosine share the encoder), each fine-tuned model's
    preferences (trained once, from its checkpoint folder on a resume), and the run's model. A
    forked worker makes its own."""

    def __init__(self, cfg: LFQAConfig, train: list[Comparison], test: list[Comparison]) -> None:
        self.cfg, self.train, self.test = cfg, train, test
        self.by_id = {c.id: c for c in test}
        self.judged = {c.id for c in (test[: cfg.judge_items] if cfg.judge_items else test)}
        counts = label_counts(train or test)
        self.majority = max(LABELS, key=lambda k: counts[k])  # ties: the first of LABELS
        self._lock = threading.Lock()
        self._prefs: dict[str, dict[str, str]] = {}
        self._models: dict[int, tuple[RunContext, ChatModel]] = {}

    def model(self, ctx: RunContext) -> ChatModel:
        with self._lock:
            held = self._models.get(id(ctx))
            if held is None or held[0] is not ctx:  # keyed by the context it was opened for
                held = (ctx, ctx.chat_model())
                self._models[id(ctx)] = held
            return held[1]

    def _keep(self, name: str, prefs: Sequence[str]) -> None:
        self._prefs[name] = dict(zip([c.id for c in self.test], prefs, strict=True))

    def static(self, metric: str) -> dict[str, str]:
        with self._lock:
            if metric not in self._prefs:
                names = [m for m in self.cfg.metrics if m in STATIC_METRICS]
                for name, scores in score_static(names, self.test).items():
                    self._keep(name, preferences(scores, self.cfg.tie_margin))
            return self._prefs[metric]

    def trained(self, metric: str, ctx: RunContext) -> dict[str, str]:
        with self._lock:
            if metric not in self._prefs:
                cfg = self.cfg
                if metric == "reward_model" and cfg.reward_model:
                    folder, max_length = cfg.reward_model, 512
                    scores = RewardModel(folder, max_length=max_length).score_pairs(self.test)
                    self._keep(metric, preferences(scores, tie_margin_of(folder), relative=False))
                else:
                    sub = "evaluator" if metric == "trained_evaluator" else "reward"
                    self._keep(metric, trained_preferences(cfg, metric, self.train, self.test,
                                                           ctx.checkpoint_dir / sub, ctx))  # fmt: skip
            return self._prefs[metric]


def trained_preferences(
    cfg: LFQAConfig, metric: str, train: Sequence[Comparison], test: Sequence[Comparison], folder: Path,
    ctx: RunContext,
) -> list[str]:  # fmt: skip
    """The evaluator (`metric` trained_evaluator) or reward model fine-tuned here on `train` (its
    checkpoints in `folder`), as preferences on `test`."""
    ecfg = cfg.evaluator if metric == "trained_evaluator" else cfg.reward
    with ctx.progress(f"fine-tuning the {metric.replace('_', ' ')}", total=ecfg.steps) as step:
        return fit_preferences(train, test, folder, ecfg, on_progress=lambda *_: step(1))


def _floor(bench: Bench, arm: Arm, c: Comparison) -> str:
    if arm.name == "always_a":
        return "response_a"
    if arm.name == "coin_flip":
        return random.Random(derive_seed(bench.cfg.seed, "coin flip", c.id)).choice(LABELS[:2])
    return bench.majority


def _judge_one(bench: Bench, metric: str, c: Comparison, ctx: RunContext) -> PairVerdict | RubricVerdict:
    model, jcfg = bench.model(ctx), _judge_config(bench.cfg, metric)
    if metric == "judge_rubric":
        return judge_rubric(model, [c], jcfg)[0]
    if metric == "judge_logprob":
        return judge_logprob(model, [c], jcfg, margin=bench.cfg.logprob_margin)[0]
    return judge_pairs(model, [c], jcfg)[0]


def measure(bench: Bench, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One metric's preference on one test comparison, and whether it is the label (`correct`; no
    verdict counts wrong). A judge's cell keeps its verdict (both orders, replies, refusals); a judge
    outside the `judge_items` subset leaves its cell empty."""
    c = bench.by_id[unit.key]
    verdict: dict[str, Any] | None = None
    if arm.role == "floor":
        pref: str | None = _floor(bench, arm, c)
    elif arm.name in STATIC_METRICS:
        pref = bench.static(arm.name)[c.id]
    elif arm.name in TRAINED:
        pref = bench.trained(arm.name, ctx)[c.id]
    else:
        if c.id not in bench.judged:
            return {}
        v = _judge_one(bench, arm.name, c, ctx)
        pref, verdict = v.preference, {"rubric": isinstance(v, RubricVerdict), **dataclasses.asdict(v)}
    out: dict[str, Any] = {"correct": int(pref == c.label), "preference": pref, "label": c.label}
    if verdict is not None:
        out["verdict"] = verdict
    return out


def _methods(cfg: LFQAConfig) -> list[str]:
    """The arms under test: the LLM judges and the models trained here; in a run that scores neither
    (the static metrics on a whole release file, the paper's Table 2 without its model rows), the
    static metrics themselves."""
    judged = [m for m in cfg.metrics if m in JUDGES or m in TRAINED]
    return judged or [m for m in cfg.metrics if m in STATIC_METRICS]


def _claims(cfg: LFQAConfig) -> list[Claim]:
    """Named before the run, on agreement with the label (0/1, paired per comparison, bootstrap):
    - with a judge or a model trained here: the first judge the run scores (else the fine-tuned
      evaluator) against ROUGE, where a unit with both at or below the majority class is at the
      floor, and the same arm against the three floors;
    - with static metrics only: each against the three floors, ROUGE first (the paper's anchor)."""
    floors = tuple(a.name for a in FLOORS)
    if not any(m in JUDGES or m in TRAINED for m in cfg.metrics):
        ordered = sorted(_methods(cfg), key=lambda m: m not in ROUGE_BASELINES[:1])
        return [
            Claim("correct", m, floors, interval="bootstrap",
                  label=f"agreement with the label (0/1): {m} vs the floors, paired per comparison")
            for m in ordered
        ]  # fmt: skip
    method = next((m for m in cfg.metrics if m in JUDGES), None)
    method = method or next(m for m in ("trained_evaluator", "reward_model") if m in cfg.metrics)
    rouge = next((m for m in ROUGE_BASELINES if m in cfg.metrics), None)
    claims = []
    if rouge is not None:
        label = f"agreement with the label (0/1): {method} vs {rouge}, paired per comparison"
        claims.append(
            Claim("correct", method, (rouge,), interval="bootstrap", floor_arm="majority", label=label)
        )
    label = f"agreement with the label (0/1): {method} vs the floors, paired per comparison"
    claims.append(Claim("correct", method, floors, interval="bootstrap", label=label))
    return claims


def study(cfg: LFQAConfig, train: list[Comparison], test: list[Comparison]) -> Study:
    """lfqa_e as a study: the chosen metrics (the judges and the models fine-tuned here as methods,
    the static metrics as baselines, or as methods when nothing else is scored) and the three floors,
    over the test comparisons; the claims (`_claims`), and the paper's Table 2 figures as references
    (accuracy as a share)."""
    bench = Bench(cfg, train, test)
    methods = _methods(cfg)
    role = {m: "method" if m in methods else "baseline" for m in cfg.metrics}
    arms = [Arm(m, role[m]) for m in cfg.metrics] + list(FLOORS)  # type: ignore[arg-type]
    units = [Unit(c.id, cfg.seed) for c in test]
    refs = [Reference(f"paper: {k}", {"correct": acc / 100}, "arXiv 2410.01945 Table 2, en + zh")
            for k, (acc, _) in PAPER.items()]  # fmt: skip
    return Study("lfqa_e", arms, units, functools.partial(measure, bench), claims=_claims(cfg),
                 references=refs, metrics=("correct",), config=cfg, seed=cfg.seed,
                 views=functools.partial(_views, cfg, bench))  # fmt: skip


def _records(result: StudyResult, bench: Bench) -> dict[str, dict]:
    """Per arm, what the views read: the comparison ids it scored and its preferences (test order),
    and for a judge the position-bias summary of its verdicts."""
    out = {}
    for arm in result.study.arms:
        cells = [c for c in result.records(arm.name) if c.metrics]
        rec: dict[str, Any] = {
            "ids": [c.unit for c in cells],
            "preferences": [c.metrics["preference"] for c in cells],
        }
        if arm.name in JUDGES:
            verdicts = [_verdict(c.metrics["verdict"]) for c in cells]
            rec["position_bias"] = position_bias_summary(verdicts, [bench.by_id[c.unit] for c in cells])
        out[arm.name] = rec
    return out


def _verdict(saved: dict[str, Any]) -> PairVerdict | RubricVerdict:
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in saved.items() if k != "rubric"}
    return RubricVerdict(**fields) if saved["rubric"] else PairVerdict(**fields)


def _ci(a: tuple[float, float] | None) -> str:
    return f"[{a[0]:.1f}, {a[1]:.1f}]" if a else ""


def _longer_share(prefs: Sequence[str | None], comps: Sequence[Comparison]) -> float | None:
    """% of decisive preferences that pick the longer response."""
    picks = []
    for p, c in zip(prefs, comps, strict=True):
        la, lb = length(c.response_a, c.language), length(c.response_b, c.language)
        if p in ("response_a", "response_b") and la != lb:
            picks.append((p == "response_a") == (la > lb))
    return 100.0 * statistics.fmean(picks) if picks else None


def _figures(rows: list[tuple[str, Agreement]], best_judge: tuple[str, list, list] | None,
             agree: tuple[list[str], np.ndarray] | None, ctx: RunContext) -> list[str]:  # fmt: skip
    plt = pyplot()
    figs = []
    names = [m for m, _ in rows]
    fig, ax = plt.subplots(figsize=(max(7, 0.55 * len(rows) + 2), 4.2))
    x = np.arange(len(rows))
    for off, key, color in ((-0.2, "accuracy", "tab:blue"), (0.2, "macro_f1", "tab:orange")):
        vals = [getattr(a, key) for _, a in rows]
        cis = [getattr(a, f"{key}_ci") or (v, v) for (_, a), v in zip(rows, vals, strict=True)]
        err = np.array([[v - lo for v, (lo, _) in zip(vals, cis, strict=True)],
                        [hi - v for v, (_, hi) in zip(vals, cis, strict=True)]])  # fmt: skip
        ax.bar(x + off, vals, 0.4, yerr=err, capsize=2, color=color, label=key.replace("_", "-"))
    ax.axhline(PAPER["human"][0], color="tab:blue", ls="--", lw=1, label="human accuracy (paper)")
    ax.axhline(PAPER["human"][1], color="tab:orange", ls="--", lw=1, label="human macro-F1 (paper)")
    ax.set_xticks(x, names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% against the labels (95% bootstrap CI)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, ncol=2)
    figs.append(save_figure(fig, ctx.out_dir, "metrics_accuracy_f1"))
    if best_judge is not None:
        name, prefs, labels = best_judge
        mat = confusion(prefs, labels)
        fig, ax = plt.subplots(figsize=(4.8, 3.8))
        ax.imshow(mat, cmap="Blues")
        cols = [*LABELS, "no verdict"]
        ax.set_xticks(range(len(cols)), cols, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(LABELS)), LABELS, fontsize=8)
        for i in range(mat.shape[0]):
            for j in range(mat.shape[1]):
                ax.text(j, i, str(mat[i, j]), ha="center", va="center", fontsize=8)
        ax.set_xlabel("judge's preference")
        ax.set_ylabel("label")
        ax.set_title(f"best judge: {name}", fontsize=9)
        figs.append(save_figure(fig, ctx.out_dir, "best_judge_confusion"))
    if agree is not None:
        names, mat = agree
        fig, ax = plt.subplots(figsize=(0.42 * len(names) + 2.5, 0.42 * len(names) + 2))
        im = ax.imshow(mat, vmin=0, vmax=100, cmap="viridis")
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.set_title("agreement between metrics (% same preference)", fontsize=9)
        fig.colorbar(im, ax=ax)
        figs.append(save_figure(fig, ctx.out_dir, "metric_agreement"))
    return figs


def _data_table(
    cfg: LFQAConfig, comps: list[Comparison], train: list[Comparison], test: list[Comparison]
) -> Table:
    counts = label_counts(test)
    row = [
        cfg.data or "built here (Python documentation topics)", len(comps), len({c.question for c in comps}),
        f"{len(train)} / {len(test)}", *(counts[k] for k in LABELS),
        ", ".join(sorted({c.compare_type for c in test})), ", ".join(sorted({c.language for c in test})),
    ]  # fmt: skip
    cols = ["source", "comparisons", "questions", "train / test", *LABELS, "compare types", "languages"]
    return Table("Data", cols, [row])


def _agreement_table(
    cfg: LFQAConfig,
    names: Sequence[str],
    records: dict[str, dict],
    by_id: dict[str, Comparison],
    test: list[Comparison],
) -> tuple[Table, list[tuple[str, Agreement]]]:
    rows: list[tuple[str, Agreement]] = []
    body = []
    for m in names:
        rec = records[m]
        scored = [by_id[i] for i in rec["ids"]]
        a = agreement(rec["preferences"], [c.label for c in scored], n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append((m, a))
        longer = _longer_share(rec["preferences"], scored)
        body.append([
            FAMILY_OF.get(m, "floor"), m, a.n, round(a.accuracy, 1), _ci(a.accuracy_ci), round(a.macro_f1, 1),
            _ci(a.macro_f1_ci), None if a.tie_accuracy is None else round(a.tie_accuracy, 1),
            round(a.failures, 1), None if longer is None else round(longer, 1),
        ])  # fmt: skip
    human_longer = _longer_share([c.label for c in test], test)
    body.append(["labels", "(the label itself)", len(test), 100.0, "", 100.0, "", 100.0, 0.0,
                 None if human_longer is None else round(human_longer, 1)])  # fmt: skip
    cols = ["family", "metric", "n", "accuracy", "CI", "macro-F1", "CI", "tie accuracy", "no verdict %",
            "prefers longer %"]  # fmt: skip
    title = "Agreement with the labels on the test comparisons (%, 95% bootstrap CI)"
    return Table(title, cols, body), rows


def _per_class_table(rows: list[tuple[str, Agreement]]) -> Table:
    parts = [(k, s) for k in LABELS for s in ("precision", "recall", "f1")]
    body = [[m, *(round(a.per_class[k][s], 1) for k, s in parts)] for m, a in rows]
    cols = ["metric", *(f"{k} {s[0].upper() if s != 'f1' else 'F1'}" for k, s in parts)]
    return Table("Per-class precision / recall / F1 (%)", cols, body)


def _breakdown_tables(
    names: Sequence[str], records: dict[str, dict], by_id: dict[str, Comparison], test: list[Comparison]
) -> list[Table]:
    tables = []
    for attr in ("compare_type", "language", "topic"):
        groups = sorted({getattr(c, attr) or "(none)" for c in test})
        if len(groups) < 2:
            continue
        body = []
        for m in names:
            scored = [by_id[i] for i in records[m]["ids"]]
            got = breakdown(records[m]["preferences"], scored, attr)
            body.append([m, *(round(got[g].accuracy, 1) if g in got else None for g in groups)])
        sizes = {g: sum((getattr(c, attr) or "(none)") == g for c in test) for g in groups}
        cols = ["metric", *(f"{g} (n={sizes[g]})" for g in groups)]
        tables.append(Table(f"Accuracy (%) by {attr.replace('_', ' ')}", cols, body))
    return tables


def _position_table(cfg: LFQAConfig, records: dict[str, dict]) -> Table | None:
    judged = [m for m in cfg.metrics if m in JUDGES]
    if not judged:
        return None
    keys = ["forward_accuracy_pct", "backward_accuracy_pct", "consistency_pct", "first_position_pct",
            "failure_pct", "refused"]  # fmt: skip
    cols = ["judge", "accuracy (a first)", "accuracy (b first)", "order-consistent %",
            "picks the first shown %", "no verdict %", "refused"]  # fmt: skip
    body = [[m, *(records[m]["position_bias"].get(k) for k in keys)] for m in judged]
    return Table("Judges: position bias (each pair asked in both orders)", cols, body)


def _cross_metric(
    cfg: LFQAConfig, records: dict[str, dict], by_id: dict[str, Comparison], test: list[Comparison]
) -> tuple[tuple[list[str], np.ndarray] | None, Table]:
    """Agreement between metrics and the pairs every metric gets wrong, on the comparisons all scored."""
    common = set.intersection(*(set(records[m]["ids"]) for m in cfg.metrics))
    order = [c.id for c in test if c.id in common]
    pref = {m: dict(zip(records[m]["ids"], records[m]["preferences"], strict=True)) for m in cfg.metrics}
    agree = None
    if len(cfg.metrics) > 1 and order:

        def same(a: str, b: str) -> float:
            return 100 * statistics.fmean(pref[a][i] == pref[b][i] for i in order)

        agree = (list(cfg.metrics), np.array([[same(a, b) for b in cfg.metrics] for a in cfg.metrics]))
    wrong = [i for i in order if all(pref[m][i] != by_id[i].label for m in cfg.metrics)]
    body = []
    for i in wrong[:12]:
        c = by_id[i]
        edits = [" + ".join(c.meta.get(k) or []) for k in ("edits_a", "edits_b")]
        body.append([i, c.label, c.compare_type, *edits])
    title = f"Failure cases: {len(wrong)} of {len(order)} comparisons every metric gets wrong (first 12)"
    return agree, Table(title, ["id", "label", "compare type", "edits a", "edits b"], body)


def _views(cfg: LFQAConfig, bench: Bench, result: StudyResult, ctx: RunContext) -> Report:
    """lfqa_e's own tables and figures from the cells: the data, agreement with the labels per metric
    and floor, the paper's figures, per class, by comparison type / language / topic, the judges'
    position bias, the failure cases; the accuracy, best-judge and agreement figures."""
    test, by_id = bench.test, bench.by_id
    records = _records(result, bench)
    names = [*cfg.metrics, *(a.name for a in FLOORS)]
    main, rows = _agreement_table(cfg, names, records, by_id, test)
    paper_rows = [[k, acc, f1] for k, (acc, f1) in PAPER.items()]
    title = "The paper's figures (LFQA-E, English and Chinese; not measured here)"
    paper = Table(title, ["evaluator", "accuracy", "macro-F1"], paper_rows)
    comps = bench.train + test
    tables = [_data_table(cfg, comps, bench.train, test), main, paper, _per_class_table(rows)]
    tables += _breakdown_tables(names, records, by_id, test)
    position = _position_table(cfg, records)
    tables += [position] if position else []
    agree, failures = _cross_metric(cfg, records, by_id, test)
    tables.append(failures)
    judge_rows = [(m, a) for m, a in rows if m in JUDGES]
    best_judge = None
    if judge_rows:
        best = max(judge_rows, key=lambda r: r[1].macro_f1)[0]
        labels = [by_id[i].label for i in records[best]["ids"]]
        best_judge = (best, records[best]["preferences"], labels)
    figures = _figures(rows, best_judge, agree, ctx)
    seconds: dict[str, float] = {}
    for m in cfg.metrics:
        family = FAMILY_OF[m] if m not in STATIC_METRICS else "static"
        seconds[family] = seconds.get(family, 0.0) + sum(c.wall_s for c in result.records(m))
    spent = ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
    notes = [f"seconds by family (summed over its cells): {spent}"]
    if seconds.get("static"):
        notes.append(f"static metrics: {len(test) / seconds['static']:.1f} comparisons/s on this machine")
    source = "training" if bench.train else "test"
    notes.append(f"majority-class floor: {bench.majority} (the most frequent of the {source} labels)")
    if not cfg.data:
        notes.append("built-here labels follow from the edits (build.py); English only")
    return Report(tables=tables, figures=figures, notes=notes)


def run(cfg: LFQAConfig, ctx: RunContext) -> Report:
    """Data and split, then the study: every metric and floor on every test comparison
    (`core.study.run_study`: resumable from `cells.jsonl`), and the views; with `experiment=transfer`,
    the transfer study (`transfer.py`) instead."""
    model = ctx.chat_model() if cfg.model_answers and not cfg.data else None
    comps = _comparisons(cfg, model)
    if not cfg.data:
        save_comparisons(comps, ctx.out_dir / "built_comparisons.json")
    if cfg.experiment == "transfer":
        from iclr26.lfqa_e.transfer import transfer_study  # it imports this module's trained_preferences

        return run_study(transfer_study(cfg, comps), ctx).report
    train, test = split_by_question(comps, cfg.train_share, cfg.seed)
    if not test:
        raise ValueError(f"train_share={cfg.train_share} leaves no test comparisons; lower it")
    if len({c.id for c in test}) != len(test):
        raise ValueError("comparison ids are not unique; each record needs its own id")
    return run_study(study(cfg, train, test), ctx).report


_SMALL_TRAIN = {"evaluator.steps": 8, "reward.steps": 8, "evaluator.batch_size": 4, "reward.batch_size": 4,
                "evaluator.max_length": 128, "reward.max_length": 128}  # fmt: skip
# bench (the README figures, 2 cores): the built-here set, every usable topic, every metric, SmolLM2 judging
# (the judges on 48 test pairs, 256-token analyses: SmolLM2 decodes ~40-80 tokens/s here)
_BENCH = with_changes(
    LFQAConfig(),
    {
        "judge_items": 48,
        "reasoning_tokens": 256,
        "rubric_tokens": 192,
        "evaluator.steps": 120,
        "reward.steps": 120,
    },
)
PRESETS = preset_table(
    bench=_BENCH,
    smoke={"n_questions": 6, "pairs_per_question": 2, "model_answers": False, "judge_items": 2,
           "metrics": ("rouge1", "bleu", "judge_pairwise", "trained_evaluator"), "n_boot": 50,
           **_SMALL_TRAIN},
    # the tour (2 minutes on 2 cores): 12 questions (no SmolLM2 answers), all five families with one
    # judge of each kind (the two other LLM-judge prompts are the bench's), the judges on 3 test
    # comparisons (both orders: the claim's minimum of 3 pairs), 10 fine-tuning steps each
    demo={"n_questions": 12, "pairs_per_question": 3, "model_answers": False, "judge_items": 3,
          "metrics": (*STATIC_METRICS, "judge_pairwise", "judge_reasoning", "judge_rubric", "reward_model",
                      "trained_evaluator"),
          "pairwise_tokens": 24, "reasoning_tokens": 64, "rubric_tokens": 32, "n_boot": 200,
          "evaluator.steps": 10, "reward.steps": 10, "evaluator.max_length": 128, "reward.max_length": 128},
    # the paper's scale: point `data` at unified_benchmark.json and `--llm http` at a judge server;
    # the paper scores the whole release (no split): every static metric and judge, no model trained
    # here (add `reward_model=PATH` and `reward_model` to `metrics` for a released reward model)
    paper={"train_share": 0.0, "metrics": (*STATIC_METRICS, *JUDGES), "reasoning_tokens": 2048,
           "rubric_tokens": 1024, "evaluator.steps": 2000, "reward.steps": 2000, "evaluator.max_length": 512,
           "reward.max_length": 512},
)  # fmt: skip
SYSTEM = implemented_system("lfqa_e", presets=PRESETS, run=run)
