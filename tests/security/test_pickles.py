"""Issue 57 item 16: a checkpoint planted in a (shared) run folder is data, never code.

Each loader of a run-folder checkpoint is handed a file whose pickle would create a marker folder
when unpickled (what `torch.load(weights_only=False)` or `np.load(allow_pickle=True)` would do);
the loader refuses it with one clear error (or, for a cache, makes the outputs again) and the
marker never appears.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from rich.console import Console

from iclr26.core.errors import UserError
from iclr26.core.system import RunContext

SRC = Path(__file__).resolve().parents[2] / "src" / "iclr26"


class Payload:
    """Unpickled, this calls os.mkdir(marker): code that runs from the file."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple:
        return (os.mkdir, (self.marker,))


def plant(path: Path, marker: Path) -> None:
    """A checkpoint-shaped torch file with the payload inside."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": Payload(marker), "config": {}, "epoch": 1, "step": 1}, path)


def quiet_ctx(folder: Path) -> RunContext:
    return RunContext(folder, console=Console(quiet=True))


# Each site: (tmp folder) -> (where its loader reads the checkpoint, a call that reaches the load).
Site = Callable[[Path], tuple[Path, Callable[[], object]]]


def deepfaith_supervision(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.deepfaith import SYSTEM
    from iclr26.deepfaith.system import run_task

    ctx = quiet_ctx(tmp / "run")
    return ctx.checkpoint_dir / "wine-supervision.pt", lambda: run_task(SYSTEM.config("smoke"), "wine", ctx)


def deepfaith_training(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.deepfaith.explainer import AmortizedExplainer
    from iclr26.deepfaith.supervision import SupervisedPairs
    from iclr26.deepfaith.tasks import load_task
    from iclr26.deepfaith.train import ExplainerTrainConfig, train_explainer
    from tests.deepfaith.test_train_system import SMALL

    task = load_task("wine", seed=0)
    x = task.x_train[:8]
    empty = torch.zeros(0, dtype=torch.long)
    pairs = SupervisedPairs(empty, empty, torch.zeros(0, task.space.d), ())
    cfg = ExplainerTrainConfig(epochs=1, batch_size=8, objective="local", lc_runs=2)
    ckpt = tmp / "explainer.pt"
    explainer = AmortizedExplainer(task.space, task.classes, SMALL)
    return ckpt, lambda: train_explainer(
        explainer, task.model, x, task.predict(x), pairs, cfg, checkpoint=ckpt
    )


def vff_training(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.vff.models import VideoFourierField
    from iclr26.vff.train import TrainConfig, train_model
    from tests.vff.test_field import SMALL

    cfg = TrainConfig(steps=1, batch=1, lr_frames=2, lr_size=8, queries=16, checkpoint_every=1, warmup=1)
    ckpt = tmp / "c.pt"
    model = VideoFourierField(SMALL, frequencies=8)
    return ckpt, lambda: train_model(model, ("astronaut",), cfg, seed=0, checkpoint=ckpt)


def glow_drrn(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.glow.drrn import CHECKPOINT_NAME, train_drrn
    from tests.glow.test_drrn import FAKE
    from tests.glow.test_explore import CorridorGame

    return tmp / CHECKPOINT_NAME, lambda: train_drrn(CorridorGame(), FAKE, tmp, 20)


def laplacianformer_training(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.laplacianformer.data import load_task
    from iclr26.laplacianformer.train import TrainConfig, train_classifier
    from iclr26.laplacianformer.vit import VisionTransformer

    model = VisionTransformer(32, 4, 1, 2, dim=16, depth=1, heads=2, landmarks=8)
    ckpt = tmp / "ck.pt"
    task = load_task("lfw", seed=0)
    return ckpt, lambda: train_classifier(
        model, task, TrainConfig(epochs=1, batch_size=32), seed=0, checkpoint=ckpt
    )


def slt_training(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.slt_reliability.train import CHECKPOINT, TrainConfig, train_translator
    from tests.slt_reliability.test_models import TINY, fake_corpus

    cfg = TrainConfig(epochs=1, seed=0, **TINY)
    return tmp / CHECKPOINT, lambda: train_translator("gloss_based", fake_corpus(n=4), cfg, tmp)


def slt_loading(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.slt_reliability.train import load_translator

    return tmp / "last.pt", lambda: load_translator(tmp / "last.pt")


def lfqa_e_evaluator(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.lfqa_e.evaluator import EvaluatorConfig, train_evaluator
    from tests.lfqa_e.test_reward_evaluator import _comparisons

    cfg = EvaluatorConfig(steps=2, batch_size=2, max_length=16, checkpoint_every=1)
    return tmp / "ev" / "checkpoint.pt", lambda: train_evaluator(_comparisons(4), tmp / "ev", cfg)


def spatial_dise_loading(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.spatial_dise.scorer import load_scorer

    return tmp / "best.pt", lambda: load_scorer(tmp / "best.pt")


def spatial_dise_training(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.spatial_dise.scorer import train_scorer
    from tests.spatial_dise.test_scorer import FAST, toy_prepared

    return tmp / "last.pt", lambda: train_scorer(toy_prepared(8, 0), toy_prepared(4, 1), FAST, tmp)


def rlvr_steps(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.rlvr.experiment import Experiment
    from iclr26.rlvr.loop import train_steps
    from tests.rlvr.test_experiment import _cfg

    trainer = Experiment(_cfg(), quiet_ctx(tmp)).trainer()
    ckpt = tmp / "rl.pt"
    return ckpt, lambda: train_steps(trainer, "addition", (1,), 1, 0, ckpt, lambda n: None)


def rlvr_sft(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from iclr26.rlvr.experiment import Experiment
    from tests.rlvr.test_experiment import _cfg

    ctx = quiet_ctx(tmp)
    return ctx.checkpoint_dir / "sft.pt", Experiment(_cfg(), ctx).pretrain


SITES: dict[str, Site] = {
    "deepfaith/system.py supervision cache": deepfaith_supervision,
    "deepfaith/train.py": deepfaith_training,
    "vff/train.py": vff_training,
    "glow/drrn.py": glow_drrn,
    "laplacianformer/train.py": laplacianformer_training,
    "slt_reliability/train.py train_translator": slt_training,
    "slt_reliability/train.py load_translator": slt_loading,
    "lfqa_e/evaluator.py": lfqa_e_evaluator,
    "spatial_dise/scorer.py load_scorer": spatial_dise_loading,
    "spatial_dise/scorer.py train_scorer": spatial_dise_training,
    "rlvr/loop.py": rlvr_steps,
    "rlvr/sft.py": rlvr_sft,
}


@pytest.mark.parametrize("site", SITES.values(), ids=SITES.keys())
def test_a_planted_checkpoint_is_refused_and_runs_nothing(tmp_path: Path, site: Site) -> None:
    marker = tmp_path / "pwned"
    path, reach = site(tmp_path)
    plant(path, marker)
    with pytest.raises(UserError, match=re.escape(str(path)) + ".*not loaded") as err:
        reach()
    assert "\n" not in str(err.value)  # one line, as the CLI prints it
    assert not marker.exists(), "the checkpoint's pickle ran code"


def test_load_checkpoint_keeps_plain_state_and_rng(tmp_path: Path) -> None:
    """What the trainers save (tensors, optimiser state, RNG states, numbers, strings) loads back."""
    from iclr26.core.checkpoint import load_checkpoint, save_checkpoint

    gen = torch.Generator().manual_seed(3)
    state = {
        "model": {"w": torch.ones(2)},
        "rng": np.random.default_rng(5).bit_generator.state,
        "gen": gen.get_state(),
        "history": [{"loss": 0.5, "epoch": 1}],
        "curve": [(1, 2)],
        "config": {"kind": "x", "sizes": (1, 2), "rate": None},
    }
    save_checkpoint(tmp_path / "s.pt", state)
    got = load_checkpoint(tmp_path / "s.pt")
    assert torch.equal(got["gen"], state["gen"]) and got["rng"] == state["rng"]
    assert got["history"] == state["history"] and got["config"] == state["config"]


def test_no_loader_in_the_package_unpickles() -> None:
    """Every torch checkpoint is read through `load_checkpoint`; no load allows pickle."""
    bad = re.compile(r"weights_only\s*=\s*False|allow_pickle\s*=\s*True|pickle\.loads?\(|(?<!`)torch\.load\(")
    found = [
        f"{p.relative_to(SRC)}:{n}"
        for p in SRC.rglob("*.py")
        if p != SRC / "core" / "checkpoint.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if bad.search(line)
    ]
    assert found == []
