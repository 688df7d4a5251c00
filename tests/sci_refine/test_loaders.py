"""Loaders by path for the authors' JSON, HLE, SuperGPQA and TRQA: happy paths and every bad-input error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26.core.errors import UserError
from iclr26.sci_refine import loaders as L

MC_QUERY = "Which gas is a noble gas?\n\nAnswer Choices:\nA. Nitrogen\nB. Argon\nC. Oxygen\nD. Chlorine"
AUTHORS = [
    {"id": "q-mc", "query": MC_QUERY, "gt": "B", "category": "Chemistry", "answer_type": "multipleChoice"},
    {
        "id": "q-ex",
        "query": "Name the sugar in DNA.",
        "gt": "deoxyribose",
        "category": "Biology/Medicine",
        "answer_type": "exactMatch",
    },
]
TRQA = [
    {
        "id": "trqa_x_0",
        "query": "Which are primes?\n\nSelect all that apply.\n\nA: 2\nB: 4\nC: 5\nD: 9",
        "gt": "AC",
        "category": "",
        "answer_type": "multipleChoice",
    },
]
HLE = [
    {
        "id": "h1",
        "question": MC_QUERY,
        "answer": "B",
        "answer_type": "multipleChoice",
        "category": "Chemistry",
        "image": "",
        "rationale": "made up",
    },
    {
        "id": "h2",
        "question": "What is 2 + 2?",
        "answer": "4",
        "answer_type": "exactMatch",
        "category": "Math",
        "image": "",
    },
    {
        "id": "h3",
        "question": "What is in the picture?",
        "answer": "a cat",
        "answer_type": "exactMatch",
        "category": "Biology/Medicine",
        "image": "data:image/png;base64,AAAA",
    },
]
SUPERGPQA = [
    {
        "uuid": "s1",
        "question": "How many chromosomes in a human diploid cell?",
        "options": ["23", "46", "44"],
        "answer": "46",
        "answer_letter": "B",
        "discipline": "Science",
        "field": "Biology",
        "subfield": "Genetics",
        "difficulty": "hard",
    },
    {
        "uuid": "s2",
        "question": "What is the SI unit of force?",
        "options": ["joule", "watt", "newton"],
        "answer": "newton",
        "answer_letter": "",
        "discipline": "Science",
        "field": "Physics",
        "subfield": "Mechanics",
        "difficulty": "easy",
    },
]


def _write(tmp_path: Path, name: str, records: object) -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")  # type: ignore[union-attr]
    else:
        path.write_text(json.dumps(records))
    return path


# --- happy paths ----------------------------------------------------------------------------


def test_authors_json(tmp_path):
    qs = L.load_authors_json(_write(tmp_path, "a.json", AUTHORS))
    mc, ex = qs
    assert (mc.id, mc.gt, mc.answer_type, mc.category) == ("q-mc", "B", "multiple_choice", "Chemistry")
    assert mc.choices == ("Nitrogen", "Argon", "Oxygen", "Chlorine") and mc.needs_retrieval is None
    assert (ex.gt, ex.answer_type, ex.choices) == ("deoxyribose", "exact", ())
    assert [q.id for q in L.load_authors_json(tmp_path / "a.json", categories=["Biology"])] == ["q-ex"]
    assert L.load_questions(tmp_path / "a.json", "authors") == qs


def test_trqa_multiple_answers(tmp_path):
    (q,) = L.load_trqa(_write(tmp_path, "t.json", TRQA))
    assert q.gt == "AC" and q.choices == ("2", "4", "5", "9") and q.answer_type == "multiple_choice"
    with pytest.raises(L.LoaderError, match="one option letter"):  # the single-answer loader refuses it
        L.load_authors_json(tmp_path / "t.json")


def test_parse_choices_multiline_and_last_list():
    query = "Steps:\nA. first\nB. second\n\nAnswer Choices:\nA. $$\nx + 1\n$$\nB. two\nC) three"
    assert L.parse_choices(query) == ("$$\nx + 1\n$$", "two", "three")
    assert L.parse_choices("No options here. A. alone") == ()


@pytest.mark.parametrize("name", ["hle.json", "hle.jsonl"])
def test_hle_skips_images_with_a_warning(tmp_path, name):
    path = _write(tmp_path, name, HLE)
    with pytest.warns(UserWarning, match="skipped 1 item"):
        qs = L.load_hle(path)
    assert [(q.id, q.gt, q.answer_type) for q in qs] == [("h1", "B", "multiple_choice"), ("h2", "4", "exact")]
    assert qs[0].choices[1] == "Argon"
    with pytest.warns(UserWarning):
        assert [q.id for q in L.load_hle(path, categories=["Chemistry", "Biology/Medicine"])] == ["h1"]


def test_hle_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "hle.parquet"
    pd.DataFrame(HLE).to_parquet(path)
    with pytest.warns(UserWarning, match="skipped 1"):
        assert [q.id for q in L.load_hle(path)] == ["h1", "h2"]


def test_supergpqa(tmp_path):
    path = _write(tmp_path, "s.json", SUPERGPQA)
    s1, s2 = L.load_supergpqa(path)
    assert (s1.id, s1.gt, s1.category, s1.choices) == ("s1", "B", "Biology/Genetics", ("23", "46", "44"))
    assert "Answer Choices:\nA. 23\nB. 46\nC. 44" in s1.query
    assert s2.gt == "C"  # from the answer text, answer_letter being empty
    assert [q.id for q in L.load_supergpqa(path, fields=["biology"], difficulty="hard")] == ["s1"]


# --- bad input ------------------------------------------------------------------------------


def _error(loader, path: Path, match: str) -> str:
    with pytest.raises(L.LoaderError, match=match) as err:
        loader(path)
    message = str(err.value)
    assert isinstance(err.value, UserError) and "\n" not in message
    return message


def test_file_level_errors(tmp_path):
    _error(L.load_authors_json, tmp_path / "missing.json", "no such file")
    _error(L.load_authors_json, tmp_path, "is a folder")
    (tmp_path / "bad.json").write_text("[{")
    _error(L.load_authors_json, tmp_path / "bad.json", "not JSON")
    (tmp_path / "bad.jsonl").write_text('{"id": "h1"}\n{oops\n')
    _error(L.load_hle, tmp_path / "bad.jsonl", "line 2 is not JSON")
    _error(L.load_authors_json, _write(tmp_path, "obj.json", {"a": 1, "b": 2}), "expected a JSON array")
    _error(L.load_authors_json, _write(tmp_path, "nums.json", [1]), "record #0 is a int")
    with pytest.raises(L.LoaderError, match="unknown question format 'gpqa'"):
        L.load_questions(tmp_path / "a.json", "gpqa")


def _variant(tmp_path: Path, base: list[dict], i: int, **change) -> Path:
    records = [dict(r) for r in base]
    records[i].update(change)
    for key, value in change.items():
        if value is None:
            del records[i][key]
    return _write(tmp_path, "v.json", records)


def test_record_level_errors_name_the_record(tmp_path):
    msg = _error(L.load_authors_json, _variant(tmp_path, AUTHORS, 1, gt=""), "no gold answer")
    assert "'q-ex'" in msg and "v.json" in msg
    _error(
        L.load_authors_json, _variant(tmp_path, AUTHORS, 1, gt=None, id=None), r"record #1: no gold answer"
    )
    _error(L.load_authors_json, _variant(tmp_path, AUTHORS, 0, answer_type="trueFalse"),
           "'q-mc': unknown answer_type 'trueFalse'")  # fmt: skip
    _error(
        L.load_authors_json,
        _variant(tmp_path, AUTHORS, 0, gt="F"),
        r"gold 'F' is not one option letter \(A-D\)",
    )
    _error(L.load_authors_json, _variant(tmp_path, AUTHORS, 0, query=None), "missing field 'query'")
    _error(L.load_authors_json, _variant(tmp_path, AUTHORS, 1, id="q-mc"), "'q-mc': duplicate id")
    _error(L.load_authors_json, _variant(tmp_path, AUTHORS, 0, answer_type="numeric"), "not a number")
    _error(L.load_hle, _variant(tmp_path, HLE, 1, answer=None), "'h2': no gold answer")
    _error(L.load_hle, _variant(tmp_path, HLE, 1, answer_type="freeForm"), "unknown answer_type 'freeForm'")
    _error(L.load_supergpqa, _variant(tmp_path, SUPERGPQA, 0, answer_letter="E"), "'s1': answer_letter 'E'")
    _error(L.load_supergpqa, _variant(tmp_path, SUPERGPQA, 1, answer="torque"), "'torque' is not among")
    _error(L.load_supergpqa, _variant(tmp_path, SUPERGPQA, 1, answer=""), "no gold answer")
    _error(L.load_supergpqa, _variant(tmp_path, SUPERGPQA, 0, options="23"), "'options' should be a list")


def test_a_duplicated_question_id_is_named(tmp_path):
    path = _write(tmp_path, "dup.json", [AUTHORS[0], {**AUTHORS[1], "id": "q-mc"}])
    with pytest.raises(UserError, match="record 'q-mc': duplicate id 'q-mc'"):
        L.load_questions(path, "authors")
    path = _write(tmp_path, "dup.jsonl", [HLE[0], HLE[0]])
    with pytest.raises(UserError, match="duplicate id 'h1'"):
        L.load_hle(path)
