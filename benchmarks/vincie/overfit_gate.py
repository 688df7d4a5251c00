"""VINCIE's overfit gate (issue 61): can the session model memorise 64 grid sessions?

    python benchmarks/vincie/overfit_gate.py                 # 6,000 steps (the gate's config)
    python benchmarks/vincie/overfit_gate.py --rotary-only   # the same without the (row, column) embedding
    python benchmarks/vincie/overfit_gate.py --steps 3000

Trains the grid arms' session model with vincie's proxy tasks on 64 one-edit grid sessions (checkpointed
in --out, so a rerun resumes or only evaluates) and judges every turn with the true history as context
(masks first) beside copy-the-input. The gate is >= 90% judge success. By edit type, it also reports the
judge's success and the share of turns whose one-step prediction from pure noise (x0 = x1 - v(x1, 1), the
model's estimate of the next image before any sampling) is exact by cells: that separates what the
model learned from what the sampler makes of it. Saves results/vincie_overfit_gate[_rotary_only].json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.vincie.editing import to_image
from iclr26.vincie.flow import model_input
from iclr26.vincie.grid import decode, vocabulary
from iclr26.vincie.grid_study import GATE, gate_draws, gate_scores
from iclr26.vincie.judge import score_turn
from iclr26.vincie.model import SessionDiT
from iclr26.vincie.sequence import ProxyConfig, Tokenizer, collate, layout
from iclr26.vincie.train import train_session_model


def one_step_exact(net: SessionDiT, data: list, tok: Tokenizer) -> list[bool]:
    """Per session: is x0 = x1 − v(x1, t = 1), from pure noise with the true context, exact by cells?"""
    batch = collate([layout(s, 0, "next_image", tok, net.cfg.max_words) for s in data])
    noise = torch.randn(batch.frames.shape, generator=torch.Generator().manual_seed(1))
    t = torch.ones(len(data))
    with torch.no_grad():
        x0 = noise - net(model_input(batch, noise), batch.block, batch.index, batch.words, t)
    last = batch.target.float().argmax(1)
    return [bool((decode(to_image(x0[i, last[i]])) == decode(s.images[1])).all()) for i, s in enumerate(data)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=GATE.train.steps)
    ap.add_argument("--rotary-only", action="store_true", help="no learned (row, column) embedding")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/vincie_gate"))
    args = ap.parse_args()
    if args.steps < 1:
        print(f"error: --steps must be >= 1, got {args.steps}", file=sys.stderr)
        raise SystemExit(2)
    torch.set_num_threads(1)
    model = dataclasses.replace(GATE.model, absolute_positions=not args.rotary_only)
    cfg = dataclasses.replace(GATE, model=model, train=dataclasses.replace(GATE.train, steps=args.steps))
    tag = "_rotary_only" if args.rotary_only else ""
    args.out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(vocabulary())
    draws = gate_draws()
    data, kinds = [s for s, _ in draws], [k[0] for _, k in draws]
    t0 = time.perf_counter()
    checkpoint = args.out / f"gate{tag}_{args.steps}.pt"
    net, losses = train_session_model(
        cfg.model, ProxyConfig(), cfg.train, data=data, tok=tok, t_mean=cfg.t_mean, checkpoint=checkpoint
    )
    seconds = time.perf_counter() - t0
    scores = gate_scores(net, data, cfg.sampler, tok)
    one_step = one_step_exact(net, data, tok)
    by_kind: dict[str, list] = defaultdict(list)
    for kind, passed, exact in zip(kinds, scores.pop("passed"), one_step, strict=True):
        by_kind[kind].append((passed, exact))
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
        "one_step_exact": float(np.mean(one_step)),
        "by_edit": {
            k: {
                "turns": len(v),
                "success": float(np.mean([p for p, _ in v])),
                "one_step_exact": float(np.mean([e for _, e in v])),
            }
            for k, v in sorted(by_kind.items())
        },
        "copy_success": float(copy),
        "gate": 0.9,
        "met": bool(scores["success"] >= 0.9),
    }
    path = Path(__file__).parent / "results" / f"vincie_overfit_gate{tag}.json"
    path.write_text(json.dumps(out, indent=1, default=str) + "\n")
    print(
        json.dumps({k: out[k] for k in ("steps", "memorised", "one_step_exact", "by_edit", "met")}, indent=1)
    )
    print(f"saved {path}")


if __name__ == "__main__":
    main()
