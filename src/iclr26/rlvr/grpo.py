"""GRPO (Shao et al., 2024) in plain PyTorch for the RLVR testbed.

For each question, G rollouts o_1..o_G are sampled and scored by the verifier. The advantage of
every token of o_i is the group-normalised reward

    Â_i = (r_i − mean(r)) / (std(r) + ε)        (`scale_rewards=False`: r_i − mean(r), Dr. GRPO)

and the clipped token-level objective, with ratio ρ_t = π_θ(o_t | q, o_<t) / π_old(o_t | q, o_<t),

    L = −agg_t [ min(ρ_t Â, clip(ρ_t, 1 − ε_low, 1 + ε_high) Â) − β · KL_t ]

where KL_t = exp(ref − logp) − (ref − logp) − 1 (the k3 estimator) and `agg` is the per-sequence
token mean averaged over sequences (`grpo`), the mean over all tokens (`dapo`), or the sum over
tokens divided by batch × max completion length (`dr_grpo`).

A group whose rewards are all equal has Â = 0 for every token: it contributes no gradient. With
all-zero rewards that is the "learning cliff" Scaf-GRPO addresses through the `guide` hook.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from iclr26.core.config import ConfigError
from iclr26.core.distributed import DistInfo, all_gather_objects, shard
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.tasks import Problem, verify

LossType = Literal["grpo", "dr_grpo", "dapo"]


@dataclass(frozen=True)
class GRPOConfig:
    """GRPO settings (defaults: the Scaf-GRPO release: 8 rollouts, temperature 1, no KL)."""

    group_size: int = 8
    """G: rollouts sampled per question (the group its advantage is relative to)"""
    questions_per_step: int = 8
    """questions per update (each gets G rollouts)"""
    lr: float = 3e-4
    """AdamW learning rate of the policy"""
    temperature: float = 1.0
    """sampling temperature of rollouts and of evaluation samples (0: greedy)"""
    max_new_tokens: int = 96
    """the longest completion sampled; also dr_grpo's length normaliser"""
    clip_eps_low: float = 0.2
    """ε_low: the ratio is clipped below at 1 − ε_low"""
    clip_eps_high: float = 0.2
    """ε_high: the ratio is clipped above at 1 + ε_high (DAPO's clip-higher when > ε_low)"""
    loss_type: LossType = "grpo"
    """token aggregation: per-sequence mean (grpo), token mean (dapo), sum / (N·max_new_tokens) (dr_grpo)"""
    scale_rewards: bool = True
    """divide the group-centred reward by the group's std (False: Dr. GRPO's unscaled advantage)"""
    beta: float = 0.0
    """β: weight of the k3 KL estimate to the reference policy (0: no KL term)"""
    grad_clip: float = 1.0
    """gradient-norm clip of each update"""
    micro_batch: int = 0
    """rollouts per forward/backward pass, gradients accumulated (0: all at once); bounds the
    memory of a large model's update without changing it"""

    def __post_init__(self) -> None:
        if not isinstance(self.group_size, int) or self.group_size < 2:
            raise ConfigError(
                f"group_size must be >= 2 for a group-relative advantage, got {self.group_size!r}"
            )
        check_int("questions_per_step", self.questions_per_step, 1)
        check_int("max_new_tokens", self.max_new_tokens, 1)
        check_in("loss_type", self.loss_type, get_args(LossType))
        check_interval("lr", self.lr, 0, None, closed=(False, True))
        check_interval("temperature", self.temperature, 0, None)
        check_interval("clip_eps_low", self.clip_eps_low, 0, 1, closed=(True, False))
        check_interval("clip_eps_high", self.clip_eps_high, 0, None)
        check_interval("beta", self.beta, 0, None)
        check_interval("grad_clip", self.grad_clip, 0, None, closed=(False, True))
        check_int("micro_batch", self.micro_batch, 0)


@dataclass
class Rollout:
    """One sampled completion of one prompt, its reward and how it was obtained."""

    problem: Problem
    prompt_ids: list[int]
    completion_ids: list[int]
    reward: float
    parsed: bool
    hint: str | None = None  # set when Scaf-GRPO substituted a hinted attempt
    hint_level: int | None = None
    extra: dict = field(default_factory=dict)
    text: str | None = None  # the decoded completion, kept so hooks need not decode again


def group_advantages(rewards: torch.Tensor, scale: bool = True, eps: float = 1e-4) -> torch.Tensor:
    """Â = (r − mean_group) / (std_group + ε) for rewards (Q, G); unscaled when `scale=False`."""
    if rewards.ndim != 2 or rewards.shape[1] < 2:
        raise ValueError(f"rewards must be (questions, group_size >= 2), got {tuple(rewards.shape)}")
    adv = rewards - rewards.mean(dim=1, keepdim=True)
    if scale:
        adv = adv / (rewards.std(dim=1, keepdim=True) + eps)
    return adv


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    cfg: GRPOConfig,
    ref_logp: torch.Tensor | None = None,
) -> torch.Tensor:
    """The clipped GRPO objective for per-token log-probs (N, T), mask (N, T) and advantages (N,),
    one per sequence, or per token (N, T) (anything broadcastable to it, e.g. (N, 1))."""
    mask = mask.float()
    ratio = torch.exp(logp - old_logp)
    if advantages.ndim == 1:
        adv = advantages[:, None]
    elif advantages.ndim == 2:
        adv = advantages  # per-token advantages (e.g. RePro's process return)
    else:
        raise ValueError(f"advantages must be (N,) or (N, T), got shape {tuple(advantages.shape)}")
    per_token = -torch.min(ratio * adv, ratio.clamp(1 - cfg.clip_eps_low, 1 + cfg.clip_eps_high) * adv)
    if cfg.beta and ref_logp is not None:
        d = ref_logp - logp
        per_token = per_token + cfg.beta * (torch.exp(d) - d - 1)  # k3 KL estimator
    if cfg.loss_type == "grpo":
        return ((per_token * mask).sum(1) / mask.sum(1).clamp_min(1)).mean()
    if cfg.loss_type == "dapo":
        return (per_token * mask).sum() / mask.sum().clamp_min(1)
    return (per_token * mask).sum() / (mask.shape[0] * cfg.max_new_tokens)  # dr_grpo


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct (Chen et al., 2021)."""
    check_int("n", n, 1)
    check_int("c", c, 0, n)
    check_int("k", k, 1, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


Guide = Callable[[list[list[Rollout]], int, torch.Generator], list[list[Rollout]]]
# (flat rollouts, outcome advantages (N,), token entropies (N, T), detached) -> advantages (N, T)
TokenAdvantages = Callable[[list[Rollout], torch.Tensor, torch.Tensor], torch.Tensor]


def _dist_info(module: nn.Module) -> DistInfo:
    """This process's place in an initialised `torch.distributed` group (rank 0 of 1 if none)."""
    if not (dist.is_available() and dist.is_initialized()):
        return DistInfo()
    device = next(module.parameters()).device
    local = int(os.environ.get("LOCAL_RANK", "0"))
    return DistInfo(dist.get_rank(), dist.get_world_size(), local, device)


class GRPOTrainer:
    """Samples groups, scores them, and takes one clipped policy-gradient step per batch.

    `guide(groups, step, generator)` may rewrite the groups before the update (Scaf-GRPO).
    `token_advantages(rollouts, advantages, entropy)`, when given, turns the outcome advantages (N,)
    of the flat rollouts (group after group) into per-token advantages (N, T) aligned with the
    completion tokens, using the (N, T) entropies of the scored completions (RePro); without it the
    update is exactly plain GRPO.

    Under `torchrun` (an initialised `torch.distributed` group) the same calls are data-parallel:
    each rank takes its round-robin share of the questions it is given, samples them from its own
    stream (seeded from `gen`, so `gen` advances alike on every rank), and the update runs through
    DistributedDataParallel, so gradients — hence parameters — are the same on every rank. Step
    metrics are means over ranks weighted by their number of questions (counts are summed).
    """

    def __init__(
        self,
        policy: Policy,
        cfg: GRPOConfig,
        *,
        ref_policy: Policy | None = None,
        guide: Guide | None = None,
        token_advantages: TokenAdvantages | None = None,
    ) -> None:
        self.policy, self.cfg = policy, cfg
        self.ref_policy, self.guide = ref_policy, guide
        self.token_advantages = token_advantages
        self.opt = torch.optim.AdamW(policy.module.parameters(), lr=cfg.lr, weight_decay=0.0)
        self.step_idx = 0
        self.dist = _dist_info(policy.module)
        self.ddp: nn.Module | None = None
        if self.dist.world_size > 1:
            dev = self.dist.device
            self.ddp = DistributedDataParallel(
                policy.module, device_ids=[dev] if dev.type == "cuda" else None
            )

    def sample(
        self, prompts: list[list[int]], gen: torch.Generator, temperature: float | None = None
    ) -> list[list[int]]:
        """Completions (id lists) for `prompts` at the configured length and temperature."""
        t = self.cfg.temperature if temperature is None else temperature
        return self.policy.sample(prompts, self.cfg.max_new_tokens, t, gen)

    def rollouts(self, problems: list[Problem], gen: torch.Generator) -> list[list[Rollout]]:
        """G rollouts of each problem's plain prompt, scored by the verifier."""
        g = self.cfg.group_size
        prompts = [self.policy.encode_prompt(p.prompt) for p in problems for _ in range(g)]
        outs = self.sample(prompts, gen)
        groups = []
        for qi, p in enumerate(problems):
            group = []
            for j in range(g):
                comp = outs[qi * g + j]
                text = self.policy.decode(comp)
                v = verify(p, text)
                group.append(Rollout(p, prompts[qi * g + j], comp, v.reward, v.parsed, text=text))
            groups.append(group)
        return groups

    def _local(self, problems: list[Problem], gen: torch.Generator) -> tuple[list[Problem], torch.Generator]:
        """This rank's questions and sampling stream (all of them and `gen` on one process)."""
        if self.dist.world_size == 1:
            return problems, gen
        if len(problems) < self.dist.world_size:
            raise ValueError(
                f"{len(problems)} problems for {self.dist.world_size} ranks: give at least one per rank"
            )
        seed = int(torch.randint(2**62, (1,), generator=gen))  # advances `gen` alike on every rank
        return shard(problems, self.dist), torch.Generator().manual_seed(seed + self.dist.rank)

    def step(self, problems: list[Problem], gen: torch.Generator) -> dict[str, float]:
        """One GRPO update on `problems`; returns metrics."""
        t0 = time.perf_counter()
        problems, gen = self._local(problems, gen)
        groups = self.rollouts(problems, gen)
        rewards0 = torch.tensor([[r.reward for r in grp] for grp in groups])
        zero_std0 = float((rewards0.std(1) == 0).float().mean())
        if self.guide is not None:
            groups = self.guide(groups, self.step_idx, gen)
        rewards = torch.tensor([[r.reward for r in grp] for grp in groups])
        adv = group_advantages(rewards, self.cfg.scale_rewards).flatten()
        flat = [r for grp in groups for r in grp]
        prompts = [r.prompt_ids for r in flat]
        comps = [r.completion_ids if r.completion_ids else [self.policy.eos_id] for r in flat]
        module = self.policy.module
        module.train()
        loss, entropy_sum, lengths = self._update(flat, prompts, comps, adv)
        self.step_idx += 1
        metrics = {
            "step": self.step_idx,
            "loss": loss,
            "reward": float(rewards0.mean()),
            "frac_zero_std": zero_std0,
            "frac_zero_std_after_guide": float((rewards.std(1) == 0).float().mean()),
            "guided": float(sum(r.hint is not None for r in flat)),
            "unparsed": float(sum(not r.parsed for grp in groups for r in grp if r.hint is None)),
            "entropy": entropy_sum / float(lengths.sum()),
            "length": float(lengths.mean()),
            "seconds": time.perf_counter() - t0,
        }
        return self._reduce(metrics, len(problems))

    def _update(
        self, flat: list[Rollout], prompts: list[list[int]], comps: list[list[int]], adv: torch.Tensor
    ) -> tuple[float, float, torch.Tensor]:
        """One optimiser step on the flat rollouts; returns the loss, the summed token entropy and
        the completion lengths.

        With `cfg.micro_batch` the rows go through forward and backward in chunks whose gradients
        add up to the full batch's: each chunk's loss is weighted by its share of the batch's
        normaliser (its rows, or for `dapo` its tokens). The `token_advantages` hook then sees
        every row's entropies from a gradient-free pass first.
        """
        n = len(flat)
        size = self.cfg.micro_batch or n
        chunks = [list(range(i, min(i + size, n))) for i in range(0, n, size)]
        lengths = torch.tensor([float(len(c)) for c in comps])
        total_tokens = float(lengths.sum())
        loss_adv: torch.Tensor | None = adv if self.token_advantages is None else None
        if loss_adv is None and len(chunks) > 1:
            with torch.no_grad():
                parts = [self._scores(c, prompts, comps, module=None)[2] for c in chunks]
            width = max(e.shape[1] for e in parts)
            entropy_all = torch.cat([F.pad(e, (0, width - e.shape[1])) for e in parts])
            loss_adv = self._token_advantages(flat, adv, entropy_all)
        self.opt.zero_grad(set_to_none=True)
        loss_sum, entropy_sum = 0.0, 0.0
        for k, rows in enumerate(chunks):
            last = k == len(chunks) - 1
            with contextlib.nullcontext() if self.ddp is None or last else self.ddp.no_sync():
                logp, mask, entropy = self._scores(rows, prompts, comps, module=self.ddp)
                if loss_adv is None:  # one chunk: the hook reads this very pass's entropies
                    loss_adv = self._token_advantages(flat, adv, entropy.detach())
                ref_logp = None
                if self.cfg.beta and self.ref_policy is not None:
                    with torch.no_grad():
                        ref_logp, _, _ = self._scores(
                            rows, prompts, comps, module=None, policy=self.ref_policy
                        )
                chunk_adv = loss_adv[rows]
                if chunk_adv.ndim == 2:
                    chunk_adv = chunk_adv[:, : logp.shape[1]]  # completions start in column 0
                chunk_adv = chunk_adv.to(logp.device)
                loss = grpo_loss(logp, logp.detach(), chunk_adv, mask, self.cfg, ref_logp)  # μ = 1
                weight = float(mask.sum()) / total_tokens if self.cfg.loss_type == "dapo" else len(rows) / n
                (loss * weight).backward()  # under DDP: gradients averaged over ranks at the last chunk
            loss_sum += float(loss.detach()) * weight
            entropy_sum += float((entropy.detach() * mask).sum())
        torch.nn.utils.clip_grad_norm_(self.policy.module.parameters(), self.cfg.grad_clip)
        self.opt.step()
        return loss_sum, entropy_sum, lengths

    def _scores(
        self,
        rows: list[int],
        prompts: list[list[int]],
        comps: list[list[int]],
        module: nn.Module | None,
        policy: Policy | None = None,
    ):
        """`token_logprobs` of the given rows under `policy` (default: the trained one), through
        `module` (the DDP wrapper) when set."""
        policy = self.policy if policy is None else policy
        return policy.token_logprobs([prompts[i] for i in rows], [comps[i] for i in rows], module=module)

    def _token_advantages(
        self, flat: list[Rollout], adv: torch.Tensor, entropy: torch.Tensor
    ) -> torch.Tensor:
        """The hook's per-token advantages (N, T), checked against the entropies' shape."""
        out = self.token_advantages(flat, adv, entropy)  # type: ignore[misc]
        if tuple(out.shape) != tuple(entropy.shape):
            raise ValueError(
                f"token_advantages returned shape {tuple(out.shape)}; it must match the completion "
                f"tokens' {tuple(entropy.shape)} (N rollouts, T = longest completion, empty ones as [eos])"
            )
        return out

    _COUNTS = ("guided", "unparsed")

    def _reduce(self, metrics: dict[str, float], n_questions: int) -> dict[str, float]:
        """Metrics over all ranks: counts summed, the rest averaged with weights n_questions."""
        if self.dist.world_size == 1:
            return metrics
        keys = [k for k in metrics if k != "step"]
        w = [1.0 if k in self._COUNTS else float(n_questions) for k in keys]
        t = torch.tensor([[metrics[k] * wk for k, wk in zip(keys, w, strict=True)], w], dtype=torch.float64)
        t = t.to(self.dist.device)  # NCCL reduces CUDA tensors only
        dist.all_reduce(t)
        t = t.cpu()
        out = {k: float(t[0, i] / (1.0 if k in self._COUNTS else t[1, i])) for i, k in enumerate(keys)}
        return {"step": metrics["step"], **out}

    @torch.no_grad()
    def evaluate(self, problems: list[Problem], k: int, gen: torch.Generator) -> dict[str, float]:
        """pass@1 (mean over k samples at the training temperature), pass@k, greedy accuracy."""
        problems, gen = self._local(problems, gen)
        prompts = [self.policy.encode_prompt(p.prompt) for p in problems]
        samples = self.sample([p for p in prompts for _ in range(k)], gen)
        greedy = self.sample(prompts, gen, temperature=0.0)
        p1, pk = [], []
        for i, p in enumerate(problems):
            c = sum(verify(p, self.policy.decode(s)).reward for s in samples[i * k : (i + 1) * k])
            p1.append(c / k)
            pk.append(pass_at_k(k, int(c), k))
        g = [verify(p, self.policy.decode(o)).reward for p, o in zip(problems, greedy, strict=True)]
        if self.dist.world_size > 1:  # every rank's per-problem scores, so the means are exact
            parts = all_gather_objects((p1, pk, g), self.dist)
            p1, pk, g = ([x for part in parts for x in part[j]] for j in range(3))  # type: ignore[index]
        return {"pass@1": float(np.mean(p1)), f"pass@{k}": float(np.mean(pk)), "greedy": float(np.mean(g))}

    def state_dict(self) -> dict:
        """Everything needed to resume: model, optimiser, step."""
        return {"model": self.policy.module.state_dict(), "opt": self.opt.state_dict(), "step": self.step_idx}

    def load_state_dict(self, state: dict) -> None:
        """Restore from `state_dict()`."""
        self.policy.module.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.step_idx = state["step"]
