"""Are vincie's generated masks right? (the grid world, masks-first inference)

    python benchmarks/vincie/mask_probe.py --out runs/benchmarks/vincie_grid_abs4k

Loads the grid run's trained vincie models (every seed whose checkpoint is in --out; nothing trains:
a missing or unfinished checkpoint is an error) and, for every test session and turn with the true
history as context, makes the current mask and the next mask as vincie's inference does and compares
each with the true mask (IoU; an empty true and empty made mask count 1), by turn type. Saves
results/vincie_mask_probe.json with provenance.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.checkpoint import load_checkpoint
from iclr26.core.seeding import derive_seed
from iclr26.vincie.editing import edit_turn
from iclr26.vincie.grid import vocabulary
from iclr26.vincie.grid_study import GridConfig, test_sessions, train_arm, training_sessions
from iclr26.vincie.judge import mask_iou
from iclr26.vincie.sequence import Tokenizer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="the grid run's folder (grid.py --out)")
    args = ap.parse_args()
    cfg = GridConfig()
    torch.set_num_threads(cfg.threads)
    seeds = []
    for seed in cfg.seeds:
        path = args.out / f"vincie_seed{seed}.pt"
        if path.exists() and int(load_checkpoint(path)["step"]) == cfg.train.steps:
            seeds.append(seed)
    if not seeds:
        print(f"error: no finished vincie checkpoint of the bench grid in {args.out}", file=sys.stderr)
        raise SystemExit(2)
    tok = Tokenizer(vocabulary())
    tests = test_sessions(cfg)
    sessions = [s for s, _ in tests]
    iou: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for seed in seeds:
        net, _ = train_arm(
            cfg, "vincie", seed, training_sessions(cfg, seed), tok, args.out / f"vincie_seed{seed}.pt"
        )
        gen = torch.Generator().manual_seed(derive_seed(seed, "mask-probe"))
        none = [[None] * cfg.turns for _ in sessions]
        for k in range(cfg.turns):
            imgs = [list(s.images) for s in sessions]
            made = edit_turn(net, cfg.sampler, sessions, k, imgs, none, none, gen, tok=tok)
            for i, (s, kinds) in enumerate(tests):
                for name, true in (("current_mask", s.masks_current[k]), ("next_mask", s.masks_next[k])):
                    iou[name][kinds[k]].append(mask_iou(made[name][i], true))
                    iou[name]["all"].append(mask_iou(made[name][i], true))
    out = {
        **provenance(),
        "config": dataclasses.asdict(cfg),
        "seeds": seeds,
        "iou": {
            m: {t: {"mean": float(np.mean(v)), "turns": len(v)} for t, v in by.items()}
            for m, by in iou.items()
        },
    }
    path = Path(__file__).parent / "results" / "vincie_mask_probe.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n")
    print(json.dumps(out["iou"], indent=1))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
