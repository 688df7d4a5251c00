import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.core.optim import OptimConfig, adamw_warmup_cosine, clip_gradients
from iclr26.core.schedule import warmup_cosine
from iclr26.vff.train import TrainConfig as VffTrain
from iclr26.vincie.train import TrainConfig as VincieTrain


def _param(grad: float) -> torch.nn.Parameter:
    p = torch.nn.Parameter(torch.zeros(4))
    p.grad = torch.full((4,), grad)
    return p


def test_the_schedule_warms_up_then_decays_to_its_floor():
    p = _param(0.0)
    opt, sched = adamw_warmup_cosine([p], OptimConfig(lr=0.1, warmup=3), total_steps=10, floor=0.1)
    lrs = []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.1 * warmup_cosine(s, 3, 10, 0.1) for s in range(10)])
    assert lrs[0] < lrs[2] and lrs[3] == pytest.approx(0.1) and lrs[-1] < lrs[3]


def test_clip_bounds_the_norm_and_zero_turns_it_off():
    p = _param(10.0)  # norm 20
    clip_gradients([p], OptimConfig(grad_clip=1.0))
    assert float(p.grad.norm()) == pytest.approx(1.0)
    q = _param(10.0)
    clip_gradients([q], OptimConfig(grad_clip=0.0))
    assert float(q.grad.norm()) == pytest.approx(20.0)


@pytest.mark.parametrize("field", ["lr", "weight_decay", "warmup", "grad_clip"])
def test_bad_values_are_config_errors(field):
    with pytest.raises(ConfigError):
        OptimConfig(**{field: -1})


def test_the_systems_share_the_fields_and_keep_their_defaults():
    for cfg, wd, warm in ((VffTrain(), 1e-4, 20), (VincieTrain(), 0.0, 50)):
        assert isinstance(cfg, OptimConfig)
        assert (cfg.lr, cfg.weight_decay, cfg.warmup, cfg.grad_clip) == (1e-3, wd, warm, 1.0)
    with pytest.raises(ConfigError):
        VffTrain(grad_clip=-0.5)
