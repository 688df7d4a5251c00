"""VINCIE's grid world (issue 61): vincie vs pairwise vs vincie without masks on context-dependent turns.

    python benchmarks/vincie/grid.py --jobs 2         # bench: 3 seeds x 5 trained arms, 4,000 steps each
    python benchmarks/vincie/grid.py --preset smoke   # seconds
    python benchmarks/vincie/grid.py --seeds 0,1,2,3  # more seeds (resumes the trained ones)

Trains each learned arm per seed (`--jobs` at a time; checkpointed in the run folder, so a rerun
resumes), then runs the study (`iclr26.vincie.grid_study`): per-turn judge success with the true
history by turn type, the context-dependent turns apart, and MSE-Bench's cumulative success on the
arm's own images, beside the floors (copy the last image, untrained, the pairwise guess) and the true
images. Saves results/vincie_grid_<preset>.json with provenance and the cells ledger beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import save_study_result
from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.core.study import run_study
from iclr26.vincie.grid import vocabulary
from iclr26.vincie.grid_study import TRAINED, GridConfig, study, train_arm, training_sessions
from iclr26.vincie.model import SessionDiT
from iclr26.vincie.sequence import Tokenizer

SMOKE = GridConfig(seeds=(0,), train_sessions=40, test_sessions=3, turns=2)
PRESETS = {
    "bench": GridConfig(),
    "smoke": dataclasses.replace(
        SMOKE,
        train=dataclasses.replace(SMOKE.train, steps=4, batch=2, warmup=1, max_images=3),
        sampler=dataclasses.replace(SMOKE.sampler, steps=2),
    ),
}


def _train(cfg: GridConfig, arm: str, seed: int, out: Path) -> None:
    """One (arm, seed) model trained to its checkpoint, in a worker process with one thread."""
    torch.set_num_threads(1)
    train_arm(
        cfg, arm, seed, training_sessions(cfg, seed), Tokenizer(vocabulary()), out / f"{arm}_seed{seed}.pt"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bench", choices=sorted(PRESETS))
    ap.add_argument("--seeds", default="", help="comma-separated seeds (default: the preset's)")
    ap.add_argument("--steps", type=int, default=0, help="training steps (default: the preset's)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--jobs", type=int, default=1, help="processes training models at once (one thread each)")
    args = ap.parse_args()
    cfg = PRESETS[args.preset]
    try:
        if args.seeds:
            cfg = dataclasses.replace(cfg, seeds=tuple(int(s) for s in args.seeds.split(",")))
        if args.steps:
            cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, steps=args.steps))
        if args.jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    except (ValueError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    torch.set_num_threads(cfg.threads)
    out = args.out or Path(f"runs/benchmarks/vincie_grid_{args.preset}")
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(vocabulary())
    if args.jobs > 1:  # train in worker processes; the loop below then resumes each finished checkpoint
        with ProcessPoolExecutor(args.jobs) as pool:
            jobs = [pool.submit(_train, cfg, arm, seed, out) for seed in cfg.seeds for arm in TRAINED]
            for job in jobs:
                job.result()
    models, rows = {}, []
    for seed in cfg.seeds:
        data = training_sessions(cfg, seed)
        for arm in TRAINED:
            net, row = train_arm(cfg, arm, seed, data, tok, out / f"{arm}_seed{seed}.pt")
            models[(arm, seed)] = net
            rows.append(row)
            print(f"seed {seed} {arm}: loss {row['final_loss']:.4f}, {row['seconds']:.0f} s", flush=True)
    # the ledger is per seed set (one ledger, one config); the checkpoints are shared
    study_dir = out / ("study_seeds" + "-".join(str(s) for s in cfg.seeds))
    study_dir.mkdir(exist_ok=True)
    result = run_study(study(cfg, models, rows), RunContext(out_dir=study_dir))
    params = sum(p.numel() for p in SessionDiT(cfg.model, len(tok)).parameters())
    path = Path(__file__).parent / "results" / f"vincie_grid_{args.preset}.json"
    save_study_result(result, study_dir, path, args.preset, cfg, parameters=params, invalid=result.invalid)


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --out holds checkpoints of another configuration
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
