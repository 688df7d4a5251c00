"""The `tiered_pruning` run's config: which graphs, queries and networks the comparison of
query-specific discovery (Algorithm 1) against full tiered FCI runs on, and the FCI settings both
methods share (`fci`, an `FCIConfig`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.tiered_pruning.evaluation import QUERY_KINDS
from iclr26.tiered_pruning.fci import FCIConfig
from iclr26.tiered_pruning.networks import NETWORKS


def parse_setting(spec: str) -> tuple[int, int]:
    """'100x5' -> (100 variables, 5 tiers)."""
    try:
        n, t = (int(v) for v in spec.lower().split("x"))
    except ValueError:
        raise ConfigError(f"settings: {spec!r} must look like '100x5' (variables x tiers)") from None
    if not 1 <= t <= n:
        raise ConfigError(f"settings: {spec!r} needs 1 <= tiers <= variables")
    return n, t


@dataclass(frozen=True)
class TieredPruningConfig:
    """Everything the run uses; defaults are the `bench` preset (the README figures)."""

    seed: int = 0
    """seed of every case (each case's own seed is derived from it and the case's key)"""
    sizes: tuple[int, ...] = (20, 50, 100, 200)
    """oracle random graphs: numbers of variables, `per_tier` variables per tier"""
    per_tier: int = 10
    """variables per tier of the `sizes` / `finite_sizes` graphs (the paper's experiments: 10)"""
    settings: tuple[str, ...] = ("100x5", "100x20", "200x5")
    """more oracle settings "NxT" (N variables in T tiers): other tier counts at 100 variables, and a
    fixed 5 tiers as the graph grows"""
    degree: float = 2.0
    """expected degree of the random DAGs"""
    latent_fraction: float = 0.1
    """latent confounders per observed variable, each confounding two variables of one tier"""
    graphs: int = 2
    """random graphs per setting"""
    queries: int = 8
    """queries per graph and query kind"""
    query_size: int = 2
    """treatments and outcomes per query (|X| = |Y|)"""
    kinds: tuple[str, ...] = QUERY_KINDS
    """query kinds: local (one stage of the process), late_z (a condition at or after the
    treatments, Prop. 3.6), random (treatments and outcomes from anywhere)"""
    networks: tuple[str, ...] = NETWORKS
    """bnlearn networks run under the oracle (pgmpy's bundled files; tiers = topological generations)"""
    dense_past_sizes: tuple[int, ...] = (4, 6, 8, 10, 12, 14)
    """sizes of the complete tier-0 DAG of the Prop. 4.2-style family (`system.dense_past`)"""
    finite_sizes: tuple[int, ...] = (20, 50)
    """finite-sample random graphs: numbers of variables, `per_tier` variables per tier"""
    samples: int = 2000
    """linear-Gaussian samples per finite-sample graph"""
    alpha: float = 0.01
    """significance level of the Fisher-z tests on finite samples"""
    value_check_max_nodes: int = 20
    """estimand values (identify vs identify_pruned) are compared on a random discrete SEM for graphs
    up to this many observed variables"""
    fci: FCIConfig = field(default_factory=lambda: FCIConfig(max_pds_cond_size=3, cross_tier_tails=True))
    """FCI settings of both methods; `max_pds_cond_size` caps FCI's Possible-D-SEP stage as pcalg's
    pdsep.max does (None: complete FCI, whose cost explodes on some 50-node graphs)"""

    def __post_init__(self) -> None:
        check_int("seed", self.seed, 0)
        for k in self.kinds:
            check_in("kinds", k, QUERY_KINDS)
        for name in self.networks:
            check_in("networks", name, NETWORKS)
        for spec in self.settings:
            parse_setting(spec)
        for name, low in (("sizes", 2), ("finite_sizes", 2), ("dense_past_sizes", 1)):
            for n in getattr(self, name):
                check_int(f"{name} (each entry)", n, low)
        for name in ("per_tier", "queries", "graphs", "query_size"):
            check_int(name, getattr(self, name), 1)
        check_interval("degree", self.degree, 0)
        check_interval("latent_fraction", self.latent_fraction, 0)
        check_interval("alpha", self.alpha, 0, 1, closed=(False, False))
        check_int("samples", self.samples, 10)
        check_int("value_check_max_nodes", self.value_check_max_nodes, 0)
        if not isinstance(self.fci, FCIConfig):
            raise ConfigError(f"fci must be an FCIConfig, got {type(self.fci).__name__}")

    def tiers_for(self, n: int) -> int:
        """Tiers of a `sizes` / `finite_sizes` graph of n variables: `per_tier` variables each (≥ 2)."""
        return max(2, n // self.per_tier)
