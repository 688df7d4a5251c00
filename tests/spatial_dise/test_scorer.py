"""The trained option scorer: it learns a learnable toy set, repeats when seeded, resumes exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import iclr26.spatial_dise.scorer as scorer_module
from iclr26.core.errors import UserError
from iclr26.spatial_dise.baselines import Panels
from iclr26.spatial_dise.items import LETTERS, compose
from iclr26.spatial_dise.records import Record, write_csv
from iclr26.spatial_dise.scorer import (
    OptionScorer,
    Prepared,
    ScorerConfig,
    cache_path,
    from_panels,
    load_scorer,
    predict_scorer,
    prepare,
    train_scorer,
)
from tests.spatial_dise.test_baselines import toy_panels

SIZE = 32
FAST = ScorerConfig(epochs=3, batch_size=32, lr=3e-3, width=8, task_dim=4, image_size=SIZE)


def toy_prepared(n: int, seed: int, n_question: int = 1) -> Prepared:
    rng = np.random.default_rng(seed)
    panels, answers = [], []
    for _ in range(n):
        q, o, a = toy_panels(rng, n_question)
        panels.append(Panels(tuple(q), tuple(o)))
        answers.append(a)
    return from_panels(panels, answers, ["toy_a" if i % 2 else "toy_b" for i in range(n)], size=SIZE)


@pytest.fixture(scope="module")
def toy() -> tuple[Prepared, Prepared]:
    return toy_prepared(240, seed=0), toy_prepared(80, seed=1)


def weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, map_location="cpu", weights_only=False)["model"]


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_scorer_beats_chance_on_a_learnable_toy_set(toy: tuple[Prepared, Prepared], tmp_path: Path) -> None:
    train, val = toy
    result = train_scorer(train, val, FAST, tmp_path)
    assert result.best_val_accuracy >= 0.8  # chance is 0.25
    pred = predict_scorer(result.model, val)
    assert set(pred) <= set(LETTERS)
    assert np.mean([LETTERS.index(p) == int(a) for p, a in zip(pred, val.answers, strict=True)]) >= 0.8
    assert [h["epoch"] for h in result.history] == [0, 1, 2]
    assert (tmp_path / "best.pt").is_file() and (tmp_path / "last.pt").is_file()
    assert '"image_size": 32' in (tmp_path / "config.json").read_text()
    loaded = load_scorer(tmp_path / "best.pt")
    assert predict_scorer(loaded, val) == pred


def test_seeded_runs_repeat(toy: tuple[Prepared, Prepared], tmp_path: Path) -> None:
    train, val = toy
    cfg = ScorerConfig(**{**FAST.__dict__, "epochs": 1})
    train_scorer(train, val, cfg, tmp_path / "a")
    train_scorer(train, val, cfg, tmp_path / "b")
    train_scorer(train, val, ScorerConfig(**{**cfg.__dict__, "seed": 1}), tmp_path / "c")
    assert same(weights(tmp_path / "a/last.pt"), weights(tmp_path / "b/last.pt"))
    assert not same(weights(tmp_path / "a/last.pt"), weights(tmp_path / "c/last.pt"))


def test_resume_after_interruption_gives_the_same_weights(
    toy: tuple[Prepared, Prepared], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train, val = toy
    train_scorer(train, val, FAST, tmp_path / "whole")

    real_save = scorer_module.save_checkpoint
    saves: list[Path] = []

    def crash_in_epoch_two(path: Path, state: dict) -> None:
        if state["epoch"] == 1:
            raise KeyboardInterrupt  # killed before epoch 1's checkpoint is written
        saves.append(Path(path))
        real_save(path, state)

    monkeypatch.setattr(scorer_module, "save_checkpoint", crash_in_epoch_two)
    with pytest.raises(KeyboardInterrupt):
        train_scorer(train, val, FAST, tmp_path / "cut")
    monkeypatch.setattr(scorer_module, "save_checkpoint", real_save)
    assert torch.load(tmp_path / "cut/last.pt", weights_only=False)["epoch"] == 0
    resumed = train_scorer(train, val, FAST, tmp_path / "cut")
    assert same(weights(tmp_path / "whole/last.pt"), weights(tmp_path / "cut/last.pt"))
    assert [h["epoch"] for h in resumed.history] == [0, 1, 2]


def test_more_epochs_extend_a_run_and_other_settings_are_refused(
    toy: tuple[Prepared, Prepared], tmp_path: Path
) -> None:
    train, val = toy
    one = ScorerConfig(**{**FAST.__dict__, "epochs": 1})
    train_scorer(train, val, one, tmp_path / "x")
    train_scorer(train, val, FAST, tmp_path / "x")  # extends epochs 1 and 2
    train_scorer(train, val, FAST, tmp_path / "y")
    assert same(weights(tmp_path / "x/last.pt"), weights(tmp_path / "y/last.pt"))
    with pytest.raises(UserError, match="other settings"):
        train_scorer(train, val, ScorerConfig(**{**FAST.__dict__, "lr": 1e-2}), tmp_path / "x")


def test_question_panels_are_zero_padded() -> None:
    two = toy_prepared(4, seed=3, n_question=2)
    assert two.questions.shape == (4, 3, SIZE, SIZE) and two.options.shape == (4, 4, SIZE, SIZE)
    assert two.questions.dtype == torch.uint8
    assert two.questions[:, 1].sum() > 0 and two.questions[:, 2].sum() == 0


def test_model_shapes_and_unseen_tasks() -> None:
    model = OptionScorer(["a", "b"], width=4, task_dim=3, image_size=SIZE)
    q = torch.zeros(5, 3, SIZE, SIZE, dtype=torch.uint8)
    o = torch.zeros(5, 4, SIZE, SIZE, dtype=torch.uint8)
    assert model(q, o, model.task_index(["a", "b", "zzz", "a", "b"])).shape == (5, 4)
    assert model.task_index(["zzz", "a", "b"]).tolist() == [0, 1, 2]
    assert OptionScorer(["a"], width=4, task_dim=0)(q, o).shape == (5, 4)


def test_prepare_decodes_pngs_once_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    records = []
    for i in range(5):
        q, o, a = toy_panels(rng, 2)
        compose(q, o).save(tmp_path / f"{i}.png")
        records.append(Record(f"t{i}", "q", a, f"{i}.png", "toy", "easy", "Intrinsic-Static", 2))
    csv = write_csv(tmp_path / "train.csv", records)
    data = prepare(records, tmp_path, size=SIZE)
    assert data.options.shape == (5, 4, SIZE, SIZE) and data.ids == tuple(r.id for r in records)
    assert data.answers.tolist() == [LETTERS.index(r.answer) for r in records]
    cached = cache_path(records, tmp_path, SIZE)
    assert cached.is_file() and cached.parent == csv.parent

    def no_decoding(*args: object, **kwargs: object) -> None:
        raise AssertionError("decoded PNGs although a cache exists")

    monkeypatch.setattr(scorer_module, "load_panels", no_decoding)
    again = prepare(records, tmp_path, size=SIZE)
    assert torch.equal(again.options, data.options) and torch.equal(again.questions, data.questions)
    assert cache_path(records[:4], tmp_path, SIZE) != cached  # other records, other key
    assert cache_path(records, tmp_path, 64) != cached


def test_train_from_records_and_predict_records(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    records = []
    for i in range(8):
        q, o, a = toy_panels(rng, 1)
        compose(q, o).save(tmp_path / f"{i}.png")
        records.append(Record(f"t{i}", "q", a, f"{i}.png", "toy", "easy", "Intrinsic-Static", 1))
    cfg = ScorerConfig(**{**FAST.__dict__, "epochs": 1})
    result = train_scorer(records[:6], records[6:], cfg, tmp_path / "run", image_root=tmp_path)
    assert len(predict_scorer(result.model, records[6:], image_root=tmp_path)) == 2
    with pytest.raises(ValueError, match="image_root"):
        train_scorer(records[:6], records[6:], cfg, tmp_path / "run2")


@pytest.mark.parametrize(
    "field, value", [("epochs", 0), ("batch_size", -1), ("lr", 0.0), ("image_size", 8), ("task_dim", -1)]
)
def test_config_checks_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"scorer.{field} must be"):
        ScorerConfig(**{field: value})


DDP_SCRIPT = """
import sys, torch
from tests.spatial_dise.test_scorer import FAST, toy_prepared
from iclr26.core.distributed import cleanup, init_distributed
from iclr26.spatial_dise.scorer import train_scorer
info = init_distributed("cpu")
torch.set_num_threads(1)
result = train_scorer(toy_prepared(240, 0), toy_prepared(80, 1), FAST, sys.argv[1])
state = {k: v.tolist() for k, v in result.model.state_dict().items()}
torch.save(state, f"{sys.argv[1]}/rank{info.rank}.pt")
cleanup()
"""


def test_training_under_torchrun_keeps_the_ranks_identical(tmp_path: Path) -> None:
    """`torchrun --nproc_per_node=2`: each rank trains on half of every batch, DDP averages the
    gradients, so both ranks end with the same weights and the run still learns the toy set."""
    import os

    from tests.torchrun import torchrun

    script = tmp_path / "ddp_scorer.py"
    script.write_text(DDP_SCRIPT)
    out = tmp_path / "run"
    out.mkdir()
    root = Path(__file__).resolve().parents[2]
    proc = torchrun(script, out, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    a, b = torch.load(out / "rank0.pt"), torch.load(out / "rank1.pt")
    assert a == b
    assert torch.load(out / "last.pt", weights_only=False)["best_val_accuracy"] >= 0.7
