"""Pilot of the whole pipeline before the system lands: train both translators on the synthetic
PHOENIX-like corpus, translate dev and test (test signers held out), label hallucinations by CHAIR,
fit token reliability on dev, and compare its detection AUC on test with the text baselines.

    python benchmarks/slt_reliability/pilot.py --epochs 8

Saves results/pilot.json. (The `slt_reliability` system, with both datasets, META, the analyses
and the figures, is the next step; see issue 24.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.slt_reliability import hallucination as H
from iclr26.slt_reliability import reliability as R
from iclr26.slt_reliability.data import make_corpus
from iclr26.slt_reliability.models import pad_tokens, pad_videos
from iclr26.slt_reliability.train import TrainConfig, bleu, train_translator, translate


def passes_for(model, samples, hyps, rest_pose, batch: int = 64) -> R.Passes:
    """The three passes over `hyps`, batched; the mismatched video is a near-length other sample."""
    video, lengths = pad_videos([torch.as_tensor(s.keypoints) for s in samples])
    tokens = pad_tokens(
        [[model.vocab.bos, *model.vocab.encode(h), model.vocab.eos] for h in hyps], model.vocab.pad
    )
    other = torch.as_tensor(R.choose_mismatched(lengths.numpy(), k=5, seed=0))
    out = []
    for b in range(0, len(samples), batch):
        sl = slice(b, b + batch)
        mismatched = (video[other[sl]], lengths[other[sl]])
        out.append(
            R.three_passes(model, video[sl], lengths[sl], tokens[sl], *mismatched, rest_pose=rest_pose)
        )
    return R.Passes.cat(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--out", type=Path, default=Path("runs/slt_pilot"))
    a = ap.parse_args()
    torch.set_num_threads(2)
    corpus = make_corpus("phoenix_like", seed=0, n_train=2000, n_dev=300, n_test=300)
    rest = torch.as_tensor(np.concatenate([s.keypoints for s in corpus.train[:200]]).mean(axis=0))
    rows = []
    for kind in ("gloss_based", "gloss_free"):
        t0 = time.perf_counter()
        model = train_translator(kind, corpus, TrainConfig(epochs=a.epochs), a.out / kind)
        split = {}
        for name in ("dev", "test"):
            samples = getattr(corpus, name)
            hyps = translate(model, samples)
            y = H.hallucinated(H.chair_scores(hyps, [s.entities for s in samples], corpus.entity_words))
            split[name] = (passes_for(model, samples, hyps, rest), y, hyps, samples)
        (p_dev, y_dev, _, _), (p_test, y_test, hyps, samples) = split["dev"], split["test"]
        grounding = 1 - np.asarray(R.TokenReliability().fit(p_dev, y_dev).sentence_score(p_test))
        row = {"model": kind, "test_bleu": round(bleu(hyps, [list(s.text) for s in samples]), 1)}
        row |= {
            "hallucinated_dev": round(float(y_dev.mean()), 3),
            "hallucinated_test": round(float(y_test.mean()), 3),
        }
        row |= {"auc": {"grounding": round(H.detection_metrics(y_test, grounding)["auc"], 3)}}
        row["seconds"] = round(time.perf_counter() - t0, 1)
        for k, v in H.text_baselines(p_test.logp_vid, p_test.entropy_vid, p_test.mask).items():
            row["auc"][k] = round(H.detection_metrics(y_test, np.asarray(v))["auc"], 3)
        rows.append(row)
        print(row, flush=True)
    out = Path(__file__).parent / "results" / "pilot.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**provenance(), "epochs": a.epochs, "rows": rows}, indent=1) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
