"""The release layout: our writer and the loader agree, and the loader reads files laid out as the
public release has them (written here by the test), naming each kind of bad input."""

from __future__ import annotations

import json

import pytest

from iclr26.core.errors import UserError
from iclr26.liveweb_ie.release import TYPES, load_release, read_groundtruth, write_release
from iclr26.liveweb_ie.sites import groundtruth, make_sites


def _public_layout(root, *, record=None, gt_lines=None):
    """A one-site release in the public layout: dataset.json, group.jsonl, one ground-truth file."""
    rec = {
        "website_id": "w_000", "website": "books.example", "group_id": "g_002",
        "group_url": "./books/group/group.jsonl", "query_id": "q_000", "query": "Get all the book titles",
        "attribute": ["title"], "type": "type_3",
        "label": {"title": "./groundtruth/book/books.example-g_002-title.txt"},
        "sample_id": "w_000_g_002_q_000",
    }  # fmt: skip
    rec.update(record or {})
    (root / "books" / "group").mkdir(parents=True)
    (root / "dataset.json").write_text(json.dumps({"books": [rec]}))
    urls = ["https://books.example/page-1.html", "https://books.example/page-2.html"]
    (root / "books" / "group" / "group.jsonl").write_text(json.dumps({"g_002": {"group_url": urls}}) + "\n")
    gt = root / "groundtruth" / "book" / "books.example-g_002-title.txt"
    gt.parent.mkdir(parents=True)
    lines = gt_lines or [
        "book books.example g_002 book_title",
        "2 3 3",
        '"https://books.example/page-1.html" 2 A Light in the ...\tTipping the Velvet',
        '"https://books.example/page-2.html" 1 Soumission',
    ]
    gt.write_text("\n".join(lines) + "\n")
    return root


def test_loader_reads_the_public_layout(tmp_path):
    rel = load_release(_public_layout(tmp_path))
    (r,) = rel.records
    assert r.type == "type_3" and r.attribute == ("title",) and len(rel.urls(r)) == 2
    gt = rel.groundtruth(r, "title")
    assert gt["https://books.example/page-1.html"] == ["A Light in the ...", "Tipping the Velvet"]
    assert rel.by_type()["type_3"] == 1


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"type": "type_5"}, "unknown type 'type_5'"),
        ({"attribute": "title"}, "attribute must be a non-empty list"),
        ({"label": {}}, "label must map every attribute"),
        ({"group_id": "g_404"}, "group g_404 is not in"),
    ],
)
def test_loader_names_a_malformed_record(tmp_path, record, message):
    with pytest.raises(UserError, match=message):
        load_release(_public_layout(tmp_path, record=record))


def test_loader_names_missing_and_malformed_files(tmp_path):
    with pytest.raises(UserError, match=r"no dataset\.json"):
        load_release(tmp_path)
    root = _public_layout(tmp_path / "a")
    (root / "groundtruth" / "book" / "books.example-g_002-title.txt").unlink()
    rel = load_release(root)
    with pytest.raises(UserError, match=r"books\.example-g_002-title\.txt does not exist"):
        rel.groundtruth(rel.records[0], "title")
    bad = _public_layout(tmp_path / "b", gt_lines=["h", "1 1 1", "https://books.example/page-1.html 2 a"])
    rel = load_release(bad)
    with pytest.raises(UserError, match=r':3: expected "<url>" <count> <values>'):
        rel.groundtruth(rel.records[0], "title")
    data = json.loads((root / "dataset.json").read_text())
    del data["books"][0]["query"]
    (root / "dataset.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="the record has no field query"):
        load_release(root)


def test_the_public_releases_irregular_lines_are_read_and_logged(tmp_path, caplog):
    lines = [
        "academic hf.example g_000 paper_title",
        "2 3 3",
        '"https://hf.example/p/1" 2 A Title That Continues',
        "  On The Next Line\tSecond Title",
        '"https://hf.example/p/2" 3 one\ttwo',
    ]
    rel = load_release(_public_layout(tmp_path, gt_lines=lines))
    gt = rel.groundtruth(rel.records[0], "title")
    assert gt["https://hf.example/p/1"] == ["A Title That Continues On The Next Line", "Second Title"]
    assert gt["https://hf.example/p/2"] == ["one", "two"]
    assert "3 values announced, 2 found" in caplog.text


def test_written_release_round_trips_and_covers_every_type(tmp_path):
    sites = make_sites(0, ("books", "papers"))
    rel = load_release(write_release(sites, tmp_path, version=2))
    assert all(rel.by_type()[t] > 0 for t in TYPES)
    books = sites["books"]
    for r in rel.records[:5]:
        for a in r.attribute:
            gt = rel.groundtruth(r, a)
            url = rel.urls(r)[0]
            path = url.split(books.website + "/", 1)[1]
            assert gt[url] == groundtruth(books.page(path, 2))[a]
    assert read_groundtruth(tmp_path / rel.records[0].label[rel.records[0].attribute[0]])


def _label(path):
    return {"label": {"title": path}}


@pytest.mark.parametrize(
    ("record", "bad_bytes", "said"),
    [
        (_label("../" * 7 + "etc/passwd"), None, "field 'label'['title']: '../../../../../../../etc/"),
        (_label("/etc/passwd"), None, "field 'label'['title']: '/etc/passwd' is an absolute path"),
        ({"group_url": "../outside.jsonl"}, None, "field 'group_url': '../outside.jsonl' leads out of"),
        (None, ("dataset.json", b"\xff{}"), "dataset.json: not UTF-8 text"),  # was a UnicodeDecodeError
        (None, ("books/group/group.jsonl", b"\xff\n"), "group.jsonl: not UTF-8 text"),
        (None, ("books/group/group.jsonl", b"{not json\n"), "group.jsonl: line 1 is not JSON"),
    ],
)  # fmt: skip
def test_a_bad_release_is_one_error_line_through_the_cli(tmp_path, record, bad_bytes, said):
    from typer.testing import CliRunner

    import iclr26.cli as cli

    root = _public_layout(tmp_path / "rel", record=record)
    if bad_bytes:
        (root / bad_bytes[0]).write_bytes(bad_bytes[1])
    res = CliRunner().invoke(
        cli.app,
        ["run", "liveweb_ie", "--preset", "smoke", "--set", f"release={root}", "--out", str(tmp_path / "r")],
    )
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and lines[-1].startswith("error: ") and said in lines[-1], res.output
    assert "Traceback" not in res.output and "root:" not in res.output
