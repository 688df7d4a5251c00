import numpy as np
import pytest
import torch

from iclr26.rlvr.model import CharTransformer, ModelConfig, generate, left_pad, token_logprobs
from iclr26.rlvr.tasks import make_problems, verify
from iclr26.rlvr.tokenizer import CharTokenizer


@pytest.mark.parametrize("task", ["addition", "multiplication"])
@pytest.mark.parametrize("level", [1, 3, 7])
def test_worked_solutions_are_correct_and_verify(task, level):
    for p in make_problems(task, level, 20, seed=1):
        a, b = p.operands
        assert int(p.answer) == (a + b if task == "addition" else a * b)
        assert len(p.steps) == level
        # the scratchpad's column digits and final carry spell the answer
        sums = [int(s.split("=")[1]) for s in p.steps]
        assert (
            "".join(str(x % 10) for x in sums[:-1][::-1]) == p.answer[-(level - 1) :] if level > 1 else True
        )
        assert p.answer.startswith(str(sums[-1]))
        assert verify(p, p.solution).reward == 1.0


def test_verifier_right_wrong_malformed():
    p = make_problems("addition", 2, 1, seed=0)[0]
    assert verify(p, f"junk\nA:{p.answer}\n") == verify(p, p.solution)
    wrong = str(int(p.answer) + 1)
    v = verify(p, f"A:{wrong}\nA:{p.answer}")  # the first answer counts
    assert v.reward == 0.0 and v.parsed
    v = verify(p, "7+8=15\nA:")
    assert v.reward == 0.0 and not v.parsed


def test_problems_are_seeded_and_levels_checked():
    assert make_problems("addition", 4, 5, 3) == make_problems("addition", 4, 5, 3)
    assert make_problems("addition", 4, 5, 3) != make_problems("addition", 4, 5, 4)
    with pytest.raises(ValueError, match=r"level must be an int in 1\.\.12"):
        make_problems("addition", 0, 1, 0)
    with pytest.raises(ValueError, match="task must be one of"):
        make_problems("division", 2, 1, 0)


def test_tokenizer_round_trip_and_errors():
    tok = CharTokenizer()
    text = "Q:12+34\nH:cols 2+4\n"
    assert tok.decode(tok.encode(text, bos=True, eos=True)) == text
    with pytest.raises(ValueError, match="not in the tokenizer's alphabet"):
        tok.encode("é")


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    tok = CharTokenizer()
    return CharTransformer(ModelConfig(tok.vocab_size, 32, 2, 2, 64)), tok


def test_left_padding_does_not_change_logits(tiny):
    model, tok = tiny
    a, b = tok.encode("Q:1+2\n", bos=True), tok.encode("Q:12+34\n", bos=True)
    alone, _ = model(torch.tensor([a]))
    ids, mask = left_pad([a, b], tok.pad_id)
    batched, _ = model(ids, mask)
    torch.testing.assert_close(batched[0, -len(a) :], alone[0], atol=1e-5, rtol=1e-5)


def test_kv_cache_matches_full_forward(tiny):
    model, tok = tiny
    ids = torch.tensor([tok.encode("Q:12+34\n7+8", bos=True)])
    full, _ = model(ids)
    _, cache = model(ids[:, :-3])
    step_logits = []
    for t in range(ids.shape[1] - 3, ids.shape[1]):
        mask = torch.ones(1, t + 1, dtype=torch.bool)
        lg, cache = model(ids[:, t : t + 1], mask, cache)
        step_logits.append(lg[:, -1])
    torch.testing.assert_close(torch.stack(step_logits, 1), full[:, -3:], atol=1e-5, rtol=1e-5)


def test_generate_is_seeded_and_logprobs_agree(tiny):
    model, tok = tiny
    prompts = [tok.encode("Q:1+2\n", bos=True), tok.encode("Q:123+456\n", bos=True)]
    kw = {"max_new_tokens": 12, "eos_id": tok.eos_id, "pad_id": tok.pad_id}
    a = generate(model, prompts, generator=torch.Generator().manual_seed(1), **kw)
    b = generate(model, prompts, generator=torch.Generator().manual_seed(1), **kw)
    assert a == b and all(1 <= len(x) <= 12 for x in a)
    logp, mask, _ = token_logprobs(model, prompts, a, tok.pad_id)
    # recompute the first completion's log-probs one token at a time
    seq = prompts[0] + a[0]
    with torch.no_grad():
        lg, _ = model(torch.tensor([seq]))
    ref = (
        lg[0, len(prompts[0]) - 1 : len(seq) - 1].log_softmax(-1).gather(1, torch.tensor(a[0])[:, None])[:, 0]
    )
    torch.testing.assert_close(logp[0, : len(a[0])].detach(), ref, atol=1e-5, rtol=1e-5)
    assert mask[0].sum() == len(a[0])


def test_model_rejects_too_long_sequences(tiny):
    model, _ = tiny
    with pytest.raises(ValueError, match="longer than max_len=64"):
        model(torch.zeros(1, 65, dtype=torch.long))


_ = np  # numpy used by generators under test
