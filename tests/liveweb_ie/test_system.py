"""`iclr26 run liveweb_ie`: the smoke preset end to end (oracle 100 before drift, less after), resuming
from wrappers.jsonl, one VGS build with the real SmolLM2 and Chromium, config errors."""

from __future__ import annotations

import json

import pytest

from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.liveweb_ie.config import LiveWebConfig
from iclr26.liveweb_ie.system import PRESETS, run, select_records


def test_smoke_preset_prints_the_table(tmp_path):
    report = run(PRESETS["smoke"], RunContext(out_dir=tmp_path))
    rows = {r[0]: r for r in report.tables[0].rows}
    assert rows["oracle"][1] == 100.0 and rows["oracle"][2] < 100.0
    assert rows["autoscraper (rules)"][1] == 100.0
    assert any("oracle F1 at v0: 100.0%" in n for n in report.notes)
    pages = [json.loads(x) for x in (tmp_path / "pages.jsonl").read_text().splitlines()]
    assert {p["version"] for p in pages} == {0, 2} and {p["type"] for p in pages} == {
        "type_1",
        "type_2",
        "type_3",
        "type_4",
    }
    assert (tmp_path / "release" / "v2" / "dataset.json").is_file() and (
        tmp_path / "f1_by_type.png"
    ).is_file()


@pytest.mark.debian("chromium")
def test_vgs_and_cot_with_smollm2_build_wrappers_and_resume(tmp_path, smollm2):
    cfg = LiveWebConfig(
        sites=("books",),
        types=("type_2",),
        records_per_type=1,
        pages_per_group=2,
        versions=(0,),
        methods=("cot", "vgs"),
        max_tokens=24,
        max_regions=1,
    )
    report = run(cfg, RunContext(out_dir=tmp_path))
    built = [json.loads(x) for x in (tmp_path / "wrappers.jsonl").read_text().splitlines()]
    assert (
        {b["method"] for b in built} == {"CoT", "VGS"}
        and len(built) == 2
        and all(b["tokens"] > 0 for b in built)
    )
    saved = json.loads((tmp_path / "wrappers.json").read_text())
    stages = next(iter(saved["VGS"].values()))["stages"]
    assert stages and {"region", "marks", "xpath", "replies"} <= set(stages[0])
    again = run(cfg, RunContext(out_dir=tmp_path))  # every wrapper read back from wrappers.jsonl
    assert len((tmp_path / "wrappers.jsonl").read_text().splitlines()) == 2
    assert again.tables[0].rows == report.tables[0].rows


def test_record_selection_spreads_types_over_sites(tmp_path):
    from iclr26.liveweb_ie.release import load_release, write_release
    from iclr26.liveweb_ie.sites import make_sites

    rel = load_release(write_release(make_sites(0), tmp_path, 0))
    picked = select_records(rel.records, 2)
    assert [r.type for r in picked] == ["type_1"] * 2 + ["type_2"] * 2 + ["type_3"] * 2 + ["type_4"] * 2
    assert len({r.website for r in picked}) >= 3
    assert select_records(rel.records, 0) == rel.records
    assert {r.type for r in select_records(rel.records, 3, ("type_3",))} == {"type_3"}


def test_bad_config_values_are_named():
    with pytest.raises(ConfigError, match="sites"):
        LiveWebConfig(sites=("blog",))
    with pytest.raises(ConfigError, match="methods"):
        LiveWebConfig(methods=("gpt",))
    with pytest.raises(ConfigError, match="versions"):
        LiveWebConfig(versions=(2, 0))
    with pytest.raises(ConfigError, match="max_regions"):
        LiveWebConfig(max_regions=0)


def test_claim_margin_is_1_96_paired_standard_errors_over_queries():
    from iclr26.liveweb_ie.evaluate import PageResult
    from iclr26.liveweb_ie.system import _paired_margin

    def row(m, q, f1, v=0):
        return PageResult(m, q, "type_1", v, "u", f1, f1, f1)

    rows = [row("VGS", "q1", 1.0), row("VGS", "q2", 0.0), row("CoT", "q1", 0.0), row("CoT", "q2", 0.0)]
    rows += [row("VGS", "q1", 0.5, v=2)]  # another version: ignored
    assert _paired_margin(rows, "VGS", "CoT", 0) == pytest.approx(1.96 * 70.7107 / 2**0.5, rel=1e-4)
    assert _paired_margin(rows[:1] + rows[2:3], "VGS", "CoT", 0) == 0.0  # one query: no spread to measure


def test_a_release_folder_is_loaded_and_summarised(tmp_path):
    from tests.liveweb_ie.test_release import _public_layout

    report = run(
        LiveWebConfig(release=str(_public_layout(tmp_path / "rel"))), RunContext(out_dir=tmp_path / "run")
    )
    rows = dict((r[0], r[1]) for r in report.tables[0].rows)
    assert rows["type_3"] == 1 and rows["groups"] == 1 and rows["pages (median per group)"] == 2
    from iclr26.core.errors import UserError

    with pytest.raises(UserError, match=r"no dataset\.json"):
        run(LiveWebConfig(release=str(tmp_path)), RunContext(out_dir=tmp_path / "run2"))
