"""Token reliability of a sign-language translator: how much each generated token uses the video.

Paper: *Grounding or Guessing? Token reliability for sign-language translation* (arXiv 2510.18439, no
public code). Each generated token is scored by three teacher-forced passes over the hypothesis — the
clean video x, the video masked (x_0) and a mismatched video x' from another sample — and

- s_hid = arccos(cos(h_vid, h_0)) / π                                              Eq. (1)
- s_attn = Q(m_vid − m_0), m = cross-attention mass on the video (mean over layers and heads),
  Q the quantile scaling fitted on training tokens                                   Eq. (2)
- p_cf = max(p_0, p_mis)                                                             Eq. (3)
- g_t = [s_log, s_logit, σ(s_log), d_clean, d_mis, p_vid, p_cf] with s_log = log p_vid − log p_cf,
  s_logit = z_vid − max(z_0, z_mis), d_clean = p_vid − p_0, d_mis = p_vid − p_mis    Eq. (4)
- r_t = σ(w_fb·[s_hid, s_attn] + w_cf·g_t + b)                                       Eq. (5)
- R = mean of the ⌈q·T⌉ lowest r_t, q = 0.1                                          Eq. (6)
- rate = isotonic(1 − R), the calibrated hallucination rate                          Eq. (7)

The paper leaves open which layer h comes from, how the mismatched video is chosen and how the weights
are fitted from sentence labels; the choices made here:

- **h** is `DecoderOutput.hidden`, the output of the last decoder layer at the position that predicts
  the token (position i predicts token i + 1).
- **masked video** (`mask_video`): every valid frame is replaced by one rest pose (the training set's
  mean pose, zeros when none is given); length, padding frames and tokens are unchanged, so only the
  visual content changes.
- **mismatched video** (`choose_mismatched`): for sample i, one of the k samples of the pool (the test
  set) whose length is nearest to i's, j ≠ i, drawn with a seeded generator; `three_passes` then
  resamples x' in time to i's length (`fit_length`), so lengths and padding are unchanged too.
- **mass on the video** (`video_attention_mass`): with a plain softmax over the memory the attention on
  unpadded positions always sums to 1, so "mass on the video" needs somewhere else to go. If the model
  prepends `n_null_slots` learned null ("no video") slots to its memory, the mass is the attention on
  the video positions, 1 − attention on the null slots ("null_slot"). Without null slots it is the
  attention's concentration over the video, 1 − H(a)/log S_video ("concentration"): a masked video
  gives near-identical memory rows, hence near-uniform attention and concentration near 0.
- **weights** (`TokenReliability.fit`, `fit="token"`): a logistic regression predicting "grounded"
  (1 − the sentence's hallucination label) from each token's 9 features, each token weighted 1/T so
  that every sentence counts once; `fit="pooled"` then refines w, b by maximising the likelihood of
  the sentence labels under R (Eq. 6) itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, Protocol

import numpy as np
import torch
from einops import reduce
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

FEATURE_NAMES: tuple[str, ...] = (
    "s_hid",
    "s_attn",
    "s_log",
    "s_logit",
    "s_prob",
    "d_clean",
    "d_mis",
    "p_vid",
    "p_cf",
)
"""the 9 token features of Eq. (5): the two grounding signals, then the 7-dim counterfactual vector g_t"""


class Vocab(Protocol):
    pad: int
    bos: int
    eos: int


class Translator(Protocol):
    """The interface the translators expose (encoder–decoder transformers with cross-attention)."""

    vocab: Vocab

    def encode(self, video: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, 50, 2), (B,) -> memory (B, S, d), memory_pad_mask (B, S) bool, True = pad."""
        ...

    def decode(self, memory: torch.Tensor, memory_pad_mask: torch.Tensor, tokens: torch.Tensor) -> Any:
        """-> DecoderOutput(logits (B, L, V), hidden (B, L, d), cross_attn (B, n_layers, n_heads, L, S))."""
        ...


@dataclass(frozen=True)
class ReliabilityConfig:
    """How tokens are scored and how r_t is fitted; defaults are the paper's where it gives one."""

    tail_q: float = 0.1
    """q: the sentence score is the mean of the ⌈q·T⌉ lowest token reliabilities (Eq. 6)"""
    n_quantiles: int = 101
    """quantiles of the training Δ-mass kept by the s_attn scaling (Eq. 2)"""
    include_eos: bool = False
    """score the end-of-sentence token too (a hypothesis with no other token always scores its eos)"""
    attn_mass: Literal["auto", "null_slot", "concentration"] = "auto"
    """mass on the video: null_slot if the model has null slots (auto), else concentration"""
    fit: Literal["token", "pooled"] = "token"
    """weights: token-level logistic regression on sentence labels, or that refined on pooled R"""
    C: float = 1.0
    """inverse L2 strength of the logistic regression (on standardised features)"""
    pooled_steps: int = 300
    """Adam steps of the pooled refinement"""
    pooled_lr: float = 0.05
    """learning rate of the pooled refinement"""
    mismatch_k: int = 5
    """the mismatched video is drawn among the k pool samples nearest in length"""
    seed: int = 0
    """seed of the mismatched-video draw"""

    def __post_init__(self) -> None:
        if not 0.0 < self.tail_q <= 1.0:
            raise ValueError(f"tail_q={self.tail_q}: must lie in (0, 1]")
        if self.n_quantiles < 2:
            raise ValueError(f"n_quantiles={self.n_quantiles}: need at least 2")
        if self.attn_mass not in ("auto", "null_slot", "concentration"):
            raise ValueError(f"attn_mass={self.attn_mass!r}: use 'auto', 'null_slot' or 'concentration'")
        if self.fit not in ("token", "pooled"):
            raise ValueError(f"fit={self.fit!r}: use 'token' or 'pooled'")
        if self.C <= 0:
            raise ValueError(f"C={self.C}: must be positive")
        if self.mismatch_k < 1:
            raise ValueError(f"mismatch_k={self.mismatch_k}: must be at least 1")


@dataclass
class Passes:
    """Per-token outputs of the three passes; every field is (B, N) (h: (B, N, d)), N = L − 1 targets.

    `mask` marks the scored tokens (not pad; not eos unless `include_eos`). Suffixes: `_vid` clean video,
    `_0` masked video, `_mis` mismatched video. `logp` is log p of the generated token, `z` its logit,
    `attn` the cross-attention mass on the video (mean over layers and heads), `entropy_vid` the entropy
    of the clean next-token distribution (for the text baselines).
    """

    target: torch.Tensor
    mask: torch.Tensor
    logp_vid: torch.Tensor
    logp_0: torch.Tensor
    logp_mis: torch.Tensor
    z_vid: torch.Tensor
    z_0: torch.Tensor
    z_mis: torch.Tensor
    h_vid: torch.Tensor
    h_0: torch.Tensor
    attn_vid: torch.Tensor
    attn_0: torch.Tensor
    entropy_vid: torch.Tensor

    @property
    def p_vid(self) -> torch.Tensor:
        return self.logp_vid.exp()

    @property
    def p_0(self) -> torch.Tensor:
        return self.logp_0.exp()

    @property
    def p_mis(self) -> torch.Tensor:
        return self.logp_mis.exp()

    @property
    def n_sentences(self) -> int:
        return int(self.target.shape[0])

    @staticmethod
    def cat(passes: Sequence[Passes]) -> Passes:
        """Concatenate batches along B, right-padding N (padded tokens get mask False)."""
        if not passes:
            raise ValueError("passes: got an empty sequence, need at least one batch")
        n_max = max(p.target.shape[1] for p in passes)
        out = {}
        for f in fields(Passes):
            parts = []
            for p in passes:
                x = getattr(p, f.name)
                pad = n_max - x.shape[1]
                if pad:
                    shape = (x.shape[0], pad, *x.shape[2:])
                    x = torch.cat([x, torch.zeros(shape, dtype=x.dtype)], dim=1)
                parts.append(x)
            out[f.name] = torch.cat(parts, dim=0)
        return Passes(**out)

    def select(self, index: Sequence[int] | np.ndarray | torch.Tensor) -> Passes:
        """The sentences at `index`."""
        idx = torch.as_tensor(np.asarray(index), dtype=torch.long)
        return Passes(**{f.name: getattr(self, f.name)[idx] for f in fields(Passes)})


# --------------------------------------------------------------------------- the counterfactual inputs


def mask_video(
    video: torch.Tensor, lengths: torch.Tensor, rest_pose: torch.Tensor | None = None
) -> torch.Tensor:
    """x_0: every valid frame replaced by `rest_pose` (50, 2) (zeros if None); padding frames kept.

    video (B, T, K, 2), lengths (B,) -> (B, T, K, 2).
    """
    if rest_pose is None:
        rest_pose = torch.zeros(video.shape[2:], dtype=video.dtype, device=video.device)
    rest_pose = torch.as_tensor(rest_pose, dtype=video.dtype, device=video.device)
    if rest_pose.shape != video.shape[2:]:
        raise ValueError(
            f"rest_pose: shape {tuple(rest_pose.shape)} does not match the frames {tuple(video.shape[2:])}"
        )
    valid = torch.arange(video.shape[1], device=video.device)[None, :] < lengths.to(video.device)[:, None]
    return torch.where(valid[:, :, None, None], rest_pose.expand_as(video), video)


def fit_length(
    source: torch.Tensor, source_lengths: torch.Tensor, like: torch.Tensor, like_lengths: torch.Tensor
) -> torch.Tensor:
    """x' resampled in time (nearest earlier frame) to the lengths of `like`; `like`'s padding frames kept.

    source (B, T', K, 2), source_lengths (B,), like (B, T, K, 2), like_lengths (B,) -> (B, T, K, 2).
    """
    out = like.clone()
    for b in range(like.shape[0]):
        t_src, t_dst = int(source_lengths[b]), int(like_lengths[b])
        idx = torch.div(torch.arange(t_dst) * t_src, t_dst, rounding_mode="floor")
        out[b, :t_dst] = source[b, idx.to(source.device)].to(out)
    return out


def choose_mismatched(
    lengths: Sequence[int] | np.ndarray | torch.Tensor, k: int = 5, seed: int = 0
) -> np.ndarray:
    """For each pool sample i, a j ≠ i drawn uniformly among the k samples nearest to i in length.

    Ties in length distance go to the lower index; lengths (n,) -> indices (n,).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    if n < 2:
        raise ValueError(f"lengths: a mismatched video needs a pool of at least 2 samples, got {n}")
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        dist = np.abs(lengths - lengths[i]).astype(np.float64)
        dist[i] = np.inf
        nearest = np.argsort(dist, kind="stable")[: min(k, n - 1)]
        out[i] = nearest[rng.integers(len(nearest))]
    return out


def _check_video(video: torch.Tensor, lengths: torch.Tensor, name: str) -> None:
    if video.ndim != 4:
        raise ValueError(f"{name}: expected (B, T, K, 2), got shape {tuple(video.shape)}")
    if lengths.shape != (video.shape[0],):
        raise ValueError(f"{name}: lengths shape {tuple(lengths.shape)}, expected ({video.shape[0]},)")
    for b in range(video.shape[0]):
        t = int(lengths[b])
        if not 0 < t <= video.shape[1]:
            raise ValueError(f"{name}: sample {b} has length {t}, outside 1..{video.shape[1]}")
        if not torch.isfinite(video[b, :t]).all():
            raise ValueError(f"{name}: sample {b} has NaN or infinite keypoints; impute or drop it")


# --------------------------------------------------------------------------- the three passes


def video_attention_mass(
    cross_attn: torch.Tensor,
    memory_pad_mask: torch.Tensor,
    n_null_slots: int = 0,
    definition: Literal["null_slot", "concentration"] = "null_slot",
) -> torch.Tensor:
    """m: cross-attention mass on the video, averaged over layers and heads (the quantity of Eq. 2).

    cross_attn (B, n_layers, n_heads, L, S), memory_pad_mask (B, S) -> (B, L).
    null_slot: Σ_{s video} a_s, the video positions being the unpadded ones after the n_null_slots leading
    slots. concentration: 1 − H(a|video)/log S_video, the attention renormalised on the video positions.
    """
    is_video = ~memory_pad_mask.bool()
    is_video[:, :n_null_slots] = False
    video = is_video[:, None, None, None, :].to(cross_attn.dtype)
    a = cross_attn * video
    if definition == "null_slot":
        if n_null_slots < 1:
            raise ValueError(
                "definition='null_slot' needs a model with n_null_slots ≥ 1; use 'concentration'"
            )
        m = a.sum(-1)
    elif definition == "concentration":
        a = a / a.sum(-1, keepdim=True).clamp_min(1e-12)
        entropy = -(a * a.clamp_min(1e-12).log()).sum(-1)
        s_video = is_video.sum(-1).to(cross_attn.dtype)[:, None, None, None]
        m = 1.0 - entropy / s_video.log().clamp_min(1e-12)
    else:
        raise ValueError(f"definition={definition!r}: use 'null_slot' or 'concentration'")
    return reduce(m, "b layer head l -> b l", "mean")


def _check_token_ids(tokens: torch.Tensor, vocab_size: int) -> None:
    over = ((tokens >= vocab_size) | (tokens < 0)).any(-1).nonzero()
    if len(over):
        raise ValueError(
            f"tokens: sample {int(over[0])} has token ids outside 0..{vocab_size - 1}, the model's "
            "vocabulary; encode the hypotheses with this model's `vocab`"
        )


def _scored_mask(target: torch.Tensor, vocab: Vocab, include_eos: bool) -> torch.Tensor:
    mask = target != vocab.pad
    if not include_eos:
        words = mask & (target != vocab.eos)
        empty = ~words.any(-1, keepdim=True)  # a hypothesis with no word: score its eos
        mask = torch.where(empty, mask, words)
    return mask


def _model_device(model: Any) -> torch.device:
    params = getattr(model, "parameters", None)
    if callable(params):
        for p in params():
            return p.device
    return torch.device("cpu")


def three_passes(
    model: Translator,
    video: torch.Tensor,
    lengths: torch.Tensor,
    tokens: torch.Tensor,
    mismatched_video: torch.Tensor,
    mismatched_lengths: torch.Tensor,
    rest_pose: torch.Tensor | None = None,
    config: ReliabilityConfig | None = None,
) -> Passes:
    """The three teacher-forced passes over the generated tokens, one batched call each.

    video (B, T, 50, 2) float, lengths (B,), tokens (B, L) = bos + hypothesis (+ eos, then pad),
    mismatched_video (B, T', 50, 2) with mismatched_lengths (B,) the chosen x' per row (see
    `choose_mismatched`). The decoder reads tokens[:, :-1] and is scored on tokens[:, 1:]. The masked and
    mismatched videos have the clean video's shape, lengths and padding frames; only valid frames differ.
    """
    config = config or ReliabilityConfig()
    lengths, mismatched_lengths = torch.as_tensor(lengths), torch.as_tensor(mismatched_lengths)
    tokens = torch.as_tensor(tokens, dtype=torch.long)
    _check_video(video, lengths, "video")
    _check_video(mismatched_video, mismatched_lengths, "mismatched_video")
    if tokens.ndim != 2 or tokens.shape[0] != video.shape[0] or tokens.shape[1] < 2:
        raise ValueError(f"tokens: expected ({video.shape[0]}, L ≥ 2), got shape {tuple(tokens.shape)}")
    vocab = model.vocab
    bad = (tokens[:, 0] != vocab.bos).nonzero()
    if len(bad):
        raise ValueError(f"tokens: sample {int(bad[0])} does not start with bos={vocab.bos}")
    if hasattr(vocab, "__len__"):
        _check_token_ids(tokens, len(vocab))
    n_null = int(getattr(model, "n_null_slots", 0))
    definition = config.attn_mass
    if definition == "auto":
        definition = "null_slot" if n_null > 0 else "concentration"

    x_0 = mask_video(video, lengths, rest_pose)
    x_mis = fit_length(mismatched_video, mismatched_lengths, video, lengths)
    dec_in, target = tokens[:, :-1], tokens[:, 1:]
    device = _model_device(model)
    was_training = bool(getattr(model, "training", False))
    if hasattr(model, "eval"):
        model.eval()
    outs = []
    try:
        with torch.inference_mode():
            for x in (video, x_0, x_mis):
                memory, pad_mask = model.encode(x.to(device), lengths.to(device))
                out = model.decode(memory, pad_mask, dec_in.to(device))
                outs.append((out, pad_mask))
    finally:
        if was_training and hasattr(model, "train"):
            model.train()

    _check_token_ids(tokens, outs[0][0].logits.shape[-1])
    tgt = target.to(device)[..., None]
    per_pass = []
    for out, pad_mask in outs:
        logits = out.logits.float()
        logp_all = logits.log_softmax(-1)
        per_pass.append(
            dict(
                logp=logp_all.gather(-1, tgt)[..., 0].cpu(),
                z=logits.gather(-1, tgt)[..., 0].cpu(),
                h=out.hidden.float().cpu(),
                attn=video_attention_mass(out.cross_attn.float(), pad_mask, n_null, definition).cpu(),
                entropy=-(logp_all.exp() * logp_all).sum(-1).cpu(),
            )
        )
    vid, zero, mis = per_pass
    return Passes(
        target=target.cpu(),
        mask=_scored_mask(target, vocab, config.include_eos).cpu(),
        logp_vid=vid["logp"],
        logp_0=zero["logp"],
        logp_mis=mis["logp"],
        z_vid=vid["z"],
        z_0=zero["z"],
        z_mis=mis["z"],
        h_vid=vid["h"],
        h_0=zero["h"],
        attn_vid=vid["attn"],
        attn_0=zero["attn"],
        entropy_vid=vid["entropy"],
    )


# --------------------------------------------------------------------------- the signals


def s_hid(h_vid: torch.Tensor, h_0: torch.Tensor) -> torch.Tensor:
    """Angle between the decoder states with and without video, in [0, 1]; (..., d) -> (...)."""
    cos = torch.nn.functional.cosine_similarity(h_vid, h_0, dim=-1, eps=1e-12)
    return torch.arccos(cos.clamp(-1.0, 1.0)) / math.pi  # Eq. (1)


def counterfactual_features(passes: Passes) -> torch.Tensor:
    """g_t = [s_log, s_logit, s_prob, d_clean, d_mis, p_vid, p_cf], the counterfactual vector; (B, N, 7)."""
    logp_cf = torch.maximum(passes.logp_0, passes.logp_mis)  # Eq. (3): p_cf = max(p_0, p_mis)
    s_log = passes.logp_vid - logp_cf  # Eq. (4)
    s_logit = passes.z_vid - torch.maximum(passes.z_0, passes.z_mis)
    p_vid = passes.p_vid
    g = [s_log, s_logit, torch.sigmoid(s_log), p_vid - passes.p_0, p_vid - passes.p_mis, p_vid, logp_cf.exp()]
    return torch.stack(g, dim=-1)


class QuantileScaler:
    """Q of Eq. (2): the empirical CDF of the training values (linear between n_quantiles quantiles)."""

    def __init__(self, n_quantiles: int = 101) -> None:
        self.n_quantiles = n_quantiles

    def fit(self, x: np.ndarray | torch.Tensor) -> QuantileScaler:
        x = np.asarray(x, dtype=np.float64).ravel()
        if x.size == 0:
            raise ValueError("x: cannot fit the quantile scaling on no tokens")
        self.references_ = np.linspace(0.0, 1.0, self.n_quantiles)
        self.quantiles_ = np.quantile(x, self.references_)
        return self

    def transform(self, x: np.ndarray | torch.Tensor) -> np.ndarray:
        if not hasattr(self, "quantiles_"):
            raise RuntimeError("QuantileScaler: call fit before transform")
        x = np.asarray(x, dtype=np.float64)
        # interpolate increasing and decreasing, then average: ties among quantiles map to their middle
        up = np.interp(x, self.quantiles_, self.references_)
        down = -np.interp(-x, -self.quantiles_[::-1], -self.references_[::-1])
        return 0.5 * (up + down)


def token_features(passes: Passes, attn_scaler: QuantileScaler) -> torch.Tensor:
    """The 9 features of Eq. (5) in FEATURE_NAMES order; (B, N, 9)."""
    hid = s_hid(passes.h_vid, passes.h_0)
    delta = (passes.attn_vid - passes.attn_0).double().numpy()
    attn = torch.from_numpy(attn_scaler.transform(delta)).to(hid.dtype)  # Eq. (2)
    return torch.cat([hid[..., None], attn[..., None], counterfactual_features(passes).to(hid.dtype)], -1)


def tail_k(n_tokens: torch.Tensor | int, q: float = 0.1) -> torch.Tensor:
    """⌈q·T⌉ (at least 1), robust to float error (q·T = 3.0000000000000004 gives 3)."""
    t = torch.as_tensor(n_tokens, dtype=torch.float64)
    return torch.ceil(torch.round(q * t, decimals=9)).clamp_min(1).long()


def tail_pool(r: torch.Tensor, mask: torch.Tensor, q: float = 0.1) -> torch.Tensor:
    """R: mean of the ⌈q·T⌉ lowest r_t over each row's scored tokens (Eq. 6); (B, N), (B, N) -> (B,)."""
    mask = mask.bool()
    n_tokens = mask.sum(-1)
    if (n_tokens == 0).any():
        raise ValueError(f"mask: sentence {int((n_tokens == 0).nonzero()[0])} has no scored token")
    k = tail_k(n_tokens, q).to(r.device)
    ranked = torch.where(mask, r, torch.full_like(r, float("inf"))).sort(-1).values
    in_tail = torch.arange(r.shape[-1], device=r.device)[None, :] < k[:, None]
    return torch.where(in_tail, ranked, torch.zeros_like(ranked)).sum(-1) / k.to(r.dtype)  # Eq. (6)


class TokenReliability:
    """r_t (Eq. 5), its sentence pooling R (Eq. 6) and the isotonic calibration of 1 − R (Eq. 7).

    Fitted state: `attn_scaler_`, `w_` (9,), `b_` (in raw feature units), `calibration_`.
    """

    def __init__(self, config: ReliabilityConfig | None = None) -> None:
        self.config = config or ReliabilityConfig()

    def fit(self, passes: Passes, hallucinated: Sequence[int] | np.ndarray) -> TokenReliability:
        """Fit Q, then w and b from sentence labels (1 = hallucinated), then the calibration."""
        y = np.asarray(hallucinated, dtype=np.int64).ravel()
        if y.shape != (passes.n_sentences,):
            raise ValueError(f"hallucinated: {y.shape[0]} labels for {passes.n_sentences} sentences")
        if len(np.unique(y)) < 2:
            raise ValueError("hallucinated: the training sentences need both labels (0 and 1)")
        mask = passes.mask.bool()
        delta = (passes.attn_vid - passes.attn_0)[mask].double().numpy()
        self.attn_scaler_ = QuantileScaler(self.config.n_quantiles).fit(delta)
        feats = token_features(passes, self.attn_scaler_)
        x = feats[mask].double().numpy()
        sent = np.broadcast_to(np.arange(passes.n_sentences)[:, None], mask.shape)[mask.numpy()]
        grounded = 1 - y[sent]
        weight = 1.0 / mask.sum(-1).double().numpy()[sent]  # each sentence counts once
        mu, sd = x.mean(0), x.std(0)
        sd = np.where(sd > 1e-12, sd, 1.0)
        lr = LogisticRegression(C=self.config.C, max_iter=2000, class_weight="balanced")
        lr.fit((x - mu) / sd, grounded, sample_weight=weight)
        self.w_ = lr.coef_[0] / sd  # back to raw feature units
        self.b_ = float(lr.intercept_[0] - (lr.coef_[0] * mu / sd).sum())
        if self.config.fit == "pooled":
            self._fit_pooled(feats, mask, y, mu, sd)
        self.calibration_ = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        self.calibration_.fit(1.0 - self.sentence_score(passes).numpy(), y)  # Eq. (7)
        return self

    def _fit_pooled(
        self, feats: torch.Tensor, mask: torch.Tensor, y: np.ndarray, mu: np.ndarray, sd: np.ndarray
    ):
        """Refine (w, b) by the sentence log-likelihood of "grounded" with probability R."""
        x = (feats.double() - torch.from_numpy(mu)) / torch.from_numpy(sd)
        w = torch.tensor(self.w_ * sd, requires_grad=True)
        b = torch.tensor(self.b_ + float((self.w_ * mu).sum()), requires_grad=True)
        grounded = torch.from_numpy(1.0 - y.astype(np.float64))
        pos = grounded.mean().clamp(1e-6, 1 - 1e-6)
        balance = torch.where(grounded > 0.5, 0.5 / pos, 0.5 / (1 - pos))
        opt = torch.optim.Adam([w, b], lr=self.config.pooled_lr)
        for _ in range(self.config.pooled_steps):
            r = torch.sigmoid(x @ w + b)
            big_r = tail_pool(r, mask, self.config.tail_q).clamp(1e-6, 1 - 1e-6)
            nll = -(balance * (grounded * big_r.log() + (1 - grounded) * (1 - big_r).log())).mean()
            opt.zero_grad()
            nll.backward()
            opt.step()
        w_std = w.detach().numpy()
        self.w_ = w_std / sd
        self.b_ = float(b.detach()) - float((w_std * mu / sd).sum())

    def _check_fitted(self) -> None:
        if not hasattr(self, "w_"):
            raise RuntimeError("TokenReliability: call fit first (or set attn_scaler_, w_, b_)")

    def token_reliability(self, passes: Passes) -> torch.Tensor:
        """r_t = σ(w·f_t + b) (Eq. 5); (B, N), 0 at unscored positions."""
        self._check_fitted()
        feats = token_features(passes, self.attn_scaler_).double()
        r = torch.sigmoid(feats @ torch.as_tensor(self.w_, dtype=torch.float64) + self.b_)
        return torch.where(passes.mask.bool(), r, torch.zeros_like(r))

    def sentence_score(self, passes: Passes) -> torch.Tensor:
        """R, the tail-pooled reliability of each sentence (Eq. 6); (B,)."""
        return tail_pool(self.token_reliability(passes), passes.mask, self.config.tail_q)

    def hallucination_rate(self, passes: Passes) -> np.ndarray:
        """The calibrated hallucination rate isotonic(1 − R) (Eq. 7); (B,)."""
        if not hasattr(self, "calibration_"):
            raise RuntimeError("TokenReliability: call fit first")
        return self.calibration_.predict(1.0 - self.sentence_score(passes).numpy())
