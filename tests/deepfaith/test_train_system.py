"""Explainer training (loss goes down, resume, seeding) and the system end to end."""

import json

import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.core.study import run_study
from iclr26.core.system import RunContext
from iclr26.deepfaith import SYSTEM
from iclr26.deepfaith.explainer import AmortizedExplainer, ExplainerConfig
from iclr26.deepfaith.priors import explain_all
from iclr26.deepfaith.supervision import deduplicate, supervised_pairs
from iclr26.deepfaith.system import METHOD, Tasks, average_ranks, study, top_k_hits
from iclr26.deepfaith.tasks import load_task
from iclr26.deepfaith.train import ExplainerTrainConfig, train_explainer

SMALL = ExplainerConfig(width=32, depth=1, heads=2, ffn=64, dropout=0.1)  # dropout draws on the global RNG


@pytest.fixture(scope="module")
def wine_setup():
    task = load_task("wine", seed=0)
    x = task.x_train[:48]
    target = task.predict(x)
    maps, _ = explain_all(("integrated_gradients", "occlusion"), task.model, task.space, x, target)
    pairs = supervised_pairs(maps, deduplicate(maps, 0.99))
    return task, x, target, pairs


def _train(task, x, target, pairs, cfg, checkpoint=None, seed=0):
    torch.manual_seed(seed)
    ex = AmortizedExplainer(task.space, task.classes, SMALL)
    hist = train_explainer(ex, task.model, x, target, pairs, cfg, seed=seed, checkpoint=checkpoint)
    return ex, hist


def test_training_reduces_the_faithfulness_loss(wine_setup):
    task, x, target, pairs = wine_setup
    cfg = ExplainerTrainConfig(epochs=25, batch_size=16, lr=3e-3, objective="local", lc_runs=16)
    _, hist = _train(task, x, target, pairs, cfg)
    first = sum(h["local_loss"] for h in hist[:3]) / 3
    last = sum(h["local_loss"] for h in hist[-3:]) / 3
    assert last < 0.7 * first, (first, last)
    assert all(h["alpha"] == 0.0 for h in hist)


def test_pattern_objective_fits_the_priors(wine_setup):
    task, x, target, pairs = wine_setup
    cfg = ExplainerTrainConfig(epochs=15, batch_size=16, lr=3e-3, objective="pattern")
    _, hist = _train(task, x, target, pairs, cfg)
    assert hist[-1]["pattern_loss"] < 0.5 * hist[0]["pattern_loss"]
    assert all(h["alpha"] == 1.0 for h in hist)


def test_resume_after_interruption_is_bitwise_identical(wine_setup, tmp_path):
    task, x, target, pairs = wine_setup
    full = ExplainerTrainConfig(epochs=6, batch_size=16, lc_runs=8)
    ex_a, hist_a = _train(task, x, target, pairs, full)
    ckpt = tmp_path / "explainer.pt"
    _train(task, x, target, pairs, ExplainerTrainConfig(epochs=3, batch_size=16, lc_runs=8), checkpoint=ckpt)
    torch.manual_seed(123)  # a different global RNG state at restart must not matter
    ex_b, hist_b = _train(task, x, target, pairs, full, checkpoint=ckpt)
    assert len(hist_b) == 6
    for pa, pb in zip(ex_a.parameters(), ex_b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert [h["local_loss"] for h in hist_a] == [h["local_loss"] for h in hist_b]


def test_seeded_runs_repeat_and_seeds_differ(wine_setup):
    task, x, target, pairs = wine_setup
    cfg = ExplainerTrainConfig(epochs=2, batch_size=16, lc_runs=8)
    a = _train(task, x, target, pairs, cfg)[1]
    b = _train(task, x, target, pairs, cfg)[1]
    c = _train(task, x, target, pairs, cfg, seed=1)[1]
    assert [h["local_loss"] for h in a] == [h["local_loss"] for h in b]
    assert [h["local_loss"] for h in a] != [h["local_loss"] for h in c]


def test_training_errors(wine_setup):
    task, x, target, _ = wine_setup
    empty = supervised_pairs({"a": torch.zeros(2, task.space.d)}, torch.zeros(2, 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="no supervised pairs"):
        _train(task, x, target, empty, ExplainerTrainConfig(epochs=1))
    with pytest.raises(ValueError, match="objective must be one of"):
        ExplainerTrainConfig(objective="both")
    with pytest.raises(ValueError, match="sampling must be one of"):
        ExplainerTrainConfig(sampling="gumbel")


def test_average_ranks_and_top_k_hits():
    means = {"FC": {"a": 0.9, "b": 0.5, "c": 0.5}, "DEL": {"a": 0.3, "b": 0.1, "c": 0.2}}
    ranks = average_ranks(means)
    assert ranks["FC"] == {"a": 1.0, "b": 2.5, "c": 2.5} and ranks["DEL"] == {"a": 3.0, "b": 1.0, "c": 2.0}
    assert ranks["avg"] == {"a": 2.0, "b": 1.75, "c": 2.25}
    attr = torch.tensor([[0.1, 0.9, 0.8, 0.0], [1.0, 0.0, 0.0, 0.0]])
    relevant = torch.tensor([[False, True, False, True], [True, False, False, False]])
    assert top_k_hits(attr, relevant) == pytest.approx((0.5 + 1.0) / 2)


def test_smoke_preset_runs_end_to_end_and_resumes(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    tables = record.report.tables
    assert tables[0].title.startswith("Summary")
    assert tables[1].title.startswith("DeepFaith against each prior")
    wine, digits = tables[2], tables[3]
    methods = digits.column("method")
    assert "deepfaith" in methods and "grad_cam" in methods and methods[-1] == "random (floor)"
    assert "IROF" in digits.columns and "IROF" not in wine.columns  # IROF is image-only
    assert all(v == v for v in digits.column("avg rank")[:-1])  # no NaN; the floor is not ranked
    assert (run_dir / "training_curves.png").exists() and (run_dir / "explanations.png").exists()
    cells = [json.loads(line) for line in (run_dir / CELLS_FILE).read_text().splitlines()]
    first = next(c for c in cells if c["arm"] == "deepfaith" and c["unit"] == "wine/0")
    summary = first["metrics"]["summary"]
    assert summary["ms_per_input"]["deepfaith"] > 0 and len(summary["history"]) == 3
    assert summary["best_prior"] in summary["train_ranks"]  # chosen on the training inputs
    check = record.report.claim_check
    assert check.method == "deepfaith" and check.baseline == "best_prior" and check.metric.startswith("FC")
    record2, _ = run_system(SYSTEM, "smoke", out=run_dir)  # every cell resumed from the ledger, none redone
    assert record2.report.tables[2].rows == wine.rows
    assert len((run_dir / CELLS_FILE).read_text().splitlines()) == len(cells)


class _Constructed(Tasks):
    """Tasks whose results are given: `scores` per test input as (saliency, deepfaith, random)."""

    def __init__(self, cfg, scores):
        super().__init__(cfg)
        self.scores = scores

    def get(self, name, ctx):
        return {"order": ["saliency", METHOD, "random"], "best_prior": "saliency", "ms_per_input": {},
                "scores": {"FC": self.scores}}  # fmt: skip


def test_the_study_claims_deepfaith_against_the_best_prior_on_each_metric(tmp_path):
    cfg = SYSTEM.config("smoke", {"tasks": "wine", "methods": "saliency", "test_inputs": "12"})
    s = study(cfg)
    roles = {a.name: a.label for a in s.arms}
    assert roles == {"deepfaith": "method", "best_prior": "baseline", "saliency": "baseline",
                     "random": "floor (random attribution)"}  # fmt: skip
    assert [c.metric for c in s.claims] == ["FC", "FE", "MC", "RP", "INS", "DEL", "NEG", "POS", "INF"]
    assert all(c.baselines == ("best_prior",) and c.floor_arm == "random" for c in s.claims)
    assert not next(c for c in s.claims if c.metric == "DEL").higher_is_better

    def judged(scores, out):
        out.mkdir()
        s = study(cfg, _Constructed(cfg, scores))
        s.views = None
        return run_study(s, RunContext(out_dir=out)).checks

    better = [[0.2 + 0.01 * i, 0.5 + 0.01 * i, 0.0] for i in range(12)]
    checks = judged(better, tmp_path / "better")
    assert checks[0].metric.startswith("FC") and checks[0].verdict == "held" and checks[0].n == 12
    assert {c.verdict for c in checks[1:]} == {"not tested"}  # no cell measured the other metrics
    at_floor = [[0.0, 0.0, 0.0] for _ in range(12)]
    assert judged(at_floor, tmp_path / "floor")[0].verdict == "uninformative"


def test_config_errors_name_fields():
    with pytest.raises((ConfigError, ValueError), match="tasks"):
        SYSTEM.config("demo", {"tasks": "wine,imagenet"})
    with pytest.raises((ConfigError, ValueError), match="methods"):
        SYSTEM.config("demo", {"methods": "saliency,shapley"})
    with pytest.raises((ConfigError, ValueError), match="objective"):
        SYSTEM.config("demo", {"train.objective": "both"})


def test_smoke_preset_under_torchrun_trains_one_explainer(tmp_path):
    """`torchrun -m iclr26.cli run deepfaith`: DDP keeps the ranks' explainers identical."""
    from tests.torchrun import torchrun

    out = tmp_path / "run"
    args = ["run", "deepfaith", "--preset", "smoke", "--set", "tasks=wine", "--set", "threads=1"]
    proc = torchrun("-m", "iclr26.cli", *args, "--out", out)
    assert proc.returncode == 0, proc.stderr[-3000:]

    def summary(folder):
        cells = [json.loads(line) for line in (folder / CELLS_FILE).read_text().splitlines()]
        first = next(c for c in cells if c["arm"] == "deepfaith" and c["unit"] == "wine/0")
        return first["metrics"]["summary"]

    main, other = summary(out), summary(out / "rank1")
    assert (
        main["means"] == other["means"]
        and main["history"][-1]["local_loss"] == other["history"][-1]["local_loss"]
    )


def test_nested_configs_and_min_steps():
    cfg = SYSTEM.config("demo", {"explainer.width": "32", "explainer.heads": "2", "train.lr": "3e-4"})
    assert cfg.explainer.width == 32 and cfg.train.lr == 3e-4
    bench = SYSTEM.presets["bench"]
    assert bench.train.epochs == 80 and bench.priors.kernel_samples == 64
    # 100 pairs at batch 64 are 2 batches per epoch: 1200 updates need 600 epochs
    assert bench.train_config(100).epochs == 600 and bench.train_config(0) == bench.train
    with pytest.raises(ConfigError, match="divide by heads"):
        SYSTEM.config("demo", {"explainer.heads": "3"})
