"""The `Policy` interface: CharPolicy equals the model functions it wraps; HFPolicy's own KV-cached
sampler agrees with its scorer on a tiny Llama; GRPO runs on either, and data-parallel under
torchrun."""

import dataclasses
import json
import textwrap

import pytest
import torch

from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer
from iclr26.rlvr.model import CharTransformer, ModelConfig, generate, token_logprobs
from iclr26.rlvr.policy import CharPolicy, Policy
from iclr26.rlvr.tasks import make_problems
from iclr26.rlvr.tokenizer import CharTokenizer
from tests.tiny_hf import tiny_llama

pytest.importorskip("transformers")
from iclr26.rlvr.hf_policy import HFPolicy, prompt_runs
from tests.torchrun import torchrun

TEXTS = ["q:1+2=", "q:123+456=", "q:98+7="]  # different lengths: batches get left padding


@pytest.fixture(scope="module")
def char():
    torch.manual_seed(0)
    tok = CharTokenizer()
    return CharPolicy(CharTransformer(ModelConfig(tok.vocab_size, 32, 1, 2, 96)), tok)


@pytest.fixture(scope="module")
def hf():
    model, tok = tiny_llama()
    return HFPolicy(model, tok)


def test_char_policy_equals_the_model_functions(char):
    tok, model = char.tok, char.module
    assert isinstance(char, Policy)
    assert char.encode_prompt("Q:1+2\n") == tok.encode("Q:1+2\n", bos=True)
    assert char.encode_target("A:3\n") == tok.encode("A:3\n", eos=True)
    prompts = [char.encode_prompt(t) for t in ["Q:1+2\n", "Q:123+456\n"]]
    ours = char.sample(prompts, 10, 1.0, torch.Generator().manual_seed(3))
    ref = generate(
        model,
        prompts,
        max_new_tokens=10,
        eos_id=tok.eos_id,
        pad_id=tok.pad_id,
        temperature=1.0,
        generator=torch.Generator().manual_seed(3),
    )
    assert ours == ref
    assert [char.decode(o) for o in ours] == [tok.decode(o) for o in ref]
    ref_scores = token_logprobs(model, prompts, ref, tok.pad_id)
    for a, b in zip(char.token_logprobs(prompts, ours), ref_scores, strict=True):
        assert torch.equal(a, b)


def test_char_policy_rejects_a_too_small_vocabulary():
    tok = CharTokenizer()
    with pytest.raises(ValueError, match="vocab_size=10 is smaller"):
        CharPolicy(CharTransformer(ModelConfig(10, 32, 1, 2, 32)), tok)


def test_hf_sampling_is_seeded(hf):
    assert isinstance(hf, Policy)
    prompts = [hf.encode_prompt(t) for t in TEXTS]
    a = hf.sample(prompts, 12, 1.0, torch.Generator().manual_seed(1))
    b = hf.sample(prompts, 12, 1.0, torch.Generator().manual_seed(1))
    c = hf.sample(prompts, 12, 1.0, torch.Generator().manual_seed(2))
    assert a == b and a != c
    assert all(1 <= len(x) <= 12 for x in a)
    hf.module.train()
    hf.sample(prompts[:1], 2, 1.0, torch.Generator().manual_seed(1))
    assert hf.module.training  # the sampler restores the module's mode


def test_hf_sampler_logprobs_match_token_logprobs(hf):
    prompts = [hf.encode_prompt(t) for t in TEXTS]
    outs, lps = hf.sample_with_logprobs(prompts, 12, 1.0, torch.Generator().manual_seed(4))
    logp, mask, entropy = hf.token_logprobs(prompts, outs)
    assert mask.sum(1).tolist() == [len(o) for o in outs]
    for i, lp in enumerate(lps):
        torch.testing.assert_close(logp[i, : len(lp)].detach(), torch.tensor(lp), atol=1e-5, rtol=1e-5)
    assert torch.isfinite(entropy).all() and (entropy >= 0).all()


def test_hf_left_padding_does_not_change_logprobs(hf):
    short, long = hf.encode_prompt(TEXTS[0]), hf.encode_prompt(TEXTS[1])
    comp = hf.encode_target("579")
    alone, _, _ = hf.token_logprobs([short], [comp])
    batched, mask, _ = hf.token_logprobs([short, long], [comp, comp[:2]])
    assert mask[1].tolist() == [True, True, False, False]
    torch.testing.assert_close(batched[0], alone[0], atol=1e-5, rtol=1e-5)


def test_hf_greedy_is_argmax(hf):
    prompts = [hf.encode_prompt(t) for t in TEXTS]
    greedy = hf.sample(prompts, 8, temperature=0.0)
    for prompt, out in zip(prompts, greedy, strict=True):
        ids = list(prompt)
        with torch.no_grad():  # one sequence, no cache, no padding
            for _ in range(8):
                ids.append(int(hf.module(torch.tensor([ids])).logits[0, -1].argmax()))
                if ids[-1] == hf.eos_id:
                    break
        assert ids[len(prompt) :] == out


def _grouped(hf, g=4):
    """Each of TEXTS repeated g times in a row (GRPO's layout), then TEXTS[0] once more."""
    prompts = [hf.encode_prompt(t) for t in TEXTS for _ in range(g)]
    return [*prompts, hf.encode_prompt(TEXTS[0])]


def test_prompt_runs():
    assert prompt_runs([[1], [1], [2], [1], [1], [1]]) == ([0, 2, 3], [0, 0, 1, 2, 2, 2])
    assert prompt_runs([[5]]) == ([0], [0])


def test_shared_prefix_sampler_equals_the_reference_sampler(hf):
    ref = HFPolicy(hf.module, hf.tokenizer, share_prefix=False)
    prompts = _grouped(hf)
    assert hf.sample(prompts, 10, 0.0) == ref.sample(prompts, 10, 0.0)  # greedy: equal
    a, lp_a = hf.sample_with_logprobs(prompts, 10, 1.0, torch.Generator().manual_seed(5))
    b, lp_b = ref.sample_with_logprobs(prompts, 10, 1.0, torch.Generator().manual_seed(5))
    assert a == b  # the same logits, so the same draws from the same stream
    for x, y in zip(lp_a, lp_b, strict=True):
        torch.testing.assert_close(torch.tensor(x), torch.tensor(y), atol=1e-5, rtol=1e-5)
    logp, _, _ = hf.token_logprobs(prompts, a)  # every row decoded from its own prompt's cache
    for i, lp in enumerate(lp_a):
        torch.testing.assert_close(logp[i, : len(lp)].detach(), torch.tensor(lp), atol=1e-5, rtol=1e-5)


def test_shared_prefix_sampler_draws_from_the_model_distribution(hf):
    prompt = hf.encode_prompt(TEXTS[1])
    with torch.no_grad():
        probs = hf.module(torch.tensor([prompt])).logits[0, -1].softmax(-1)
    n = 4000
    first = [o[0] for o in hf.sample([prompt] * n, 1, 1.0, torch.Generator().manual_seed(6))]
    freq = torch.bincount(torch.tensor(first), minlength=probs.numel()).float() / n
    assert 0.5 * (freq - probs).abs().sum() < 0.05  # total variation to the exact next-token law


def test_hf_encode_decode(hf):
    target = hf.encode_target("a1+2")
    assert target[-1] == hf.eos_id
    # stops at <eos>; (this test tokenizer has no decoder, so it joins tokens with spaces)
    assert hf.decode([*target, *hf.encode_target("zz")]) == hf.tokenizer.decode(target[:-1]) == "a 1 + 2"


def test_hf_checkpoint_errors(tmp_path):
    model, tok = tiny_llama()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        HFPolicy.from_pretrained(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"has no config\.json"):
        HFPolicy.from_pretrained(tmp_path / "empty")
    model.save_pretrained(tmp_path / "ckpt")
    with pytest.raises(FileNotFoundError, match="has no tokenizer files"):
        HFPolicy.from_pretrained(tmp_path / "ckpt")
    tok.save_pretrained(tmp_path / "ckpt")
    loaded = HFPolicy.from_pretrained(tmp_path / "ckpt")
    prompts, comps = [loaded.encode_prompt(TEXTS[0])], [loaded.encode_target("3")]
    ref = HFPolicy(model, tok)
    assert prompts == [ref.encode_prompt(TEXTS[0])]
    torch.testing.assert_close(
        loaded.token_logprobs(prompts, comps)[0], ref.token_logprobs(prompts, comps)[0]
    )


def test_hf_chat_template():
    model, tok = tiny_llama()
    with pytest.raises(ValueError, match="no chat_template"):
        HFPolicy(model, tok, chat=True)
    model, tok = tiny_llama(roles=True)
    policy = HFPolicy(model, tok, chat=True)
    assert (
        policy.encode_prompt("q:1+2=")
        == tok("<user>q:1+2=<assistant>", add_special_tokens=False)["input_ids"]
    )


def _reward_even_sum(groups, step, gen):
    """A test guide: reward rollouts whose token ids have an even sum (non-zero advantages)."""
    return [[dataclasses.replace(r, reward=float(sum(r.completion_ids) % 2 == 0)) for r in g] for g in groups]


def test_grpo_step_on_hf_policy(hf):
    model, tok = tiny_llama(seed=1)
    policy = HFPolicy(model, tok)
    before = [p.detach().clone() for p in model.parameters()]
    trainer = GRPOTrainer(
        policy, GRPOConfig(group_size=4, questions_per_step=2, max_new_tokens=6), guide=_reward_even_sum
    )
    metrics = trainer.step(make_problems("addition", 1, 2, 0), torch.Generator().manual_seed(0))
    assert all(torch.isfinite(torch.tensor(v)) for v in metrics.values())
    assert 0 < metrics["length"] <= 6 and metrics["loss"] != 0
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


JOB = """
import dataclasses, torch
from iclr26.core.distributed import init_distributed, cleanup
from iclr26.rlvr import CharPolicy, CharTokenizer, CharTransformer, GRPOConfig, GRPOTrainer, ModelConfig
from iclr26.rlvr.tasks import make_problems

def _reward_even_sum(groups, step, gen):
    return [[dataclasses.replace(r, reward=float(sum(r.completion_ids) % 2 == 0)) for r in g] for g in groups]

info = init_distributed()
torch.manual_seed(info.rank)  # different initial weights: DDP must broadcast rank 0's
tok = CharTokenizer()
policy = CharPolicy(CharTransformer(ModelConfig(tok.vocab_size, 16, 1, 2, 64)), tok)
start = {{k: v.clone() for k, v in policy.module.state_dict().items()}}
trainer = GRPOTrainer(policy, GRPOConfig(group_size=2, max_new_tokens=6), guide=_reward_even_sum)
gen = torch.Generator().manual_seed(0)
problems = make_problems("addition", 2, 4, 0)  # 4 different questions
seen = []
rollouts = trainer.rollouts
trainer.rollouts = lambda ps, g: (seen.extend(p.prompt for p in ps), rollouts(ps, g))[1]
metrics = [trainer.step(problems, gen), trainer.step(problems, gen)]
ev = trainer.evaluate(make_problems("addition", 2, 3, 1), 2, gen)
torch.save({{"start": start, "end": policy.module.state_dict(), "metrics": metrics, "seen": seen,
            "eval": ev, "ddp": trainer.ddp is not None}}, {out!r} + f"/rank{{info.rank}}.pt")
cleanup()
"""


def test_grpo_under_torchrun_keeps_ranks_identical(tmp_path):
    """2 gloo processes, 2 GRPO steps: parameters and metrics agree across ranks, questions differ."""
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB.format(out=str(tmp_path))))
    proc = torchrun(script, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0, r1 = (torch.load(tmp_path / f"rank{r}.pt", weights_only=False) for r in (0, 1))
    assert r0["ddp"] and r1["ddp"]
    assert any(not torch.equal(r0["start"][k], r1["start"][k]) for k in r0["start"])  # seeded apart
    for k in r0["end"]:
        assert torch.equal(r0["end"][k], r1["end"][k]), k
    assert any(not torch.equal(r0["start"][k], r0["end"][k]) for k in r0["end"])  # it trained
    assert json.dumps(r0["metrics"]) == json.dumps(r1["metrics"]) and r0["eval"] == r1["eval"]
    assert not set(r0["seen"]) & set(r1["seen"])  # each rank works on its own questions
    assert len(r0["seen"]) == len(r1["seen"]) == 4  # 2 of the 4 questions per step


@pytest.mark.llm
def test_smollm2_policy_greedy_equals_transformers_generate():
    """Our batched, left-padded greedy loop gives `model.generate`'s answer for each prompt alone."""
    from iclr26.rlvr.hf_policy import smollm2_policy

    policy = smollm2_policy()
    prompts = [policy.encode_prompt("What is 12+34?"), policy.encode_prompt("Name a fruit.")]
    assert policy.tokenizer.decode(prompts[0]).endswith("<|im_start|>assistant\n")
    ours, lps = policy.sample_with_logprobs(prompts, 10, 0.0)
    for prompt, out in zip(prompts, ours, strict=True):
        ref = policy.module.generate(
            torch.tensor([prompt]), max_new_tokens=10, do_sample=False, eos_token_id=policy.eos_id
        )
        assert out == ref[0, len(prompt) :].tolist()
    logp, _, _ = policy.token_logprobs(prompts, ours)
    for i, lp in enumerate(lps):
        torch.testing.assert_close(logp[i, : len(lp)].detach(), torch.tensor(lp), atol=1e-4, rtol=1e-4)
