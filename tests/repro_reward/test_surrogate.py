"""J̃ scored in batches equals J̃ scored one prefix at a time, on the character transformer and on
a tiny Hugging Face Llama."""

import pytest
import torch

from iclr26.repro_reward.segments import segment_completion
from iclr26.repro_reward.surrogate import answer_ids, surrogate_objective
from iclr26.rlvr.model import CharTransformer, ModelConfig
from iclr26.rlvr.policy import CharPolicy
from iclr26.rlvr.tasks import make_problems
from iclr26.rlvr.tokenizer import CharTokenizer
from tests.tiny_hf import tiny_llama


@torch.no_grad()
def _prefix_by_prefix(policy, prompts, completions, cuts, answers, bridge=()):
    """The reference: one `token_logprobs` call per (response, cut)."""
    out = []
    for p, c, cs, a in zip(prompts, completions, cuts, answers, strict=True):
        row = []
        for cut in cs:
            logp, mask, _ = policy.token_logprobs([[*p, *c[:cut], *bridge]], [a])
            row.append(float(logp[0][mask[0]].mean()))
        out.append(torch.tensor(row))
    return out


class CountingPolicy:
    """Wraps a policy and counts its `token_logprobs` calls."""

    def __init__(self, policy):
        self.inner, self.calls = policy, 0
        self.module, self.eos_id, self.pad_id = policy.module, policy.eos_id, policy.pad_id

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def token_logprobs(self, prompts, completions, **kw):
        self.calls += 1
        return self.inner.token_logprobs(prompts, completions, **kw)


@pytest.fixture(scope="module")
def char():
    torch.manual_seed(0)
    tok = CharTokenizer()
    return CharPolicy(CharTransformer(ModelConfig(tok.vocab_size, 32, 2, 2, 128)), tok)


def test_batched_equals_prefix_by_prefix_on_char_policy(char):
    problems = make_problems("addition", 1, 1, 0) + make_problems("addition", 3, 1, 1)  # unequal lengths
    prompts = [char.encode_prompt(p.prompt) for p in problems]
    comps = [char.encode_target(p.solution) for p in problems]
    cuts = [[*range(0, len(c), 2), len(c)] for c in comps]  # J_b (cut 0) to the whole response
    answers = [answer_ids(char, p.answer) for p in problems]
    bridge = answer_ids(char, "A:")
    policy = CountingPolicy(char)
    char.module.train()
    J = surrogate_objective(policy, prompts, comps, cuts, answers, bridge=bridge, batch_size=16)
    n_pairs = sum(len(c) for c in cuts)
    assert policy.calls == -(-n_pairs // 16) and n_pairs > 25  # few calls for many prefixes
    assert char.module.training  # mode restored
    ref = _prefix_by_prefix(char, prompts, comps, cuts, answers, bridge)
    for j, r, c in zip(J, ref, cuts, strict=True):
        assert j.shape == (len(c),) and not j.requires_grad
        torch.testing.assert_close(j, r, atol=1e-5, rtol=1e-5)
        assert (j <= 0).all()


@pytest.fixture(scope="module")
def hf():
    pytest.importorskip("transformers")
    from iclr26.rlvr.hf_policy import HFPolicy

    model, tok = tiny_llama()
    return HFPolicy(model, tok)


def test_batched_equals_prefix_by_prefix_on_hf_policy(hf):
    texts = [("q:1+2\n", "a+b\nc\n"), ("q:12+34\n", "x")]
    prompts = [hf.encode_prompt(q) for q, _ in texts]
    comps = [hf.encode_target(c) for _, c in texts]
    cuts = [list(range(len(c) + 1)) for c in comps]
    answers = [answer_ids(hf, a) for a in ("3", "46")]
    policy = CountingPolicy(hf)
    J = surrogate_objective(policy, prompts, comps, cuts, answers, batch_size=4)
    assert policy.calls == 3  # 10 (prefix, answer) rows in batches of 4
    ref = _prefix_by_prefix(hf, prompts, comps, cuts, answers)
    for j, r in zip(J, ref, strict=True):
        torch.testing.assert_close(j, r, atol=1e-5, rtol=1e-5)


def test_bad_inputs_are_refused(char):
    p, c, a = [char.encode_prompt("Q:1+2\n")], [char.encode_target("3")], [answer_ids(char, "3")]
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        surrogate_objective(char, p, c, [[0, 3]], a)
    with pytest.raises(ValueError, match="one entry per row"):
        surrogate_objective(char, p, c, [[0], [1]], a)
    with pytest.raises(ValueError, match="empty"):
        surrogate_objective(char, p, c, [[0]], [[]])


def test_hf_segments_map_to_tokens(hf):
    """This tokenizer decodes with a space between tokens: segments are found in the decoded text
    and mapped back to whole tokens."""
    comp = hf.encode_target("ab\ncd\ne")
    seg = segment_completion(hf.decode, comp, sep="\n")
    assert seg.text == "a b \n c d \n e"
    assert seg.token_spans == ((0, 3), (3, 6), (6, 7))  # "ab\n", "cd\n", "e" (<eos> in no segment)
