"""The `lfqa_e` system: load a release file (or build the Python-documentation set), split it by
question, score every chosen metric of the five families on the test comparisons, and report how
often each agrees with the label (accuracy, macro-F1 over three classes, ties, bootstrap 95%
intervals), broken down by comparison type, language and topic, with position bias, agreement
between metrics, the pairs every metric gets wrong, and the preference for the longer answer.

Each finished metric's preferences are saved under checkpoints/metrics/, and every judge reply is
in the run's LLM cache, so `--out` on the same folder resumes.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Sequence

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.config import with_changes
from iclr26.core.records import pyplot, save_figure
from iclr26.core.system import preset_table
from iclr26.lfqa_e.build import build_comparisons, python_topics
from iclr26.lfqa_e.config import FAMILY_OF, JUDGES, LFQAConfig
from iclr26.lfqa_e.data import LABELS, Comparison, label_counts, load_comparisons, save_comparisons
from iclr26.lfqa_e.evaluator import tie_margin_of, train_evaluator
from iclr26.lfqa_e.judges import (
    JudgeConfig,
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


def _comparisons(cfg: LFQAConfig, ctx: RunContext) -> list[Comparison]:
    if cfg.data:
        comps = load_comparisons(cfg.data, cfg.language or None)
    else:
        model = ctx.chat_model() if cfg.model_answers else None
        n = cfg.n_questions or len(python_topics())
        comps = build_comparisons(
            n, seed=cfg.seed, model=model, pairs_per_question=cfg.pairs_per_question,
            max_concurrency=cfg.max_concurrency,
        )  # fmt: skip
        save_comparisons(comps, ctx.out_dir / "built_comparisons.json")
    if cfg.limit and cfg.limit < len(comps):
        comps = random.Random(cfg.seed).sample(comps, cfg.limit)
    return comps


def split_by_question(
    comparisons: Sequence[Comparison], train_share: float, seed: int = 0
) -> tuple[list[Comparison], list[Comparison]]:
    """(train, test): a seeded `train_share` of the questions and all their comparisons go to train,
    so no question is in both."""
    questions = sorted({c.question for c in comparisons})
    random.Random(seed).shuffle(questions)
    train_q = set(questions[: round(train_share * len(questions))])
    train = [c for c in comparisons if c.question in train_q]
    return train, [c for c in comparisons if c.question not in train_q]


def _judge_config(cfg: LFQAConfig, metric: str) -> JudgeConfig:
    kind = {"judge_reasoning": "reasoning", "judge_rubric": "rubric"}.get(metric, "pairwise")
    tokens = {"pairwise": cfg.pairwise_tokens, "reasoning": cfg.reasoning_tokens, "rubric": cfg.rubric_tokens}
    return JudgeConfig(
        kind=kind, use_reference=metric != "judge_pairwise_noref", max_tokens=tokens[kind],
        both_orders=cfg.both_orders, max_concurrency=cfg.max_concurrency,
    )  # fmt: skip


def _trained_scores(
    cfg: LFQAConfig, metric: str, train: list[Comparison], test: list[Comparison], ctx: RunContext
) -> tuple[np.ndarray, float]:
    if metric == "reward_model" and cfg.reward_model:
        folder, max_length = cfg.reward_model, 512
    else:
        sub = "evaluator" if metric == "trained_evaluator" else "reward"
        ecfg = cfg.evaluator if metric == "trained_evaluator" else cfg.reward
        with ctx.progress(f"fine-tuning the {metric.replace('_', ' ')}", total=ecfg.steps) as advance:
            folder = train_evaluator(train, ctx.checkpoint_dir / sub, ecfg, on_progress=lambda *_: advance())
        max_length = ecfg.max_length
    rm = RewardModel(folder, max_length=max_length)
    return rm.score_pairs(test), tie_margin_of(folder)


def _score_metrics(
    cfg: LFQAConfig, train: list[Comparison], test: list[Comparison], ctx: RunContext
) -> tuple[dict[str, dict], dict[str, float]]:
    """Each metric's saved record: the comparison ids it scored, its preferences, and (judges) the
    position-bias summary; and the seconds each family took in this run."""
    done_dir = ctx.checkpoint_dir / "metrics"
    done_dir.mkdir(exist_ok=True)
    judged = test[: cfg.judge_items] if cfg.judge_items else test
    records: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    todo = [m for m in cfg.metrics if not (done_dir / f"{m}.json").exists()]
    model = ctx.chat_model() if any(m in JUDGES for m in todo) else None
    static = [m for m in todo if m in STATIC_METRICS]
    if static:
        start = time.perf_counter()
        ctx.log(f"static metrics on {len(test)} comparisons: {', '.join(static)}")
        for name, scores in score_static(static, test).items():
            rec = {"ids": [c.id for c in test], "preferences": preferences(scores, cfg.tie_margin)}
            write_text_atomic(done_dir / f"{name}.json", json.dumps(rec))
        seconds["static"] = time.perf_counter() - start
    rest = [m for m in todo if m not in STATIC_METRICS]
    for metric in ctx.track(rest, "judges and trained metrics") if rest else ():
        start = time.perf_counter()
        if metric in JUDGES:
            jcfg = _judge_config(cfg, metric)
            if metric == "judge_rubric":
                verdicts = judge_rubric(model, judged, jcfg)
            elif metric == "judge_logprob":
                verdicts = judge_logprob(model, judged, jcfg, margin=cfg.logprob_margin)
            else:
                verdicts = judge_pairs(model, judged, jcfg)
            rec = {"ids": [c.id for c in judged], "preferences": [v.preference for v in verdicts],
                   "position_bias": position_bias_summary(verdicts, judged),
                   "example_reply": verdicts[0].replies[0] if verdicts else ""}  # fmt: skip
        else:
            scores, tau = _trained_scores(cfg, metric, train, test, ctx)
            rec = {"ids": [c.id for c in test], "tie_margin": tau,
                   "preferences": preferences(scores, tau, relative=False)}  # fmt: skip
        write_text_atomic(done_dir / f"{metric}.json", json.dumps(rec, ensure_ascii=False))
        family = FAMILY_OF[metric]
        seconds[family] = seconds.get(family, 0.0) + time.perf_counter() - start
    for m in cfg.metrics:
        records[m] = json.loads((done_dir / f"{m}.json").read_text())
    return records, seconds


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
    cfg: LFQAConfig, records: dict[str, dict], by_id: dict[str, Comparison], test: list[Comparison]
) -> tuple[Table, list[tuple[str, Agreement]]]:
    rows: list[tuple[str, Agreement]] = []
    body = []
    for m in cfg.metrics:
        rec = records[m]
        scored = [by_id[i] for i in rec["ids"]]
        a = agreement(rec["preferences"], [c.label for c in scored], n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append((m, a))
        longer = _longer_share(rec["preferences"], scored)
        body.append([
            FAMILY_OF[m], m, a.n, round(a.accuracy, 1), _ci(a.accuracy_ci), round(a.macro_f1, 1),
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
    cfg: LFQAConfig, records: dict[str, dict], by_id: dict[str, Comparison], test: list[Comparison]
) -> list[Table]:
    tables = []
    for attr in ("compare_type", "language", "topic"):
        groups = sorted({getattr(c, attr) or "(none)" for c in test})
        if len(groups) < 2:
            continue
        body = []
        for m in cfg.metrics:
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


def run(cfg: LFQAConfig, ctx: RunContext) -> Report:
    """Data, split, every metric's preferences, their agreement with the labels, and the analyses."""
    comps = _comparisons(cfg, ctx)
    train, test = split_by_question(comps, cfg.train_share, cfg.seed)
    if not test:
        raise ValueError(f"train_share={cfg.train_share} leaves no test comparisons; lower it")
    by_id = {c.id: c for c in test}
    if len(by_id) != len(test):
        raise ValueError("comparison ids are not unique; each record needs its own id")
    records, seconds = _score_metrics(cfg, train, test, ctx)
    main, rows = _agreement_table(cfg, records, by_id, test)
    paper_rows = [[k, acc, f1] for k, (acc, f1) in PAPER.items()]
    title = "The paper's figures (LFQA-E, English and Chinese; not measured here)"
    paper = Table(title, ["evaluator", "accuracy", "macro-F1"], paper_rows)
    tables = [_data_table(cfg, comps, train, test), main, paper, _per_class_table(rows)]
    tables += _breakdown_tables(cfg, records, by_id, test)
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
    top_name, top = max(rows, key=lambda r: r[1].macro_f1)
    margin = (top.macro_f1_ci[1] - top.macro_f1_ci[0]) / 2 if top.macro_f1_ci else 0.0
    claim = ClaimCheck(
        "macro-F1 % against the labels (no metric comes close to human agreement)",
        "human agreement (the paper)", PAPER["human"][1], f"best metric here ({top_name})", top.macro_f1,
        margin=round(margin, 1),
    )  # fmt: skip
    notes = [f"seconds this run, by family: {', '.join(f'{k} {v:.1f}' for k, v in seconds.items())}"]
    if "static" in seconds:
        notes.append(f"static metrics: {len(test) / seconds['static']:.1f} comparisons/s on this machine")
    if not cfg.data:
        notes.append("built-here labels follow from the edits (build.py); English only")
    return Report(tables=tables, figures=figures, claim_check=claim, notes=notes)


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
    # the tour: 16 questions (no SmolLM2 answers), all five families, the judges on 4 test comparisons
    demo={"n_questions": 16, "pairs_per_question": 3, "model_answers": False, "judge_items": 4,
          "pairwise_tokens": 24, "reasoning_tokens": 96, "rubric_tokens": 48, "n_boot": 200,
          "evaluator.steps": 15, "reward.steps": 15, "evaluator.max_length": 160, "reward.max_length": 160},
    # the paper's scale: point `data` at unified_benchmark.json and `--llm http` at a judge server
    paper={"reasoning_tokens": 2048, "rubric_tokens": 1024, "evaluator.steps": 2000,
           "reward.steps": 2000, "evaluator.max_length": 512, "reward.max_length": 512},
)  # fmt: skip
SYSTEM = implemented_system("lfqa_e", presets=PRESETS, run=run)
