import pytest
import torch

from iclr26.core.llm import LLMUnsupported
from tests.tiny_hf import tiny_llama


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A randomly initialised 2-layer Llama with a character tokenizer, saved to a folder."""
    model, fast = tiny_llama(roles=True)
    path = tmp_path_factory.mktemp("tiny")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    from iclr26.core.llm.hf import TransformersChatModel

    return TransformersChatModel(tiny_dir)


Q = [{"role": "user", "content": "hi"}]


def test_prompt_uses_the_chat_template(tiny):
    assert tiny.prompt(Q) == "<user>hi<assistant>"


def test_logprobs_match_a_forward_pass(tiny):
    """The reported log-probs are the model's own next-token log-probs, token by token."""
    [c] = tiny.chat(Q, max_tokens=12, temperature=1.0, seed=1, logprobs=True, top_logprobs=2)
    assert c.logprobs and len(c.logprobs) == c.usage["completion_tokens"]
    prompt_ids = tiny.tokenizer(tiny.prompt(Q), add_special_tokens=False)["input_ids"]
    gen_ids = [tiny.tokenizer.convert_tokens_to_ids(t.token) for t in c.logprobs]
    ids = torch.tensor([prompt_ids + gen_ids])
    with torch.no_grad():
        logp = tiny.model(ids).logits.log_softmax(-1)[0]
    for i, t in enumerate(c.logprobs):
        pos = len(prompt_ids) + i - 1
        assert t.logprob == pytest.approx(float(logp[pos, gen_ids[i]]), abs=1e-4)
        assert t.top[0][1] == pytest.approx(float(logp[pos].max()), abs=1e-4)


def test_n_samples_and_seed(tiny):
    a = tiny.chat(Q, n=4, temperature=1.0, max_tokens=10, seed=7)
    b = tiny.chat(Q, n=4, temperature=1.0, max_tokens=10, seed=7)
    assert len(a) == 4 and [x.text for x in a] == [x.text for x in b]
    assert len({x.text for x in a}) >= 2


def test_greedy_is_deterministic_and_stop_cuts(tiny):
    [g1] = tiny.chat(Q, max_tokens=12)
    [g2] = tiny.chat(Q, max_tokens=12)
    assert g1.text == g2.text and len(g1.text) > 0
    stop = g1.text[3]
    [cut] = tiny.chat(Q, max_tokens=12, stop=[stop])
    assert cut.text == g1.text[: g1.text.index(stop)] and cut.finish_reason == "stop"


def test_json_schema_is_refused(tiny):
    with pytest.raises(LLMUnsupported, match="not supported by the transformers backend"):
        tiny.chat(Q, json_schema={"type": "object"})


def test_missing_folder(tmp_path):
    from iclr26.core.llm.hf import TransformersChatModel

    with pytest.raises(FileNotFoundError, match="does not exist"):
        TransformersChatModel(tmp_path / "nope")


@pytest.mark.llm
def test_smollm2_gguf_in_transformers_agrees_with_llamacpp(smollm2):
    """The shipped GGUF converted to safetensors gives the same greedy answer as llama.cpp."""
    from iclr26.core.llm.hf import TransformersChatModel, smollm2_hf_dir

    hf = TransformersChatModel(smollm2_hf_dir())
    msgs = [{"role": "user", "content": "What is 2+2?"}]
    [a] = hf.chat(msgs, max_tokens=12, logprobs=True)
    [b] = smollm2.chat(msgs, max_tokens=12, logprobs=True)
    assert a.text == b.text
    # Q4_1 quantization in llama.cpp vs dequantized fp32 here: close, not equal.
    for x, y in zip(a.logprobs, b.logprobs, strict=False):
        assert x.logprob == pytest.approx(y.logprob, abs=0.3)


def test_hf_choice_loads_the_checkpoint_once_per_process_and_again_when_it_changes(tiny_dir, tmp_path):
    import shutil

    from iclr26.core.llm.choice import resolve_llm

    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_dir, folder)
    choice = resolve_llm(f"hf:{folder}")
    first, second = choice.open(), choice.open()
    assert first is second and first.chat(Q, max_tokens=3) == second.chat(Q, max_tokens=3)
    model, _ = tiny_llama(roles=True, seed=1)
    model.save_pretrained(folder)  # a fine-tuned checkpoint at the same path
    assert choice.open() is not first
