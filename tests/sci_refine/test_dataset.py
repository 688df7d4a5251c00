"""The built-here QA set: facts, determinism, the two splits, evidence, independent answer checks, scale."""

from __future__ import annotations

import dataclasses
import math
import re
import time

import periodictable
import pytest
import scipy.constants as sc
from Bio.Data import IUPACData
from Bio.Seq import Seq

from iclr26.core.config import ConfigError
from iclr26.sci_refine import dataset as D
from iclr26.sci_refine import facts as F

N_CANONICAL = (
    118 + 355 + 4 + 26 + 20
)  # elements, CODATA 2022 constants, standard code by first base, others, aa


@pytest.fixture(scope="module")
def qaset() -> D.QASet:
    return D.build(240, seed=3, n_distractors=400)


# --- facts ----------------------------------------------------------------------------------


def test_facts_match_their_packages():
    assert len(F.constants()) == 355 and F.constant("Planck constant").value == 6.62607015e-34
    assert F.constant("Planck constant").exact and not F.constant("electron mass").exact
    assert [e.number for e in F.elements()] == list(range(1, 119))
    fe = F.element("Fe")
    assert (fe.name, fe.mass, fe.density) == ("iron", 55.845, 7.874)
    vert = F.genetic_code(2)
    assert (
        vert.name == "Vertebrate Mitochondrial"
        and vert.translate("TGA") == "W"
        and vert.translate("AUA") == "M"
    )
    assert vert.stop_codons == ("TAA", "TAG", "AGA", "AGG")
    assert len(F.genetic_code(1).codons) == 64 and F.genetic_code(1).translate("TGG") == "W"
    assert len(F.amino_acids()) == 20 and F.amino_acid("W").code == "Trp"
    assert all(c.year < 2022 for c in F.older_constants())
    assert F.isotopes()[0].symbol == "H"


# --- determinism and splits -----------------------------------------------------------------


def test_build_is_deterministic_from_the_seed():
    a, b = D.build(60, seed=7, n_distractors=300), D.build(60, seed=7, n_distractors=300)
    assert a == b
    c = D.build(60, seed=8, n_distractors=300)
    assert [q.query for q in c.questions] != [q.query for q in a.questions]
    assert [p.text for p in c.passages] != [p.text for p in a.passages]


def test_both_splits_are_non_empty_and_every_template_is_used(qaset):
    retrieval, reasoning = qaset.split(True), qaset.split(False)
    assert len(retrieval) == len(reasoning) == 120
    assert {r.template for r in qaset.recipes} == set(D.TEMPLATES)
    for split in (retrieval, reasoning):
        assert {q.answer_type for q in split} == {"numeric", "multiple_choice", "exact"}
    tiny = D.build(2, seed=0, n_distractors=0)
    assert {q.needs_retrieval for q in tiny.questions} == {True, False}
    assert {q.needs_retrieval for q in D.build(5, 0, 0, retrieval_fraction=1.0).questions} == {True}


def test_question_records_are_well_formed(qaset):
    assert len({q.id for q in qaset.questions}) == len(qaset.questions)
    assert len({q.query for q in qaset.questions}) == len(qaset.questions)
    for q in qaset.questions:
        if q.answer_type == "numeric":
            assert math.isfinite(float(q.gt)) and q.rel_tol == D.NUMERIC_REL_TOL
        elif q.answer_type == "multiple_choice":
            assert 4 <= len(q.choices) <= 5 and len(set(q.choices)) == len(q.choices)
            assert q.gt in "ABCDE"[: len(q.choices)]
            for letter, option in zip("ABCDE", q.choices, strict=False):
                assert f"\n{letter}. {option}" in q.query
        else:
            assert q.gt and not q.choices


# --- evidence -------------------------------------------------------------------------------


def test_evidence_ids_exist_and_hold_the_needed_facts(qaset):
    by_id = {p.id: p for p in qaset.passages}
    assert len(by_id) == len(qaset.passages) == N_CANONICAL + 400
    for q, r in zip(qaset.questions, qaset.recipes, strict=True):
        assert all(e in by_id for e in q.evidence), q.id
        assert bool(q.evidence) is q.needs_retrieval, q.id
        text = " ".join(by_id[e].text for e in q.evidence)
        p = r.params
        if "symbol" in p:  # the element's name and atomic weight are in its passage
            el = periodictable.elements.symbol(p["symbol"])
            assert el.name in text.lower() and D._show(el.mass) in text
        if "codon" in p:
            assert p["codon"] in text and f"table {p['table']}" in text
        for key in ("name", "numerator", "denominator"):
            if key in p and r.template != "given_conversion":
                assert p[key].lower() in text.lower() and D._show(sc.value(p[key])) in text
        if r.template == "peptide_mass":
            for letter in set(p["sequence"]):
                assert D._show(IUPACData.protein_weights[letter]) in text


def test_distractors_do_not_state_canonical_facts(qaset):
    # the questions and the canonical passages' wording are drawn before the distractors, so the corpus
    # built with no distractors is the canonical part of this one
    canonical = {p.text for p in D.build(240, seed=3, n_distractors=0).passages}
    assert len(canonical) == N_CANONICAL
    by_text = {p.text: p.id for p in qaset.passages}
    assert canonical <= set(by_text)
    distractors = [p for p in qaset.passages if p.text not in canonical]
    assert len(distractors) == 400
    assert not {p.id for p in distractors} & {e for q in qaset.questions for e in q.evidence}
    current = {D._show(c.value) for c in F.constants() if abs(c.value) not in (0.0, 1.0)}
    for p in distractors:
        assert not re.search(r"standard atomic weight|CODATA 2022|free amino acid|translation table", p.text)
        assert not any(f" {v} " in p.text for v in current if len(v) > 6), p.text  # no current CODATA value
    topics = {p.topic for p in distractors}
    cited_topics = {
        p.topic for p in qaset.passages if p.id in {e for q in qaset.questions for e in q.evidence}
    }
    assert len(topics & cited_topics) > 20  # near-misses about the questions' own topics come first


# --- gold answers, checked independently ----------------------------------------------------


def test_gold_answers_agree_with_an_independent_rederivation():
    for seed in (0, 1, 2):
        s = D.build(300, seed=seed, n_distractors=0)
        assert D.verify(s) == []


def test_verify_catches_a_wrong_gold(qaset):
    i = next(i for i, q in enumerate(qaset.questions) if q.answer_type == "numeric")
    wrong = dataclasses.replace(qaset.questions[i], gt=str(float(qaset.questions[i].gt) * 1.01))
    tampered = dataclasses.replace(qaset, questions=(*qaset.questions[:i], wrong, *qaset.questions[i + 1 :]))
    assert D.verify(tampered) == [wrong.id]


def _number(pattern: str, text: str) -> float:
    """A number the question shows, read back from its text ('6.6 × 10^-34' included)."""
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return float(m.group(1).replace(" × 10^", "e"))


@pytest.mark.filterwarnings("ignore::Bio.BiopythonWarning")  # tables with codons both stop and sense
def test_answers_recomputed_from_the_question_text(qaset):
    """A second check that reads the question as a person would, not the stored recipe."""
    checked = set()
    for q, r in zip(qaset.questions, qaset.recipes, strict=True):
        t = q.query
        if r.template == "moles_in_sample":
            m = re.search(r"in ([\d.]+) g of pure (\w+)\?", t)
            assert m
            got = float(m.group(1)) / periodictable.elements.name(m.group(2)).mass
        elif r.template == "photon_energy":  # E = h c / lambda
            got = sc.h * sc.c / (_number(r"wavelength ([\d.]+) nm", t) * 1e-9) / sc.e
        elif r.template == "given_ideal_gas":
            n, temp = _number(r"of ([\d.]+) mol", t), _number(r"at ([\d.]+) K", t)
            got = n * sc.R * temp / (_number(r"volume of ([\d.]+) L", t) / 1000) / 1000
        elif r.template == "given_half_life":
            half, m0 = _number(r"half-life of ([\d.]+) years", t), _number(r"Of a ([\d.]+) g", t)
            got = m0 / 2 ** (_number(r"after ([\d.]+) years", t) / half)
        elif r.template == "codon_meaning":
            m = re.search(r"table (\d+)\), what does the codon ([ACGT]{3})", t)
            assert m
            aa = str(Seq(m.group(2)).translate(table=int(m.group(1))))
            assert q.gt == ("Stop" if aa == "*" else IUPACData.protein_letters_1to3[aa])
            checked.add(r.template)
            continue
        elif r.template == "reverse_complement":
            m = re.search(r"5'-([ACGT]+)-3'", t)
            assert m
            assert q.gt == str(Seq(m.group(1)).reverse_complement())
            checked.add(r.template)
            continue
        elif r.template == "element_from_weight":
            mass = _number(r"weight of ([\d.]+) u", t)
            assert periodictable.elements.symbol(q.gt).mass == mass
            checked.add(r.template)
            continue
        else:
            continue
        assert math.isclose(float(q.gt), got, rel_tol=1e-5), (q.id, q.gt, got)
        checked.add(r.template)
    assert len(checked) == 7


# --- scale, validation, save / load ---------------------------------------------------------


def test_corpus_scales_to_10k_paragraphs_in_seconds():
    start = time.perf_counter()
    s = D.build(200, seed=0, n_distractors=10_000 - N_CANONICAL)
    elapsed = time.perf_counter() - start
    assert len(s.passages) == 10_000 and len({p.id for p in s.passages}) == 10_000
    assert elapsed < 10, f"building a 10k corpus took {elapsed:.1f} s"
    assert D.corpus_capacity() >= 10_000


def test_bad_build_arguments_name_the_field():
    with pytest.raises(ConfigError, match="n_questions"):
        D.build(0, seed=0, n_distractors=0)
    with pytest.raises(ConfigError, match="retrieval_fraction"):
        D.build(5, seed=0, n_distractors=0, retrieval_fraction=1.5)
    with pytest.raises(D.DatasetError, match="n_distractors"):
        D.build(5, seed=0, n_distractors=D.corpus_capacity() + 1)


def test_save_and_load_round_trip(tmp_path, qaset):
    path = D.save(qaset, tmp_path / "set.json")
    again = D.load(path)
    assert again == qaset and D.verify(again) == []


def test_load_errors_are_one_line(tmp_path):
    with pytest.raises(D.DatasetError, match="no such file"):
        D.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(D.DatasetError, match="not JSON"):
        D.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(D.DatasetError, match="not a saved sci_refine QA set") as err:
        D.load(tmp_path / "other.json")
    assert "\n" not in str(err.value)
