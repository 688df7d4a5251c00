"""How far is the pretrained policy from solving 4-digit problems unaided? The strongest signal
Scaf-GRPO's grafted replacement can give is a correct worked 4-digit solution under the plain
prompt. This probe applies exactly that, as supervised steps with GRPO's optimiser (AdamW,
lr 5e-5, grad-norm clip 1), from the bench preset's pretrained checkpoint:

- `hard only`: 2 correct 4-digit solutions per step (what a hard-level-only RL batch rescues);
- `mixed`: the same plus 6 correct 2-3-digit solutions per step (a mixed-level batch).

and tracks pass@1 per level (24 held-out problems × 4 samples). Uses the checkpoint of `run.py`.

    python benchmarks/scaf_grpo/transfer_probe.py
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.rlvr import CharPolicy, CharTokenizer, CharTransformer, GRPOTrainer, ModelConfig, stream_seed
from iclr26.rlvr.sft import sft_pair
from iclr26.rlvr.tasks import GENERATORS, make_problems
from iclr26.scaf_grpo import SYSTEM

SFT = Path("runs/benchmarks/scaf_grpo/checkpoints/sft.pt")
STEPS, EVERY, LR = 40, 10, 5e-5


def probe(mixed: bool) -> list[dict]:
    cfg = SYSTEM.presets["bench"]
    tok = CharTokenizer()
    size = cfg.policy  # the pretrained character transformer's
    model = CharTransformer(ModelConfig(tok.vocab_size, size.dim, size.layers, size.heads, size.max_len))
    model.load_state_dict(torch.load(SFT, weights_only=False)["model"])
    policy = CharPolicy(model, tok)
    trainer = GRPOTrainer(policy, replace(cfg.grpo, lr=LR))  # its AdamW

    def evaluate(step: int, loss: float) -> dict:
        row: dict = {"step": step, "loss on 4-digit": loss}
        for level in (2, 3, 4):
            probs = make_problems("addition", level, 24, seed=stream_seed("heldout", level))
            row[f"pass@1 level {level}"] = trainer.evaluate(probs, 4, torch.Generator().manual_seed(0))[
                "pass@1"
            ]
        print(row, flush=True)
        return row

    rng = np.random.default_rng(0)
    rows, loss_v = [evaluate(0, float("nan"))], float("nan")
    for step in range(1, STEPS + 1):
        problems = [GENERATORS["addition"](4, rng) for _ in range(2)]
        if mixed:
            problems += [GENERATORS["addition"](int(rng.integers(2, 4)), rng) for _ in range(6)]
        prompts, targets = zip(*(sft_pair(p, policy) for p in problems), strict=True)
        logp, mask, _ = policy.token_logprobs(list(prompts), list(targets))
        per_seq = (logp * mask).sum(1) / mask.sum(1)
        loss = -per_seq.mean()
        trainer.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        trainer.opt.step()
        loss_v = float(-per_seq[:2].mean().detach())
        if step % EVERY == 0:
            rows.append(evaluate(step, loss_v))
    return rows


def main() -> None:
    if not SFT.exists():
        raise SystemExit(f"{SFT} is missing: run benchmarks/scaf_grpo/run.py first")
    torch.set_num_threads(2)
    out = {"hard only": probe(False), "mixed": probe(True)}
    path = Path(__file__).parent / "results" / "transfer_probe.json"
    path.write_text(json.dumps({**provenance(), "lr": LR, "runs": out}, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
