"""The overthinking testbed and the `repro_reward` system end to end."""

import numpy as np
import pytest

from iclr26.core.ledger import CELLS_FILE, read_cells
from iclr26.repro_reward.testbed import RECHECK, overthinking_tokens, with_rechecks
from iclr26.rlvr.tasks import make_problems, verify


def test_rechecks_copy_earlier_lines_and_still_verify():
    rng = np.random.default_rng(0)
    problems = make_problems("addition", 3, 200, seed=1)
    out = [with_rechecks(p, rng, p=0.5, max_rechecks=3) for p in problems]
    extra = [len(q.steps) - len(p.steps) for p, q in zip(problems, out, strict=True)]
    assert 0.4 < np.mean([e > 0 for e in extra]) < 0.6  # about half get re-checks
    assert max(extra) == 3 and min(extra) == 0
    for p, q in zip(problems, out, strict=True):
        assert q.steps[: len(p.steps)] == p.steps
        assert all(s.startswith(RECHECK) and s[len(RECHECK) :] in p.steps for s in q.steps[len(p.steps) :])
        assert verify(q, q.solution).reward == 1.0
    with pytest.raises(ValueError, match="max_rechecks"):
        with_rechecks(problems[0], rng, p=0.5, max_rechecks=0)


def test_overthinking_counts_tokens_after_the_last_column_line():
    p = make_problems("addition", 2, 1, seed=0)[0]  # 2 column lines
    plain = p.solution
    assert overthinking_tokens(p, plain) == 0
    rechecked = "".join(s + "\n" for s in p.steps) + f"c:{p.steps[0]}\n" + f"A:{p.answer}\n"
    assert overthinking_tokens(p, rechecked) == len(f"c:{p.steps[0]}") + 1
    assert overthinking_tokens(p, "garbage without an answer") == 0  # one line: nothing past level 2


def test_smoke_preset_end_to_end_and_resume(tmp_path):
    from iclr26.core.runner import run_system
    from iclr26.repro_reward import SYSTEM

    record, run_dir = run_system(SYSTEM, "smoke", out=tmp_path / "run")
    assert record.status == "complete"
    table = record.report.tables[0]
    assert [r[0] for r in table.rows] == ["pretrained"] * 2 + ["grpo"] * 2 + ["grpo+repro"] * 2
    assert record.report.claim_check.metric.startswith("overthinking tokens")
    assert (run_dir / "training_curves.png").exists()
    again, _ = run_system(SYSTEM, "smoke", out=run_dir)  # finished parts are reused
    assert again.report.tables[0] == table


def test_config_errors_name_fields():
    from iclr26.core import ConfigError
    from iclr26.repro_reward import SYSTEM

    with pytest.raises(ConfigError, match="task must be addition or multiplication"):
        SYSTEM.config("demo", {"task": "countdown"})
    with pytest.raises(ConfigError, match="w must be in"):
        SYSTEM.config("demo", {"repro.w": "1.5"})
    with pytest.raises(ConfigError, match="train_levels must be non-empty addition levels"):
        SYSTEM.config("demo", {"train_levels": "13"})


def test_smoke_preset_with_a_hugging_face_checkpoint(tmp_path):
    """`policy=<folder>`: the same testbed, warm start and RePro hook on any local causal LM."""
    from iclr26.core.runner import run_system
    from iclr26.repro_reward import SYSTEM
    from tests.tiny_hf import save_tiny_checkpoint

    ckpt = save_tiny_checkpoint(tmp_path / "tiny")
    over = {"policy.model": str(ckpt), "sft.lr": "1e-3"}
    record, run_dir = run_system(SYSTEM, "smoke", over, out=tmp_path / "r")
    assert record.status == "complete"
    assert sorted(read_cells(run_dir / CELLS_FILE)) == [("grpo", "s0"), ("grpo+repro", "s0")]


def test_nested_configs_take_dotted_overrides():
    from iclr26.repro_reward import SYSTEM

    cfg = SYSTEM.config("smoke", {"grpo.lr": "1e-5", "repro.top_k": "5", "sft.steps": "7"})
    assert (cfg.grpo.lr, cfg.repro.top_k, cfg.sft.steps) == (1e-5, 5, 7)
    assert cfg.repro.stop == "A:"  # still the testbed's format
