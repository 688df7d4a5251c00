import json

import pytest
import torch

from iclr26.core import ConfigError, set_seed
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.core.study import run_study
from iclr26.core.system import RunContext
from iclr26.laplacianformer import SYSTEM
from iclr26.laplacianformer.data import load_task
from iclr26.laplacianformer.scaling import growth_exponent, measure_scaling, saved_bytes
from iclr26.laplacianformer.system import study
from iclr26.laplacianformer.train import TrainConfig, train_classifier
from iclr26.laplacianformer.vit import VisionTransformer


def test_tasks_load_from_bundled_data():
    for name, shape, classes in [
        ("digits", (1, 16, 16), 10),
        ("lfw", (1, 32, 32), 2),
        ("textures", (1, 48, 48), 6),
    ]:
        t = load_task(name, seed=0)
        assert t.x_train.shape[1:] == shape and t.classes == classes
        assert float(t.x_train.min()) >= 0 and float(t.x_train.max()) <= 1
        assert set(t.y_test.tolist()) == set(range(classes))
    with pytest.raises(ValueError, match="task must be one of"):
        load_task("mnist")


class _Stop(Exception):
    pass


def test_training_resumes_from_checkpoint_bitwise(tmp_path):
    task = load_task("lfw", seed=0)
    cfg = TrainConfig(epochs=3, batch_size=32)

    def model():
        set_seed(0)
        return VisionTransformer(32, 4, 1, 2, dim=16, depth=1, heads=2, landmarks=8)

    straight = model()
    full = train_classifier(straight, task, cfg, seed=0)

    ckpt = tmp_path / "ck.pt"
    epochs_seen = []

    def interrupt(_):
        epochs_seen.append(1)
        if len(epochs_seen) == 2:
            raise _Stop

    with pytest.raises(_Stop):
        train_classifier(model(), task, cfg, seed=0, checkpoint=ckpt, on_epoch=interrupt)
    resumed_model = model()
    resumed = train_classifier(resumed_model, task, cfg, seed=0, checkpoint=ckpt)
    assert resumed["test_acc"] == full["test_acc"] and resumed["train_loss"] == full["train_loss"]
    for a, b in zip(straight.state_dict().values(), resumed_model.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_scaling_memory_is_linear_for_laplacian():
    pts = measure_scaling(("laplacian",), (128, 256, 512, 1024), dim=32, heads=2, landmarks=8, repeats=1)
    exp = growth_exponent(pts, "laplacian")
    assert 0.85 < exp < 1.15, exp


def test_saved_bytes_counts_quadratic_attention():
    def naive(n):
        x = torch.randn(n, 8, requires_grad=True)
        return saved_bytes(lambda: torch.softmax(x @ x.T, -1).sum())[1]

    assert naive(256) / naive(128) > 3.5  # the N×N matrix is saved: ×4 for ×2 tokens


# a smoke run small enough for a test: 1 epoch, 2 attentions, 2 scaling lengths
TINY = {"attentions": "laplacian,softmax,nystrom", "train.epochs": "1", "dim": "16", "depth": "1"}


def test_smoke_run_is_a_study_with_floors_and_resumes_from_its_ledger(tmp_path, monkeypatch):
    record, run_dir = run_system(SYSTEM, "smoke", TINY, runs_root=tmp_path)
    assert record.status == "complete"
    acc, _, growth, standard = record.report.tables
    assert [r[0] for r in acc.rows] == ["laplacian", "softmax", "nystrom", "majority"]  # the floor last
    assert acc.rows[-1][2] == 0.5  # lfw's test split is balanced: the majority class scores 0.5
    assert "Growth exponent" in growth.title and (run_dir / "scaling.png").stat().st_size > 10_000
    roles = {r[0]: r[1] for r in standard.rows}
    assert roles == {
        "laplacian": "method",
        "nystrom": "baseline",
        "softmax": "floor (softmax attention)",
        "majority": "floor (majority class)",
    }
    claim = record.report.claim_check  # one task × one seed: one pair, too few for the rule
    assert (claim.method, claim.baseline, claim.verdict, claim.n) == ("laplacian", "nystrom", "not tested", 1)
    cells = [json.loads(line) for line in (run_dir / CELLS_FILE).read_text().splitlines()]
    assert sorted(c["arm"] for c in cells) == ["laplacian", "majority", "nystrom", "softmax"]
    assert {c["unit"] for c in cells} == {"lfw/s0"} and not (run_dir / "train").exists()

    def no_training(*a, **k):
        raise AssertionError("a resumed run trains nothing its ledger holds")

    monkeypatch.setattr("iclr26.laplacianformer.system.train_classifier", no_training)
    record2, _ = run_system(SYSTEM, "smoke", TINY, out=run_dir)
    assert record2.report.tables[0].rows == acc.rows


def test_the_claim_names_every_linear_baseline_and_the_majority_floor():
    cfg = SYSTEM.config("bench", {})
    st = study(cfg)
    roles = {a.name: a.label for a in st.arms}
    assert roles == {
        "laplacian": "method",
        "softmax": "floor (softmax attention)",
        "nystrom": "baseline",
        "performer": "baseline",
        "soft": "baseline",
        "majority": "floor (majority class)",
    }
    assert [u.key for u in st.units] == ["digits/s0", "digits/s1", "digits/s2", "lfw/s0", "lfw/s1", "lfw/s2"]
    (claim,) = st.claims
    assert claim.baselines == ("nystrom", "performer", "soft") and claim.floor_arm == "majority"
    no_method = study(SYSTEM.config("bench", {"attentions": "softmax,soft"}))
    assert not no_method.claims


def _constructed(tmp_path, acc: dict[str, list[float]]):
    """The bench study's claim judged on constructed accuracies (arm -> one value per unit)."""
    st = study(SYSTEM.config("bench", {"attentions": "laplacian,softmax,nystrom"}))
    index = {u.key: i for i, u in enumerate(st.units)}
    st.measure = lambda arm, unit, ctx: {"test_acc": acc[arm.name][index[unit.key]], "params": 1}
    tmp_path.mkdir(exist_ok=True)
    return run_study(st, RunContext(out_dir=tmp_path)).checks


def test_the_one_rule_on_constructed_accuracies(tmp_path):
    base = [0.80, 0.82, 0.81, 0.90, 0.88, 0.91]
    floor = [0.1] * 3 + [0.5] * 3
    above = [b + d for b, d in zip(base, (0.03, 0.05, 0.04, 0.02, 0.04, 0.03), strict=True)]
    (check,) = _constructed(tmp_path / "a", {"laplacian": above, "nystrom": base, "softmax": base,
                                             "majority": floor})  # fmt: skip
    assert check.verdict == "held" and check.n == 6
    noisy = [b + d for b, d in zip(base, (0.05, -0.04, 0.03, -0.05, 0.02, -0.02), strict=True)]
    (check,) = _constructed(tmp_path / "b", {"laplacian": noisy, "nystrom": base, "softmax": base,
                                             "majority": floor})  # fmt: skip
    assert check.verdict == "within noise"
    (check,) = _constructed(tmp_path / "c", {"laplacian": floor, "nystrom": floor, "softmax": base,
                                             "majority": floor})  # fmt: skip
    assert check.verdict == "uninformative"  # both at the majority class on every unit


def test_config_errors_name_fields():
    with pytest.raises(ConfigError, match="tasks: unknown"):
        SYSTEM.config("demo", {"tasks": "digits,cifar"})
    with pytest.raises(ConfigError, match="normalization must be"):
        SYSTEM.config("demo", {"normalization": "softmax"})
    with pytest.raises(ConfigError, match="scaling_lengths must be >= landmarks"):
        SYSTEM.config("demo", {"scaling_lengths": "8,16"})


def test_the_optimiser_config_is_nested():
    cfg = SYSTEM.config("demo", {"train.epochs": "7", "train.lr": "1e-4"})
    assert (cfg.train.epochs, cfg.train.lr) == (7, 1e-4)
    assert SYSTEM.presets["paper"].train.epochs == 100 and SYSTEM.presets["bench"].train.lr == 5e-3
    with pytest.raises(ConfigError, match="local_conv must be 0 or an odd kernel size"):
        SYSTEM.config("demo", {"local_conv": "4"})
