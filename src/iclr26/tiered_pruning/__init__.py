"""Query-specific causal graph pruning under tiered knowledge (ICLR 2026, OpenReview bOfiLeoUJf).

Foundations (this package so far; see README.md for what comes next):
- graphs (a subpackage): `DAG`, `ADMG`, `MAG`, `PAG`, `Mark`, `Tiers` (tiered background knowledge), latent
  projection DAG -> ADMG -> MAG, conversions to/from networkx and causal-learn;
- CI tests that count and cache: `FisherZTest`, `GSquareTest`, `OracleCITest`;
- `tiered_fci` / `fci` / `TieredFCI`: FCI with tiered knowledge (Andrews et al. 2020), with the
  tiered skeleton rule and Zhang's R1–R4, R8–R10;
- `mag_to_pag` and `pag_by_enumeration`: the (tier-refined) PAG of a MAG, by rules and by brute force;
- `random_tiered_dag`, `sample_linear_gaussian`, `sample_discrete`: synthetic graphs and data;
- `identify`: ID / IDC (Shpitser & Pearl) on ADMGs → an estimand or a hedge;
  `estimate_discrete`, `estimate_linear_ace`: a number from data for an identified estimand;
- the paper's contribution: `prune` / `identify_pruned` (Props. 3.2, 3.5, 3.6: T-components a query
  needs, and the adjusted estimand) and `query_specific_fci` (Algorithm 1: learn only those);
- `SYSTEM` for `iclr26 run tiered_pruning` (smoke / demo / bench / paper presets; defined in
  `system.py`, loaded on first use) and its config `TieredPruningConfig` (`config.py`).
"""

from iclr26.core.system import system_attributes
from iclr26.tiered_pruning.citests import (
    CIResult,
    CITest,
    FisherZTest,
    GSquareStatistic,
    GSquareTest,
    OracleCITest,
    SingularCovarianceError,
)
from iclr26.tiered_pruning.config import TieredPruningConfig
from iclr26.tiered_pruning.discovery import QueryDiscovery, query_specific_fci, restrict_pag
from iclr26.tiered_pruning.equivalence import markov_equivalent_mags, pag_by_enumeration
from iclr26.tiered_pruning.estimation import average_causal_effect, estimate_discrete, estimate_linear_ace
from iclr26.tiered_pruning.fci import FCIConfig, FCIResult, TieredFCI, fci, possible_d_sep, tiered_fci
from iclr26.tiered_pruning.graphs import ADMG, DAG, MAG, PAG, CyclicGraphError, Mark, Tiers
from iclr26.tiered_pruning.identification import Hedge, Identified, NotIdentifiable, identify
from iclr26.tiered_pruning.networks import bnlearn_network
from iclr26.tiered_pruning.orientation import mag_to_pag, orient
from iclr26.tiered_pruning.pruning import PrunedGraph, PruningPlan, identify_pruned, plan_pruning, prune
from iclr26.tiered_pruning.simulate import (
    TieredGraph,
    random_tiered_dag,
    sample_discrete,
    sample_linear_gaussian,
)

__all__ = [
    "ADMG",
    "DAG",
    "MAG",
    "PAG",
    "PRESETS",
    "SYSTEM",
    "CIResult",
    "CITest",
    "CyclicGraphError",
    "FCIConfig",
    "FCIResult",
    "FisherZTest",
    "GSquareStatistic",
    "GSquareTest",
    "Hedge",
    "Identified",
    "Mark",
    "NotIdentifiable",
    "OracleCITest",
    "PrunedGraph",
    "PruningPlan",
    "QueryDiscovery",
    "SingularCovarianceError",
    "TieredFCI",
    "TieredGraph",
    "TieredPruningConfig",
    "Tiers",
    "average_causal_effect",
    "bnlearn_network",
    "estimate_discrete",
    "estimate_linear_ace",
    "fci",
    "identify",
    "identify_pruned",
    "mag_to_pag",
    "markov_equivalent_mags",
    "orient",
    "pag_by_enumeration",
    "plan_pruning",
    "possible_d_sep",
    "prune",
    "query_specific_fci",
    "random_tiered_dag",
    "restrict_pag",
    "sample_discrete",
    "sample_linear_gaussian",
    "tiered_fci",
]

__getattr__ = system_attributes(__name__)  # SYSTEM, PRESETS: loaded from .system on first use
