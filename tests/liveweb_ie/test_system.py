"""`iclr26 run liveweb_ie`: the study (arms and roles, the claim named before the run, the floors), the
smoke preset end to end (oracle 100 before drift, less after; null 0; the floor), resuming from
cells.jsonl, one VGS build with the real SmolLM2 and Chromium, the claim on constructed cells, config
errors."""

from __future__ import annotations

import json

import pytest

from iclr26.core import RunContext
from iclr26.core.claim import Claim
from iclr26.core.config import ConfigError
from iclr26.core.ledger import read_cells
from iclr26.liveweb_ie.config import LiveWebConfig
from iclr26.liveweb_ie.system import PRESETS, run, select_records


def test_smoke_preset_prints_the_table_with_its_floors(tmp_path):
    report = run(PRESETS["smoke"], RunContext(out_dir=tmp_path))
    rows = {r[0]: r for r in report.tables[0].rows}
    assert rows["oracle"][1] == 100.0 and rows["oracle"][2] < 100.0
    assert rows["autoscraper (rules; learns from first-page ground truth)"][1] == 100.0
    assert rows["class-name heuristic (no truth, no model)"][1] > 0.0
    assert rows["null (a value on no page)"][1:3] == [0.0, 0.0]
    assert 0.0 <= rows["empty extraction"][1] < 50.0
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
    standard = next(t for t in report.tables if t.title.startswith("liveweb_ie: every arm"))
    roles = {r[0]: r[1] for r in standard.rows}
    assert (
        roles["oracle"] == "oracle"
        and roles["null"] == "null"
        and roles["empty"] == "floor (empty extraction)"
    )
    assert roles["rules"] == "baseline" and not any("INVALID" in n for n in report.notes)
    cells = read_cells(tmp_path / "cells.jsonl")
    assert len(cells) == 5 * 4 and all(c.metrics["pass"] == 1 for (a, _), c in cells.items() if a == "oracle")
    assert report.claim_check is None  # no VGS: nothing is claimed


def test_the_study_names_its_arms_floors_and_claim_before_the_run(tmp_path):
    from iclr26.liveweb_ie.release import load_release, write_release
    from iclr26.liveweb_ie.server import LiveSites
    from iclr26.liveweb_ie.system import study

    cfg = LiveWebConfig(sites=("books",), records_per_type=1, versions=(0, 2))
    live = LiveSites(0, cfg.sites)
    releases = {v: load_release(write_release(live.sites, tmp_path / f"v{v}", v)) for v in cfg.versions}
    s = study(cfg, live, releases)
    assert {a.name: a.role for a in s.arms} == {
        "oracle": "oracle", "null": "null", "empty": "floor", "rules": "baseline", "heuristic": "baseline",
        "cot": "baseline",
        "reflexion": "baseline", "autoscraper": "baseline", "vgs": "method",
    }  # fmt: skip
    [claim] = s.claims
    assert claim.method == "vgs" and claim.baselines == ("cot", "reflexion", "autoscraper")
    assert claim.metric == "f1_v0" and claim.floor_arm == "empty" and claim.interval == "bootstrap"
    assert [r.values for r in s.references] == [{"f1_v0": 24.6}, {"f1_v0": 26.76}, {"f1_v0": 48.58}]
    assert len(s.units) == 4 and {u.params["type"] for u in s.units} == {
        "type_1",
        "type_2",
        "type_3",
        "type_4",
    }
    assert not study(
        LiveWebConfig(sites=("books",), methods=("oracle", "null", "empty", "vgs")), live, releases
    ).claims


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
    cells = read_cells(tmp_path / "cells.jsonl")
    assert {a for a, _ in cells} == {"cot", "vgs"} and len(cells) == 2
    assert all(c.metrics["build_tokens"] > 0 and c.tokens["calls"] > 0 for c in cells.values())
    saved = json.loads((tmp_path / "wrappers.json").read_text())
    stages = next(iter(saved["VGS"].values()))["stages"]
    assert stages and {"region", "marks", "xpath", "replies"} <= set(stages[0])
    again = run(cfg, RunContext(out_dir=tmp_path))  # every cell read back from cells.jsonl
    assert len((tmp_path / "cells.jsonl").read_text().splitlines()) == 2
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


def test_the_claim_is_core_s_one_rule_on_constructed_cells():
    """VGS against each baseline, paired over queries: at the floor everywhere is `uninformative`, a
    clear win `held`, one query's win `within noise`; the worst check is the report's."""
    from iclr26.core.claim import judge, worst

    claim = Claim("f1_v0", "vgs", ("cot", "reflexion"), interval="bootstrap", floor_arm="empty")
    q = [f"q{i}" for i in range(6)]
    zero = dict.fromkeys(q, 0.0)
    assert judge(claim, "cot", zero, zero, zero).verdict == "uninformative"
    win = {k: 60.0 + i for i, k in enumerate(q)}
    assert judge(claim, "cot", win, zero, zero).verdict == "held"
    one = {**zero, "q0": 2.0}
    assert judge(claim, "reflexion", one, zero, zero).verdict == "within noise"
    checks = [judge(claim, "cot", win, zero, zero), judge(claim, "reflexion", one, zero, zero)]
    assert worst(checks).verdict == "within noise"


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


def test_two_jobs_give_the_ledger_of_one(tmp_path):
    """A cell scores pages as served at each version, not at the server's clock: forked workers that
    share the parent's server record the same cells (timings aside)."""
    cfg = LiveWebConfig(sites=("quotes",), records_per_type=1, pages_per_group=2, versions=(0, 2),
                        methods=("oracle", "null", "empty", "rules"))  # fmt: skip
    run(cfg, RunContext(out_dir=tmp_path / "one"))
    run(cfg, RunContext(out_dir=tmp_path / "two", jobs=2))
    one, two = (read_cells(tmp_path / d / "cells.jsonl") for d in ("one", "two"))
    drop = ("build_s",)
    assert len(one) == 16 and set(one) == set(two)
    assert all({k: v for k, v in one[c].metrics.items() if k not in drop}
               == {k: v for k, v in two[c].metrics.items() if k not in drop} for c in one)  # fmt: skip
