"""The paper's generalisation analysis at CPU scale: the evaluator and the reward model fine-tuned here
on the comparisons of one compare type (human_vs_model, model_vs_model, ...) and tested on every type.

The comparisons are split by question (`train_share`). Each type's training comparisons (those of the
training questions) are subsampled, seeded, to the smallest type's count, so every model trains on as
many pairs. Arm `{model}:{T}->{Y}` is the model trained on type T measured on the test comparisons of
type Y (its cells on other types stay empty): the in-type arm (T = Y) and each cross-type arm (T ≠ Y)
score the same comparisons, so they pair per comparison. Floors on every test comparison: always
"response_a", a seeded coin flip between a and b, and the majority class of the comparison's own type
(the label most frequent among that type's training comparisons: what a model that learned only the
type's label prior would score).

Claims, named before the run, per model, test type Y and other type X, on agreement with the label
(0/1, paired bootstrap): in-type beats cross-type (training on the other type loses something; a
comparison where both sit at or below the majority class is at the floor), cross-type beats the three
floors (something transfers), in-type beats the three floors (the model learned anything at all).
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Sequence
from typing import Any

from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit
from iclr26.lfqa_e.config import LFQAConfig
from iclr26.lfqa_e.data import LABELS, Comparison, DataError, label_counts, split_by_question
from iclr26.lfqa_e.scoring import agreement

FLOORS = (
    Arm("always_a", "floor", floor='always "a"'),
    Arm("coin_flip", "floor", floor="coin flip"),
    Arm("majority", "floor", floor="majority class of the type"),
)
"""Preferences that read nothing of the responses (the module docstring says which)."""
SUBFOLDER = {"trained_evaluator": "evaluator", "reward_model": "reward"}


def arm_name(metric: str, train_type: str, test_type: str) -> str:
    """`{metric}:{train type}->{test type}`."""
    return f"{metric}:{train_type}->{test_type}"


def transfer_split(
    comparisons: Sequence[Comparison], train_share: float, seed: int
) -> tuple[dict[str, list[Comparison]], list[Comparison], dict[str, int]]:
    """(training comparisons per compare type, equal in number; the test comparisons of the types
    kept; each type's training count before the subsampling). The split is by question, so no
    question is in both; a type is kept when it has training and test comparisons, and at least two
    types must be."""
    train, test = split_by_question(comparisons, train_share, seed)
    types = sorted({c.compare_type for c in train} & {c.compare_type for c in test})
    if len(types) < 2:
        found = sorted({c.compare_type for c in comparisons})
        raise DataError(
            f"experiment=transfer needs two compare types with training and test comparisons; the data "
            f"has {', '.join(found)} and the split (train_share={train_share}) leaves {types or 'none'}"
        )
    by_type = {t: [c for c in train if c.compare_type == t] for t in types}
    before = {t: len(cs) for t, cs in by_type.items()}
    n = min(before.values())
    for t, cs in by_type.items():
        keep = set(random.Random(derive_seed(seed, "transfer train", t)).sample(range(len(cs)), n))
        by_type[t] = [c for i, c in enumerate(cs) if i in keep]
    return by_type, [c for c in test if c.compare_type in by_type], before


class TransferBench:
    """What the cells share: each (model, training type)'s preferences on every test comparison,
    trained once on first use (from its checkpoint folder on a resume)."""

    def __init__(self, cfg: LFQAConfig, train: dict[str, list[Comparison]], test: list[Comparison]) -> None:
        self.cfg, self.train, self.test = cfg, train, test
        self.by_id = {c.id: c for c in test}
        self.majority = {}
        for t, cs in train.items():
            counts = label_counts(cs)
            self.majority[t] = max(LABELS, key=lambda k: counts[k])  # ties: the first of LABELS
        self._lock = threading.Lock()
        self._prefs: dict[tuple[str, str], dict[str, str]] = {}

    def preferences(self, metric: str, train_type: str, ctx: RunContext) -> dict[str, str]:
        """The preferences of `metric` trained on `train_type`, by test comparison id."""
        from iclr26.lfqa_e.system import trained_preferences

        with self._lock:
            key = (metric, train_type)
            if key not in self._prefs:
                folder = ctx.checkpoint_dir / f"{SUBFOLDER[metric]}_{train_type}"
                prefs = trained_preferences(self.cfg, metric, self.train[train_type], self.test, folder, ctx)
                self._prefs[key] = dict(zip([c.id for c in self.test], prefs, strict=True))
            return self._prefs[key]


def _floor(bench: TransferBench, name: str, c: Comparison) -> str:
    if name == "always_a":
        return "response_a"
    if name == "coin_flip":
        return random.Random(derive_seed(bench.cfg.seed, "coin flip", c.id)).choice(LABELS[:2])
    return bench.majority[c.compare_type]


def measure(bench: TransferBench, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One arm's preference on one test comparison and whether it is the label (`correct`); a model's
    arm leaves the comparisons of other types than its test type empty."""
    c = bench.by_id[unit.key]
    if arm.role == "floor":
        pref = _floor(bench, arm.name, c)
    else:
        if c.compare_type != arm.params["test_type"]:
            return {}
        pref = bench.preferences(arm.params["metric"], arm.params["train_type"], ctx)[c.id]
    return {"correct": int(pref == c.label), "preference": pref, "label": c.label}


def claims(metrics: Sequence[str], types: Sequence[str]) -> list[Claim]:
    """Per model, test type Y and other type X: in-type vs cross-type, cross-type vs the floors,
    in-type vs the floors (the module docstring)."""
    floors = tuple(a.name for a in FLOORS)
    out = []
    for m in metrics:
        for y in types:
            own = arm_name(m, y, y)
            for x in (t for t in types if t != y):
                cross = arm_name(m, x, y)
                on = f"agreement with the label (0/1) on {y}: trained on"
                out.append(
                    Claim(
                        "correct",
                        own,
                        (cross,),
                        interval="bootstrap",
                        floor_arm="majority",
                        label=f"{on} {y} vs on {x}",
                    )
                )
                out.append(
                    Claim("correct", cross, floors, interval="bootstrap", label=f"{on} {x} vs the floors")
                )
            out.append(
                Claim(
                    "correct",
                    own,
                    floors,
                    interval="bootstrap",
                    label=f"agreement with the label (0/1) on {y}: trained on {y} vs the floors",
                )
            )
    return out  # fmt: skip


def transfer_study(cfg: LFQAConfig, comparisons: Sequence[Comparison]) -> Study:
    """The study: every (model, training type, test type) arm and the floors over the test
    comparisons, with the claims above."""
    train, test, before = transfer_split(comparisons, cfg.train_share, cfg.seed)
    bench = TransferBench(cfg, train, test)
    types = list(train)
    arms = [
        Arm(arm_name(m, t, y), "method", params={"metric": m, "train_type": t, "test_type": y})
        for m in cfg.metrics
        for t in types
        for y in types
    ]
    units = [Unit(c.id, cfg.seed) for c in test]
    return Study("lfqa_e transfer", [*arms, *FLOORS], units, functools.partial(measure, bench),
                 claims=claims(cfg.metrics, types), metrics=("correct",), config=cfg, seed=cfg.seed,
                 views=functools.partial(_views, cfg, bench, before))  # fmt: skip


def unknown_share(texts: Sequence[str]) -> float:
    """% of the encoder's word pieces over `texts` that are its unknown token (what the fine-tuned
    models cannot see)."""
    from transformers import AutoTokenizer

    from iclr26.core.embed import model_dir, quiet_transformers

    with quiet_transformers():
        tok = AutoTokenizer.from_pretrained(model_dir())
    pieces = [p for t in texts for p in tok.tokenize(t)]
    return 100.0 * sum(p == tok.unk_token for p in pieces) / max(1, len(pieces))


def _fmt(a: Any) -> str:
    ci = f" [{a.accuracy_ci[0]:.1f}, {a.accuracy_ci[1]:.1f}]" if a.accuracy_ci else ""
    return f"{a.accuracy:.1f}{ci} / {a.macro_f1:.1f}"


def _views(
    cfg: LFQAConfig, bench: TransferBench, before: dict[str, int], result: StudyResult, ctx: RunContext
) -> Report:
    """The data per type, and the transfer table: accuracy [95% CI] / macro-F1 of each model trained
    on each type, on each test type, with the floors' on the same comparisons."""
    types = list(bench.train)
    data_rows = []
    for t in types:
        tested = [c for c in bench.test if c.compare_type == t]
        counts = label_counts(tested)
        data_rows.append([t, before[t], len(bench.train[t]), len(tested), *(counts[k] for k in LABELS),
                          bench.majority[t]])  # fmt: skip
    data = Table(
        f"Data by compare type ({cfg.data or 'built here'}; by question, train_share={cfg.train_share})",
        ["compare type", "train (before equalising)", "train", "test", *(f"test {k}" for k in LABELS),
         "majority of train"],
        data_rows,
    )  # fmt: skip
    rows = []
    arms = [(a, None) for a in result.study.arms if a.role == "method"] + [(None, f) for f in FLOORS]
    for arm, floor in arms:
        name = arm.params["metric"] if arm else floor.name  # type: ignore[union-attr]
        if arm is not None and arm.params["test_type"] != types[0]:
            continue  # one row per (model, training type): its test types are the columns
        row: list[Any] = [name, arm.params["train_type"] if arm else "(none)"]
        for y in types:
            arm_y = arm_name(name, arm.params["train_type"], y) if arm else floor.name  # type: ignore[union-attr]
            cells = [c for c in result.records(arm_y) if c.metrics and bench.by_id[c.unit].compare_type == y]
            if not cells:
                row.append(None)
                continue
            a = agreement([c.metrics["preference"] for c in cells], [c.metrics["label"] for c in cells],
                          n_boot=cfg.n_boot, seed=cfg.seed)  # fmt: skip
            row.append(_fmt(a) + (" (in-type)" if arm and arm.params["train_type"] == y else ""))
        rows.append(row)
    table = Table(
        "Trained on one compare type, tested on each: accuracy [95% CI] / macro-F1 (%)",
        ["model", "trained on", *(f"tested on {y} (n={sum(c.compare_type == y for c in bench.test)})"
                                  for y in types)],
        rows,
        caption="the floors read nothing of the responses; majority: the most frequent label of the test "
        "type's training comparisons",
    )  # fmt: skip
    notes = []
    for y in types:
        tested = [c for c in bench.test if c.compare_type == y]
        texts = [t for c in tested for t in (c.reference, c.response_a, c.response_b)]
        notes.append(f"{y}: {unknown_share(texts):.1f}% of the encoder's word pieces are [UNK]")
    return Report(tables=[data, table], notes=notes)


__all__ = [
    "FLOORS",
    "TransferBench",
    "arm_name",
    "claims",
    "transfer_split",
    "transfer_study",
    "unknown_share",
]
