"""The `slt_reliability` system end to end on the smoke preset: the AUC table has both datasets and
both architectures, every analysis table and figure is written, and a run started from the same
checkpoints resumes the trained translators and repeats the table exactly."""

from __future__ import annotations

import math
import shutil

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.runner import run_system
from iclr26.slt_reliability import SYSTEM
from iclr26.slt_reliability.config import SLTConfig

NO_ANALYSES = {"figures": "false", "noise": "[]", "downsample": "[]", "drop": "[]", "prompt_words": "0"}


def test_smoke_prints_the_auc_table_for_both_datasets_and_architectures(tmp_path) -> None:
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    tables = {t.title: t for t in record.report.tables}
    main = record.report.tables[0]
    assert {(r[0], r[1]) for r in main.rows} == {
        (d, k) for d in ("phoenix_like", "csl_like") for k in ("gloss_based", "gloss_free")
    }
    for row in main.rows:
        aucs = row[4:9]
        assert all(a is None or 0.0 <= a <= 1.0 for a in aucs)
        assert not all(a is None or math.isnan(a) for a in aucs)
    for title in ("degradation", "wrong starting prompt", "Transfer", "each signal"):
        assert any(title in t for t in tables), title
    assert sorted(record.report.figures) == ["degradation.png", "roc.png", "tokens.png"]
    assert all((run_dir / f).stat().st_size > 0 for f in record.report.figures)
    assert record.report.claim_check is not None
    resumed = tmp_path / "resumed"  # a new run folder (other settings) that starts from the same checkpoints
    shutil.copytree(out / "checkpoints", resumed / "checkpoints")
    again, _ = run_system(SYSTEM, "smoke", overrides=NO_ANALYSES, out=resumed)
    assert again.report.tables[0].rows == main.rows  # resumed translators, seeded passes
    trained = {t.title: t for t in again.report.tables}["Translators"]
    assert all(r[4] < 2.0 for r in trained.rows)  # no epoch re-trained


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="datasets"):
        SLTConfig(datasets=("how2sign",))
    with pytest.raises(ConfigError, match="architectures"):
        SLTConfig(architectures=("gloss_only",))
    with pytest.raises(ConfigError, match="drop"):
        SLTConfig(drop=(1.0,))
    with pytest.raises(ConfigError, match="entity_file"):
        SLTConfig(entity_file="entities.txt")
