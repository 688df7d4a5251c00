"""The tiered_pruning system end to end (smoke), its config errors, the bundled bnlearn networks,
query sampling and PAG scoring."""

import numpy as np
import pytest

from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE, read_cells
from iclr26.core.runner import run_system
from iclr26.tiered_pruning import PAG, SYSTEM, Tiers, bnlearn_network
from iclr26.tiered_pruning.evaluation import random_query, score_pag
from iclr26.tiered_pruning.networks import bif_dag


def test_smoke_preset_runs_end_to_end_and_resumes(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    oracle, networks, dense, finite, standard = record.report.tables
    assert dense.column("local PAG = full PAG restricted") == [True, True]
    n_learned = [2 - k for k in oracle.column("nothing to learn")]
    assert oracle.column("local PAG = full PAG restricted") == [f"100% of {k}" for k in n_learned]
    assert dense.column("tiered FCI tests")[1] > dense.column("query-specific tests")[1]
    assert all(
        v.startswith("100%")
        for v in oracle.column("ID verdict agrees") + networks.column("ID verdict agrees")
    )
    assert all(r >= 1 for r in oracle.column("test ratio (min)"))
    assert all(0 <= f <= 1 for f in finite.column("adjacency F1, local"))
    assert (run_dir / "speedup.png").exists()
    cells = read_cells(run_dir / CELLS_FILE)
    keys = ["oracle/n12/t3/g0", "network/asia", "dense_past/n4", "dense_past/n6", "finite/n12/t3/g0"]
    assert sorted(cells) == sorted((arm, k) for arm in ("query_specific", "tiered_fci") for k in keys)
    # the floor's cell reruns the unpruned procedure on the same graph: the case's own tiered FCI count
    for k in keys:
        assert (
            cells[("tiered_fci", k)].metrics["CI tests"]
            == cells[("query_specific", k)].metrics["case"]["full_tests"]
        )
    assert dense.column("tiered FCI tests") == [
        cells[("tiered_fci", k)].metrics["CI tests"] for k in keys[2:4]
    ]
    assert [r[:2] for r in standard.rows] == [
        ["query_specific", "method"],
        ["tiered_fci", "floor (unpruned procedure)"],
    ]
    claim = record.report.claim_check
    assert (claim.method, claim.baseline, claim.higher_is_better, claim.n) == (
        "query_specific",
        "tiered_fci",
        False,
        5,
    )
    assert claim.verdict == "held" and claim.method_value < claim.baseline_value
    record2, _ = run_system(SYSTEM, "smoke", out=run_dir)  # every cell is read back, not recomputed
    assert record2.report.tables[0].rows == oracle.rows
    assert not (run_dir / "checkpoints" / "cases.json").exists()  # cells.jsonl is the one ledger


def test_pruning_that_saves_no_test_is_uninformative():
    from iclr26.core.claim import judge
    from iclr26.tiered_pruning.system import study

    (claim,) = study(SYSTEM.config("smoke")).claims
    full = {"a": 40.0, "b": 400.0, "c": 4000.0}
    assert judge(claim, "tiered_fci", full, full, full).verdict == "uninformative"
    assert judge(claim, "tiered_fci", {"a": 4.0, "b": 9.0, "c": 30.0}, full, full).verdict == "held"


def test_config_errors_name_fields():
    with pytest.raises((ConfigError, ValueError), match="kinds"):
        SYSTEM.config("demo", {"kinds": "local,global"})
    with pytest.raises((ConfigError, ValueError), match="networks"):
        SYSTEM.config("demo", {"networks": "asia,munin"})
    with pytest.raises((ConfigError, ValueError), match="alpha"):
        SYSTEM.config("demo", {"alpha": "1.5"})


def test_bundled_networks_have_their_published_sizes():
    sizes = {"asia": (8, 8), "sachs": (11, 17), "child": (20, 25), "insurance": (27, 52), "alarm": (37, 46)}
    for name, (n, e) in sizes.items():
        dag, tiers = bnlearn_network(name)
        assert (len(dag.nodes), len(dag.edges)) == (n, e)
        tiers.check_graph(dag)
    dag, _ = bnlearn_network("asia")
    assert ("asia", "tub") in dag.edges and ("either", "dysp") in dag.edges
    with pytest.raises(ValueError, match="no bundled network"):
        bnlearn_network("munin_typo")
    with pytest.raises(ValueError, match="no `variable` blocks"):
        bif_dag("not a bif file")


def test_local_queries_stay_within_a_stage():
    tiers = Tiers([[f"t{t}v{i}" for i in range(4)] for t in range(5)])
    rng = np.random.default_rng(0)
    for _ in range(50):
        q = random_query(tiers, rng, "local", 2)
        tx = {tiers.tier(v) for v in q.treatments}
        ty = {tiers.tier(v) for v in q.outcomes}
        assert len(tx) == 1 and ty <= {min(tx), min(tx) + 1} and len(q.outcomes) == 2
        assert all(tiers.tier(v) < min(tx) for v in q.conditions)
        assert not (q.treatments & q.outcomes)
        q = random_query(tiers, rng, "late_z", 2)
        tx = {tiers.tier(v) for v in q.treatments}
        # one condition at or after the treatments' tier (none only when X and Y fill the last tier)
        assert len(q.conditions) == 1 or min(tx) == len(tiers) - 1
        assert all(tiers.tier(v) >= min(tx) for v in q.conditions)
        assert not (q.conditions & (q.treatments | q.outcomes))
    q = random_query(tiers, rng, "random", 3)
    assert len(q.treatments) == len(q.outcomes) == 3 and not q.conditions
    with pytest.raises(ValueError, match="query kind"):
        random_query(tiers, rng, "global")


def test_score_pag_counts_adjacencies_arrowheads_and_shd():
    truth = PAG.from_strings(["a o-> b", "b --> c", "c <-> d"])
    learned = PAG.from_strings(["a o-> b", "b o-> c", "a --> d"], nodes=["a", "b", "c", "d"])
    s = score_pag(learned, truth)
    assert s.adjacency_precision == pytest.approx(2 / 3) and s.adjacency_recall == pytest.approx(2 / 3)
    # arrowheads: truth {b, c, d(from c), c(from d)} = 4; learned {b, c, d} ; shared b, c -> 2
    assert s.arrowhead_precision == pytest.approx(2 / 3) and s.arrowhead_recall == pytest.approx(2 / 4)
    assert s.shd == 2 + 1  # a-d and c-d differ in adjacency; b-c differs in a mark
