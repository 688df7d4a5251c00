"""The released predictions' reader and the three scorings (the paper's rule, our parser, checked
labels), on a real sample of the authors' files and on files built here in the same format."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from iclr26.icl_analysis.config import ICLConfig
from iclr26.icl_analysis.corpus import AUTHORS_FILES, CorpusError
from iclr26.icl_analysis.released import (
    Prediction,
    ReleaseError,
    checked_label,
    file_name,
    our_score,
    paper_read,
    paper_score,
    paper_table,
    read_predictions,
    same_replies,
    tape_sum,
)
from iclr26.icl_analysis.system import _task_splits

DATA = Path(__file__).parent / "data" / "authors_release"


def _load(name: str) -> dict[float, list[Prediction]]:
    return read_predictions(json.loads((DATA / name).read_text()), name)


def test_sample_reads_and_keeps_its_licence():
    assert "MIT License" in (DATA / "LICENSE").read_text()
    parity = _load("mixtral_PARITY_predictions_modus_ponens_5_shot.json")
    assert sorted(parity) == [0.0, 0.2, 0.45, 0.65, 0.85]
    assert all(len(v) == 6 for v in parity.values())


def test_paper_rule_and_our_parser_differ_where_the_paper_reads_a_non_label():
    assert paper_read(" 01") == 1 and paper_read(" 29") == 29 and paper_read("1.") == 1
    assert paper_read(" 0вый") is None and paper_read(" This appears to") is None
    assert paper_read("fail") == paper_read(None) == "fail"
    items = [
        Prediction("0", 1, 0, " 29"),  # the paper: read, wrong; ours: not a label
        Prediction("0", 1, 1, " 1"),
        Prediction("0", 0, 2, "fail"),  # the paper leaves it out
        Prediction("0", 0, 3, " This"),
    ]
    p, o = paper_score(items, "parity"), our_score(items, "parity")
    assert (p.n, p.parsed, p.correct) == (3, 2, 1)
    assert (o.n, o.parsed, o.correct) == (4, 1, 1)
    assert p.drop == 50.0 and o.drop == 100.0


def test_real_sample_scores_by_hand():
    items = _load("mixtral_PARITY_predictions_modus_ponens_5_shot.json")[0.65]
    replies = [p.response for p in items]
    paper = paper_score(items, "parity")
    assert paper.parsed == sum(paper_read(r) is not None for r in replies)
    assert paper.correct == sum(paper_read(p.response) == p.label for p in items)
    ours = our_score(items, "parity")
    assert ours.parsed == sum(r.strip() in ("0", "1", "00", "01") for r in replies)


def test_checked_labels_find_the_reversal_label_bug_in_the_sample():
    items = [p for v in _load("mixtral_Reversal_predictions_modus_ponens_5_shot.json").values() for p in v]
    disagree = [p for p in items if checked_label("reversal", p.entry) != p.label]
    assert len(disagree) == 10  # 2 per split, chosen so
    assert our_score(items, "reversal", checked=True).n == len(items)
    assert checked_label("parity", "0101") is None  # only the tasks with a label bug are checked


def test_vm_sum_targets():
    assert tape_sum("+10,+5,coffee,5") == 5  # 15 - 15, the stated 5 added back (the paper)
    assert checked_label("vending_machine_sum", "+10,+5,coffee,5") == 0  # the tape's balance
    assert checked_label("vending_machine_sum", "+5,soda,0") is None  # a purchase it cannot pay
    items = [Prediction("+10,+5,coffee,5", 1, 0, " 0"), Prediction("+10,+10,coffee,0", 0, 1, " 5")]
    assert paper_score(items, "vending_machine_sum").correct == 1
    assert our_score(items, "vending_machine_sum", checked=True).correct == 2


def test_file_names_and_bad_files():
    assert file_name("p/predictions_w_desc_100_shot_shuffled.json") == ("w_desc", 100, True)
    assert file_name("predictions_modus_ponens_5_shot.json") == ("modus_ponens", 5, False)
    with pytest.raises(ReleaseError):
        file_name("predictions.json")
    with pytest.raises(ReleaseError, match="delta_"):
        read_predictions({"oops": []})
    with pytest.raises(ReleaseError, match="Entry"):
        read_predictions({"delta_0": [{"Label": 1}]})


def test_same_replies_matches_by_index_and_entry():
    a = {0.0: [Prediction("01", 1, 3, " 1"), Prediction("11", 0, 4, " 0")]}
    b = {0.0: [Prediction("11", 0, 4, " 1"), Prediction("01", 1, 3, " 1"), Prediction("00", 0, 9, " 0")]}
    assert same_replies(a, b) == (2, 1)


def _xlsx(rows: dict[tuple[int, int], str], sheet: str) -> bytes:
    def ref(r: int, c: int) -> str:
        return f"{chr(64 + c)}{r}"

    strings = sorted({v for v in rows.values() if not v.replace(".", "").isdigit()})
    cells = "".join(
        f'<c r="{ref(r, c)}" t="s"><v>{strings.index(v)}</v></c>'
        if v in strings
        else f'<c r="{ref(r, c)}"><v>{v}</v></c>'
        for (r, c), v in sorted(rows.items())
    )
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(
            "xl/workbook.xml",
            f'<workbook {ns} {rel}><sheets><sheet name="{sheet}" sheetId="1" r:id="rId1"/>'
            "</sheets></workbook>",
        )
        z.writestr("xl/_rels/workbook.xml.rels",
                   '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                   '<Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>')  # fmt: skip
        z.writestr(
            "xl/sharedStrings.xml",
            f"<sst {ns}>" + "".join(f"<si><t>{s}</t></si>" for s in strings) + "</sst>",
        )
        z.writestr(
            "xl/worksheets/sheet1.xml",
            f"<worksheet {ns}><sheetData><row>{cells}</row></sheetData></worksheet>",
        )
    return buf.getvalue()


def test_paper_table_reads_a_workbook_block():
    rows = {(1, 2): "(modus_ponens)", (3, 2): "shots", (3, 3): "delta", (4, 2): "5", (4, 3): "0.85",
            (4, 4): "10.5", (4, 7): "55.1", (5, 2): "slopes", (5, 4): "2"}  # fmt: skip
    table = paper_table(_xlsx(rows, "Stack Accuracy"))
    assert table == {
        ("turbo", "stack", "modus_ponens", 5, 0.85): 10.5,
        ("mixtral", "stack", "modus_ponens", 5, 0.85): 55.1,
    }
    assert paper_table(_xlsx(rows, "Stack Errors")) == {}


def _write_corpus(root: Path, deltas: tuple[float, ...]) -> Path:
    folder, id_stem, ood_stem = AUTHORS_FILES["parity"]
    base = root / folder
    base.mkdir(parents=True)
    rows = [{"Entry": "0" * (i % 5 + 1), "Label": int((i % 5 + 1) % 2 == 0), "Index": i} for i in range(30)]
    for stem in (id_stem, f"{id_stem}_test"):
        (base / f"{stem}.json").write_text("\n".join(json.dumps(r) for r in rows))
    (base / f"{ood_stem}.json").write_text(json.dumps({f"delta_{d}": rows for d in deltas}))
    return root


def test_data_option_reads_the_authors_files(tmp_path):
    root = _write_corpus(tmp_path / "datasets", (0.2, 0.85))
    cfg = ICLConfig(tasks=("parity",), data=str(root), deltas=(0.0, 0.85), items=10)
    s = _task_splits(cfg, "parity")
    assert len(s.train) == len(s.test) == 30 and sorted(s.ood) == [0.2, 0.85]
    assert s.train[3].entry == "0000" and s.train[3].label == 1
    with pytest.raises(CorpusError, match=r"no OOD split at δ=0\.45"):
        _task_splits(ICLConfig(tasks=("parity",), data=str(root), deltas=(0.0, 0.45), items=10), "parity")
    with pytest.raises(CorpusError, match="not a folder"):
        _task_splits(ICLConfig(tasks=("parity",), data=str(tmp_path / "nowhere"), items=10), "parity")
    with pytest.raises(ValueError, match="vending_machine_sum"):
        ICLConfig(tasks=("parity", "vending_machine_sum"), data=str(root))
    assert _task_splits(
        ICLConfig(tasks=("parity",), items=10, n_test=20, n_ood=20, n_train=20), "parity"
    ).train
