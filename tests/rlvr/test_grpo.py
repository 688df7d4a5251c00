import pytest
import torch

from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer, group_advantages, grpo_loss, pass_at_k
from iclr26.rlvr.model import CharTransformer, ModelConfig, token_logprobs
from iclr26.rlvr.policy import CharPolicy
from iclr26.rlvr.tasks import make_problems
from iclr26.rlvr.tokenizer import CharTokenizer


def test_group_advantages_known_values():
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
    adv = group_advantages(r)
    std = torch.tensor([1.0, 0, 0, 1]).std()
    torch.testing.assert_close(adv[0], torch.tensor([0.5, -0.5, -0.5, 0.5]) / (std + 1e-4))
    assert torch.equal(adv[1], torch.zeros(4))  # zero variance: zero advantage
    torch.testing.assert_close(group_advantages(r, scale=False)[2], torch.tensor([0.25, 0.25, 0.25, -0.75]))
    with pytest.raises(ValueError, match="group_size >= 2"):
        group_advantages(torch.ones(3, 1))


def test_loss_aggregations():
    cfg = GRPOConfig(max_new_tokens=4)
    logp = torch.log(torch.tensor([[0.5, 0.5, 0.5, 0.5], [0.2, 0.2, 0.2, 0.2]]))
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])
    adv = torch.tensor([1.0, -2.0])
    # ratio = 1: per-token loss = −A
    g = grpo_loss(logp, logp, adv, mask, cfg)
    assert float(g) == pytest.approx((-1 + 2) / 2)
    d = grpo_loss(logp, logp, adv, mask, GRPOConfig(loss_type="dapo", max_new_tokens=4))
    assert float(d) == pytest.approx((2 * -1 + 4 * 2) / 6)
    dr = grpo_loss(logp, logp, adv, mask, GRPOConfig(loss_type="dr_grpo", max_new_tokens=4))
    assert float(dr) == pytest.approx((2 * -1 + 4 * 2) / (2 * 4))


def test_clipping_stops_gradient_beyond_the_trust_region():
    cfg = GRPOConfig()
    old = torch.zeros(1, 1)
    new = torch.full((1, 1), 0.5, requires_grad=True)  # ratio e^0.5 > 1.2, positive advantage
    grpo_loss(new, old, torch.tensor([1.0]), torch.ones(1, 1), cfg).backward()
    assert new.grad.abs().sum() == 0


def test_pass_at_k():
    assert pass_at_k(8, 0, 8) == 0.0 and pass_at_k(8, 1, 8) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)


def test_zero_variance_group_gives_zero_gradient():
    torch.manual_seed(0)
    tok = CharTokenizer()
    model = CharTransformer(ModelConfig(tok.vocab_size, 32, 1, 2, 96))
    trainer = GRPOTrainer(
        CharPolicy(model, tok), GRPOConfig(group_size=4, questions_per_step=2, max_new_tokens=8)
    )
    probs = make_problems("addition", 5, 2, 0)
    groups = trainer.rollouts(probs, torch.Generator().manual_seed(0))
    assert all(r.reward == 0 for g in groups for r in g)  # an untrained model fails everything
    flat = [r for g in groups for r in g]
    adv = group_advantages(torch.tensor([[r.reward for r in g] for g in groups])).flatten()
    logp, mask, _ = token_logprobs(
        model, [r.prompt_ids for r in flat], [r.completion_ids for r in flat], tok.pad_id
    )
    grpo_loss(logp, logp.detach(), adv, mask, trainer.cfg).backward()
    assert all(p.grad is None or p.grad.abs().sum() == 0 for p in model.parameters())


def test_group_size_below_two_is_refused():
    with pytest.raises(ValueError, match="group_size must be >= 2"):
        GRPOConfig(group_size=1)
