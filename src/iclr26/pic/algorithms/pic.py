"""PIC-TD3: TD3 with a peer-influenced constraint ("Efficient Offline Reinforcement Learning via
Peer-Influenced Constraint", OpenReview bPWCIJyp1K).

Peers of a dataset state s are its K nearest dataset states (a table computed once per dataset; the
batch carries their actions as `peer_actions`). The candidate set is

    A'(s) = {a} ∪ {a_k : k = 1..K}                       (the state's own action and its peers' actions)
    a*(s) = argmax_{a' ∈ A'(s)} min_i Q_i(s, a')         ("max-min Q" over the critics, no gradient)

and the actor minimises

    L(π) = −β·Q1(s, π(s)) + δ·‖π(s) − a*(s)‖,   β = α / mean|Q1(s, π(s))| (detached, as TD3+BC)

Choices the paper leaves open, made here:
- ‖·‖ is the Euclidean norm per sample, averaged over the batch (`squared=True` switches to the
  squared norm Σ_j (π_j − a*_j)², which is TD3+BC's BC term up to the 1/act_dim of its mean);
- a* is scored with the current (not target) critics, on the steps that update the actor;
  ties go to the state's own action (index 0 of A');
- the critics, target smoothing, delays and state normalization are TD3+BC's, unchanged.

All B·(K+1) candidate pairs are scored in one batched critic call (on a CPU, in row blocks once a
stack of runs would push the activations out of cache: `score_block_rows`). That call is most of
PIC's extra cost (11x the rows of a critic forward at K = 10). Scoring modes (`score_dtype`, `rerank_top`):
- "auto" (default): "bfloat16" where the device computes bf16 natively (a CUDA GPU with bf16, a CPU
  with AVX512-BF16 or AMX), else "float32". Emulated bf16 is far slower than float32 (one
  max-min-Q call on 2,816 pairs: 574 ms against 13 ms on an AVX2-only EPYC). The choice is made
  when the algorithm is built and stored in its config, so each run's JSON records it;
- "float32": the exact argmax;
- "bfloat16" with `rerank_top = m >= 2` (default, m = 2): a bf16-autocast screen of all candidates,
  then the top m re-scored in float32 and the argmax taken among them. It returns the float32 argmax
  unless m other candidates outrank or tie it in bf16, i.e. lie within bf16's error (~0.5% of |Q|);
- "bfloat16" with `rerank_top = 0`: the bf16 argmax alone (fastest; near-ties may flip).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import torch

from iclr26.core.config import ConfigError
from iclr26.core.device import cpu_flags
from iclr26.core.validation import check_in
from iclr26.pic.algorithms.common import Batch, metric, require_peers, state_action
from iclr26.pic.algorithms.td3_bc import TD3BC, TD3BCConfig, q_normalizer
from iclr26.pic.networks import EnsembleMLP


@dataclass(frozen=True)
class PICConfig(TD3BCConfig):
    """PIC-TD3 hyper-parameters: TD3+BC's plus the peer-constraint weight."""

    delta: float = 1.0
    """δ, weight of the peer constraint (the paper uses 1–3)"""
    squared: bool = False
    """False: ‖π(s) − a*‖ as the paper writes it; True: the squared norm"""
    score_dtype: str = "auto"
    """candidate screen: "auto" (bf16 only where native), "bfloat16" (autocast) or "float32" (exact)"""
    rerank_top: int = 2
    """with bf16: re-score this many top candidates in float32 (0: the bf16 argmax alone)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_delta(self.delta)
        check_scoring(self.score_dtype, self.rerank_top)


def peer_candidates(actions: torch.Tensor, peer_actions: torch.Tensor) -> torch.Tensor:
    """A'(s) = {a} ∪ {peer actions}: (..., B, act_dim) and (..., B, K, act_dim) -> (..., B, K+1, act_dim),
    own first."""
    return torch.cat([actions.unsqueeze(-2), peer_actions], dim=-2)


def pick(candidates: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """candidates[..., b, index[..., b], :]: (..., B, M, act) and (..., B) -> (..., B, act)."""
    return candidates.take_along_dim(index[..., None, None], dim=-2).squeeze(-2)


def best_candidate(q_min: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
    """a* = argmax over candidates of q_min: (..., B, K+1) scores and (..., B, K+1, act_dim) candidates
    -> (..., B, act_dim)."""
    return pick(candidates, q_min.argmax(dim=-1))  # first maximum on ties: the own action wins a tie


SCORE_DTYPES = ("auto", "float32", "bfloat16")


def native_bf16(device: torch.device | str) -> bool:
    """Whether `device` does bf16 matmuls in hardware: CUDA with bf16, or a CPU with AVX512-BF16 / AMX."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and bool(cpu_flags() & {"avx512_bf16", "amx_bf16", "amx_tile"})


def resolve_score_dtype(score_dtype: str, device: torch.device | str) -> str:
    """`auto` -> `bfloat16` on hardware with native bf16, else `float32`; other values unchanged."""
    if score_dtype != "auto":
        return score_dtype
    return "bfloat16" if native_bf16(device) else "float32"


def check_scoring(score_dtype: str, rerank_top: int) -> None:
    """Raise ConfigError on an unknown scoring dtype or a re-rank count other than 0 or >= 2."""
    check_in("score_dtype", score_dtype, SCORE_DTYPES)
    if isinstance(rerank_top, bool) or not isinstance(rerank_top, int) or rerank_top < 0 or rerank_top == 1:
        # re-ranking only the bf16 winner would cost a float32 call and change nothing
        raise ConfigError(f"rerank_top must be 0 (bf16 argmax) or an int >= 2, got {rerank_top!r}")


def check_delta(delta: float) -> None:
    """Raise ConfigError unless the peer-constraint weight δ is a finite number >= 0."""
    ok = isinstance(delta, int | float) and not isinstance(delta, bool) and math.isfinite(delta)
    if not (ok and delta >= 0):
        raise ConfigError(f"delta must be >= 0 (a finite number), got {delta!r}")


SCORE_BLOCK = 8192
"""On a CPU, the most member-rows (critics × stacked runs × pairs) one scoring call computes. A plain
PIC screen (2 critics × 2,816 pairs) is one call; a stack of 6 runs (12 members) would hold 6× the
activations, out of cache, so its pairs are scored in blocks (`score_block_rows`). On the Xeon of the
README, blocks take 0.92× one call's time for PIC with 6 runs and 0.48× for EPIC (N = 10, 6 runs)."""
MIN_BLOCK_ROWS = 256
"""Fewest pairs per block: blocks of >= 100 rows score bitwise as one call here (a one-row block is a
matrix-vector product, which rounds differently); tested in tests/pic/test_algorithms.py."""


def score_block_rows(critic: torch.nn.Module, pairs: int, device: torch.device | str) -> int:
    """Pairs per critic call when scoring `pairs` pairs: all of them on a GPU (one launch); on a CPU,
    at most SCORE_BLOCK member-rows per call and at least MIN_BLOCK_ROWS pairs."""
    if torch.device(device).type != "cpu":
        return pairs
    members = getattr(critic, "runs", 1) * getattr(critic, "ensemble", 1)
    return max(MIN_BLOCK_ROWS, SCORE_BLOCK // members)


def min_q(
    critic: EnsembleMLP,
    obs: torch.Tensor,
    candidates: torch.Tensor,
    bf16: bool = False,
    block_rows: int | None = None,
) -> torch.Tensor:
    """min_i Q_i(s, a') for every candidate: obs (B, obs), candidates (B, M, act) -> (B, M), float32, or
    each with a leading run axis R for stacked runs. The B·M pairs go through the critic in blocks of
    `block_rows` (None: `score_block_rows`); each pair's score does not depend on its block.

    `critic` is any module mapping (n, obs + act) (or (R, n, obs + act)) to (E, n, 1) (or (R·E, n, 1)),
    an `EnsembleMLP` or a test double."""
    *lead, b, m, _ = candidates.shape
    pairs = state_action(obs.unsqueeze(-2), candidates).reshape(*lead, b * m, -1)  # (..., B·M, obs+act)
    step = block_rows or score_block_rows(critic, b * m, obs.device)
    with torch.autocast(obs.device.type, dtype=torch.bfloat16, enabled=bf16):
        blocks = [critic(pairs[..., i : i + step, :]).float() for i in range(0, b * m, step)]
    q = torch.cat(blocks, dim=-2).squeeze(-1).reshape(*lead, -1, b * m)  # (..., E, B·M)
    return q.amin(-2).reshape(*lead, b, m)  # min over critics


@torch.no_grad()
def max_min_q_action(
    critic: EnsembleMLP,
    obs: torch.Tensor,
    actions: torch.Tensor,
    peer_actions: torch.Tensor,
    score_dtype: str = "float32",
    rerank_top: int = 0,
    block_rows: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """a*(s) = argmax_{a' ∈ A'(s)} min_i Q_i(s, a') and the chosen index into A'(s) (own action = 0).

    float32 scores all B·(K+1) pairs exactly in one critic call. bfloat16 screens them under autocast;
    with rerank_top = m >= 2 the top m of each row (bf16 ties to the lower index) are re-scored in
    float32 and the argmax is taken among those (ties again to the lowest index, i.e. the own action).
    The defaults here are the exact mode; PIC's and EPIC's configs default to bf16 with m = 2.
    `block_rows`: pairs per critic call (None: `score_block_rows`; the choice does not change a score).
    """
    check_scoring(score_dtype, rerank_top)
    score_dtype = resolve_score_dtype(score_dtype, obs.device)
    candidates = peer_candidates(actions, peer_actions)  # (..., B, K+1, act_dim)
    k1 = candidates.shape[-2]
    bf16 = score_dtype == "bfloat16" and rerank_top < k1  # re-ranking all of them is float32 scoring
    q_min = min_q(critic, obs, candidates, bf16=bf16, block_rows=block_rows)  # (..., B, K+1)
    if not bf16 or rerank_top == 0:
        best = q_min.argmax(dim=-1)  # first maximum on ties: the own action wins a tie
    else:
        # the m best by bf16 score, bf16 ties to the lower index (stable sort), then in index order
        top = q_min.sort(dim=-1, descending=True, stable=True).indices[..., :rerank_top].sort(dim=-1).values
        few = candidates.take_along_dim(top.unsqueeze(-1), dim=-2)  # (..., B, m, act_dim)
        q_top = min_q(critic, obs, few, block_rows=block_rows)  # float32 re-score of the few
        best = top.gather(-1, q_top.argmax(dim=-1, keepdim=True)).squeeze(-1)
    return pick(candidates, best), best


def peer_distance(pi: torch.Tensor, a_star: torch.Tensor, squared: bool = False) -> torch.Tensor:
    """‖π(s) − a*‖ per sample (or its square): (..., B, act_dim) x2 -> (..., B)."""
    diff = pi - a_star
    return diff.pow(2).sum(-1) if squared else torch.linalg.vector_norm(diff, dim=-1)


def pic_actor_loss(
    q1_pi: torch.Tensor,
    pi: torch.Tensor,
    a_star: torch.Tensor,
    alpha: float,
    delta: float,
    squared: bool = False,
) -> torch.Tensor:
    """PIC-TD3 actor loss −β·mean Q1(s, π(s)) + δ·mean ‖π(s) − a*‖; q1_pi (B,), pi and a_star (B, act),
    or each with a leading run axis (one loss per run)."""
    beta = q_normalizer(q1_pi, alpha)
    return -beta * q1_pi.mean(-1) + delta * peer_distance(pi, a_star, squared).mean(-1)  # PIC-TD3 actor loss


class PIC(TD3BC):
    """PIC-TD3: TD3+BC's update with the behaviour-cloning term replaced by the peer constraint."""

    config_cls = PICConfig
    config: PICConfig

    def __init__(self, config: PICConfig, *parts: Any, **named_parts: Any) -> None:
        """TD3+BC's parts; `score_dtype="auto"` is resolved for the critics' device."""
        super().__init__(config, *parts, **named_parts)
        device = next(self.critic.parameters()).device
        self.config = replace(config, score_dtype=resolve_score_dtype(config.score_dtype, device))

    def actor_objective(self, obs: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, dict[str, Any]]:
        """PIC-TD3's actor loss per run on a normalized-state batch, and its metrics."""
        cfg = self.config
        peer_actions = require_peers(batch, "PIC")
        a_star, best = max_min_q_action(
            self.critic, obs, batch["actions"], peer_actions, cfg.score_dtype, cfg.rerank_top
        )
        pi = self.actor.single(obs)
        q1_pi = self.critic.member_value(state_action(obs, pi), 0)  # Q1 only, as in TD3
        loss = pic_actor_loss(q1_pi, pi, a_star, cfg.alpha, cfg.delta, cfg.squared)
        return loss, {
            "actor_loss": metric(loss),
            "q_pi": metric(q1_pi.mean(-1)),
            "peer_distance": metric(peer_distance(pi.detach(), a_star).mean(-1)),
            "peer_chosen": metric((best > 0).float().mean(-1)),  # share of a* that is a peer's action
        }
