"""Our GRPO objective equals TRL's `GRPOTrainer` loss on the same batch of a tiny HF model."""

import warnings

import pytest
import torch

from iclr26.rlvr.grpo import GRPOConfig, grpo_loss
from tests.tiny_hf import tiny_llama

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def trl_trainer(tmp_path_factory):
    model, fast = tiny_llama()
    args = trl.GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("trl")),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=6,
        report_to=[],
        use_cpu=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = trl.GRPOTrainer(
            model=model,
            reward_funcs=lambda completions, **kw: [0.0] * len(completions),
            args=args,
            train_dataset=datasets.Dataset.from_dict({"prompt": ["q:1+2=", "q:3+4="]}),
            processing_class=fast,
        )
    trainer.model.eval()  # eval mode: no gradient-accumulation scaling inside TRL's loss
    return trainer, fast


@pytest.mark.parametrize(
    ("ours", "theirs"), [("grpo", "grpo"), ("dapo", "bnpo"), ("dr_grpo", "dr_grpo"), ("dapo", "dapo")]
)
def test_loss_matches_trl(trl_trainer, ours, theirs):
    trainer, tok = trl_trainer
    model = trainer.model
    prompts = torch.tensor([tok.encode("q:1+2=")] * 2 + [tok.encode("q:3+4=")] * 2)
    g = torch.Generator().manual_seed(1)
    completions = torch.randint(2, 30, (4, 6), generator=g)
    cmask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 5 + [0], [1] * 2 + [0] * 4])
    ids = torch.cat([prompts, completions], 1)
    am = torch.cat([torch.ones_like(prompts), cmask], 1)
    logits = model(input_ids=ids, attention_mask=am).logits[:, prompts.shape[1] - 1 : -1].float()
    logp = logits.log_softmax(-1).gather(-1, completions[..., None]).squeeze(-1)
    old = logp.detach() + 0.3 * torch.randn(logp.shape, generator=g)  # ratios away from 1: clipping matters
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5])
    inputs = {
        "prompt_ids": prompts,
        "prompt_mask": torch.ones_like(prompts),
        "completion_ids": completions,
        "completion_mask": cmask,
        "advantages": adv,
        "old_per_token_logps": old,
        "num_items_in_batch": cmask.sum(),
    }
    # TRL scores tokens with its fused LM head; agree with our log-softmax to ~1e-3, then give it
    # our per-token log-probs so the comparison isolates the objective itself
    trl_logp, _, _ = trainer._get_per_token_logps_and_entropies(model, ids, am, completions.shape[1])
    real = cmask.bool()  # TRL leaves padded positions at 0
    torch.testing.assert_close(trl_logp.detach()[real], logp.detach()[real], atol=5e-3, rtol=0)
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (logp, torch.zeros_like(logp), None)
    trainer.loss_type = theirs
    theirs_loss = trainer._compute_loss(model, inputs)
    cfg = GRPOConfig(
        loss_type=ours, max_new_tokens=6, clip_eps_low=trainer.epsilon_low, clip_eps_high=trainer.epsilon_high
    )
    ours_loss = grpo_loss(logp, old, adv, cmask, cfg)
    torch.testing.assert_close(ours_loss, theirs_loss, atol=1e-6, rtol=1e-5)
    # and the same gradient
    g_ours = torch.autograd.grad(ours_loss, list(model.parameters()), retain_graph=True, allow_unused=True)
    g_theirs = torch.autograd.grad(theirs_loss, list(model.parameters()), allow_unused=True)
    for a, b in zip(g_ours, g_theirs, strict=True):
        if a is not None and b is not None:
            torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-4)
