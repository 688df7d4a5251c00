"""Query-specific causal graph pruning under tiered knowledge (ICLR 2026, OpenReview bOfiLeoUJf).

Foundations (this package so far; see README.md for what comes next):
- graphs: `DAG`, `ADMG`, `MAG`, `PAG`, `Mark`, `Tiers` (tiered background knowledge), latent
  projection DAG -> ADMG -> MAG, conversions to/from networkx and causal-learn;
- CI tests that count and cache: `FisherZTest`, `GSquareTest`, `OracleCITest`;
- `tiered_fci` / `fci` / `TieredFCI`: FCI with tiered knowledge (Andrews et al. 2020), with the
  tiered skeleton rule and Zhang's R1–R4, R8–R10;
- `mag_to_pag` and `pag_by_enumeration`: the (tier-refined) PAG of a MAG, by rules and by brute force;
- `random_tiered_dag`, `sample_linear_gaussian`, `sample_discrete`: synthetic graphs and data;
- `identify`: ID / IDC (Shpitser & Pearl) on ADMGs → an estimand or a hedge;
  `estimate_discrete`, `estimate_linear_ace`: a number from data for an identified estimand.

No `SYSTEM` yet: the catalog lists `tiered_pruning` as planned until the pruning and
query-specific discovery land.
"""

from iclr26.tiered_pruning.citests import (
    CIResult,
    CITest,
    FisherZTest,
    GSquareStatistic,
    GSquareTest,
    OracleCITest,
    SingularCovarianceError,
)
from iclr26.tiered_pruning.equivalence import markov_equivalent_mags, pag_by_enumeration
from iclr26.tiered_pruning.estimation import average_causal_effect, estimate_discrete, estimate_linear_ace
from iclr26.tiered_pruning.fci import FCIConfig, FCIResult, TieredFCI, fci, possible_d_sep, tiered_fci
from iclr26.tiered_pruning.graphs import ADMG, DAG, MAG, PAG, CyclicGraphError, Mark, Tiers
from iclr26.tiered_pruning.identification import Hedge, Identified, NotIdentifiable, identify
from iclr26.tiered_pruning.orientation import mag_to_pag, orient
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
    "SingularCovarianceError",
    "TieredFCI",
    "TieredGraph",
    "Tiers",
    "average_causal_effect",
    "estimate_discrete",
    "estimate_linear_ace",
    "fci",
    "identify",
    "mag_to_pag",
    "markov_equivalent_mags",
    "orient",
    "pag_by_enumeration",
    "possible_d_sep",
    "random_tiered_dag",
    "sample_discrete",
    "sample_linear_gaussian",
    "tiered_fci",
]
