"""Process rewards and per-token advantages on hand-computed examples, and RePro inside a GRPO step."""

import math

import pytest
import torch
from torch import nn

from iclr26.repro_reward.process_reward import (
    ReProAdvantage,
    ReProConfig,
    combine_advantages,
    normalize_process_rewards,
    process_rewards,
    repro_advantages,
)
from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer
from iclr26.rlvr.model import CharTransformer, ModelConfig
from iclr26.rlvr.policy import CharPolicy
from iclr26.rlvr.tasks import make_problems
from iclr26.rlvr.tokenizer import CharTokenizer


class ScriptedPolicy:
    """A scripted stand-in for a policy, not a language model: one token per character (<eos> = 0),
    and every answer token's log-prob is −2 / (number of newlines in the prompt row), so J_b = −2
    for a one-line question and J rises with each reasoning line kept in the prefix."""

    eos_id = pad_id = 0

    def __init__(self):
        self.module = nn.Linear(1, 1)

    def encode_target(self, text):
        return [ord(c) for c in text] + [0]

    def decode(self, ids):
        ids = list(ids)
        return "".join(map(chr, ids[: ids.index(0)] if 0 in ids else ids))

    def token_logprobs(self, prompts, completions, *, module=None):
        width = max(len(c) for c in completions)
        logp = torch.zeros(len(prompts), width)
        mask = torch.zeros(len(prompts), width, dtype=torch.bool)
        for i, (p, c) in enumerate(zip(prompts, completions, strict=True)):
            logp[i, : len(c)] = -2.0 / self.decode(p).count("\n")
            mask[i, : len(c)] = True
        return logp, mask, torch.zeros(len(prompts), width)


def test_process_rewards_and_normalisation():
    torch.testing.assert_close(
        process_rewards(torch.tensor([0.2, 0.5, 0.4])), torch.tensor([0.3, -0.1]).double()
    )
    r = [torch.tensor([1.0, 3.0]), torch.tensor([-1.0, 1.0]), torch.tensor([5.0]), torch.tensor([])]
    # group 1 pools {1, 3, −1, 1}: mean 1, std √2; group 2 pools {5}: std 0 → (5 − 5)/ε = 0
    g = normalize_process_rewards(r, "group", group_size=2, eps=0.0)
    torch.testing.assert_close(torch.cat(g[:2]), torch.tensor([0, 2, -2, 0]).double() / math.sqrt(2))
    assert g[2].tolist() == [0.0] and g[3].numel() == 0
    b = normalize_process_rewards(r, "batch", eps=0.0)  # {1, 3, −1, 1, 5}: mean 1.8
    assert float(torch.cat(b).mean()) == pytest.approx(0.0, abs=1e-12)
    assert normalize_process_rewards(r, "none")[0].tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="group_size dividing the 4 responses"):
        normalize_process_rewards(r, "group", group_size=3)


def test_combine_advantages_hand_example():
    # row 0: rewards 0.2 (segment ending at token 1) and −0.4 (ending at token 3); row 1: 0.6 at token 2
    adv = combine_advantages(
        torch.tensor([1.0, -1.0]), [[0.2, -0.4], [0.6]], [[1, 3], [2]], width=6, alpha=0.5
    )
    want = torch.tensor(
        [
            [1 + 0.5 * (0.2 - 0.4)] * 2 + [1 + 0.5 * -0.4] * 2 + [1.0] * 2,
            [-1 + 0.5 * 0.6] * 3 + [-1.0] * 3,
        ]
    )
    torch.testing.assert_close(adv, want)
    with pytest.raises(ValueError, match=r"outside 0\.\.5"):
        combine_advantages(torch.tensor([1.0]), [[0.2]], [[6]], width=6, alpha=0.5)


def test_repro_advantages_hand_example():
    """Segments → top-k by first-token entropy → J̃ → S → r → group-normalised r̃ → A + α·return."""
    policy = ScriptedPolicy()
    texts = ["a\nb\nA:1\n", "a\nbb\nc\nA:1\n"]
    comps = [policy.encode_target(t) for t in texts]
    width = max(map(len, comps))
    entropy = torch.zeros(2, width)
    entropy[1, [0, 2, 5]] = torch.tensor([1.0, 0.2, 3.0])  # row 1: scores segments 0 and 2 ("a", "c")
    cfg = ReProConfig.arithmetic(top_k=2, w=0.25, alpha=0.1, norm_eps=0.0)
    adv, info = repro_advantages(
        policy,
        [policy.encode_target("Q\n")[:-1]] * 2,
        comps,
        ["1", "1"],
        torch.tensor([0.5, -0.5]),
        entropy,
        cfg,
        2,
    )
    assert info["selected"] == [[0, 1], [0, 2]]
    # J after 0, 1, 2 lines: −2, −1, −2/3 (row 0); after 0, 1, 3 lines: −2, −1, −1/2 (row 1)
    torch.testing.assert_close(info["J"][0], torch.tensor([-2.0, -1.0, -2 / 3]))
    torch.testing.assert_close(info["J"][1], torch.tensor([-2.0, -1.0, -0.5]))

    def S(ratio, stab):  # (1 − w)(1 − tanh(J/J_b)) + w·S_stab; J rises in both rows: S_stab 0.5, 1, 1
        return 0.75 * (1 - math.tanh(ratio)) + 0.25 * stab

    s0 = [S(1, 0.5), S(1 / 2, 1), S(1 / 3, 1)]
    s1 = [S(1, 0.5), S(1 / 2, 1), S(1 / 4, 1)]
    r = torch.tensor([s0[1] - s0[0], s0[2] - s0[1], s1[1] - s1[0], s1[2] - s1[1]], dtype=torch.float64)
    rn = (r - r.mean()) / r.std(correction=0)
    want = torch.empty(2, width, dtype=torch.float64)
    want[0, :2], want[0, 2:4], want[0, 4:] = 0.5 + 0.1 * (rn[0] + rn[1]), 0.5 + 0.1 * rn[1], 0.5
    want[1, :2], want[1, 2:7], want[1, 7:] = -0.5 + 0.1 * (rn[2] + rn[3]), -0.5 + 0.1 * rn[3], -0.5
    torch.testing.assert_close(adv, want.float())


def test_grpo_step_with_repro_changes_an_untrained_policy():
    """An untrained policy fails every question: outcome advantages are 0 and plain GRPO does not
    move; with RePro the process return alone drives the update."""
    tok = CharTokenizer()
    cfg = GRPOConfig(group_size=4, questions_per_step=2, max_new_tokens=16)
    problems = make_problems("addition", 2, 2, 0)
    moved = {}
    for arm in ("grpo", "repro"):
        torch.manual_seed(0)
        policy = CharPolicy(CharTransformer(ModelConfig(tok.vocab_size, 32, 1, 2, 96)), tok)
        hook = ReProAdvantage(policy, ReProConfig.arithmetic(top_k=4), group_size=cfg.group_size)
        trainer = GRPOTrainer(policy, cfg, token_advantages=hook if arm == "repro" else None)
        before = [p.detach().clone() for p in policy.module.parameters()]
        metrics = trainer.step(problems, torch.Generator().manual_seed(0))
        assert metrics["reward"] == 0
        moved[arm] = any(
            not torch.equal(a, b) for a, b in zip(before, policy.module.parameters(), strict=True)
        )
    assert moved == {"grpo": False, "repro": True}
    assert (
        all(math.isfinite(v) for v in hook.last_metrics.values())
        and hook.last_metrics["repro_process_adv"] > 0
    )


def test_group_norm_needs_the_group_size():
    with pytest.raises(ValueError, match="needs group_size"):
        ReProAdvantage(ScriptedPolicy(), ReProConfig())
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        ReProConfig(alpha=-1)
    with pytest.raises(ValueError, match="must contain"):
        ReProConfig(answer_template="A:")
