"""The bnlearn benchmark networks bundled in the pgmpy wheel (asia, sachs, child, insurance, alarm, ...),
read as DAGs from their BIF files (structure only: `probability ( child | parents )` blocks), with
tiers from their topological generations."""

from __future__ import annotations

import gzip
import importlib.resources
import re

from iclr26.tiered_pruning.graphs import DAG, Tiers

NETWORKS = ("asia", "sachs", "child", "insurance", "alarm")
_PROBABILITY = re.compile(r"probability\s*\(\s*([^|)]+?)\s*(?:\|\s*([^)]*?))?\s*\)")
_VARIABLE = re.compile(r"variable\s+([^\s{]+)\s*\{")


def bif_dag(text: str) -> DAG:
    """The DAG of a BIF document: one node per `variable`, edges parent -> child from each
    `probability ( child | parent, ... )` block."""
    nodes = _VARIABLE.findall(text)
    if not nodes:
        raise ValueError("bif_dag: no `variable` blocks found; is this a BIF file?")
    edges = []
    for child, parents in _PROBABILITY.findall(text):
        edges += [(p.strip(), child.strip()) for p in parents.split(",") if p.strip()]
    unknown = sorted({v for e in edges for v in e} - set(nodes))
    if unknown:
        raise ValueError(f"bif_dag: probability blocks name undeclared variables {unknown[:5]}")
    return DAG(nodes, edges)


def bnlearn_network(name: str, n_tiers: int | None = None) -> tuple[DAG, Tiers]:
    """A bundled bnlearn network and tiers from its topological generations (merged into at most
    `n_tiers` groups). Needs pgmpy installed (the files ship in its wheel; nothing is downloaded)."""
    try:
        root = importlib.resources.files("pgmpy") / "utils" / "example_models"
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("bnlearn_network needs pgmpy: pip install 'iclr26[causal]'") from e
    path = root / f"{name}.bif.gz"
    if not path.is_file():
        have = sorted(p.name.removesuffix(".bif.gz") for p in root.iterdir() if p.name.endswith(".bif.gz"))
        raise ValueError(f"no bundled network {name!r}; pgmpy ships {have}")
    dag = bif_dag(gzip.decompress(path.read_bytes()).decode("utf-8"))
    return dag, Tiers.from_topological_generations(dag, n_tiers=n_tiers)
