"""Success rate of the pretrained policy at each rung of the hint ladder, per level: can the
policy succeed with help where it fails alone? Uses the checkpoint written by `run.py`.

    python benchmarks/scaf_grpo/hint_ladder.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.rlvr import (
    CharPolicy,
    CharTokenizer,
    CharTransformer,
    GRPOTrainer,
    ModelConfig,
    make_problems,
    verify,
)
from iclr26.scaf_grpo import SYSTEM, hint_ladder

SFT = Path("runs/benchmarks/scaf_grpo/checkpoints/sft.pt")
PROBLEMS, SAMPLES = 32, 4


def main() -> None:
    if not SFT.exists():
        raise SystemExit(f"{SFT} is missing: run benchmarks/scaf_grpo/run.py first")
    torch.set_num_threads(2)
    cfg = SYSTEM.presets["bench"]
    tok = CharTokenizer()
    size = cfg.policy  # the pretrained character transformer's
    model = CharTransformer(ModelConfig(tok.vocab_size, size.dim, size.layers, size.heads, size.max_len))
    model.load_state_dict(torch.load(SFT, weights_only=False)["model"])
    policy = CharPolicy(model, tok)
    trainer = GRPOTrainer(policy, cfg.grpo)
    gen = torch.Generator().manual_seed(0)
    rows = []
    for level in (3, 4, 5):
        problems = make_problems(cfg.task, level, PROBLEMS, seed=77_000 + level)
        plain = trainer.sample(
            [policy.encode_prompt(p.prompt) for p in problems for _ in range(SAMPLES)], gen
        )
        expanded = [p for p in problems for _ in range(SAMPLES)]
        base = sum(verify(p, policy.decode(o)).reward for p, o in zip(expanded, plain, strict=True))
        row = {"level": level, "no hint": base / len(expanded)}
        for rung in range(12):
            hints = [hint_ladder(p)[rung] for p in expanded]
            prompts = [
                policy.encode_prompt(p.hinted_prompt(h.text)) for p, h in zip(expanded, hints, strict=True)
            ]
            outs = trainer.sample(prompts, gen)
            ok = sum(verify(p, policy.decode(o)).reward for p, o in zip(expanded, outs, strict=True))
            row[f"{hints[0].tier}-{hints[0].level}"] = ok / len(expanded)
        rows.append(row)
        print(row, flush=True)
    path = Path(__file__).parent / "results" / "hint_ladder.json"
    path.write_text(
        json.dumps({**provenance(), "problems": PROBLEMS, "samples": SAMPLES, "rows": rows}, indent=1) + "\n"
    )
    print(f"saved {path}")


if __name__ == "__main__":
    main()
