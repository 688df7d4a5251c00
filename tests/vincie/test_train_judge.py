"""Training (bitwise resume, one process vs two under torchrun) and the MSE-Bench-style judge."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from iclr26.vincie.judge import PASS_SCORE, TurnScore, cumulative_success, mask_iou, score_turn
from iclr26.vincie.model import ModelConfig
from iclr26.vincie.sequence import ProxyConfig
from iclr26.vincie.train import TrainConfig, train_session_model
from iclr26.vincie.video import edit_session
from tests.torchrun import torchrun

TINY = ModelConfig(image_size=16, width=24, heads=1, separate_blocks=1, shared_blocks=1, max_turns=4)


def test_resume_is_bitwise(tmp_path):
    cfg = TrainConfig(sessions=40, max_images=3, steps=4, batch=3, warmup=1, checkpoint_every=2)
    straight, losses = train_session_model(TINY, ProxyConfig(), cfg, seed=3, checkpoint=tmp_path / "a.pt")
    half = TrainConfig(**{**cfg.__dict__, "steps": 4})
    ckpt = tmp_path / "b.pt"
    # stop after step 2 by raising from the progress callback, then resume from the checkpoint
    with pytest.raises(KeyboardInterrupt):
        train_session_model(TINY, ProxyConfig(), half, seed=3, checkpoint=ckpt, on_step=_stop_at(2))
    assert torch.load(ckpt, weights_only=True)["step"] == 2
    resumed, losses2 = train_session_model(TINY, ProxyConfig(), half, seed=3, checkpoint=ckpt)
    assert losses == losses2
    for (k, a), b in zip(straight.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), k


def _stop_at(step):
    def cb(s, _dt):
        if s == step:
            raise KeyboardInterrupt

    return cb


def test_resume_refuses_another_model(tmp_path):
    cfg = TrainConfig(sessions=10, max_images=3, steps=1, batch=2, warmup=0)
    train_session_model(TINY, ProxyConfig(), cfg, seed=0, checkpoint=tmp_path / "c.pt")
    with pytest.raises(Exception, match="another model"):
        train_session_model(TINY, ProxyConfig(next_mask=False), cfg, seed=0, checkpoint=tmp_path / "c.pt")


def test_two_processes_train_the_same_model_as_one(tmp_path):
    """Per-(step, row) seeds and DDP: torchrun with 2 ranks reproduces the 1-process losses."""
    args = ["run", "vincie", "--preset", "smoke", "--set", "methods=vincie,copy", "--set", "threads=1"]
    one = subprocess.run(
        [sys.executable, "-m", "iclr26.cli", *args, "--out", str(tmp_path / "one")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert one.returncode == 0, one.stderr[-2000:]
    two = torchrun("-m", "iclr26.cli", *args, "--out", tmp_path / "two")
    assert two.returncode == 0, two.stderr[-3000:]

    def losses(run):
        state = torch.load(tmp_path / run / "checkpoints" / "vincie.pt", weights_only=True)
        return state["losses"]

    assert np.allclose(losses("one"), losses("two"), rtol=1e-5, atol=1e-6)


def _session():
    return edit_session(np.random.default_rng(11), 32, 3, "j")[0]


def test_judge_passes_the_truth_and_fails_a_copy():
    s = _session()
    for k in range(3):
        truth = score_turn(
            s.images[k + 1], s.images[k], s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k]
        )
        assert truth.passed and truth.prompt_following == 10 and truth.consistency == 10
        copy = score_turn(
            s.images[k], s.images[k], s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k]
        )
        assert not copy.passed and copy.prompt_following == 0


def test_judge_thresholds():
    s = _session()
    rng = np.random.default_rng(0)
    args = (s.images[0], s.images[0], s.images[1], s.masks_current[0], s.masks_next[0])
    # noise outside the edit lowers consistency below the pass mark; the edit itself still counts
    noisy = np.clip(s.images[1] + rng.normal(0, 0.12, s.images[1].shape), 0, 1)
    sc = score_turn(noisy, *args)
    assert sc.consistency <= PASS_SCORE and not sc.passed
    mild = np.clip(s.images[1] + rng.normal(0, 0.01, s.images[1].shape), 0, 1)
    assert score_turn(mild, *args).passed
    # exactly 6 does not pass: both scores must exceed 6
    edge = TurnScore(6.0, 9.0, 0.6, 0.6, 30, 0.9, 0, 30, 0.9)
    assert not edge.passed and TurnScore(6.01, 6.01, 0, 0, 0, 0, 0, 0, 0).passed


def test_cumulative_success_stops_at_the_first_failure():
    passed = [[True, True, False, True], [True, False, True, True], [False, True, True, True], [True] * 4]
    assert cumulative_success(passed, 4) == [0.75, 0.5, 0.25, 0.25]
    with pytest.raises(ValueError):
        cumulative_success([], 3)


def test_mask_iou():
    a = np.zeros((4, 4), bool)
    b = a.copy()
    assert mask_iou(a, b) == 1.0
    a[:2] = True
    b[1:3] = True
    assert mask_iou(a, b) == pytest.approx(4 / 12)


def test_system_smoke(tmp_path):
    """`iclr26 run vincie --preset smoke` writes the turn-k table, the figures and the outputs."""
    from iclr26.core.runner import run_system
    from iclr26.vincie import SYSTEM

    record, _ = run_system(SYSTEM, "smoke", out=tmp_path / "run")
    assert record.status == "complete"
    table = record.report.tables[0]
    rows = {r[0]: r[1:] for r in table.rows}
    assert rows["oracle (true images)"] == [100.0, 100.0] and rows["copy"] == [0.0, 0.0]
    assert {"vincie", "pairwise"} <= rows.keys()
    assert (tmp_path / "run" / "session.png").exists() and (tmp_path / "run" / "success_at_turn.png").exists()
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert len(scores["vincie"]) == 2 and len(scores["vincie"][0]) == 2


def test_resumed_run_reuses_its_outputs(tmp_path):
    """A second run on the same folder loads the generated images and masks (the figure still draws);
    outputs made under another config are not reused."""
    from iclr26.core.runner import run_system
    from iclr26.vincie import SYSTEM
    from iclr26.vincie.system import _load

    out = tmp_path / "run"
    first, _ = run_system(SYSTEM, "smoke", {"methods": "vincie,copy"}, out=out)
    stamp = (out / "outputs_vincie.npz").stat().st_mtime_ns
    again, _ = run_system(SYSTEM, "smoke", {"methods": "vincie,copy"}, out=out)
    assert (out / "outputs_vincie.npz").stat().st_mtime_ns == stamp
    assert again.report.tables[1].rows == first.report.tables[1].rows
    assert _load(out / "outputs_vincie.npz", "another config") is None


def test_benchmark_edits_are_visible_so_copy_never_passes():
    rng = np.random.default_rng(12)
    for i in range(40):
        s = edit_session(rng, 32, 5, f"v{i}")[0]
        for k in range(5):
            sc = score_turn(
                s.images[k], s.images[k], s.images[k], s.images[k + 1], s.masks_current[k], s.masks_next[k]
            )
            assert not sc.passed, f"session {i} turn {k}: copy passed"
