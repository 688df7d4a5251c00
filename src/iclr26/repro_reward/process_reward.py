"""RePro's process-level reward inside RLVR (arXiv 2512.01925).

For each response, the top-k reasoning segments by first-token entropy are scored: J̃ after each of
them (and J_b before any) gives the composite scores S_0..S_k (`scores.trajectory_scores`), and

    r_j = S_j − S_{j−1}                          process reward of the j-th scored segment
    r̃_j = (r_j − mean(R)) / (std(R) + ε)         R = every r of the response's group (or batch),
                                                  normalised apart from the outcome reward
    A_τ = A + α · Σ_{j : seg(j) ≥ seg(τ)} r̃_j     per-token advantage, α = 0.1

where A is the outcome (group-normalised GRPO) advantage of the response and seg(τ) the segment
that token τ lies in: a token earns the return of the process rewards from its own segment on.
Tokens after the last scored segment (the answer) keep A.

`ReProAdvantage` is the `token_advantages` hook of `rlvr.grpo.GRPOTrainer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import torch

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.repro_reward.scores import RankCorr, trajectory_scores
from iclr26.repro_reward.segments import first_token_entropy, segment_completion, select_top_k
from iclr26.repro_reward.surrogate import answer_ids, surrogate_objective
from iclr26.rlvr.grpo import Rollout
from iclr26.rlvr.policy import Policy

Norm = Literal["group", "batch", "none"]


@dataclass(frozen=True)
class ReProConfig:
    """RePro settings. Defaults: the paper's where it states them (α, blank-line segments, k in
    10-30, a small stability weight); our choice otherwise (README, "Choices")."""

    alpha: float = 0.1
    """α: weight of the process return in the per-token advantage (paper: 0.1)"""
    w: float = 0.2
    """stability weight in S = (1 − w)·S_magn + w·S_stab (paper: smaller is better)"""
    top_k: int = 20
    """segments scored per response, by first-token entropy (paper: 10-30)"""
    sep: str = "\n\n"
    """segment separator (paper: blank lines; arithmetic testbed: a newline)"""
    stop: str | None = None
    """reasoning ends at the first segment starting with this (testbed: "A:"; None: no stop)"""
    answer_prefix: str = ""
    """unscored text between the reasoning prefix and the answer (testbed: "A:")"""
    answer_template: str = "{answer}"
    """the scored ground-truth answer text; {answer} is Problem.answer"""
    rank_corr: RankCorr = "kendall"
    """rank correlation of the stability score: kendall or spearman"""
    ema_beta: float | None = None
    """EMA smoothing of J before the stability score, β in [0, 1) (None: off)"""
    norm: Norm = "group"
    """process rewards normalised over the group, the batch, or not at all (none)"""
    norm_eps: float = 1e-4
    """ε added to the std when normalising process rewards"""
    batch_size: int = 64
    """(prefix, answer) rows per scoring call of the policy"""

    def __post_init__(self) -> None:
        if not isinstance(self.alpha, int | float) or not self.alpha >= 0:
            raise ConfigError(f"alpha must be >= 0, got {self.alpha!r}")
        if not isinstance(self.w, int | float) or not 0 <= self.w <= 1:
            raise ConfigError(f"w must be in [0, 1], got {self.w!r}")
        check_int("top_k", self.top_k, 1)
        if not isinstance(self.sep, str) or not self.sep:
            raise ConfigError(f"sep must be a non-empty string, got {self.sep!r}")
        check_in("rank_corr", self.rank_corr, get_args(RankCorr))
        check_interval("ema_beta", self.ema_beta, 0, 1, closed=(True, False), optional=True)
        check_in("norm", self.norm, get_args(Norm))
        check_interval("norm_eps", self.norm_eps, 0, None)
        if "{answer}" not in self.answer_template:
            raise ConfigError(f"answer_template must contain '{{answer}}', got {self.answer_template!r}")
        check_int("batch_size", self.batch_size, 1)

    @classmethod
    def arithmetic(cls, **overrides: Any) -> ReProConfig:
        """The settings for the `rlvr` arithmetic/countdown format: one step a line, `A:<answer>`."""
        base = cls(sep="\n", stop="A:", answer_prefix="A:", answer_template="{answer}")
        return replace(base, **overrides)

    @classmethod
    def natural(cls, **overrides: Any) -> ReProConfig:
        """The settings for prose in the natural prompt style: sentences or lines as segments
        (". " splits both once lines end in a full stop), reasoning stops at "Answer:", and the
        scored answer follows "Answer: " on a new line."""
        base = cls(sep=". ", stop="Answer", answer_prefix="\nAnswer: ", answer_template="{answer}")
        return replace(base, **overrides)


def process_rewards(S: torch.Tensor) -> torch.Tensor:
    """r_j = S_j − S_{j−1}, j = 1..k, from the scores S (k+1,)."""
    S = torch.as_tensor(S, dtype=torch.float64).flatten()
    return S[1:] - S[:-1]  # process reward


def normalize_process_rewards(
    rewards: Sequence[torch.Tensor], mode: Norm = "group", group_size: int | None = None, eps: float = 1e-4
) -> list[torch.Tensor]:
    """r̃ = (r − mean)/(std + ε) over the pooled rewards of each group of `group_size` consecutive
    responses (`group`), of all responses (`batch`), or r unchanged (`none`); std with no
    correction, and r̃ = 0 for a pool whose rewards are all equal."""
    check_in("mode", mode, get_args(Norm))
    rewards = [torch.as_tensor(r, dtype=torch.float64).flatten() for r in rewards]
    if mode == "none":
        return rewards
    if mode == "batch":
        pools = [range(len(rewards))]
    else:  # group
        if group_size is None or group_size < 1 or len(rewards) % group_size:
            raise ValueError(
                f"norm='group' needs group_size dividing the {len(rewards)} responses, got {group_size}; "
                "pass the trainer's GRPOConfig.group_size, or use norm='batch'"
            )
        pools = [range(g, g + group_size) for g in range(0, len(rewards), group_size)]
    out = list(rewards)
    for pool in pools:
        pooled = torch.cat([rewards[i] for i in pool])
        if pooled.numel() == 0:
            continue
        mean, std = pooled.mean(), pooled.std(correction=0)
        scale = std + eps if float(std) > 0 else 1.0  # equal rewards: all r̃ = 0
        for i in pool:
            out[i] = (rewards[i] - mean) / scale  # normalised process reward
    return out


def combine_advantages(
    outcome_adv: torch.Tensor,
    rewards: Sequence[torch.Tensor],
    reward_ends: Sequence[Sequence[int]],
    width: int,
    alpha: float,
) -> torch.Tensor:
    """A_τ = A + α·Σ_{j: end_j ≥ τ} r̃_j, shape (N, width).

    `reward_ends[i][j]` is the index of the last completion token of the segment that earned
    `rewards[i][j]`; summing over segments that end at or after τ is the return from τ's segment on.
    """
    n = outcome_adv.shape[0]
    if outcome_adv.ndim != 1 or len(rewards) != n or len(reward_ends) != n:
        raise ValueError(
            f"outcome_adv must be (N,) with one rewards and one reward_ends entry per row; got "
            f"{tuple(outcome_adv.shape)}, {len(rewards)}, {len(reward_ends)}"
        )
    z = torch.zeros(n, width, dtype=torch.float64)
    for i in range(n):
        r = torch.as_tensor(rewards[i], dtype=torch.float64).flatten()
        ends = torch.as_tensor(list(reward_ends[i]), dtype=torch.long)
        if r.shape[0] != ends.shape[0]:
            raise ValueError(f"row {i}: {r.shape[0]} rewards but {ends.shape[0]} reward_ends")
        if ends.numel() and not (int(ends.min()) >= 0 and int(ends.max()) < width):
            raise ValueError(f"row {i}: reward_ends {ends.tolist()} outside 0..{width - 1}")
        z[i].index_add_(0, ends, r)
    ret = z.flip(1).cumsum(1).flip(1)  # Σ over segments ending at or after τ
    adv = outcome_adv.detach().to("cpu", torch.float64)[:, None] + alpha * ret  # per-token advantage
    return adv.to(outcome_adv.dtype)


def repro_advantages(
    policy: Policy,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    answers: Sequence[str],
    outcome_adv: torch.Tensor,
    entropy: torch.Tensor,
    cfg: ReProConfig,
    group_size: int | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Per-token advantages (N, T) of RePro and what went into them.

    Parameters
    ----------
    policy : Policy
        Scores the surrogate objective and decodes completions into segments.
    prompts, completions : N token-id lists
        As scored by the trainer (`entropy` must be of these same completions).
    answers : N str
        Ground-truth answers (`Problem.answer`); `cfg.answer_template` formats them.
    outcome_adv : Tensor (N,)
        The outcome advantage (GRPO's group-normalised reward).
    entropy : Tensor (N, T)
        Per-token entropies from `policy.token_logprobs(prompts, completions)`.
    cfg : ReProConfig
    group_size : int, optional
        Responses per question, consecutive in the batch; needed for `cfg.norm == "group"`.

    Returns
    -------
    (Tensor (N, T), dict)
        The advantages on the CPU in `outcome_adv`'s dtype, and per-row `segments`, `selected`
        (indices of the scored segments), `J`, `S`, `r`, `r_norm`.
    """
    n = len(prompts)
    if entropy.ndim != 2 or entropy.shape[0] != n:
        raise ValueError(f"entropy must be (N={n}, T), got {tuple(entropy.shape)}")
    width = entropy.shape[1]
    ent = entropy.detach().float().cpu()
    segs = [segment_completion(policy.decode, c, cfg.sep, cfg.stop) for c in completions]
    selected = [
        select_top_k(first_token_entropy(s, ent[i]), cfg.top_k) if len(s) else [] for i, s in enumerate(segs)
    ]
    cuts = [[0] + [s.token_spans[j][1] for j in sel] for s, sel in zip(segs, selected, strict=True)]
    bridge = policy.encode_target(cfg.answer_prefix)[:-1] if cfg.answer_prefix else []
    ans = [answer_ids(policy, cfg.answer_template.format(answer=a)) for a in answers]
    J = surrogate_objective(policy, prompts, completions, cuts, ans, bridge=bridge, batch_size=cfg.batch_size)
    S = [trajectory_scores(j, cfg.w, cfg.rank_corr, cfg.ema_beta) for j in J]
    r = [process_rewards(s) for s in S]
    r_norm = normalize_process_rewards(r, cfg.norm, group_size, cfg.norm_eps)
    ends = [[s.token_spans[j][1] - 1 for j in sel] for s, sel in zip(segs, selected, strict=True)]
    adv = combine_advantages(outcome_adv, r_norm, ends, width, cfg.alpha)
    info = {"segments": segs, "selected": selected, "J": J, "S": S, "r": r, "r_norm": r_norm}
    return adv, info


class ReProAdvantage:
    """The `token_advantages` hook of `GRPOTrainer`: outcome advantage + α·process return.

    Parameters
    ----------
    policy : Policy
        The policy being trained (J̃ is measured with the current policy).
    cfg : ReProConfig
    group_size : int, optional
        The trainer's `GRPOConfig.group_size`; needed for `cfg.norm == "group"`.

    After each call `last_metrics` holds batch means: `repro_J_b`, `repro_J_last`, `repro_S_last`,
    `repro_segments`, `repro_scored`, `repro_process_adv` (mean |α·return| over real tokens).
    """

    def __init__(self, policy: Policy, cfg: ReProConfig | None = None, group_size: int | None = None) -> None:
        self.policy, self.cfg, self.group_size = policy, cfg or ReProConfig(), group_size
        if self.cfg.norm == "group" and group_size is None:
            raise ValueError("norm='group' needs group_size: pass GRPOConfig.group_size, or use norm='batch'")
        self.last_info: dict[str, Any] = {}
        self.last_metrics: dict[str, float] = {}

    def __call__(
        self, rollouts: list[Rollout], outcome_adv: torch.Tensor, entropy: torch.Tensor
    ) -> torch.Tensor:
        """Per-token advantages (N, T) for the trainer's flat rollouts, outcome advantages, entropies."""
        eos = [self.policy.eos_id]
        comps = [r.completion_ids if r.completion_ids else eos for r in rollouts]  # as the trainer scores
        adv, info = repro_advantages(
            self.policy,
            [r.prompt_ids for r in rollouts],
            comps,
            [r.problem.answer for r in rollouts],
            outcome_adv,
            entropy,
            self.cfg,
            self.group_size,
        )
        lengths = torch.tensor([len(c) for c in comps])
        real = torch.arange(adv.shape[1])[None, :] < lengths[:, None]
        process = (adv.double() - outcome_adv.detach().cpu().double()[:, None]).abs()
        self.last_info = info
        self.last_metrics = {
            "repro_J_b": float(torch.stack([j[0] for j in info["J"]]).mean()),
            "repro_J_last": float(torch.stack([j[-1] for j in info["J"]]).mean()),
            "repro_S_last": float(torch.stack([s[-1] for s in info["S"]]).mean()),
            "repro_segments": float(sum(len(s) for s in info["segments"]) / len(comps)),
            "repro_scored": float(sum(len(s) for s in info["selected"]) / len(comps)),
            "repro_process_adv": float(process[real].mean()),
        }
        return adv.to(outcome_adv.device)
