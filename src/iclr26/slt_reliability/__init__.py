"""Grounding or guessing ("Grounding or Guessing? Token Reliability for Sign Language
Translation", ICLR 2026, arXiv 2510.18439): how much a translator's decoder uses the video, token by
token, and whether that predicts hallucination.

Public API:
- data: `make_corpus` (the synthetic phoenix_like / csl_like corpora), `Sample`, `Corpus`,
  `loader.load_keypoint_corpus` (PHOENIX-style CSV + `.npy` from a local folder);
- translators: `train_translator` (gloss-based with a CTC head, or gloss-free), `translate`, `bleu`;
- reliability: `three_passes`, `TokenReliability` (r_t, the tail-pooled R and its isotonic calibration),
  `score_split` (translate, label and score one split);
- labels and baselines: `chair`, `text_baselines`, `MetaDetector`, `detection_metrics`;
- analyses: `degrade` (noise, temporal downsampling, frame drop);
- `SYSTEM` for `iclr26 run slt_reliability`.
"""

from iclr26.core.system import system_attributes
from iclr26.slt_reliability.data import Corpus, Sample, make_corpus
from iclr26.slt_reliability.degrade import degrade
from iclr26.slt_reliability.hallucination import MetaDetector, chair, detection_metrics, text_baselines
from iclr26.slt_reliability.reliability import TokenReliability, three_passes
from iclr26.slt_reliability.score import score_split
from iclr26.slt_reliability.train import bleu, train_translator, translate

__all__ = [
    "Corpus",
    "MetaDetector",
    "Sample",
    "TokenReliability",
    "bleu",
    "chair",
    "degrade",
    "detection_metrics",
    "make_corpus",
    "score_split",
    "text_baselines",
    "three_passes",
    "train_translator",
    "translate",
]

__getattr__ = system_attributes(__name__)
