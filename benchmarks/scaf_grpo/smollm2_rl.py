"""Scaf-GRPO vs GRPO and GRPO + RePro vs GRPO on SmolLM2-135M-Instruct as it is (no warm start,
natural prompts): both systems' `paper` presets, at the CPU budget of `rlvr.experiment.SMOLLM2_CPU`
with `--cpu`. Each run folder (`runs/smollm2_rl/<system>`) resumes an interrupted run; the tables
go to `benchmarks/<system>/results/<system>_paper[_cpu].json`.

    python benchmarks/scaf_grpo/smollm2_rl.py --cpu --set threads=1       # hours on 2 CPU cores
    python benchmarks/scaf_grpo/smollm2_rl.py --cpu --systems repro_reward --set rl_steps=10
    python benchmarks/scaf_grpo/smollm2_rl.py                             # the paper preset, one GPU
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import save_preset_result
from iclr26.core.config import parse_overrides
from iclr26.core.runner import run_system
from iclr26.rlvr.experiment import SMOLLM2_CPU

BENCHMARKS = Path(__file__).parents[1]
SYSTEMS = ("scaf_grpo", "repro_reward")
# A system's own changes at the CPU budget: the guidance warm-up scaled with the run (the release:
# 50 of its steps; the bench preset: 5).
CPU_EXTRA = {"scaf_grpo": {"scaf.warmup_steps": "5"}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--cpu", action="store_true", help="the CPU budget (rlvr.experiment.SMOLLM2_CPU)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="key=value on top")
    ap.add_argument("--out", type=Path, default=Path("runs/smollm2_rl"))
    args = ap.parse_args()
    cpu = {k: str(v) for k, v in SMOLLM2_CPU.items()} if args.cpu else {}
    overrides = {**cpu, **parse_overrides(args.overrides)}
    for name in args.systems:
        if name == "scaf_grpo":
            from iclr26.scaf_grpo import SYSTEM
        else:
            from iclr26.repro_reward import SYSTEM
        tag = "cpu" if args.cpu else ""
        own = {k: v for k, v in CPU_EXTRA.get(name, {}).items() if args.cpu}
        record, run_dir = run_system(
            SYSTEM, "paper", {**own, **overrides}, out=args.out / f"{name}{'_' + tag if tag else ''}"
        )
        save_preset_result(record, run_dir, BENCHMARKS / name / "results", name, "paper", tag)


if __name__ == "__main__":
    main()
