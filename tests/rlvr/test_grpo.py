import dataclasses

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


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
def test_per_token_advantages_broadcast_like_per_sequence(loss_type):
    cfg = GRPOConfig(loss_type=loss_type, max_new_tokens=4)
    g = torch.Generator().manual_seed(0)
    old = torch.randn(3, 4, generator=g)
    logp = (old + 0.3 * torch.randn(3, 4, generator=g)).requires_grad_()  # ratios inside and outside the clip
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]])
    adv = torch.tensor([1.0, -2.0, 0.5])
    losses, grads = [], []
    for a in (adv, adv[:, None], adv[:, None].expand(3, 4)):  # (N,), (N, 1), (N, T)
        loss = grpo_loss(logp, old, a, mask, cfg)
        (grad,) = torch.autograd.grad(loss, logp)
        losses.append(loss.detach())
        grads.append(grad)
    assert torch.equal(losses[0], losses[1]) and torch.equal(losses[0], losses[2])
    assert torch.equal(grads[0], grads[1]) and torch.equal(grads[0], grads[2])
    with pytest.raises(ValueError, match=r"advantages must be \(N,\) or \(N, T\)"):
        grpo_loss(logp, old, adv[:, None, None], mask, cfg)


def test_per_token_advantages_known_value():
    # ratio = 1: per-token loss = −A_t; grpo = mean over sequences of the per-sequence token mean
    logp = torch.zeros(2, 3)
    adv = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 5.0, 7.0]])
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    assert float(grpo_loss(logp, logp, adv, mask, GRPOConfig())) == pytest.approx((-2 + 1) / 2)


def _reward_even_sum(groups, step, gen):
    """A test guide: reward rollouts whose token ids have an even sum (non-zero advantages)."""
    return [[dataclasses.replace(r, reward=float(sum(r.completion_ids) % 2 == 0)) for r in g] for g in groups]


def test_token_advantages_hook_is_used_and_checked():
    tok = CharTokenizer()
    cfg = GRPOConfig(group_size=4, questions_per_step=2, max_new_tokens=8)
    problems = make_problems("addition", 2, 2, 0)
    seen = []

    def broadcast(rollouts, adv, entropy):  # per-token advantages equal to the outcome advantage
        seen.append((len(rollouts), tuple(adv.shape), tuple(entropy.shape), entropy.requires_grad))
        return adv[:, None].expand_as(entropy).clone()

    params = {}
    for name, hook in (("none", None), ("broadcast", broadcast)):
        torch.manual_seed(0)
        model = CharTransformer(ModelConfig(tok.vocab_size, 32, 1, 2, 96))
        trainer = GRPOTrainer(CharPolicy(model, tok), cfg, guide=_reward_even_sum, token_advantages=hook)
        start = [p.detach().clone() for p in model.parameters()]
        trainer.step(problems, torch.Generator().manual_seed(0))
        params[name] = [p.detach().clone() for p in model.parameters()]
    assert any(not torch.equal(a, b) for a, b in zip(start, params["none"], strict=True))  # it trained
    assert seen and seen[0][:2] == (8, (8,)) and seen[0][2][0] == 8 and not seen[0][3]
    assert all(torch.equal(a, b) for a, b in zip(params["none"], params["broadcast"], strict=True))
    bad = GRPOTrainer(CharPolicy(model, tok), cfg, token_advantages=lambda r, a, e: a[:, None])
    with pytest.raises(ValueError, match="token_advantages returned shape"):
        bad.step(problems, torch.Generator().manual_seed(0))


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
@pytest.mark.parametrize("hooked", [False, True])
def test_micro_batches_give_the_full_batch_update(loss_type, hooked):
    tok = CharTokenizer()
    problems = make_problems("addition", 2, 2, 0)

    def by_entropy(rollouts, adv, entropy):  # uses every row's entropies, as RePro's hook does
        return adv[:, None] + 0.1 * entropy

    out = {}
    for micro in (0, 3):  # 8 rollouts: one pass, or chunks of 3, 3 and 2
        cfg = GRPOConfig(
            group_size=4, questions_per_step=2, max_new_tokens=8, loss_type=loss_type, micro_batch=micro
        )
        torch.manual_seed(0)
        model = CharTransformer(ModelConfig(tok.vocab_size, 32, 1, 2, 96))
        trainer = GRPOTrainer(
            CharPolicy(model, tok),
            cfg,
            guide=_reward_even_sum,
            token_advantages=by_entropy if hooked else None,
        )
        metrics = trainer.step(problems, torch.Generator().manual_seed(0))
        out[micro] = (metrics, [p.detach().clone() for p in model.parameters()])
    (m0, p0), (m3, p3) = out[0], out[3]
    assert m0["loss"] == pytest.approx(m3["loss"], rel=1e-5, abs=1e-7)
    assert m0["entropy"] == pytest.approx(m3["entropy"], rel=1e-5)
    for a, b in zip(p0, p3, strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
