"""Losses against hand-computed values, batched critics against per-critic references, updates, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from iclr26.pic.algorithms import (
    ALGORITHMS,
    BatchSampler,
    best_candidate,
    epic_actor_loss,
    expectile_loss,
    gradient_diversity,
    make_algorithm,
    max_min_q_action,
    pic_actor_loss,
    state_stats,
    tanh_gaussian_sample,
    td3_bc_actor_loss,
)
from iclr26.pic.networks import EnsembleMLP

TINY = {"hidden": (16, 16)}


def tiny(name: str) -> dict:
    return {**TINY, "num_critics": 3} if name in ("epic", "edac") else dict(TINY)


def random_batch(b: int = 8, obs_dim: int = 3, act_dim: int = 2, k: int = 4, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    return {
        "observations": torch.randn(b, obs_dim, generator=g),
        "actions": torch.rand(b, act_dim, generator=g) * 2 - 1,
        "rewards": torch.randn(b, generator=g),
        "next_observations": torch.randn(b, obs_dim, generator=g),
        "dones": (torch.rand(b, generator=g) < 0.2).float(),
        "peer_actions": torch.rand(b, k, act_dim, generator=g) * 2 - 1,
    }


# ---------------------------------------------------------------------------------- pure losses


def test_td3_bc_actor_loss_hand_computed():
    q = torch.tensor([1.0, -3.0], requires_grad=True)  # λ = 2.5 / mean|Q| = 2.5 / 2 = 1.25
    pi = torch.tensor([[0.5, 0.0], [0.0, 0.0]], requires_grad=True)
    a = torch.tensor([[0.0, 0.0], [0.0, 1.0]])
    loss = td3_bc_actor_loss(q, pi, a, alpha=2.5)
    # −1.25·mean(1, −3) + mean(0.25, 0, 0, 1) = 1.25 + 0.3125
    assert loss.item() == pytest.approx(1.5625)
    loss.backward()
    assert torch.allclose(q.grad, torch.full((2,), -1.25 / 2))  # λ is not differentiated
    assert torch.allclose(pi.grad, 2 * (pi - a).detach() / 4)


def test_pic_actor_loss_hand_computed_norm_and_squared():
    q = torch.tensor([2.0, 4.0])  # β = 2.5 / 3, −β·mean Q = −2.5
    pi = torch.tensor([[0.0, 0.0], [1.0, 1.0]], requires_grad=True)
    a_star = torch.tensor([[3.0, 4.0], [1.0, 1.0]])  # distances 5 and 0
    loss = pic_actor_loss(q, pi, a_star, alpha=2.5, delta=2.0)
    assert loss.item() == pytest.approx(-2.5 + 2.0 * 2.5)
    loss.backward()
    # ∂/∂π of δ·mean‖π − a*‖: δ/B·(π − a*)/‖π − a*‖, and 0 (not NaN) where π = a*
    expected = torch.tensor([[-3 / 5, -4 / 5], [0.0, 0.0]]) * 2.0 / 2
    assert torch.allclose(pi.grad, expected)
    squared = pic_actor_loss(q, pi, a_star, alpha=2.5, delta=2.0, squared=True)
    assert squared.item() == pytest.approx(-2.5 + 2.0 * 12.5)


def test_pic_loss_normalizer_matches_td3_bc():
    q, pi, a = torch.tensor([3.0, -1.0, 2.0]), torch.zeros(3, 2), torch.zeros(3, 2)
    assert pic_actor_loss(q, pi, a, 2.5, 1.0).item() == pytest.approx(td3_bc_actor_loss(q, pi, a, 2.5).item())


def test_best_candidate_hand_computed_ties_go_to_own_action():
    q_min = torch.tensor([[1.0, 3.0, 2.0], [5.0, 0.0, 5.0]])
    cands = torch.arange(12.0).reshape(2, 3, 2)
    assert torch.equal(best_candidate(q_min, cands), torch.stack([cands[0, 1], cands[1, 0]]))


class KnownCritics(nn.Module):
    """N critics with closed-form values Q_i(s, a) = −‖a − c_i‖² + s·w_i, same interface as EnsembleMLP."""

    def __init__(self, centres: torch.Tensor, w: torch.Tensor, obs_dim: int) -> None:
        super().__init__()
        self.centres, self.w, self.obs_dim = centres, w, obs_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s, a = x[..., : self.obs_dim], x[..., self.obs_dim :]
        q = -((a.unsqueeze(0) - self.centres[:, None, :]) ** 2).sum(-1) + (s @ self.w.T).T  # (N, B)
        return q.unsqueeze(-1)


def test_max_min_q_action_picks_argmax_of_min_over_critics():
    # Q1 prefers a0 (10 vs 5), Q2 prefers a1 (0 vs 4): min = (0, 4) -> a1, although max Q1 and
    # max mean Q both pick a0: the choice must use the minimum over critics.
    class TwoCandidates(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            is_a1 = x[:, -1:]  # candidate a1 has last coordinate 1
            return torch.stack([10 - 5 * is_a1, 4 * is_a1])  # (2, B, 1)

    obs = torch.zeros(1, 2)
    a0, a1 = torch.tensor([[0.3, 0.0]]), torch.tensor([[[-0.2, 1.0]]])
    a_star, best = max_min_q_action(TwoCandidates(), obs, a0, a1)
    assert torch.equal(a_star, a1[:, 0]) and best.tolist() == [1]

    # many states and candidates against a brute-force loop over the closed-form critics
    g = torch.Generator().manual_seed(1)
    critics = KnownCritics(torch.rand(3, 2, generator=g) * 2 - 1, torch.randn(3, 4, generator=g), obs_dim=4)
    obs, acts, peers = (
        torch.randn(6, 4, generator=g),
        torch.rand(6, 2, generator=g),
        torch.rand(6, 5, 2, generator=g),
    )
    a_star, _ = max_min_q_action(critics, obs, acts, peers)
    for b in range(6):
        cands = [acts[b], *peers[b]]
        scores = [min(critics(torch.cat([obs[b], c])[None])[i, 0, 0].item() for i in range(3)) for c in cands]
        assert torch.equal(a_star[b], cands[int(np.argmax(scores))])


def test_bfloat16_scoring_agrees_on_well_separated_candidates():
    critic = EnsembleMLP(5, 1, hidden=(32, 32), ensemble=2)
    g = torch.Generator().manual_seed(0)
    obs, acts, peers = (
        torch.randn(64, 3, generator=g),
        torch.rand(64, 2, generator=g),
        torch.rand(64, 6, 2, generator=g),
    )
    a32, _ = max_min_q_action(critic, obs, acts, peers)
    a16, _ = max_min_q_action(critic, obs, acts, peers, score_dtype="bfloat16")
    assert (a32 == a16).all(-1).float().mean() > 0.7  # an approximation: near-ties may flip
    with pytest.raises(ValueError, match="score_dtype"):
        max_min_q_action(critic, obs, acts, peers, score_dtype="float16")
    with pytest.raises(ValueError, match="rerank_top"):
        max_min_q_action(critic, obs, acts, peers, score_dtype="bfloat16", rerank_top=-1)


def test_bfloat16_screen_with_float32_rerank():
    g = torch.Generator().manual_seed(3)
    critic = EnsembleMLP(5, 1, hidden=(32, 32), ensemble=3)
    obs, acts, peers = (
        torch.randn(512, 3, generator=g),
        torch.rand(512, 2, generator=g) * 2 - 1,
        torch.rand(512, 10, 2, generator=g) * 2 - 1,
    )
    cands = torch.cat([acts.unsqueeze(1), peers], 1)
    q32 = torch.stack([critic(torch.cat([obs, cands[:, j]], -1)).squeeze(-1).amin(0) for j in range(11)], 1)
    exact, best32 = max_min_q_action(critic, obs, acts, peers)
    bf16, _ = max_min_q_action(critic, obs, acts, peers, score_dtype="bfloat16")
    screened, best = max_min_q_action(critic, obs, acts, peers, score_dtype="bfloat16", rerank_top=2)
    agree, agree16 = (screened == exact).all(-1), (bf16 == exact).all(-1)
    assert agree.float().mean() >= agree16.float().mean() and agree.float().mean() > 0.95
    # a miss costs at most bf16's error: the chosen candidate's float32 value is within 1% of the best
    got = q32[torch.arange(512), best]
    assert (q32.amax(1) - got <= 0.01 * q32.abs().amax(1) + 1e-6).all()
    # re-ranking all but the bf16 worst finds the float32 argmax; all of them is float32 scoring
    for m in (10, 11):
        ranked, idx = max_min_q_action(critic, obs, acts, peers, score_dtype="bfloat16", rerank_top=m)
        assert torch.equal(ranked, exact) and torch.equal(idx, best32)
    for bad in (1, True, -2):
        with pytest.raises(ValueError, match="rerank_top"):
            max_min_q_action(critic, obs, acts, peers, score_dtype="bfloat16", rerank_top=bad)


@pytest.mark.parametrize("mode", [("float32", 0), ("bfloat16", 0), ("bfloat16", 2), ("bfloat16", 3)])
def test_ties_go_to_the_own_action_in_every_scoring_mode(mode):
    critic = EnsembleMLP(5, 1, hidden=(16,), ensemble=2)
    g = torch.Generator().manual_seed(0)
    obs, acts = torch.randn(64, 3, generator=g), torch.rand(64, 2, generator=g)
    peers = acts.unsqueeze(1).expand(-1, 6, -1).clone()  # every peer took the state's own action
    _, best = max_min_q_action(critic, obs, acts, peers, *mode)
    assert (best == 0).all()


def test_expectile_loss_hand_computed():
    diff = torch.tensor([2.0, -1.0])
    assert expectile_loss(diff, 0.7).item() == pytest.approx((0.7 * 4 + 0.3 * 1) / 2)
    assert expectile_loss(diff, 0.5).item() == pytest.approx(0.5 * F.mse_loss(diff, torch.zeros(2)).item())


def test_gradient_diversity_identical_orthogonal_opposite():
    g = torch.randn(1, 5, 3).expand(4, -1, -1)
    assert gradient_diversity(g).item() == pytest.approx(4.0, abs=1e-5)  # N(N−1) pairs of cos 1, / (N−1)
    ortho = torch.eye(3).unsqueeze(1).expand(3, 7, 3) * torch.tensor([1.0, 5.0, 0.1]).view(3, 1, 1)
    assert gradient_diversity(ortho).item() == pytest.approx(0.0, abs=1e-6)
    v = torch.randn(1, 4, 2)
    assert gradient_diversity(torch.cat([v, -3 * v])).item() == pytest.approx(-2.0, abs=1e-5)


def test_epic_actor_loss_hand_computed():
    q = torch.tensor([2.0, -4.0])  # β = 2.5 / 3
    log_pi = torch.tensor([1.0, 3.0])
    mean_a, a_star = torch.zeros(2, 2), torch.tensor([[0.6, 0.8], [0.0, 0.0]])
    loss = epic_actor_loss(q, log_pi, mean_a, a_star, alpha=2.5, delta=3.0, temperature=0.5)
    beta = 2.5 / 3
    expected = beta * ((0.5 * 1 - 2) + (0.5 * 3 + 4)) / 2 + 3.0 * (1.0 + 0.0) / 2
    assert loss.item() == pytest.approx(expected)
    edac = epic_actor_loss(q, log_pi, mean_a, None, alpha=2.5, delta=0.0, temperature=0.5, normalize_q=False)
    assert edac.item() == pytest.approx(((0.5 - 2) + (1.5 + 4)) / 2)


def test_tanh_gaussian_log_prob_matches_change_of_variables():
    mu, log_std = torch.tensor([[0.3, -1.0]]), torch.tensor([[-0.5, 0.2]])
    a, log_pi = tanh_gaussian_sample(
        mu, log_std, torch.randn(mu.shape, generator=torch.Generator().manual_seed(0))
    )
    u = torch.atanh(a)
    ref = torch.distributions.Normal(mu, log_std.exp()).log_prob(u).sum(-1) - torch.log(1 - a**2).sum(-1)
    assert torch.allclose(log_pi, ref, atol=1e-4)


# -------------------------------------------------- batched critic ensembles = per-critic reference


def member_as_sequential(net: EnsembleMLP, e: int) -> nn.Sequential:
    """Member e of an EnsembleMLP as a plain nn.Sequential of nn.Linear/ReLU with copied weights."""
    layers: list[nn.Module] = []
    for i, layer in enumerate(net.layers):
        lin = nn.Linear(layer.in_dim, layer.out_dim)
        with torch.no_grad():
            lin.weight.copy_(layer.weight[e].T)
            lin.bias.copy_(layer.bias[e, 0])
        layers.append(lin)
        if i < len(net.layers) - 1:
            layers.append(nn.ReLU())
    if net.output == "tanh":
        layers.append(nn.Tanh())
    return nn.Sequential(*layers)


def assert_grads_match(net: EnsembleMLP, refs: list[nn.Sequential]) -> None:
    for e, ref in enumerate(refs):
        lins = [m for m in ref if isinstance(m, nn.Linear)]
        for layer, lin in zip(net.layers, lins, strict=True):
            torch.testing.assert_close(layer.weight.grad[e], lin.weight.grad.T, rtol=1e-4, atol=1e-6)
            torch.testing.assert_close(layer.bias.grad[e, 0], lin.bias.grad, rtol=1e-4, atol=1e-6)


def test_td3_twin_critic_loss_equals_per_critic_computation():
    algo = make_algorithm("td3_bc", 3, 2, TINY, seed=0)
    algo.critic_target = EnsembleMLP(5, 1, hidden=(16, 16), ensemble=2)  # targets differ from the critics
    batch = random_batch()
    g_state = algo.generator.get_state()
    loss = algo.critic_loss(batch["observations"], batch, batch["next_observations"])
    loss.backward()

    eps = torch.randn(batch["actions"].shape, generator=torch.Generator().set_state(g_state))
    noise = (eps * 0.2).clamp(-0.5, 0.5)
    actor_t = member_as_sequential(algo.actor_target, 0)
    next_a = (actor_t(batch["next_observations"]) + noise).clamp(-1, 1)
    targets = [member_as_sequential(algo.critic_target, e) for e in range(2)]
    x_next = torch.cat([batch["next_observations"], next_a], -1)
    q_next = torch.minimum(targets[0](x_next), targets[1](x_next)).squeeze(-1)
    y = (batch["rewards"] + 0.99 * (1 - batch["dones"]) * q_next).detach()
    refs = [member_as_sequential(algo.critic, e) for e in range(2)]
    x = torch.cat([batch["observations"], batch["actions"]], -1)
    ref_loss = sum(F.mse_loss(r(x).squeeze(-1), y) for r in refs)
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss)
    assert_grads_match(algo.critic, refs)


def test_edac_critic_loss_with_diversity_equals_per_critic_computation():
    n = 4
    algo = make_algorithm("epic", 3, 2, {**TINY, "num_critics": n, "eta": 0.7}, seed=0)
    batch = random_batch()
    g_state = algo.generator.get_state()
    loss, td, div = algo.critic_loss(batch["observations"], batch, batch["next_observations"])
    loss.backward()

    # same next actions: replay the policy sample from the saved RNG state
    mu, log_std = algo.policy(batch["next_observations"])
    eps = torch.randn(mu.shape, generator=torch.Generator().set_state(g_state))
    next_a, next_log_pi = tanh_gaussian_sample(mu, log_std, eps)
    targets = [member_as_sequential(algo.critic_target, e) for e in range(n)]
    x_next = torch.cat([batch["next_observations"], next_a], -1)
    q_next = torch.stack([t(x_next).squeeze(-1) for t in targets]).amin(0)
    y = (batch["rewards"] + 0.99 * (1 - batch["dones"]) * (q_next - next_log_pi)).detach()  # α_ent = 1
    refs = [member_as_sequential(algo.critic, e) for e in range(n)]
    grads, ref_td = [], 0.0
    for r in refs:
        a = batch["actions"].clone().requires_grad_(True)
        q = r(torch.cat([batch["observations"], a], -1)).squeeze(-1)
        ref_td = ref_td + F.mse_loss(q, y)
        grads.append(torch.autograd.grad(q.sum(), a, create_graph=True)[0])
    cos_sum = sum(
        F.cosine_similarity(grads[i], grads[j], dim=-1) for i, j in itertools.permutations(range(n), 2)
    )
    ref_div = (cos_sum / (n - 1)).mean()
    (ref_td + 0.7 * ref_div).backward()
    torch.testing.assert_close(td, ref_td)
    torch.testing.assert_close(div, ref_div, rtol=1e-4, atol=1e-5)
    assert_grads_match(algo.critic, refs)


# ----------------------------------------------------------------------------------- updates


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_one_update_runs_and_changes_parameters(name):
    algo = make_algorithm(name, 3, 2, tiny(name), seed=0)
    nets = {k: getattr(algo, k) for k in ("actor", "critic", "value") if hasattr(algo, k)}
    before = {k: [p.detach().clone() for p in m.parameters()] for k, m in nets.items()}
    metrics = {}
    for seed in range(2):  # TD3's actor moves every second step
        metrics.update(algo.update(random_batch(seed=seed)))
    assert metrics and all(torch.isfinite(v).all() for v in metrics.values())
    for k, m in nets.items():
        changed = [not torch.equal(p, q) for p, q in zip(m.parameters(), before[k], strict=True)]
        assert all(changed), f"{name}: some {k} parameters did not change"
    a = algo.act(np.zeros(3, dtype=np.float32))
    assert a.shape == (2,) and np.all(np.abs(a) <= 1)
    assert algo.act(np.zeros((5, 3), dtype=np.float32)).shape == (5, 2)


@pytest.mark.parametrize("name", ["pic", "epic"])
def test_peer_methods_need_peer_actions(name):
    algo = make_algorithm(name, 3, 2, tiny(name), seed=0)
    batch = random_batch()
    del batch["peer_actions"]
    with pytest.raises(KeyError, match="peer table"):
        for _ in range(2):
            algo.update(batch)


def test_state_normalization_is_applied_and_saved():
    obs = np.random.default_rng(0).normal(3.0, 2.0, size=(100, 3)).astype(np.float32)
    mean, std = state_stats(obs)
    algo = make_algorithm("bc", 3, 2, TINY, seed=0, state_mean=mean, state_std=std)
    plain = make_algorithm("bc", 3, 2, TINY, seed=0)
    np.testing.assert_allclose(algo.act(obs[:4]), plain.act((obs[:4] - mean) / std), rtol=1e-5, atol=1e-6)
    clone = make_algorithm("bc", 3, 2, TINY, seed=1)
    clone.load_state_dict(algo.state_dict())
    np.testing.assert_array_equal(clone.act(obs[:4]), algo.act(obs[:4]))


# ------------------------------------------------------------------------------- the factory


def test_make_algorithm_errors_and_overrides():
    with pytest.raises(ValueError, match=r"unknown algorithm 'cql'.*td3_bc"):
        make_algorithm("cql", 3, 2)
    with pytest.raises(ValueError, match=r"unknown PICConfig field\(s\) \['detla'\].*delta"):
        make_algorithm("pic", 3, 2, {"detla": 2.0})
    with pytest.raises(ValueError, match="delta must be >= 0"):
        make_algorithm("pic", 3, 2, {"delta": -1.0})
    with pytest.raises(ValueError, match="num_critics"):
        make_algorithm("epic", 3, 2, {"num_critics": 1})
    with pytest.raises(ValueError, match="both state_mean and state_std"):
        make_algorithm("bc", 3, 2, state_mean=np.zeros(3))
    assert make_algorithm("pic", 3, 2, {"delta": 2.0, "hidden": [8, 8]}).config.hidden == (8, 8)
    edac = make_algorithm("edac", 3, 2, TINY)
    assert edac.config.delta == 0.0 and not edac.config.normalize_q
    assert make_algorithm("epic", 3, 2, {**TINY, "num_critics": 3}).critic.ensemble == 3


def test_same_seed_same_networks_without_touching_global_rng():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a, b = make_algorithm("td3_bc", 3, 2, TINY, seed=7), make_algorithm("td3_bc", 3, 2, TINY, seed=7)
    assert torch.equal(torch.get_rng_state(), before)
    for p, q in zip(a.critic.parameters(), b.critic.parameters(), strict=True):
        assert torch.equal(p, q)


# ------------------------------------------------------------------------------------ sampler


def make_sampler(n: int = 50, k: int = 4, seed: int = 0, **kw) -> BatchSampler:
    rng = np.random.default_rng(seed)
    return BatchSampler(
        rng.normal(size=(n, 3)),
        rng.uniform(-1, 1, size=(n, 2)),
        rng.normal(size=n),
        rng.normal(size=(n, 3)),
        np.zeros(n),
        peers=rng.integers(0, n, size=(n, k)),
        batch_size=16,
        seed=seed,
        **kw,
    )


def test_sampler_gathers_peer_actions_by_table_and_resumes():
    s = make_sampler()
    state = s.state_dict()
    b = s.sample()
    idx = torch.randint(s.size, (16,), generator=torch.Generator().set_state(state["generator"]))
    assert torch.equal(b["observations"], s.data["observations"][idx])
    assert torch.equal(b["peer_actions"], s.data["actions"][s.peers[idx]])
    assert b["peer_actions"].shape == (16, 4, 2) and b["rewards"].shape == (16,)
    s.load_state_dict(state)
    assert torch.equal(s.sample()["actions"], b["actions"])


def test_sampler_validation():
    rng = np.random.default_rng(0)
    obs, act = rng.normal(size=(10, 3)), rng.uniform(-1, 1, (10, 2))
    with pytest.raises(ValueError, match=r"actions must lie in \[-1, 1\]"):
        BatchSampler(obs, act * 3, np.zeros(10), obs, np.zeros(10))
    with pytest.raises(ValueError, match="rewards has 9 rows"):
        BatchSampler(obs, act, np.zeros(9), obs, np.zeros(10))
    with pytest.raises(ValueError, match="peers must be an integer table"):
        BatchSampler(obs, act, np.zeros(10), obs, np.zeros(10), peers=np.zeros((10, 3)))
    with pytest.raises(ValueError, match="outside"):
        BatchSampler(obs, act, np.zeros(10), obs, np.zeros(10), peers=np.full((10, 3), 10))


# ------------------------------------------------- the peer constraint pulls to the best candidate


def bandit_dataset(seed: int = 0) -> tuple[BatchSampler, np.ndarray, np.ndarray]:
    """One-step bandit: 4 tight state clusters, reward −‖a − a_opt(cluster)‖², random dataset actions
    except one state per cluster whose action is a_opt; peers = the other states of the cluster."""
    rng = np.random.default_rng(seed)
    centres = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=np.float32)
    a_opt = np.array([[0.6, -0.4], [-0.5, 0.7], [0.3, 0.3], [-0.7, -0.6]], dtype=np.float32)
    per = 16
    cluster = np.repeat(np.arange(4), per)
    obs = centres[cluster] + 0.01 * rng.normal(size=(4 * per, 2)).astype(np.float32)
    act = rng.uniform(-1, 1, size=(4 * per, 2)).astype(np.float32)
    act[::per] = a_opt
    rew = -((act - a_opt[cluster]) ** 2).sum(-1)
    members = [np.flatnonzero(cluster == c) for c in range(4)]
    peers = np.stack([np.array([j for j in members[cluster[i]] if j != i]) for i in range(4 * per)])
    sampler = BatchSampler(obs, act, rew, obs, np.ones(4 * per), peers=peers, batch_size=64, seed=seed)
    return sampler, obs, a_opt[cluster]


@pytest.fixture
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_pic_moves_policy_to_best_peer_action_on_bandit(one_thread):
    # α ≈ 0 switches the Q term off: PIC's actor then follows a* alone, and reaches a_opt only if
    # max-min-Q scoring picks it among the peers; TD3+BC with the same α is plain BC (the data mean).
    sampler, obs, target = bandit_dataset()
    mean, std = state_stats(obs)
    common = {"hidden": (64, 64), "alpha": 1e-3}
    pic = make_algorithm("pic", 2, 2, common, seed=0, state_mean=mean, state_std=std)
    td3_bc = make_algorithm("td3_bc", 2, 2, common, seed=0, state_mean=mean, state_std=std)

    def reward(algo) -> float:
        return float(-((algo.act(obs) - target) ** 2).sum(-1).mean())

    initial = reward(pic)
    for _ in range(600):
        batch = sampler.sample()
        metrics = pic.update(batch)
        td3_bc.update(batch)
    assert reward(pic) > -0.01, reward(pic)  # at a_opt (random-init actions score about −0.6)
    assert reward(pic) > initial + 0.5
    assert reward(td3_bc) < -0.3  # without peers the same objective stays at the mean action
    assert metrics["peer_chosen"] > 0.9  # a* comes from a peer in 15 of 16 states per cluster


# ----------------------------------------------------------------------------------- scoring mode


@pytest.mark.parametrize("name", ["pic", "epic"])
@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (frozenset({"avx2", "fma", "avx512f"}), "float32"),  # AVX2/AVX-512 without BF16: emulated bf16
        (frozenset({"avx2", "avx512f", "avx512_bf16"}), "bfloat16"),
        (frozenset({"avx2", "amx_bf16", "amx_tile"}), "bfloat16"),
        (frozenset(), "float32"),  # no /proc/cpuinfo
    ],
)
def test_auto_scoring_follows_the_cpu(monkeypatch, name, flags, expected):
    import iclr26.pic.algorithms.pic as pic_module

    monkeypatch.setattr(pic_module, "cpu_flags", lambda: flags)
    algo = make_algorithm(name, 3, 2, tiny(name), seed=0)
    assert algo.config.score_dtype == expected  # resolved once, recorded in the run's config
    explicit = make_algorithm(name, 3, 2, {**tiny(name), "score_dtype": "bfloat16"}, seed=0)
    assert explicit.config.score_dtype == "bfloat16"  # an explicit choice is kept


def test_auto_scoring_in_max_min_q_action_uses_the_same_rule(monkeypatch):
    import iclr26.pic.algorithms.pic as pic_module

    critic = EnsembleMLP(5, 1, (16,), ensemble=2)
    obs, acts, peers = torch.randn(6, 3), torch.rand(6, 2), torch.rand(6, 4, 2)
    monkeypatch.setattr(pic_module, "cpu_flags", lambda: frozenset({"avx2"}))
    auto, _ = max_min_q_action(critic, obs, acts, peers, score_dtype="auto", rerank_top=2)
    exact, _ = max_min_q_action(critic, obs, acts, peers, score_dtype="float32")
    assert torch.equal(auto, exact)
    assert pic_module.resolve_score_dtype("auto", "cpu") == "float32"


@pytest.mark.parametrize("bf16", [False, True])
def test_scoring_in_row_blocks_equals_one_call(bf16):
    # a stack's pairs are scored in blocks on the CPU (activations in cache); no score may change
    from iclr26.pic.algorithms.pic import MIN_BLOCK_ROWS, min_q, score_block_rows

    g = torch.Generator().manual_seed(3)
    critic = EnsembleMLP.stack([EnsembleMLP(9, 1, hidden=(64, 64), ensemble=2) for _ in range(3)])
    obs, cands = torch.randn(3, 96, 6, generator=g), torch.rand(3, 96, 11, 3, generator=g) * 2 - 1
    one_call = min_q(critic, obs, cands, bf16=bf16, block_rows=96 * 11)
    for rows in (MIN_BLOCK_ROWS, 300, 1000):
        torch.testing.assert_close(min_q(critic, obs, cands, bf16=bf16, block_rows=rows), one_call)
    acts, peers = cands[..., 0, :], cands[..., 1:, :]
    a_one, i_one = max_min_q_action(critic, obs, acts, peers, block_rows=96 * 11)
    a_blk, i_blk = max_min_q_action(critic, obs, acts, peers, block_rows=MIN_BLOCK_ROWS)
    assert torch.equal(i_one, i_blk) and torch.equal(a_one, a_blk)
    # the default: one call on a GPU; on a CPU, blocks shrink with the members a call computes
    assert score_block_rows(critic, 2816, "cuda") == 2816
    assert score_block_rows(EnsembleMLP(9, 1, ensemble=2), 2816, "cpu") >= 2816  # a plain PIC screen
    assert MIN_BLOCK_ROWS <= score_block_rows(critic, 2816, "cpu") < 2816
