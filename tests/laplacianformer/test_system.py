import json

import pytest
import torch

from iclr26.core import ConfigError, set_seed
from iclr26.core.runner import run_system
from iclr26.laplacianformer import SYSTEM
from iclr26.laplacianformer.data import load_task
from iclr26.laplacianformer.scaling import growth_exponent, measure_scaling, saved_bytes
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


def test_smoke_preset_runs_end_to_end(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    titles = [t.title for t in record.report.tables]
    assert any("Test accuracy" in t for t in titles) and any("Growth exponent" in t for t in titles)
    assert (run_dir / "scaling.png").stat().st_size > 10_000
    accs = record.report.tables[0].column("mean acc")
    assert all(0.0 <= a <= 1.0 for a in accs)
    # a second run in the same folder reuses the finished trainings
    done = sorted((run_dir / "train").glob("*.json"))
    assert len(done) == 3
    before = json.loads(done[0].read_text())
    record2, _ = run_system(SYSTEM, "smoke", out=run_dir)
    assert record2.report.tables[0].rows == record.report.tables[0].rows
    assert json.loads(done[0].read_text()) == before


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
