"""The learning-rate sweep for GRPO on SmolLM2-135M-Instruct (natural prompts, no warm start): the
release's lr is for a 7B model, so we tune it for 135M before the two experiments.

For each lr (0: the model as it is, evaluated only): vanilla GRPO from the same seed on the
scaf_grpo `paper` preset's task and training levels, at the CPU budget's size (`SMOLLM2_CPU`: 4
questions × 8 rollouts), for `--steps` updates, checkpointed after each; reported are the mean
rollout reward over the first and the last quarter of the steps and held-out pass@1 per level after
training. Each lr's run is resumable (`<out>/lr<lr>.pt`, its finished row `<out>/lr<lr>.json`); the
table goes to `results/smollm2_lr.json`.

    python benchmarks/scaf_grpo/smollm2_lr.py                 # 4 lrs × 12 steps: hours on 2 busy cores
    python benchmarks/scaf_grpo/smollm2_lr.py --lrs 1e-5 --steps 2 --eval-problems 2   # minutes
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.config import apply_overrides
from iclr26.rlvr.experiment import SMOLLM2_CPU, stream_seed
from iclr26.rlvr.grpo import GRPOTrainer
from iclr26.rlvr.loop import train_steps
from iclr26.rlvr.policies import policy_from_config
from iclr26.rlvr.tasks import make_problems
from iclr26.scaf_grpo.system import PRESETS

RESULTS = Path(__file__).parent / "results" / "smollm2_lr.json"


def _mean(xs: list[float]) -> float | None:
    """The mean, or None for no values (the untrained row has no steps)."""
    return float(np.mean(xs)) if xs else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--lrs", nargs="+", type=float, default=[0, 1e-6, 5e-6, 2e-5, 5e-5], help="0: the model untrained"
    )
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--eval-problems", type=int, default=24)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("runs/smollm2_lr"))
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = apply_overrides(PRESETS["paper"], {k: str(v) for k, v in SMOLLM2_CPU.items()})
    args.out.mkdir(parents=True, exist_ok=True)
    base = policy_from_config(cfg.policy, torch.device(cfg.device))
    rows = []
    for lr in args.lrs:
        done = args.out / f"lr{lr:g}.json"  # a finished lr's row: read back, not re-evaluated
        if done.is_file():
            rows.append(json.loads(done.read_text()))
            continue
        trainer = GRPOTrainer(copy.deepcopy(base), replace(cfg.grpo, lr=lr) if lr else cfg.grpo)
        history = (
            []
            if lr == 0
            else train_steps(
                trainer,
                cfg.task,
                cfg.train_levels,
                args.steps,
                stream_seed("rl", cfg.seed),
                args.out / f"lr{lr:g}.pt",
                lambda n: None,
                style=cfg.style,
                checkpoint_every=cfg.checkpoint_every,
            )
        )
        q = max(1, args.steps // 4)
        gen = torch.Generator().manual_seed(stream_seed("eval", cfg.seed))
        held = {}
        for level in cfg.train_levels:
            problems = make_problems(
                cfg.task, level, args.eval_problems, seed=stream_seed("heldout", level), style=cfg.style
            )
            held[str(level)] = trainer.evaluate(problems, cfg.eval_k, gen)["pass@1"]
        row = {
            "lr": lr,
            "steps": len(history),
            "reward_first_quarter": _mean([h["reward"] for h in history[:q]]),
            "reward_last_quarter": _mean([h["reward"] for h in history[-q:]]),
            "heldout_pass@1": held,
            "seconds_per_step": _mean([h["seconds"] for h in history]),
            "history": history,
        }
        rows.append(row)
        done.write_text(json.dumps(row) + "\n")
        print(
            f"lr {lr:g}: reward {row['reward_first_quarter']} -> {row['reward_last_quarter']}, "
            f"held-out pass@1 {held}",
            flush=True,
        )
    out = {
        **provenance(),
        "task": cfg.task,
        "train_levels": list(cfg.train_levels),
        "style": cfg.style,
        "size": f"{cfg.grpo.questions_per_step} questions x {cfg.grpo.group_size} rollouts, "
        f"{cfg.grpo.max_new_tokens} tokens, temperature {cfg.grpo.temperature}",
        "rows": rows,
    }
    args.results.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {args.results}")


if __name__ == "__main__":
    main()
