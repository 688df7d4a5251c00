"""Causal graph types and tiered background knowledge.

Query-Specific Causal Graph Pruning under Tiered Knowledge (ICLR 2026, OpenReview bOfiLeoUJf).
This subpackage holds the objects the paper reasons about, one module per family:

- `directed`: `DAG`, the data-generating graph, possibly with latent vertices, and `ADMG`, the
  acyclic directed mixed graph (directed + bidirected edges), the latent projection of a DAG
  (Verma & Pearl 1990; Tian & Pearl 2002) on which ID/IDC operate; `as_admg` turns any of the
  accepted graph inputs into an ADMG;
- `marked`: `MAG` / `PAG`, graphs with edge marks (`Mark`: tail, arrowhead, circle) of Richardson &
  Spirtes (2002) and Zhang (2008); `MAG` is the maximal ancestral graph of a DAG with latents,
  `PAG` its Markov equivalence class (possibly refined by background knowledge) as learned by FCI;
- `tiers`: `Tiers`, tiered background knowledge (Andrews, Spirtes & Cooper, AISTATS 2020): an
  ordered partition of the observed variables such that no variable is an ancestor of a variable
  in an earlier tier;
- `nodes` and `paths`: what every class shares (node checks, topological order, ancestors,
  m-connection).

Conventions: nodes are any hashable values (usually strings); every graph keeps the order in which
its nodes were given and iterates in that order, so results are deterministic. In `MAG`/`PAG`,
`mark(a, b)` is the mark *at b* on the edge between a and b (pcalg's `amat[a, b]` convention):
`a o-> b` has `mark(a, b) == ARROW` and `mark(b, a) == CIRCLE`.
"""

from iclr26.tiered_pruning.graphs.directed import ADMG, DAG, as_admg
from iclr26.tiered_pruning.graphs.marked import MAG, PAG, EdgeSpec, Mark
from iclr26.tiered_pruning.graphs.nodes import CyclicGraphError, Node
from iclr26.tiered_pruning.graphs.paths import Incidence, m_connected_nodes
from iclr26.tiered_pruning.graphs.tiers import Tiers, check_tiers

__all__ = [
    "ADMG",
    "DAG",
    "MAG",
    "PAG",
    "CyclicGraphError",
    "EdgeSpec",
    "Incidence",
    "Mark",
    "Node",
    "Tiers",
    "as_admg",
    "check_tiers",
    "m_connected_nodes",
]
