"""Random tiered graphs with latent confounders, and data sampled from them.

The paper's experiments use random tiered graphs with latents and linear-Gaussian or discrete
samples (SYSTEMS.md, system 4). Generators take a `numpy.random.Generator` or a seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iclr26.core.validation import check_int, check_interval
from iclr26.tiered_pruning.graphs import DAG, MAG, Node, Tiers


@dataclass(frozen=True)
class TieredGraph:
    """A DAG with latent nodes and tiers over its observed nodes (consistent by construction)."""

    dag: DAG
    latents: tuple[Node, ...]
    tiers: Tiers

    @property
    def observed(self) -> list[Node]:
        """The non-latent nodes, in the DAG's order."""
        lat = set(self.latents)
        return [v for v in self.dag.nodes if v not in lat]

    def mag(self) -> MAG:
        """The MAG over the observed nodes."""
        return self.dag.to_mag(self.latents)


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def random_tiered_dag(
    n_observed: int,
    n_tiers: int,
    expected_degree: float,
    n_latents: int = 0,
    seed: int | np.random.Generator = 0,
    forbid_within: bool = False,
    latents_within_tiers: bool = False,
) -> TieredGraph:
    """A random tiered DAG over X0..X{n-1} plus exogenous latent confounders L0.. .

    Observed nodes take tiers in contiguous blocks of X0..X{n-1} (near-equal sizes); each pair
    Xi, Xj with i < j gets Xi -> Xj with probability expected_degree / (n − 1) (none within a
    tier when `forbid_within`). Each latent Lk has no parents and two distinct observed children
    chosen uniformly (within one tier when `latents_within_tiers`, the setting of Chen & Barker's
    experiments), so it confounds them without changing any ancestral relation.
    """
    check_int("random_tiered_dag: n_observed", n_observed, 1)
    check_int(f"random_tiered_dag: n_tiers (n_observed = {n_observed})", n_tiers, 1, n_observed)
    check_interval("random_tiered_dag: expected_degree", expected_degree, 0)
    check_int("random_tiered_dag: n_latents", n_latents, 0)
    if n_latents > 0 and n_observed < 2:
        raise ValueError(f"random_tiered_dag: n_latents={n_latents} needs n_latents >= 0 and n_observed >= 2")
    rng = _rng(seed)
    obs = [f"X{i}" for i in range(n_observed)]
    tier_of = np.arange(n_observed) * n_tiers // n_observed
    p = min(1.0, expected_degree / max(n_observed - 1, 1))
    iu, ju = np.triu_indices(n_observed, k=1)
    keep = rng.random(iu.size) < p
    if forbid_within:
        keep &= tier_of[iu] != tier_of[ju]
    edges: list[tuple[Node, Node]] = [(obs[i], obs[j]) for i, j in zip(iu[keep], ju[keep], strict=True)]
    latents = [f"L{k}" for k in range(n_latents)]
    sizes = np.bincount(tier_of, minlength=n_tiers)
    if latents_within_tiers and n_latents and sizes.max() < 2:
        raise ValueError("random_tiered_dag: latents_within_tiers needs a tier with at least 2 variables")
    for lat in latents:
        if latents_within_tiers:
            t = rng.choice(np.flatnonzero(sizes >= 2))
            a, b = rng.choice(np.flatnonzero(tier_of == t), size=2, replace=False)
        else:
            a, b = rng.choice(n_observed, size=2, replace=False)
        edges += [(lat, obs[a]), (lat, obs[b])]
    tiers = Tiers(
        [[obs[i] for i in range(n_observed) if tier_of[i] == t] for t in range(n_tiers)], forbid_within
    )
    return TieredGraph(DAG(obs + latents, edges), tuple(latents), tiers)


@dataclass(frozen=True)
class LinearSEM:
    """A linear-Gaussian SEM x_v = Σ_{p ∈ Pa(v)} w[v][p] x_p + σ_v ε_v, ε_v ~ N(0, 1).

    Built by `random_linear_sem`; with `standardize=True` every variable has unit variance, so an
    edge's strength does not fade along a deep graph (raw unit-noise SEMs let ancestors' variance
    pile up and make many partial correlations near zero: near-unfaithful data).
    """

    dag: DAG
    weights: dict[Node, dict[Node, float]]  # weights[child][parent]
    noise_std: dict[Node, float]

    def _matrices(self) -> tuple[list[Node], np.ndarray, np.ndarray]:
        order = list(self.dag.nodes)
        index = {v: i for i, v in enumerate(order)}
        w = np.zeros((len(order), len(order)))
        for child, pa in self.weights.items():
            for p, val in pa.items():
                w[index[child], index[p]] = val
        return order, w, np.array([self.noise_std[v] for v in order])

    def covariance(self, nodes: Sequence[Node] | None = None) -> np.ndarray:
        """The population covariance (I − W)⁻¹ diag(σ²) (I − W)⁻ᵀ restricted to `nodes` (default all)."""
        order, w, sd = self._matrices()
        inv = np.linalg.inv(np.eye(len(order)) - w)
        cov = (inv * sd**2) @ inv.T
        index = {v: i for i, v in enumerate(order)}
        keep = [index[v] for v in (order if nodes is None else nodes)]
        return cov[np.ix_(keep, keep)]

    def sample(self, n_samples: int, seed: int | np.random.Generator = 0) -> pd.DataFrame:
        """n_samples draws of every node (latents included; select the observed columns)."""
        check_int("LinearSEM.sample: n_samples", n_samples, 1)
        rng = _rng(seed)
        cols: dict[Node, np.ndarray] = {}
        for v in self.dag.topological_order():
            x = self.noise_std[v] * rng.standard_normal(n_samples)
            for p, w in self.weights[v].items():
                x = x + w * cols[p]
            cols[v] = x
        return pd.DataFrame({v: cols[v] for v in self.dag.nodes})


def random_linear_sem(
    dag: DAG,
    seed: int | np.random.Generator = 0,
    weight_range: tuple[float, float] = (0.5, 1.5),
    random_sign: bool = True,
    standardize: bool = True,
) -> LinearSEM:
    """Random edge weights |w| ~ U(weight_range) (random sign if asked) with unit noise; with
    `standardize`, each node's weights and noise are divided by its standard deviation so that
    every variable has unit variance (the parents' weights are drawn before scaling)."""
    lo, hi = weight_range
    if not 0 <= lo <= hi:
        raise ValueError(f"random_linear_sem: weight_range must satisfy 0 <= lo <= hi, got {weight_range}")
    rng = _rng(seed)
    index = {v: i for i, v in enumerate(dag.nodes)}
    cov = np.zeros((len(index), len(index)))  # covariance of the nodes built so far
    weights: dict[Node, dict[Node, float]] = {}
    noise: dict[Node, float] = {}
    for v in dag.topological_order():
        pa = sorted(dag.parents(v), key=index.__getitem__)
        w = rng.uniform(lo, hi, size=len(pa))
        if random_sign:
            w = w * rng.choice([-1.0, 1.0], size=len(pa))
        ip = [index[p] for p in pa]
        i = index[v]
        # Cov(v, ·) = Σ_p w_p Cov(p, ·); Var(v) = wᵀ Σ_pa w + σ²
        cross = w @ cov[ip, :] if pa else np.zeros(len(index))
        var = float(w @ cov[np.ix_(ip, ip)] @ w) + 1.0 if pa else 1.0
        scale = np.sqrt(var) if standardize else 1.0
        weights[v] = {p: float(x / scale) for p, x in zip(pa, w, strict=True)}
        noise[v] = float(1.0 / scale)
        cov[i, :] = cov[:, i] = cross / scale
        cov[i, i] = var / scale**2
    return LinearSEM(dag, weights, noise)


def sample_linear_gaussian(
    dag: DAG,
    n_samples: int,
    seed: int | np.random.Generator = 0,
    weight_range: tuple[float, float] = (0.5, 1.5),
    random_sign: bool = True,
    standardize: bool = True,
) -> pd.DataFrame:
    """Data from `random_linear_sem(dag, seed, ...)`: the SEM is drawn first, so it does not depend on n."""
    rng = _rng(seed)
    return random_linear_sem(dag, rng, weight_range, random_sign, standardize).sample(n_samples, rng)


def sample_discrete(
    dag: DAG,
    n_samples: int,
    seed: int | np.random.Generator = 0,
    n_states: int = 2,
    strength: float = 1.5,
) -> pd.DataFrame:
    """Categorical data from a log-linear model: P(x_v = k | pa) ∝ exp(b_vk + Σ_p E_vp[x_p, k]).

    Parent state i pushes the child towards state π_vp(i) (π_vp a random permutation):
    E_vp[i, k] = w if k = π_vp(i) else −w/(n_states − 1), w ~ U(strength/2, strength), so every
    parent visibly moves its child (random Dirichlet CPTs often make an edge nearly invisible);
    b_vk ~ N(0, 0.5²).
    """
    check_int("sample_discrete: n_states", n_states, 2)
    check_interval("sample_discrete: strength", strength, 0, closed=(False, True))
    rng = _rng(seed)
    index = {v: i for i, v in enumerate(dag.nodes)}
    cols: dict[Node, np.ndarray] = {}
    for v in dag.topological_order():
        logits = np.tile(rng.normal(0.0, 0.5, n_states), (n_samples, 1))
        for p in sorted(dag.parents(v), key=index.__getitem__):
            w = rng.uniform(strength / 2, strength)
            effect = np.full((n_states, n_states), -w / (n_states - 1))
            effect[np.arange(n_states), rng.permutation(n_states)] = w
            logits += effect[cols[p]]
        prob = np.exp(logits - logits.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        u = rng.random(n_samples)[:, None]
        cols[v] = (u > np.cumsum(prob, axis=1)).sum(axis=1).clip(max=n_states - 1)
    return pd.DataFrame({v: cols[v] for v in dag.nodes})
