"""Issue 61's counter-prior experiment: `iclr26 run slt_reliability --set experiment=counter_prior` at
this script's size, with provenance.

phoenix_like with place-first translations, without (uniform) and with (skewed) an entity prior, 30%
counter-prior test sentences, harder signers (keypoint jitter 0.01-0.02, four times the default), both
translators at half width (64) for 10 epochs on 1,500 sentences, 3 seeds: 12 translators. Grounding and
META against text confidence on the counter-prior sentences, on every sentence, and in how reliably each
score rises under keypoint noise 0.2; floors: hypothesis length and a random score (AUC 0.5).

    python benchmarks/slt_reliability/counter_prior.py [--set seeds=0,1,2 ...] [--out DIR]

Resumable: the study's cells and the translators' checkpoints live in --out (default
runs/benchmarks/slt_counter_prior). Saves
results/slt_reliability_bench_counter_prior.json (and its cells.jsonl).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.slt_reliability import SYSTEM

GRID = {
    "experiment": "counter_prior",
    "datasets": "phoenix_like",
    "architectures": "gloss_based,gloss_free",
    "priors": "uniform,skewed",
    "seeds": "0,1,2",
    "n_train": "1500",
    "n_dev": "50",
    "n_test": "500",
    "corpus.signer_noise": "0.01,0.02",
    "corpus.dominance": "0.8",
    "corpus.counter_prior": "0.3",
    "stress_noise": "0.2",
    "train.epochs": "10",
    "train.d_model": "64",
    "train.d_ff": "128",
    "train.lr": "2e-3",
    "train.warmup": "100",
}


if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "slt_reliability", __doc__.splitlines()[0],
        tuple(f"{k}={v}" for k, v in GRID.items()), tag="counter_prior",
        out=Path("runs/benchmarks/slt_counter_prior"),
    )  # fmt: skip
