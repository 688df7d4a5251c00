"""Does generated data teach? The Siamese scorer compares the options jointly (permuting the options
permutes the scores), learns a task a shared encoder can solve (the option equal to the question),
the item shards resume and nest, and the study runs end to end with its floors, its question-blind
control and its claims."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.core.runner import run_system
from iclr26.spatial_dise import SYSTEM
from iclr26.spatial_dise.learning_curve import arm_name
from iclr26.spatial_dise.teach import (
    Items,
    SiameseScorer,
    TeachConfig,
    accuracy,
    load_items,
    majority_letter,
    make_scorer,
    train,
)


def test_permuting_the_options_permutes_the_scores() -> None:
    torch.manual_seed(0)
    model = SiameseScorer(width=4, embed=16, image_size=32).eval()
    q = torch.randint(0, 255, (5, 1, 32, 32), dtype=torch.uint8)
    o = torch.randint(0, 255, (5, 4, 32, 32), dtype=torch.uint8)
    perm = torch.tensor([2, 0, 3, 1])
    with torch.no_grad():
        assert torch.allclose(model(q, o)[:, perm], model(q, o[:, perm]), atol=1e-5)


def _copy_task(n: int, seed: int, size: int = 16) -> Items:
    """The answer is the question's panel; the distractors are other random panels."""
    g = torch.Generator().manual_seed(seed)
    panels = (torch.rand(n, 5, size, size, generator=g) > 0.6).to(torch.uint8) * 255
    answers = torch.randint(0, 4, (n,), generator=g)
    options = panels[:, 1:].clone()
    options[torch.arange(n), answers] = panels[:, 0]
    return Items(panels[:, :1].contiguous(), options, answers)


def test_the_scorer_learns_a_task_its_encoder_can_solve(tmp_path) -> None:
    cfg = TeachConfig(image_size=16, width=4, embed=16, budget=3200, batch_size=32, evals=2, lr=3e-3)
    before = accuracy(make_scorer(cfg, 0), _copy_task(200, 2))
    run = train(_copy_task(400, 1), _copy_task(100, 3), cfg, 0, tmp_path / "ck")
    assert accuracy(run.model, _copy_task(200, 2)) > max(0.6, before + 0.3)
    again = train(_copy_task(400, 1), _copy_task(100, 3), cfg, 0, tmp_path / "ck")  # resumes: nothing to do
    assert again.best_step == run.best_step and again.best_val == run.best_val


def test_shards_resume_and_a_smaller_set_is_the_head_of_a_larger(tmp_path) -> None:
    cfg = TeachConfig(image_size=32, shard_items=3, tasks=("2d_rotation",))
    small = load_items(tmp_path, "2d_rotation", "train", 4, cfg)
    big = load_items(tmp_path, "2d_rotation", "train", 6, cfg)
    assert len(small) == 4 and len(big) == 6
    assert torch.equal(big.options[:4], small.options) and torch.equal(big.answers[:4], small.answers)
    assert len(list((tmp_path / "2d_rotation-32px-seed0").glob("train-*.npz"))) == 2
    assert small.questions.shape[1] == 1  # the unused question channels are dropped


def test_majority_letter_and_bad_configs() -> None:
    assert majority_letter([1, 2, 2, 0]) == 2
    with pytest.raises(ConfigError):
        TeachConfig(sizes=(4000, 1000))
    with pytest.raises(ConfigError):
        TeachConfig(caps=("2d_folding:10",))
    assert TeachConfig(caps=("3d_rotation:4000",)).sizes_of("3d_rotation") == (1000, 4000)


def test_the_study_runs_with_floors_claims_and_resumes(tmp_path) -> None:
    sets = {"experiment": "teach", "teach.tasks": "[2d_rotation]", "teach.sizes": "[6,12]",
            "teach.test_items": "5", "teach.val_items": "4", "teach.budget": "24", "teach.batch_size": "4",
            "teach.shard_items": "12", "teach.image_size": "32", "teach.evals": "2"}  # fmt: skip
    record, _ = run_system(SYSTEM, "smoke", sets, out=tmp_path / "run")
    assert record.status == "complete"
    checks = record.report.claim_check
    assert checks is not None and checks.method == arm_name("2d_rotation", 12)
    standard = next(t for t in record.report.tables if t.title.endswith("mean over units"))
    rows = {r[0]: r for r in standard.rows}
    assert {
        "chance",
        "majority",
        "untrained",
        "oracle",
        "null",
        "2d_rotation@6",
        "2d_rotation@12",
        "2d_rotation@12-blind",
    } <= rows.keys()
    assert rows["oracle"][3] == 1.0 and rows["null"][3] == 0.0
    claims = next(t for t in record.report.tables if t.title.startswith("Claim checks"))
    pairs = {(r[1], r[2]) for r in claims.rows}
    assert ("2d_rotation@12", "2d_rotation@6") in pairs and ("2d_rotation@6", "untrained") in pairs
    assert ("2d_rotation@12", "2d_rotation@12-blind") in pairs
    again, _ = run_system(SYSTEM, "smoke", sets, out=tmp_path / "run")  # every cell resumes
    assert again.report.claim_check.verdict == checks.verdict
    assert np.isfinite(checks.method_value)
