"""The vff system end to end (smoke preset), settings and config errors."""

import json

import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.vff import SYSTEM
from iclr26.vff.evaluate import bicubic_method, output_times, parse_setting, run_case, synthetic_case


def test_parse_setting():
    assert parse_setting("S4T8").label == "S×4 T×8" and parse_setting("S4T8").time_factor == 8
    assert parse_setting("S2.5").scale == 2.5 and parse_setting("S2.5").time_factor == 1
    with pytest.raises(ValueError, match="must look like"):
        parse_setting("x4")
    assert output_times(parse_setting("S4T4"), 4) == [1.0, 1.25, 1.5, 1.75, 2.0]
    assert output_times(parse_setting("S2"), 3) == [0.0, 1.0, 2.0]


def test_bicubic_scores_are_finite_on_a_held_out_view():
    case = synthetic_case("rocket", 0, 32, 3)
    scores = run_case(case, parse_setting("S2T2"), 3, {"bicubic": bicubic_method})["bicubic"]
    assert 10 < scores["psnr"] < 60 and 0 < scores["ssim"] <= 1 and scores["tof"] >= 0


def test_smoke_preset_runs_end_to_end_and_resumes(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    training, photos, clips, speed, standard, claims = record.report.tables
    assert len(clips.rows) == 2 * 4 and [row[0] for row in speed.rows] == [
        "bicubic + linear",
        "interpolant (step 0)",
        "implicit MLP (VideoINR-style)",
        "V³ Fourier field",
    ]
    # the kept weights never score below step 0 (the interpolant) on validation
    assert all(row[2] >= row[1] for row in training.rows) and len(training.rows) == 2
    assert (
        photos.columns == ["setting", "method", "PSNR ↑", "SSIM ↑", "PSNR centre ↑", "SSIM centre ↑", "tOF ↓"]
        and len(photos.rows) == 2 * 4
    )
    assert all(v == v for v in photos.column("PSNR ↑"))
    roles = {r[0]: r[1] for r in standard.rows}
    assert roles == {"vff": "method", "bicubic": "baseline", "inr": "baseline",
                     "interpolant": "floor (the interpolant (step 0))"}  # fmt: skip
    assert [r[2] for r in claims.rows] == ["bicubic", "inr"]  # one check per baseline, the worst reported
    claim = record.report.claim_check  # 1 clip × 2 settings: too few pairs for the rule
    assert (claim.method, claim.metric, claim.verdict, claim.n) == (
        "vff", "PSNR on the held-out real clips (dB)", "not tested", 2)  # fmt: skip
    assert (run_dir / "frames.png").exists() and (run_dir / "evaluation.json").exists()
    evaluation = json.loads((run_dir / "evaluation.json").read_text())
    assert set(evaluation) == {"photos", "clips"}
    assert json.loads((run_dir / "training.json").read_text())["vff"]["validation"][0][0] == 0
    ckpt = torch.load(run_dir / "checkpoints" / "vff.pt", weights_only=False)
    assert ckpt["step"] == 3
    ledger = (run_dir / CELLS_FILE).read_bytes()
    cells = [json.loads(line) for line in ledger.splitlines()]
    units = {"photos/rocket-1000/S2.5", "photos/rocket-1000/S4T2", "clips/bikes/S2.5", "clips/bikes/S4T2"}
    assert len(cells) == 4 * (2 + 2) and {c["unit"] for c in cells} == units
    record2, _ = run_system(SYSTEM, "smoke", out=run_dir)  # training is reloaded, not redone
    assert record2.report.tables[1].rows == photos.rows
    assert (run_dir / CELLS_FILE).read_bytes() == ledger  # every cell came from the ledger
    # cells forked by --jobs 2 after the parent trained (its OpenMP pool does not survive a fork: a
    # cell with two threads waited on it for ever) finish, and equal this process's but for timings
    _, run_dir2 = run_system(SYSTEM, "smoke", runs_root=tmp_path / "jobs2", jobs=2)

    def timeless(path):
        recs = [json.loads(line) for line in (path / CELLS_FILE).read_text().splitlines()]
        return sorted((r["arm"], r["unit"], {**r["metrics"], "s_per_frame": None}) for r in recs)

    assert timeless(run_dir2) == timeless(run_dir)


def _checks(tmp_path, psnr: dict[str, list[float]]):
    """The claim's checks on constructed PSNR, arm -> per clip × setting (3 settings), the photos
    0 dB for every arm (the claim must not read them)."""
    from iclr26.core.study import run_study
    from iclr26.core.system import RunContext
    from iclr26.vff.system import study

    st = study(SYSTEM.config("smoke", {"settings": "S2,S3,S4"}))
    clip_index = {u.key: i for i, u in enumerate(u for u in st.units if u.params["group"] == "clips")}

    def measure(arm, unit, ctx):
        if unit.key not in clip_index:
            return {"psnr": 0.0}
        v = psnr[arm.name][clip_index[unit.key]]
        return {"psnr": v, "clip_psnr": v}

    st.measure = measure
    st.views = None  # the system's tables need every metric; the claim needs only these
    tmp_path.mkdir()
    return run_study(st, RunContext(out_dir=tmp_path)).checks


def test_the_claim_is_on_the_real_clips_against_both_baselines(tmp_path):
    from iclr26.vff.system import study

    (claim,) = study(SYSTEM.config("smoke", {})).claims
    assert (claim.metric, claim.baselines) == ("clip_psnr", ("bicubic", "inr"))
    assert claim.floor_arm == "interpolant"
    (photos_only,) = study(SYSTEM.config("smoke", {"clips": ""})).claims
    assert photos_only.metric == "psnr"
    base = [30.0, 28.0, 26.0]
    up = [31.0, 28.6, 26.4]
    checks = _checks(tmp_path / "a", {"vff": up, "bicubic": base, "inr": base, "interpolant": base})
    assert [(c.baseline, c.verdict, c.n) for c in checks] == [("bicubic", "held", 3), ("inr", "held", 3)]
    mixed = [30.5, 27.6, 26.2]
    checks = _checks(tmp_path / "b", {"vff": mixed, "bicubic": base, "inr": base, "interpolant": base})
    assert {c.verdict for c in checks} == {"within noise"}
    below = [29.0, 27.5, 25.0]  # neither V³ nor the baselines above the interpolant on any clip
    checks = _checks(tmp_path / "c", {"vff": below, "bicubic": below, "inr": base, "interpolant": base})
    assert checks[0].verdict == "uninformative"


def test_config_errors_name_fields():
    with pytest.raises((ConfigError, ValueError), match="test_photos"):
        SYSTEM.config("demo", {"test_photos": "rocket,lena"})
    with pytest.raises((ConfigError, ValueError), match="clips"):
        SYSTEM.config("demo", {"clips": "foreman"})
    with pytest.raises((ConfigError, ValueError), match="must look like"):
        SYSTEM.config("demo", {"settings": "S4,T8"})


def test_a_clip_smaller_than_the_output_is_a_clear_error():
    from iclr26.vff.evaluate import clip_case

    with pytest.raises(ValueError, match="smaller than hr_size"):
        clip_case("carphone", 256, 4, 1)


def test_smoke_preset_with_the_rvrt_encoder(tmp_path):
    over = {
        "encoder": "rvrt",
        "rvrt.heads": "2",
        "rvrt.window": "2,4,4",
        "rvrt.passes": "1",
        "settings": "S2.5",
        "clips": "",
    }
    record, _ = run_system(SYSTEM, "smoke", over, runs_root=tmp_path)
    assert record.status == "complete"
    assert all(v == v for v in record.report.tables[1].column("PSNR ↑"))


def test_paper_preset_uses_the_rvrt_encoder():
    from iclr26.vff.models import VideoFourierField
    from iclr26.vff.rvrt import RVRTEncoder
    from iclr26.vff.system import build

    cfg = SYSTEM.config("paper", {})
    model = build(cfg, "vff")
    assert isinstance(model.encoder, RVRTEncoder) and isinstance(model, VideoFourierField)
    assert 10e6 < sum(p.numel() for p in model.parameters()) < 14e6  # RVRT/V³ scale (13.7M in the paper)
    with pytest.raises((ConfigError, ValueError), match="encoder must be one of"):
        SYSTEM.config("demo", {"encoder": "swin"})
    with pytest.raises((ConfigError, ValueError), match="multiple of heads"):
        SYSTEM.config("demo", {"encoder": "rvrt", "rvrt.channels": "30", "rvrt.heads": "4"})


def test_nested_configs_take_dotted_overrides():
    cfg = SYSTEM.config("smoke", {"train.steps": "5", "encoder": "rvrt", "rvrt.window": "2,4,4"})
    assert cfg.train.steps == 5 and cfg.encoder_config() is cfg.rvrt and cfg.rvrt.window == (2, 4, 4)
    assert SYSTEM.config("smoke", {}).encoder_config() == SYSTEM.presets["smoke"].conv3d
    with pytest.raises(ConfigError, match="lr_frames must be an int >= 2, got 1"):
        SYSTEM.config("demo", {"train.lr_frames": "1"})
