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
    claim = record.report.claim_check
    assert claim.metric.startswith("overthinking tokens") and not claim.higher_is_better
    assert (claim.method, claim.baseline, claim.verdict) == ("grpo+repro", "grpo", "not tested")  # 1 seed
    cells = read_cells(run_dir / CELLS_FILE)
    assert sorted(cells) == [("grpo", "s0"), ("grpo+repro", "s0"), ("pretrained", "s0")]
    floor = cells[("pretrained", "s0")].metrics
    assert floor["history"] == [] and [r[2] for r in table.rows[:2]] == [
        floor["eval"][lv]["pass@1"] for lv in "12"
    ]
    standard = record.report.tables[2]
    assert [r[:2] for r in standard.rows] == [
        ["grpo+repro", "method"],
        ["grpo", "baseline"],
        ["pretrained", "floor (untrained)"],
    ]
    assert (run_dir / "training_curves.png").exists()
    again, _ = run_system(SYSTEM, "smoke", out=run_dir)  # finished cells are read back
    assert again.report.tables[0] == table


def test_claim_is_fewer_overthinking_tokens_with_the_untrained_floor(tmp_path):
    from rich.console import Console

    from iclr26.core.claim import judge
    from iclr26.core.system import RunContext
    from iclr26.repro_reward import SYSTEM
    from iclr26.repro_reward.system import study
    from iclr26.rlvr.experiment import Experiment

    cfg = SYSTEM.config("smoke", {"seeds": "3"})
    st = study(cfg, Experiment(cfg, RunContext(tmp_path, console=Console(quiet=True))))
    (claim,) = st.claims
    assert (claim.method, claim.baselines, claim.floor_arm, claim.higher_is_better) == (
        "grpo+repro",
        ("grpo",),
        "pretrained",
        False,
    )
    keys = ("s0", "s1", "s2")
    floor = dict.fromkeys(keys, 5.0)
    fewer, more = dict(zip(keys, (1.0, 1.5, 0.5), strict=True)), dict(zip(keys, (3.0, 4.0, 3.5), strict=True))
    assert judge(claim, "grpo", fewer, more, floor).verdict == "held"
    assert judge(claim, "grpo", more, fewer, floor).verdict == "did not hold"
    # RL left both arms at or above the warm start's overthinking on every seed: nothing to compare
    assert judge(claim, "grpo", dict.fromkeys(keys, 6.0), dict.fromkeys(keys, 5.0), floor).verdict == (
        "uninformative"
    )


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
    assert sorted(read_cells(run_dir / CELLS_FILE)) == [
        ("grpo", "s0"),
        ("grpo+repro", "s0"),
        ("pretrained", "s0"),
    ]


def test_nested_configs_take_dotted_overrides():
    from iclr26.repro_reward import SYSTEM

    cfg = SYSTEM.config("smoke", {"grpo.lr": "1e-5", "repro.top_k": "5", "sft.steps": "7"})
    assert (cfg.grpo.lr, cfg.repro.top_k, cfg.sft.steps) == (1e-5, 5, 7)
    assert cfg.repro.stop == "A:"  # still the testbed's format
