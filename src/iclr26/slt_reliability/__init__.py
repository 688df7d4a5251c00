"""Grounding or guessing ("Grounding or Guessing? Token Reliability for Sign Language
Translation", ICLR 2026, arXiv 2510.18439): how much a translator's decoder uses the video, token by
token, and whether that predicts hallucination. In progress (issue 24): the synthetic signing
corpus (`data`, `loader`), the gloss-based and gloss-free translators (`models`, `train`), the
reliability measure (`reliability`) and the labels, baselines and metrics (`hallucination`) are
here; the system (`iclr26 run slt_reliability`) is not yet.
"""
