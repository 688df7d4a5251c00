"""The reward-model hook on a tiny model built here, and the evaluator fine-tuned here."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from iclr26.core.errors import UserError
from iclr26.lfqa_e.data import Comparison
from iclr26.lfqa_e.evaluator import (
    EvaluatorConfig,
    pair_loss,
    pick_tie_margin,
    tie_margin_of,
    train_evaluator,
)
from iclr26.lfqa_e.reward import INPUT_FILE, RewardModel


def _tiny_rm(folder, num_labels=1, chat_template=None):
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from iclr26.core.embed import model_dir

    tok = AutoTokenizer.from_pretrained(model_dir())
    if chat_template:
        tok.chat_template = chat_template
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=128, num_labels=num_labels)  # fmt: skip
    net = BertForSequenceClassification(cfg).eval()
    net.save_pretrained(folder)
    tok.save_pretrained(folder)
    return net, tok


def _comparisons(n=6):
    out = []
    for i in range(n):
        good, bad = f"Fact {i} is right and complete.", f"Fact {i} is wrong."
        label = ("response_a", "response_b", "same")[i % 3]
        a, b = (
            (good, bad) if label == "response_a" else (bad, good) if label == "response_b" else (good, good)
        )
        out.append(Comparison(f"c{i}", f"What is fact {i}?", f"Fact {i} is right and complete.", a, b, label))
    return out


def test_reward_hook_scores_text_pairs_like_the_model(tmp_path):
    net, tok = _tiny_rm(tmp_path / "rm")
    rm = RewardModel(tmp_path / "rm", batch_size=2)
    comps = _comparisons(3)
    got = rm.score_pairs(comps)
    assert got.shape == (3, 2)
    with torch.inference_mode():
        enc = tok([comps[1].question], [comps[1].response_b], return_tensors="pt")
        want = float(net(**enc).logits[0, 0])
    assert got[1, 1] == pytest.approx(want, abs=1e-5)  # padding in the batch does not change it
    np.testing.assert_allclose(rm.score_pairs(comps), got)


def test_reward_hook_uses_a_chat_template_and_classifier_heads(tmp_path):
    template = "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
    net, tok = _tiny_rm(tmp_path / "rm", num_labels=2, chat_template=template)
    rm = RewardModel(tmp_path / "rm")
    assert rm.chat
    c = _comparisons(1)[0]
    turns = [{"role": "user", "content": c.question}, {"role": "assistant", "content": c.response_a}]
    text = tok.apply_chat_template(turns, tokenize=False)
    assert text.startswith("<user> What is fact 0?")
    with torch.inference_mode():
        logits = net(**tok([text], return_tensors="pt")).logits[0]
    assert rm.score_pairs([c])[0, 0] == pytest.approx(float(logits[-1] - logits[0]), abs=1e-5)


def test_reward_hook_errors(tmp_path):
    with pytest.raises(UserError, match="not a Hugging Face model folder"):
        RewardModel(tmp_path)
    _tiny_rm(tmp_path / "rm")
    (tmp_path / "rm" / INPUT_FILE).write_text(json.dumps({"first": "context"}))
    with pytest.raises(UserError, match="'first' must be one of question, reference"):
        RewardModel(tmp_path / "rm")


def test_pair_loss_and_tie_margin():
    s_a, s_b = torch.tensor([2.0, 0.0, 1.0]), torch.tensor([0.0, 2.0, 1.5])
    loss = pair_loss(s_a, s_b, ["response_a", "response_a", "same"], tie_weight=2.0)
    want = (torch.nn.functional.softplus(torch.tensor(-2.0)) + torch.nn.functional.softplus(torch.tensor(2.0))
            + 2.0 * 0.25) / 3  # fmt: skip
    assert float(loss) == pytest.approx(float(want))
    scores = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.45], [0.3, 0.32]])
    tau = pick_tie_margin(scores, ["response_a", "response_b", "same", "same"])
    assert 0.02 <= tau < 1.0  # the two small gaps become ties, the large ones stay decisive


def test_evaluator_learns_resumes_and_loads_through_the_hook(tmp_path):
    train = _comparisons(12)
    cfg = EvaluatorConfig(steps=30, batch_size=4, max_length=32, lr=2e-4, warmup=2, checkpoint_every=10)
    folder = train_evaluator(train, tmp_path / "ev", cfg)
    spec = json.loads((folder / INPUT_FILE).read_text())
    assert spec["first"] == "reference" and spec["n_train"] == 12 and len(spec["losses"]) == 30
    assert np.mean(spec["losses"][-5:]) < np.mean(spec["losses"][:5])
    scores = RewardModel(folder, max_length=32).score_pairs(train)
    decisive = [i for i, c in enumerate(train) if c.label != "same"]
    right = [(scores[i, 0] > scores[i, 1]) == (train[i].label == "response_a") for i in decisive]
    assert np.mean(right) >= 0.75  # the right answer scores higher on the training pairs
    assert tie_margin_of(folder) == spec["tie_margin"] >= 0
    assert train_evaluator(train, tmp_path / "ev", cfg) == folder  # finished: reused
    with pytest.raises(ValueError, match="another config"):
        train_evaluator(train, tmp_path / "ev", EvaluatorConfig(steps=31, batch_size=4, max_length=32))


def test_evaluator_resume_gives_the_same_model(tmp_path):
    train = _comparisons(6)
    cfg = EvaluatorConfig(steps=4, batch_size=2, max_length=24, checkpoint_every=2)
    whole = train_evaluator(train, tmp_path / "whole", cfg)

    class Stop(Exception):
        pass

    def stop_at_3(step, _loss):
        if step == 3:
            raise Stop

    with pytest.raises(Stop):
        train_evaluator(train, tmp_path / "part", cfg, on_progress=stop_at_3)
    assert (tmp_path / "part" / "checkpoint.pt").is_file()
    resumed = train_evaluator(train, tmp_path / "part", cfg)
    np.testing.assert_allclose(
        RewardModel(resumed).score_pairs(train), RewardModel(whole).score_pairs(train), atol=1e-5
    )


def test_evaluator_config_errors():
    with pytest.raises(ValueError, match="first must be one of"):
        EvaluatorConfig(first="context")
    with pytest.raises(ValueError, match="steps must be an int"):
        EvaluatorConfig(steps=0)
    with pytest.raises(ValueError, match="needs training comparisons"):
        train_evaluator([], "/tmp/never")
