"""The two release layouts, validation that names the record and field, and swapping."""

from __future__ import annotations

import json

import pytest

from iclr26.lfqa_e.data import Comparison, DataError, label_counts, load_comparisons, save_comparisons


def _unified(**changes):
    rec = {
        "id": "u1", "question": "Why is the sky blue?", "context": "", "type": "physics",
        "reference": "Rayleigh scattering favours short wavelengths.", "response_a": "Scattering.",
        "response_b": "Because of the ocean.", "compare_type": "human_vs_model", "label": "response_a",
    }  # fmt: skip
    rec.update(changes)
    return rec


def _write(tmp_path, records, name="data.json"):
    path = tmp_path / name
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path


def test_unified_layout(tmp_path):
    zh = _unified(id="u2", question="天空为什么是蓝色的？", reference="瑞利散射。", response_a="散射。",
                  response_b="海洋。", label="same", compare_type="model_vs_model", type="")  # fmt: skip
    got = load_comparisons(_write(tmp_path, [_unified(), zh]))
    assert [c.id for c in got] == ["u1", "u2"]
    ref = "Rayleigh scattering favours short wavelengths."
    assert got[0] == Comparison("u1", "Why is the sky blue?", ref, "Scattering.", "Because of the ocean.",
                                "response_a", "human_vs_model", "", "en", "physics")  # fmt: skip
    assert got[1].language == "zh" and got[1].label == "same" and got[1].topic == ""
    assert label_counts(got) == {"response_a": 1, "response_b": 0, "same": 1}
    assert {c.language for c in load_comparisons(_write(tmp_path, [zh]), language="en")} == {"en"}


def test_old_layout_with_pair_keys(tmp_path):
    base = {"id": "o1", "question": "How does cruise control work?", "Concise_Reference": "A control loop."}
    recs = [
        {**base, "student_answer_a": "PID.", "student_answer_b": "Magic.",
         "student_answer_a_vs_student_answer_b": "student_answer_a"},
        {**base, "student_answer_b": "Magic.", "model_answer_a": "A loop.",
         "student_answer_b_vs_model_answer_a": "model_answer_a"},
        {**base, "model_answer_a": "A loop.", "model_answer_b": "Feedback.",
         "model_answer_a_vs_model_answer_b": "equal"},
    ]  # fmt: skip
    got = load_comparisons(_write(tmp_path, recs))
    assert [(c.compare_type, c.label) for c in got] == [
        ("human_vs_human", "response_a"), ("human_vs_model", "response_b"), ("model_vs_model", "same"),
    ]  # fmt: skip
    assert got[1].response_a == "Magic." and got[1].response_b == "A loop."
    assert got[0].reference == "A control loop." and got[0].meta == {
        "pair": "student_answer_a_vs_student_answer_b"
    }


def test_json_lines_and_round_trip(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(_unified(id=f"u{i}")) for i in range(3)) + "\n")
    got = load_comparisons(path)
    assert len(got) == 3
    back = load_comparisons(save_comparisons(got, tmp_path / "out.json"))
    assert back == got


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{k: v for k, v in _unified().items() if k != "reference"}],
         r"record 'u1': missing field 'reference'"),
        ([_unified(label="response_c")],
         r"record 'u1': field 'label' must be one of response_a, response_b, same"),
        ([_unified(response_b="  ")], r"record 'u1': field 'response_b' is empty"),
        ([_unified(response_a=3)], r"record 'u1': field 'response_a' must be a string"),
        ([_unified(compare_type="a_vs_b")], r"record 'u1': field 'compare_type' must be one of"),
        ([_unified(), "oops"], r"record #1: expected an object"),
        ([{"id": "o", "question": "q", "reference": "r"}], r"record 'o': expected one 'X_vs_Y' field"),
        ([{"id": "o", "question": "q", "reference": "r", "student_answer_a": "x", "model_answer_b": "y",
           "student_answer_a_vs_model_answer_b": "both bad"}],
         r"must name 'student_answer_a', 'model_answer_b'"),
        ([], r"holds no records"),
    ],
)  # fmt: skip
def test_bad_records_name_the_record_and_field(tmp_path, records, message):
    with pytest.raises(DataError, match=message):
        load_comparisons(_write(tmp_path, records))


def test_bad_files(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_comparisons(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    with pytest.raises(DataError, match=r"bad.json: not JSON"):
        load_comparisons(bad)
    lines = tmp_path / "bad.jsonl"
    lines.write_text(json.dumps(_unified()) + "\n{broken\n")
    with pytest.raises(DataError, match=r"bad.jsonl: line 2 is not JSON"):
        load_comparisons(lines)


def test_swapped_flips_sides_label_and_meta():
    meta = {"edits_a": ["drop:1"], "edits_b": [], "quality_a": 3.0, "quality_b": 4.0, "n_facts": 4}
    c = Comparison("x", "q", "r", "A", "B", "response_a", meta=meta)
    s = c.swapped()
    assert (s.response_a, s.response_b, s.label) == ("B", "A", "response_b")
    assert s.meta == {"edits_a": [], "edits_b": ["drop:1"], "quality_a": 4.0, "quality_b": 3.0, "n_facts": 4}
    assert s.swapped() == c and s.swapped().meta == c.meta
    assert Comparison("y", "q", "r", "A", "B", "same").swapped().label == "same"
