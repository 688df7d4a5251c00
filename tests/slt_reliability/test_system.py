"""The `slt_reliability` system as a study: the units are the translators (dataset × architecture), the
arms the detectors (grounding and META the methods, text confidence alone the floor); end to end on
the smoke preset, the AUC table has both datasets and both architectures, every analysis table and
figure is written, the cells resume from `cells.jsonl`, and a run started from the same checkpoints
resumes the trained translators and repeats the table exactly."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE
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
    check = record.report.claim_check
    assert (check.method, check.baseline, check.n) == ("grounding", "confidence", 4)
    cells = (out / CELLS_FILE).read_text().splitlines()
    assert len(cells) == 4 * 5  # 4 translators x 5 detectors
    standard = next(t for t in record.report.tables if t.title.endswith("every arm, mean over units"))
    assert next(r for r in standard.rows if r[0] == "confidence")[1] == "floor (confidence alone)"
    detail = tables["Detection and regression against CHAIR (test)"]
    by_cell = {(json.loads(c)["unit"], json.loads(c)["arm"]): json.loads(c)["metrics"] for c in cells}
    row = next(r for r in detail.rows if r[:2] == ["csl_like / gloss_free", "META"])
    assert row[2] == pytest.approx(by_cell[("csl_like/gloss_free", "META")]["auc"], abs=5e-4)
    same, _ = run_system(SYSTEM, "smoke", out=out)  # every cell resumed from the ledger
    assert (out / CELLS_FILE).read_text().splitlines() == cells
    assert same.report.claim_check == check
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


def test_the_study_judges_grounding_and_meta_against_confidence_alone() -> None:
    from iclr26.slt_reliability.system import study

    s = study(SLTConfig(datasets=("phoenix_like",), architectures=("gloss_based", "gloss_free")))
    assert {a.name: a.label for a in s.arms} == {
        "grounding": "method", "META": "method", "confidence": "floor (confidence alone)",
        "perplexity": "baseline", "entropy": "baseline",
    }  # fmt: skip
    assert [u.key for u in s.units] == ["phoenix_like/gloss_based", "phoenix_like/gloss_free"]
    assert [(c.method, c.baselines, c.floor) for c in s.claims] == [
        ("grounding", ("confidence",), 0.5), ("META", ("confidence",), 0.5)
    ]  # fmt: skip
    assert all(r.name.startswith("paper ") for r in s.references)  # the paper's AUCs: shown, never judged
