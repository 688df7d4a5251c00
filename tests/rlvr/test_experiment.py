"""The shared RLVR experiment harness: named seed streams, evaluation, arms and their reuse."""

import dataclasses

import pytest
import torch
from rich.console import Console

from iclr26.core import ConfigError
from iclr26.core.ledger import CELLS_FILE, read_cells
from iclr26.core.system import RunContext
from iclr26.rlvr.experiment import SEED_STREAMS, Arm, Experiment, RLVRConfig, stream_seed
from iclr26.rlvr.grpo import GRPOConfig
from iclr26.rlvr.policies import PolicyConfig
from iclr26.rlvr.sft import SFTConfig
from iclr26.rlvr.tasks import make_problems


def _cfg(**changes) -> RLVRConfig:
    base = RLVRConfig(
        policy=PolicyConfig(dim=32, layers=1, heads=2, max_len=96),
        sft=SFTConfig(steps=2, batch_size=4),
        grpo=GRPOConfig(group_size=2, questions_per_step=2, max_new_tokens=8),
        rl_steps=2,
        train_levels=(1,),
        eval_levels=(1, 2),
        eval_problems=2,
        eval_k=2,
    )
    return dataclasses.replace(base, **changes)


def test_seed_streams_keep_the_historic_numbers():
    # the seeds both systems used before the harness existed: results stay identical
    assert stream_seed("init", 3) == stream_seed("pretrain", 3) == stream_seed("rl", 3) == 3
    assert stream_seed("eval", 3) == 10_003
    assert stream_seed("heldout", 4) == 99_004
    assert {s.key for s in SEED_STREAMS.values()} == {"seed", "level"}
    with pytest.raises(ConfigError, match="stream must be one of"):
        stream_seed("test", 0)
    with pytest.raises(ConfigError, match="level must be an int >= 0"):
        stream_seed("heldout", -1)


def test_config_checks_name_the_field():
    with pytest.raises(ConfigError, match="task must be one of"):
        _cfg(task="chess")
    with pytest.raises(ConfigError, match="seeds must be an int >= 1, got 0"):
        _cfg(seeds=0)
    with pytest.raises(ValueError, match="eval_levels must be non-empty addition levels"):
        _cfg(eval_levels=())


def test_evaluate_uses_the_eval_and_heldout_streams(tmp_path):
    cfg = _cfg()
    exp = Experiment(cfg, RunContext(tmp_path, console=Console(quiet=True)))
    trainer = exp.trainer()
    got = exp.evaluate(trainer, seed=5)
    gen = torch.Generator().manual_seed(10_005)
    want = {
        str(lv): trainer.evaluate(make_problems("addition", lv, 2, seed=99_000 + lv), 2, gen) for lv in (1, 2)
    }
    assert got == want
    assert exp.heldout(2) == make_problems("addition", 2, 2, seed=99_002)


def test_arms_train_every_method_and_seed_and_are_reused(tmp_path):
    cfg = _cfg(seeds=2, seed=1)
    ctx = RunContext(tmp_path, console=Console(quiet=True))
    exp = Experiment(cfg, ctx)
    exp.pretrain()
    calls = []

    def setup(method, trainer):
        calls.append(method)
        return Arm(record=lambda: {"mine": 1.0}, summary=lambda: {"method": method})

    records = exp.run_arms(("a", "b+c"), setup, describe=lambda rec: "done")
    assert calls == ["a", "b+c", "a", "b+c"]  # seed after seed
    cells = [(c.arm, c.unit) for c in read_cells(tmp_path / CELLS_FILE).values()]
    assert cells == [("a", "s1"), ("b+c", "s1"), ("a", "s2"), ("b+c", "s2")]  # one cell per run
    for method in ("a", "b+c"):
        assert len(records[method]) == 2
        for rec in records[method]:
            assert rec["extra"] == {"method": method}
            assert [h["step"] for h in rec["history"]] == [1, 2] and rec["history"][0]["mine"] == 1.0
            assert set(rec["eval"]) == {"1", "2"}
    again = exp.run_arms(("a", "b+c"), setup)
    assert calls == ["a", "b+c", "a", "b+c"] and again == records  # finished runs are read back


def test_a_floor_arm_is_the_untrained_policy_evaluated_once_per_seed(tmp_path):
    from iclr26.core.study import Arm as StudyArm
    from iclr26.core.study import Unit

    ctx = RunContext(tmp_path, console=Console(quiet=True))
    exp = Experiment(_cfg(seeds=2, seed=1), ctx)
    exp.pretrain()
    assert [(u.key, u.seed) for u in exp.units()] == [("s1", 1), ("s2", 2)]
    calls = []
    measure = exp.measure(lambda method, trainer: calls.append(method) or Arm())
    before = {k: v.clone() for k, v in exp.policy.module.state_dict().items()}
    floor = measure(StudyArm("untrained", "floor", floor="untrained"), Unit("s2", 2), ctx)
    assert calls == [] and floor["history"] == [] and floor["extra"] == {}
    assert floor["eval"] == exp.evaluate(exp.trainer(), 2)  # the warm start, seed 2's evaluation samples
    assert floor["eval"] is exp.untrained(2)  # computed once
    trained = measure(StudyArm("grpo", "method"), Unit("s2", 2), ctx)
    assert calls == ["grpo"] and len(trained["history"]) == 2
    assert all(torch.equal(before[k], v) for k, v in exp.policy.module.state_dict().items())  # RL on a copy


def test_no_warm_start_and_natural_prompts(tmp_path):
    cfg = _cfg(
        sft=SFTConfig(steps=0, batch_size=4),
        style="natural",
        task="gsm",
        policy=PolicyConfig(dim=32, layers=1, heads=2, max_len=320),  # a story prompt is ~250 characters
    )
    exp = Experiment(cfg, RunContext(tmp_path, console=Console(quiet=True)))
    before = {k: v.clone() for k, v in exp.policy.module.state_dict().items()}
    assert exp.pretrain()["seconds"] == 0.0
    assert all(torch.equal(before[k], v) for k, v in exp.policy.module.state_dict().items())
    assert not (tmp_path / "checkpoints" / "sft.pt").exists()
    held = exp.heldout(1)
    assert all(p.style == "natural" and p.task == "gsm" for p in held)
    assert held == make_problems("gsm", 1, 2, seed=99_001, style="natural")
    records = exp.run_arms(("grpo",), lambda method, trainer: Arm())
    assert len(records["grpo"][0]["history"]) == cfg.rl_steps
    with pytest.raises(ConfigError, match="style must be one of"):
        _cfg(style="prose")


def test_checkpoint_every_step_resumes_where_it_stopped(tmp_path):
    """With `checkpoint_every=1` an interrupted run loses no finished step and continues bitwise."""
    from iclr26.rlvr.loop import train_steps

    cfg = _cfg(rl_steps=3, checkpoint_every=1)
    exp = Experiment(cfg, RunContext(tmp_path, console=Console(quiet=True)))

    def run(ckpt, stop_after=None):
        trainer, done = exp.trainer(), []

        def advance(n):
            done.append(n)
            if stop_after is not None and len(done) == stop_after:
                raise KeyboardInterrupt

        history = train_steps(
            trainer, "addition", (1,), 3, 7, ckpt, advance, checkpoint_every=cfg.checkpoint_every
        )
        return trainer, history, done

    straight, history, _ = run(tmp_path / "a.pt")
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "b.pt", stop_after=2)
    assert torch.load(tmp_path / "b.pt", weights_only=True)["trainer"]["step"] == 2
    resumed, again, done = run(tmp_path / "b.pt")
    assert done == [2, 1]  # two steps read back, one trained
    assert [h["step"] for h in again] == [1, 2, 3]
    assert [h["reward"] for h in again] == [h["reward"] for h in history]
    for x, y in zip(
        straight.policy.module.state_dict().values(), resumed.policy.module.state_dict().values(), strict=True
    ):
        assert torch.equal(x, y)
    with pytest.raises(ConfigError, match="checkpoint_every must be an int >= 1"):
        _cfg(checkpoint_every=0)
