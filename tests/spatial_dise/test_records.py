"""Spatial-DISE CSV rows: our writer's bytes, the release's aliases, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from iclr26.core.errors import UserError
from iclr26.spatial_dise.records import (
    CSV_COLUMNS,
    Record,
    RecordError,
    load_release,
    quadrant_name,
    read_csv,
    write_csv,
)


def fake_png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), "white").save(path)


def ours(tmp_path: Path) -> list[Record]:
    for name in ("images/a.png", "images/b.png", "images/c1.png", "images/c2.png"):
        fake_png(tmp_path / name)
    rotation = "Which view is the same shape?"
    return [
        Record("r1", rotation, "B", "images/a.png", "3d_rotation", "easy", "Intrinsic-Dynamic", 1),
        Record("r2", 'Quote "this", comma, and\nnewline', "D", "images/b.png", "3d_projection", "hard",
               "Extrinsic-Static", 2),
        Record("r3", "Multi-image row", "A", "images/c1.png;images/c2.png", "fold_punch", "medium",
               "Intrinsic-Dynamic", None),
    ]  # fmt: skip


def test_write_read_round_trip_and_deterministic_bytes(tmp_path: Path) -> None:
    recs = ours(tmp_path)
    a = write_csv(tmp_path / "a.csv", recs)
    b = write_csv(tmp_path / "b.csv", recs)
    assert a.read_bytes() == b.read_bytes()
    raw = a.read_bytes()
    assert b"\r\n" not in raw.replace(b'"Quote', b"")  # '\n' endings
    assert raw.splitlines()[0].decode() == ",".join((*CSV_COLUMNS, "n_question_panels"))
    back = read_csv(a)
    assert back == recs
    assert back[2].images == ("images/c1.png", "images/c2.png")
    assert back[2].image_paths(tmp_path)[1] == tmp_path / "images/c2.png"


def test_write_refuses_bad_difficulty_and_duplicate_ids(tmp_path: Path) -> None:
    recs = ours(tmp_path)
    bad = Record("x", "q", "A", "images/a.png", "2d_rotation", "Hard!", "Intrinsic-Static")
    with pytest.raises(RecordError, match="difficulty"):
        write_csv(tmp_path / "x.csv", [bad])
    with pytest.raises(RecordError, match="r1"):
        write_csv(tmp_path / "x.csv", [recs[0], recs[0]])


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("Intrinsic-Static", "Intrinsic-Static"),
        ("intrinsic_static", "Intrinsic-Static"),
        ("IS", "Intrinsic-Static"),
        ("extrinsic dynamic", "Extrinsic-Dynamic"),
        ("ED", "Extrinsic-Dynamic"),
        ("Extrinsic-Static", "Extrinsic-Static"),
        ("id", "Intrinsic-Dynamic"),
        ("INTRINSICDYNAMIC", "Intrinsic-Dynamic"),
    ],
)
def test_quadrant_spellings(spelling: str, canonical: str) -> None:
    assert quadrant_name(spelling) == canonical


def release_csv(
    tmp_path: Path, body: str, header: str = "ID,Question,label,image_path,task,level,quadrant,notes"
) -> Path:
    fake_png(tmp_path / "img" / "0.png")
    path = tmp_path / "test.csv"
    path.write_text(header + "\n" + body, encoding="utf-8")
    return path


def test_release_aliases_lenient_difficulty_and_extra_columns(tmp_path: Path) -> None:
    path = release_csv(
        tmp_path,
        "0,What is seen?,c,img/0.png,3d_projection,Level-2,ES,extra\r\n"
        "1,Another,(A),img/0.png,2d_rotation,,intrinsic_dynamic,\r\n\r\n",
    )
    recs = read_csv(path)
    assert [r.answer for r in recs] == ["C", "A"]
    assert [r.dise_category for r in recs] == ["Extrinsic-Static", "Intrinsic-Dynamic"]
    assert [r.difficulty for r in recs] == ["level-2", ""]
    assert recs[0].category == "3d_projection" and recs[0].n_question_panels is None
    assert load_release(tmp_path) == recs  # folder -> test.csv
    assert load_release(path) == recs


def test_release_in_dataset_subfolder(tmp_path: Path) -> None:
    sub = tmp_path / "dataset"
    release_csv(sub, "0,q,B,img/0.png,3d_rotation,easy,Intrinsic-Dynamic,\n")
    assert [r.id for r in load_release(tmp_path)] == ["0"]


def test_release_without_difficulty_column(tmp_path: Path) -> None:
    path = release_csv(
        tmp_path, "7,q,D,img/0.png,3d_folding,ID\n", header="id,question,answer,images,category,dise"
    )
    (rec,) = read_csv(path)
    assert rec.difficulty == "" and rec.dise_category == "Intrinsic-Dynamic"


@pytest.mark.parametrize(
    "body, header, needle",
    [
        ("0,q,B,img/0.png,3d_rotation,easy\n", None, r"row 2: has 6 fields"),
        ("0,q,E,img/0.png,3d_rotation,easy,IS,\n", None, r"row 2, field 'answer'.*'E'"),
        ("0,q,the first,img/0.png,3d_rotation,easy,IS,\n", None, r"row 2, field 'answer'"),
        (
            "0,q,A,img/0.png,3d_rotation,easy,Outer-Static,\n",
            None,
            r"row 2, field 'dise_category'.*Outer-Static",
        ),
        ("0,q,A,img/missing.png,3d_rotation,easy,IS,\n", None, r"row 2, field 'image'.*missing.png"),
        ("0,q,A,img/0.png,3d_rotation,easy,IS,\n0,q,A,img/0.png,x,easy,IS,\n", None, r"row 3, field 'id'"),
        ("0,q,A,img/0.png,,easy,IS,\n", None, r"row 2, field 'category'"),
        (
            "0,q,A,img/0.png,easy,IS\n",
            "id,question,answer,image,difficulty,dise_category",
            r"missing.*'category'",
        ),
    ],
)
def test_bad_rows_name_file_row_and_field(tmp_path: Path, body: str, header: str | None, needle: str) -> None:
    path = release_csv(tmp_path, body, **({"header": header} if header else {}))
    with pytest.raises(RecordError, match=needle) as e:
        read_csv(path)
    assert isinstance(e.value, UserError)
    message = str(e.value)
    assert "\n" not in message and str(path) in message


def test_ours_is_strict_on_difficulty(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ours.csv", ours(tmp_path)[:1])
    path.write_text(path.read_text().replace(",easy,", ",Easy-ish,"))
    with pytest.raises(RecordError, match=r"row 2, field 'difficulty'"):
        read_csv(path)


def test_check_images_off_and_missing_inputs(tmp_path: Path) -> None:
    path = release_csv(tmp_path, "0,q,A,img/nowhere.png,3d_rotation,easy,IS,\n")
    assert read_csv(path, check_images=False)[0].image == "img/nowhere.png"
    with pytest.raises(RecordError, match="no such CSV"):
        read_csv(tmp_path / "nope.csv")
    with pytest.raises(RecordError, match=r"no test\.csv"):
        load_release(tmp_path / "img")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(RecordError, match="empty"):
        read_csv(tmp_path / "empty.csv")


def test_record_validates_its_fields() -> None:
    with pytest.raises(ValueError, match="answer"):
        Record("x", "q", "E", "a.png", "t", "easy", "Intrinsic-Static")
    with pytest.raises(ValueError, match="dise_category"):
        Record("x", "q", "A", "a.png", "t", "easy", "IS")


def test_release_in_the_flagevalmm_schema(tmp_path: Path) -> None:
    """DISE-bench/DISE-benchmark.csv as FlagEvalMM reads it: no id column, a `source` column, one
    merged image per row and optional per-panel image columns (ignored)."""
    bench = tmp_path / "DISE-bench"
    (bench / "image").mkdir(parents=True)
    (bench / "image" / "q1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (bench / "DISE-benchmark.csv").write_text(
        "question,answer,image,category,difficulty,source,dise_category,option_a_image_path\n"
        '"Which view, from the cone?",B,image/q1.png,3d_projection,medium,synthetic,Extrinsic-Static,\n',
        encoding="utf-8",
    )
    (rec,) = load_release(bench)
    assert (rec.id, rec.answer, rec.category, rec.dise_category) == (
        "DISE-benchmark_00001",
        "B",
        "3d_projection",
        "Extrinsic-Static",
    )
    assert rec.image_paths(bench)[0].is_file()
