"""VINCIE's overfit gate (issue 61): can the session model memorise 64 grid sessions?

    python benchmarks/vincie/overfit_gate.py                # 3000 steps (the gate's config)
    python benchmarks/vincie/overfit_gate.py --steps 1500

Trains the ~140k-parameter session model with vincie's proxy tasks on 64 one-edit grid sessions and
judges every turn with the true history as context (masks first), beside copy-the-input. The gate is
>= 90% judge success. Saves results/vincie_overfit_gate.json with provenance.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.vincie.grid import vocabulary
from iclr26.vincie.grid_study import GATE, gate_scores, gate_sessions
from iclr26.vincie.judge import score_turn
from iclr26.vincie.sequence import ProxyConfig, Tokenizer
from iclr26.vincie.train import train_session_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=GATE.train.steps)
    args = ap.parse_args()
    if args.steps < 1:
        print(f"error: --steps must be >= 1, got {args.steps}", file=sys.stderr)
        raise SystemExit(2)
    torch.set_num_threads(1)
    cfg = dataclasses.replace(GATE, train=dataclasses.replace(GATE.train, steps=args.steps))
    tok = Tokenizer(vocabulary())
    data = gate_sessions()
    t0 = time.perf_counter()
    net, losses = train_session_model(
        cfg.model, ProxyConfig(), cfg.train, data=data, tok=tok, t_mean=cfg.t_mean
    )
    seconds = time.perf_counter() - t0
    scores = gate_scores(net, data, cfg.sampler, tok)
    copy = np.mean([score_turn(s.images[0], s.images[0], s.images[0], s.images[1], s.masks_current[0],
                               s.masks_next[0]).passed for s in data])  # fmt: skip
    out = {
        **provenance(),
        "config": dataclasses.asdict(cfg),
        "sessions": len(data),
        "steps": args.steps,
        "train_seconds": seconds,
        "loss_first_100": float(np.mean(losses[:100])),
        "loss_last_100": float(np.mean(losses[-100:])),
        "memorised": scores,
        "copy_success": float(copy),
        "gate": 0.9,
        "met": bool(scores["success"] >= 0.9),
    }
    path = Path(__file__).parent / "results" / "vincie_overfit_gate.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n")
    print(json.dumps({k: out[k] for k in ("steps", "memorised", "copy_success", "met")}, indent=1))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
