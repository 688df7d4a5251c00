"""The locomotion table's claim check (`benchmarks/pic/stacked_table.py::table`): PIC/EPIC against
TD3+BC/IQL on paired runs, in both normalisations, with a noise margin."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "pic" / "stacked_table.py"


@pytest.fixture(scope="module")
def stacked_table():
    sys.path.insert(0, str(SCRIPT.parent.parent))  # benchmarks/_meta.py, as the script does
    spec = importlib.util.spec_from_file_location("stacked_table_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(offsets: dict[str, float]) -> list[dict]:
    """Two cells × 3 seeds; each algorithm's score = a per-(cell, seed) base + its offset (ours = 2x)."""
    out = []
    for c, (task, name) in enumerate([("Hopper-v5", "medium"), ("Hopper-v5", "medium-replay")]):
        for seed in range(3):
            base = 40.0 + 10 * c + 3 * seed + (0.3 if seed == 1 else 0.0)
            for algo, off in offsets.items():
                jitter = (0.2 if (seed + c) % 2 else -0.2) if algo == "pic" else 0.0
                d4rl = base + off + jitter
                out.append({"task": task, "dataset": name, "algorithm": algo, "seed": seed,
                            "return": 0.0, "d4rl_score": d4rl, "our_score": 2 * d4rl})  # fmt: skip
    return out


def records(algos):
    return [
        {"algorithm": a, "steps": 50_000, "config": {"num_critics": 2} if a == "epic" else {},
         "run_updates_per_s": 100.0 if a == "td3_bc" else 75.0}
        for a in algos
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("offsets", "holds", "beats", "verdict"),
    [
        ({"td3_bc": 0.0, "iql": -1.0, "pic": 5.0, "epic": 6.0}, True, True, "held"),
        ({"td3_bc": 0.0, "iql": 0.0, "pic": 0.0, "epic": 0.0}, True, False, "within noise"),
        ({"td3_bc": 0.0, "iql": 0.0, "pic": -5.0, "epic": 0.0}, False, False, "did not hold"),
    ],
)
def test_claim_check_pairs_runs_in_both_normalisations(stacked_table, offsets, holds, beats, verdict):
    md, claim = stacked_table.table(rows(offsets), records(offsets))
    assert claim["holds"] is holds and claim["method_beats_baselines"] is beats
    pairs = claim["pairs"]
    assert len(pairs) == 8  # {pic, epic} × {td3_bc, iql} × {D4RL, ours}
    assert {p["metric"].split(")")[0] for p in pairs} == {"normalized score (D4RL", "normalized score (ours"}
    pic_td3 = [p for p in pairs if (p["method"], p["baseline"]) == ("pic", "td3_bc")]
    assert {p["verdict"] for p in pic_td3} == {verdict}
    d4rl, ours = sorted(pic_td3, key=lambda p: "ours" in p["metric"])
    assert ours["margin"] == pytest.approx(2 * d4rl["margin"])  # ours = 2x D4RL: the margin scales too
    assert d4rl["margin"] > 0  # the jitter gives paired differences a spread
    assert claim["mean_scores_ours"]["pic"] == pytest.approx(2 * claim["mean_scores"]["pic"])
    assert claim["pic_over_td3_bc_throughput"] == pytest.approx(0.75)
    assert md.count("\n") == 2 + 3  # header, rule, two cells, the mean row, the steps row
    assert "| epic (N = 2) |" in md and "| steps per run | | 50,000 |" in md
    assert claim["steps_per_run"] == {a: [50_000] for a in offsets}


def test_a_table_still_training_shows_missing_stacks_and_means_over_common_cells(stacked_table):
    """A stack not yet trained reads "—"; the mean row averages the cells every compared method has
    (BC, a reference, need not have them), and the claim check pairs only the runs both sides have."""
    offsets = {"bc": -3.0, "td3_bc": 0.0, "iql": -1.0, "pic": 5.0}
    all_rows = rows(offsets)
    # medium-replay has no PIC yet, and BC only has medium-replay
    part = [r for r in all_rows if not (r["dataset"] == "medium-replay" and r["algorithm"] == "pic")]
    part = [r for r in part if not (r["dataset"] == "medium" and r["algorithm"] == "bc")]
    md, claim = stacked_table.table(part, records(offsets))
    lines = md.splitlines()
    assert lines[0] == "| task | dataset | bc | td3_bc | iql | pic |"
    assert lines[2].startswith("| Hopper-v5 | medium | — |") and lines[3].endswith("| — |")
    assert lines[4].startswith("| **mean** (1 of 2 cells) | | — |")  # BC lacks the one common cell
    assert claim["mean_over_cells"] == [["Hopper-v5", "medium"]]
    medium = [r["d4rl_score"] for r in part if r["dataset"] == "medium" and r["algorithm"] == "pic"]
    assert claim["mean_scores"]["pic"] == pytest.approx(sum(medium) / 3)
    assert "bc" not in claim["mean_scores"]
    pic_td3 = next(p for p in claim["pairs"] if (p["method"], p["baseline"]) == ("pic", "td3_bc"))
    assert pic_td3["method_value"] == pytest.approx(sum(medium) / 3)  # the medium seeds only
    assert pic_td3["cells"] == [["Hopper-v5", "medium"]]


def test_evaluations_are_kept_per_actors_file(stacked_table, tmp_path, monkeypatch):
    """`evaluate_stacks` evaluates an actors file once; a changed file or episode count is evaluated
    again."""
    calls = []

    def fake(path, data_meta, episodes):
        calls.append((path.stem, episodes))
        return [{"task": "Hopper-v5", "algorithm": path.stem, "return": float(len(path.read_bytes()))}]

    monkeypatch.setattr(stacked_table, "_evaluate_actors", fake)
    (tmp_path / "actors").mkdir()
    for stem in ("Hopper-v5_pic", "Hopper-v5_td3_bc"):
        (tmp_path / "actors" / f"{stem}.pt").write_bytes(b"weights")
    first = stacked_table.evaluate_stacks(tmp_path, None, episodes=10)
    assert stacked_table.evaluate_stacks(tmp_path, None, episodes=10) == first
    assert calls == [("Hopper-v5_pic", 10), ("Hopper-v5_td3_bc", 10)]

    (tmp_path / "actors" / "Hopper-v5_pic.pt").write_bytes(b"retrained weights")
    again = stacked_table.evaluate_stacks(tmp_path, None, episodes=10)
    assert calls[2:] == [("Hopper-v5_pic", 10)]
    assert again[0]["return"] == len(b"retrained weights") and again[1] == first[1]
    stacked_table.evaluate_stacks(tmp_path, None, episodes=3)
    assert calls[3:] == [("Hopper-v5_pic", 3), ("Hopper-v5_td3_bc", 3)]
