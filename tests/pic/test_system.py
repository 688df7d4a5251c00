"""The `pic` system end to end (smoke preset), its resume, and config validation."""

from __future__ import annotations

import json
import shutil

import pytest

from iclr26.core import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.pic import SYSTEM
from iclr26.pic.algorithms import ALGORITHMS


def test_smoke_preset_runs_and_resumes(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path, jobs=2)
    assert record.status == "complete"
    table, speed, standard = record.report.tables
    algorithms = ["bc", "td3_bc", "iql", "pic", "epic", "edac"]
    assert [r[1] for r in table.rows] == [*algorithms, "random", "untrained"]  # the floors below
    assert "normalized (ours)" in table.columns
    assert all(r[1] > 0 for r in speed.rows)  # steps/s measured for every algorithm
    assert [r[:3] for r in standard.rows][-2:] == [
        ["random", "floor (random action)", 1], ["untrained", "floor (untrained)", 1]]  # fmt: skip
    assert standard.column("normalized_ours 95% interval") == [None] * 8  # one unit: no interval to show
    # one dataset × one seed: one pair, too few for the claim rule
    claim = record.report.claim_check
    assert (claim.method, claim.baseline, claim.verdict, claim.n) == ("pic", "td3_bc", "not tested", 1)
    assert (run_dir / "learning_curves.png").stat().st_size > 10_000
    # the peer table was built once, beside the dataset
    assert len(list((run_dir / "data").rglob("*.peers_k5.npy"))) == 1
    # every (arm, unit) cell is one record of the ledger; a second run in the same folder reuses them
    ledger = (run_dir / CELLS_FILE).read_bytes()
    cells = [json.loads(line) for line in ledger.splitlines()]
    assert sorted(c["arm"] for c in cells) == sorted([*algorithms, "random", "untrained"])
    assert {c["unit"] for c in cells} == {"medium/s0"}
    record2, _ = run_system(SYSTEM, "smoke", out=run_dir)
    assert record2.report.tables[0].rows == table.rows
    assert (run_dir / CELLS_FILE).read_bytes() == ledger
    # cells run in this process (jobs=1) from nothing, no checkpoint left, equal the pool's (jobs=2)
    (run_dir / CELLS_FILE).write_bytes(b"".join(ledger.splitlines(keepends=True)[:3]))
    shutil.rmtree(run_dir / "checkpoints")
    record3, _ = run_system(SYSTEM, "smoke", out=run_dir, jobs=1)
    assert record3.report.tables[0].rows == table.rows
    redone = [json.loads(line) for line in (run_dir / CELLS_FILE).read_bytes().splitlines()]

    def timeless(c: dict) -> dict:
        return {**c, "wall_s": None, "metrics": {**c["metrics"], "steps_per_s": None}}

    assert sorted(map(timeless, redone), key=str) == sorted(map(timeless, cells), key=str)


def test_config_errors_name_fields():
    with pytest.raises(ConfigError, match="algorithms: unknown"):
        SYSTEM.config("demo", {"algorithms": "pic,cql"})
    with pytest.raises(ConfigError, match="datasets: unknown"):
        SYSTEM.config("demo", {"datasets": "medium,expert-replay"})
    with pytest.raises(ConfigError, match="peer_method must be one of"):
        SYSTEM.config("demo", {"peer_method": "kdtree"})
    with pytest.raises(ConfigError, match="generation must be one of"):
        SYSTEM.config("demo", {"generation": "atari"})
    with pytest.raises(ConfigError, match="k must be >= 1"):
        SYSTEM.config("demo", {"k": "0"})


def test_nested_settings_reach_only_their_algorithm():
    cfg = SYSTEM.config("demo", {"pic.delta": "2.5", "epic.num_critics": "7"})
    assert cfg.algorithm_config("pic").delta == 2.5
    assert cfg.algorithm_config("edac").delta == 0.0  # EDAC keeps δ = 0: it samples no peers
    assert cfg.epic.delta == 1.0 and not hasattr(cfg.td3_bc, "delta")
    assert cfg.epic.num_critics == 7 and cfg.edac.num_critics == SYSTEM.config("demo").edac.num_critics
    with pytest.raises(ConfigError, match=r"EDACConfig\.delta must be 0"):
        SYSTEM.config("demo", {"edac.delta": "1"})


def test_presets_give_every_algorithm_the_old_shared_settings():
    # the flat hidden / num_critics / delta / batch_size of before, now one value per nested config
    widths = {p: {a: c.algorithm_config(a).hidden for a in ALGORITHMS} for p, c in SYSTEM.presets.items()}
    expected = {"smoke": 32, "demo": 64, "bench": 64, "paper": 256}
    assert widths == {p: dict.fromkeys(ALGORITHMS, (w, w)) for p, w in expected.items()}
    assert {p: (c.epic.num_critics, c.edac.num_critics) for p, c in SYSTEM.presets.items()} == {
        "smoke": (3, 3), "demo": (5, 5), "bench": (5, 5), "paper": (10, 10)}  # fmt: skip
    smoke = SYSTEM.presets["smoke"]
    assert {smoke.algorithm_config(a).batch_size for a in ALGORITHMS} == {32}
    assert smoke.pic.delta == smoke.epic.delta == 1.0 and smoke.edac.delta == 0.0


def test_nested_configs_replace_extra():
    over = {"pic.score_dtype": "float32", "iql.expectile": "0.9", "algorithms": "pic,iql"}
    cfg = SYSTEM.config("demo", over)
    assert cfg.pic.score_dtype == "float32" and cfg.iql.expectile == 0.9
    assert not hasattr(cfg.iql, "score_dtype")
    with pytest.raises(ConfigError, match="has no field 'scoring'"):
        SYSTEM.config("demo", {"pic.scoring": "fast"})
    with pytest.raises(ConfigError, match="has no field 'extra'"):
        SYSTEM.config("demo", {"extra": '{"score_dtype": "float32"}'})
