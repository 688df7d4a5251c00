"""The surrogate objective of RePro (arXiv 2512.01925): how likely the policy finds the ground-truth
answer a after the question q and the reasoning prefix τ_(≤t),

    J̃(π_θ, q, τ_(≤t), a) = (1/|a|) Σ_i log π_θ(a_i | q, τ_(≤t), a_<i)        (the paper's surrogate J̃)

and its baseline J_b(q) = J̃(π_θ, q, ∅, a), the answer with no reasoning at all. Unscored `bridge`
tokens (an answer marker such as the testbed's `A:`) may sit between the prefix and a.

Every (question + prefix, answer) pair of every response is scored by `Policy.token_logprobs`, in
batches of `batch_size` pairs: a response cut at T points costs T + 1 short rows, not T + 1 calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from iclr26.rlvr.policy import Policy


def answer_ids(policy: Policy, answer: str) -> list[int]:
    """Token ids of the ground-truth answer text as it follows the reasoning (no <eos>)."""
    ids = policy.encode_target(answer)[:-1]
    if not ids:
        raise ValueError(f"answer {answer!r} encodes to no tokens: give a non-empty answer text")
    return ids


@torch.no_grad()
def surrogate_objective(
    policy: Policy,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    cuts: Sequence[Sequence[int]],
    answers: Sequence[Sequence[int]],
    *,
    bridge: Sequence[int] = (),
    batch_size: int = 64,
) -> list[torch.Tensor]:
    """J̃ at every cut of every response.

    Parameters
    ----------
    policy : Policy
        Scores with `policy.token_logprobs` (module in eval mode, no gradient; mode restored).
    prompts, completions : sequences of token-id lists, length N
        The question and the sampled response of each row.
    cuts : sequence of int lists, length N
        For row i, the prefix lengths (in completion tokens, 0..len(completions[i])) to score;
        cut 0 gives J_b.
    answers : sequence of token-id lists, length N
        The ground-truth answer tokens of each row (see `answer_ids`).
    bridge : sequence of int, default ()
        Tokens placed between the prefix and the answer and not scored (the answer's format
        marker, e.g. `A:` on the arithmetic testbed).
    batch_size : int, default 64
        (prefix, answer) pairs per `token_logprobs` call.

    Returns
    -------
    list of Tensor
        Row i: float tensor (len(cuts[i]),) of J̃ = mean log-probability of the answer tokens
        given prompt + completion[:cut] + bridge, on the CPU.
    """
    n = len(prompts)
    if not (len(completions) == len(cuts) == len(answers) == n):
        raise ValueError(
            f"prompts, completions, cuts and answers must have one entry per row; got lengths "
            f"{n}, {len(completions)}, {len(cuts)}, {len(answers)}"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    pairs: list[tuple[list[int], list[int]]] = []
    for i in range(n):
        if not answers[i]:
            raise ValueError(f"answers[{i}] is empty: every row needs at least one answer token")
        for c in cuts[i]:
            if not 0 <= c <= len(completions[i]):
                raise ValueError(
                    f"cuts[{i}] has {c}, outside 0..{len(completions[i])} (the completion length)"
                )
            pairs.append(([*prompts[i], *completions[i][:c], *bridge], list(answers[i])))
    module = policy.module
    was_training = module.training
    module.eval()
    values = []
    try:
        for b in range(0, len(pairs), batch_size):
            chunk = pairs[b : b + batch_size]
            logp, mask, _ = policy.token_logprobs([p for p, _ in chunk], [a for _, a in chunk])
            mask = mask.float()
            values.append(((logp.float() * mask).sum(1) / mask.sum(1)).cpu())  # J̃: mean over |a|
    finally:
        module.train(was_training)
    flat = torch.cat(values) if values else torch.zeros(0)
    return list(torch.split(flat, [len(c) for c in cuts]))
