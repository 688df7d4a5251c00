"""A built-here scientific QA set with its own corpus, for Eigen-1 (arXiv 2509.21193), where retrieval
is really needed.

The paper evaluates on HLE Bio/Chem, whose facts come from a 1,412-paragraph corpus and the web. Here the
questions are generated from structured facts that ship in installed packages (`facts`): CODATA
constants, element data, NCBI genetic codes and amino-acid masses. Gold answers are computed, and many
need a fact *and* a calculation. Two splits (the paper reports that they favour different strategies):

- `needs_retrieval=True`: the question names a fact without giving it (the CODATA value of a constant,
  the atomic weight or density of an element, a non-standard genetic code, an amino acid's mass), and
  the fact lives in one corpus passage; `Question.evidence` lists the passages the answer needs.
- `needs_retrieval=False`: reasoning only; every number or table entry the answer needs is in the
  question.

The corpus holds one canonical passage per fact group (each element, each CODATA 2022 constant, each
genetic code, each amino acid; the standard code in four passages, by first base), in varied wording,
plus `n_distractors` distractor paragraphs: near-misses about the same topics (isotope masses beside
atomic weights, older CODATA values beside current ones, residue masses beside free amino-acid masses,
other element properties). No distractor states a fact a question needs, so `evidence` is complete.

`rederive_answer` recomputes each gold answer straight from scipy / periodictable / Biopython with its
own arithmetic, independently of the template code; `verify` checks a whole set with it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json
from iclr26.core.validation import check_int, check_interval
from iclr26.sci_refine import facts as F
from iclr26.sci_refine.question import Passage, Question

__all__ = [
    "FORMAT",
    "TEMPLATES",
    "DatasetError",
    "QASet",
    "Recipe",
    "Template",
    "build",
    "corpus_capacity",
    "load",
    "rederive_answer",
    "save",
    "verify",
]

FORMAT = "iclr26.sci_refine.qaset/1"
"""the `format` tag of a saved set"""
NUMERIC_REL_TOL = 1e-2
"""the relative tolerance numeric answers are graded with"""
WATER_AVERAGE = 18.0153
"""average mass (Da) of the water a peptide bond releases; stated in the peptide questions"""
LETTERS = "ABCDEFGHIJ"


class DatasetError(UserError, ValueError):
    """A saved QA set that cannot be read, or a build request that cannot be met."""


@dataclass(frozen=True)
class Recipe:
    """How one question was made: its template and the parameters it drew (JSON-able)."""

    template: str
    """a key of TEMPLATES"""
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    """the drawn values (symbols, names, amounts, option values); `rederive_answer` reads these"""


@dataclass(frozen=True)
class QASet:
    """A built set: the questions, the corpus, and one recipe per question."""

    questions: tuple[Question, ...]
    """the questions, ids sci-0000, sci-0001, ..."""
    passages: tuple[Passage, ...]
    """the corpus, ids p00000, p00001, ... (canonical and distractor passages shuffled together)"""
    recipes: tuple[Recipe, ...]
    """recipes[i] made questions[i]"""
    seed: int = 0
    """the seed it was built from"""

    def split(self, needs_retrieval: bool) -> tuple[Question, ...]:
        """The questions of one split."""
        return tuple(q for q in self.questions if q.needs_retrieval is needs_retrieval)


# ---------------------------------------------------------------------------------------------
# number formatting


def _show(x: float) -> str:
    """A float as text with all its digits, exponent written as ' × 10^n' (e.g. 6.62607015 × 10^-34)."""
    s = repr(float(x))
    if (
        "e" not in s and abs(x) >= 1e6
    ):  # large numbers in scientific form too, shortest digits that round-trip
        s = np.format_float_scientific(float(x), unique=True, trim="-")
    if "e" in s:
        mantissa, exponent = s.split("e")
        mantissa = mantissa[:-2] if mantissa.endswith(".0") else mantissa
        return f"{mantissa} × 10^{int(exponent)}"
    return s[:-2] if s.endswith(".0") else s


def _gt(x: float) -> str:
    """A computed numeric gold answer as text (6 significant digits; graded with a tolerance)."""
    return format(x, ".6g")


def _pick(rng: random.Random, lo: float, hi: float, sig: int = 3, log: bool = False) -> float:
    """A random number in [lo, hi] rounded to `sig` significant digits (so its text is exact)."""
    x = math.exp(rng.uniform(math.log(lo), math.log(hi))) if log else rng.uniform(lo, hi)
    return float(f"{x:.{sig}g}")


def _three(aa: str) -> str:
    """The three-letter code of a one-letter amino acid, 'Stop' for '*'."""
    return "Stop" if aa == F.STOP else F.amino_acid(aa).code


def _lettered(query: str, options: Sequence[str]) -> str:
    return query + "\n\nAnswer Choices:\n" + "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options))


# ---------------------------------------------------------------------------------------------
# templates


@dataclass(frozen=True)
class _Draft:
    """A question before ids are assigned: its evidence still as canonical passage keys."""

    query: str
    """the question text (options included for multiple choice)"""
    gt: str
    """the gold answer as text"""
    answer_type: str
    """numeric, multiple_choice or exact"""
    category: str
    """physics, chemistry or biology"""
    params: dict[str, Any]
    """the drawn values, for `rederive_answer`"""
    evidence: tuple[str, ...] = ()
    """canonical passage keys: element:<symbol>, constant:<name>, code:<id>, code:1:<base>, amino:<letter>"""
    choices: tuple[str, ...] = ()
    """multiple choice: the options, in letter order"""
    unit: str = ""
    """numeric: the unit asked for"""


@dataclass(frozen=True)
class Template:
    """One question template."""

    name: str
    """its key in TEMPLATES"""
    needs_retrieval: bool
    """whether its questions need a corpus fact"""
    answer_type: str
    """numeric, multiple_choice or exact"""
    make: Callable[[random.Random], _Draft | None] = field(repr=False)
    """draws one question (None: this draw cannot make one; draw again)"""


def _mc(
    rng: random.Random,
    query: str,
    gold: str,
    wrong: Sequence[str],
    category: str,
    params: dict[str, Any],
    evidence: tuple[str, ...] = (),
) -> _Draft:
    """A multiple-choice draft: the gold option among the wrong ones, shuffled; gt is its letter."""
    options = [gold, *wrong]
    rng.shuffle(options)
    params = {**params, "options": options}
    return _Draft(
        _lettered(query, options),
        LETTERS[options.index(gold)],
        "multiple_choice",
        category,
        params,
        evidence,
        tuple(options),
    )


def _elements_with_density() -> list[F.Element]:
    return [e for e in F.elements() if e.density is not None and e.density_note != "unavailable"]


def _unique_mass_elements() -> list[F.Element]:
    masses = [e.mass for e in F.elements()]
    return [e for e in F.elements() if masses.count(e.mass) == 1]


# --- needs retrieval -------------------------------------------------------------------------


def _moles_in_sample(rng: random.Random) -> _Draft:
    el = rng.choice(F.elements())
    grams = _pick(rng, 0.5, 500, log=True)
    n = grams / el.mass  # n = m / M
    q = (
        f"How many moles of atoms are in {_show(grams)} g of pure {el.name}? "
        f"Use the standard atomic weight of {el.name}. Give the answer in mol."
    )
    return _Draft(
        q,
        _gt(n),
        "numeric",
        "chemistry",
        {"symbol": el.symbol, "grams": grams},
        (f"element:{el.symbol}",),
        unit="mol",
    )


def _atoms_in_sample(rng: random.Random) -> _Draft:
    el = rng.choice(F.elements())
    mg = _pick(rng, 0.1, 900, log=True)
    n_a = F.constant("Avogadro constant").value
    atoms = mg * 1e-3 / el.mass * n_a  # N = (m / M) N_A
    q = (
        f"How many atoms are in {_show(mg)} mg of pure {el.name}? Use the standard atomic weight of "
        f"{el.name} and the CODATA 2022 value of the Avogadro constant."
    )
    return _Draft(
        q,
        _gt(atoms),
        "numeric",
        "chemistry",
        {"symbol": el.symbol, "milligrams": mg},
        (f"element:{el.symbol}", "constant:Avogadro constant"),
    )


def _volume_from_density(rng: random.Random) -> _Draft:
    el = rng.choice(_elements_with_density())
    grams = _pick(rng, 1, 1000, log=True)
    assert el.density is not None
    volume = grams / el.density  # V = m / rho
    q = (
        f"What volume, in cm^3, does {_show(grams)} g of {el.name} occupy at the tabulated density of "
        f"the element?"
    )
    return _Draft(
        q,
        _gt(volume),
        "numeric",
        "chemistry",
        {"symbol": el.symbol, "grams": grams},
        (f"element:{el.symbol}",),
        unit="cm^3",
    )


def _photon_energy(rng: random.Random) -> _Draft:
    nm = _pick(rng, 100, 2000)
    h = F.constant("Planck constant").value
    c = F.constant("speed of light in vacuum").value
    e = F.constant("elementary charge").value
    energy_ev = h * c / (nm * 1e-9) / e  # E = h c / lambda, in eV
    q = (
        f"What is the energy, in eV, of a photon of vacuum wavelength {_show(nm)} nm? Use the CODATA 2022 "
        f"values of the Planck constant, the speed of light in vacuum and the elementary charge."
    )
    keys = ("constant:Planck constant", "constant:speed of light in vacuum", "constant:elementary charge")
    return _Draft(q, _gt(energy_ev), "numeric", "physics", {"nanometres": nm}, keys, unit="eV")


def _constant_ratio(rng: random.Random) -> _Draft | None:
    by_unit: dict[str, list[F.Constant]] = {}
    for c in F.constants():
        if c.unit:
            by_unit.setdefault(c.unit, []).append(c)
    units = sorted(u for u, cs in by_unit.items() if len(cs) >= 2)
    a, b = rng.sample(by_unit[rng.choice(units)], 2)
    ratio = a.value / b.value
    if not 1e-12 < abs(ratio) < 1e12:
        return None
    q = f"Using CODATA 2022 recommended values, what is the ratio of the {a.name} to the {b.name}?"
    return _Draft(
        q,
        _gt(ratio),
        "numeric",
        "physics",
        {"numerator": a.name, "denominator": b.name},
        (f"constant:{a.name}", f"constant:{b.name}"),
    )


def _relative_uncertainty(rng: random.Random) -> _Draft:
    c = rng.choice([c for c in F.constants() if not c.exact])
    rel = c.uncertainty / abs(c.value)  # u_r = u / |value|
    q = f"What is the relative standard uncertainty of the CODATA 2022 recommended value of the {c.name}?"
    return _Draft(q, _gt(rel), "numeric", "physics", {"name": c.name}, (f"constant:{c.name}",))


def _peptide_mass(rng: random.Random) -> _Draft:
    residues = [rng.choice(F.amino_acids()) for _ in range(rng.randint(3, 6))]
    # M(peptide) = sum of free amino-acid masses - (n - 1) waters released by the n - 1 peptide bonds
    mass = sum(a.average_mass for a in residues) - (len(residues) - 1) * WATER_AVERAGE
    name = "-".join(a.code for a in residues)
    q = (
        f"What is the average molecular mass, in Da, of the linear peptide {name} (free N- and C-termini)? "
        f"Use the average masses of the free amino acids; each peptide bond releases one water molecule "
        f"of average mass {WATER_AVERAGE} Da."
    )
    keys = tuple(dict.fromkeys(f"amino:{a.letter}" for a in residues))
    params = {"sequence": "".join(a.letter for a in residues), "peptide": name}
    return _Draft(q, _gt(mass), "numeric", "biology", params, keys, unit="Da")


def _oxide_molar_mass(rng: random.Random) -> _Draft | None:
    el = rng.choice(F.elements())
    states = [s for s in el.oxidation_states if 1 <= s <= 8]
    if el.symbol == "O" or not states:
        return None
    q_ox = rng.choice(states)
    g = math.gcd(2, q_ox)
    a, b = 2 // g, q_ox // g  # E_a O_b is neutral: a q = 2 b
    formula = f"{el.symbol}{a if a > 1 else ''}O{b if b > 1 else ''}"
    mass = a * el.mass + b * F.element("O").mass  # M = a M(E) + b M(O)
    q = (
        f"What is the molar mass, in g/mol, of the oxide {formula}, in which {el.name} has oxidation state "
        f"+{q_ox}? Use standard atomic weights."
    )
    return _Draft(
        q,
        _gt(mass),
        "numeric",
        "chemistry",
        {"formula": formula, "symbol": el.symbol},
        (f"element:{el.symbol}", "element:O"),
        unit="g/mol",
    )


def _densest_element(rng: random.Random) -> _Draft | None:
    picks = rng.sample(_elements_with_density(), 4)
    dens = sorted(e.density for e in picks if e.density is not None)
    if any(hi / lo < 1.05 for lo, hi in itertools.pairwise(dens)):
        return None  # too close to call from rounded values
    gold = max(picks, key=lambda e: e.density or 0.0)
    q = "Which of these elements has the greatest density (as tabulated for the pure element)?"
    return _mc(
        rng,
        q,
        gold.name,
        [e.name for e in picks if e is not gold],
        "chemistry",
        {"symbols": [e.symbol for e in picks]},
        tuple(f"element:{e.symbol}" for e in picks),
    )


def _codon_draw(rng: random.Random) -> tuple[F.GeneticCode, str, str, str, tuple[str, ...]]:
    """A non-standard code and a codon (half the time one it reassigns); its meaning, the standard one,
    and the passages that fix the answer."""
    standard = F.genetic_code(F.STANDARD_CODE_ID)
    code = rng.choice([c for c in F.genetic_codes() if c.id != F.STANDARD_CODE_ID])
    changed = [c for c, aa in code.codons if aa != standard.translate(c)]
    codon = rng.choice(changed) if changed and rng.random() < 0.5 else rng.choice(code.codons)[0]
    here, there = code.translate(codon), standard.translate(codon)
    keys = (f"code:{code.id}",) if here != there else (f"code:{code.id}", f"code:1:{codon[0]}")
    return code, codon, _three(here), _three(there), keys


def _codon_meaning(rng: random.Random) -> _Draft:
    code, codon, gold, _, keys = _codon_draw(rng)
    q = (
        f"In the {code.name} genetic code (NCBI translation table {code.id}), what does the codon {codon} "
        f"encode? Answer with the three-letter amino-acid code, or Stop for a stop codon."
    )
    return _Draft(q, gold, "exact", "biology", {"table": code.id, "codon": codon}, keys)


def _codon_meaning_mc(rng: random.Random) -> _Draft:
    code, codon, gold, standard, keys = _codon_draw(rng)
    pool = sorted(({a.code for a in F.amino_acids()} | {"Stop"}) - {gold, standard})
    wrong = ([standard] if standard != gold else []) + rng.sample(pool, 4)
    q = f"In the {code.name} genetic code (NCBI translation table {code.id}), what does codon {codon} encode?"
    return _mc(rng, q, gold, wrong[:4], "biology", {"table": code.id, "codon": codon}, keys)


def _constant_value_mc(rng: random.Random) -> _Draft | None:
    c = rng.choice([c for c in F.constants() if c.value != 0])
    same_unit = [o.value for o in F.constants() if o.unit == c.unit and o.name != c.name]
    older = [o.value for o in F.older_constants() if o.name == c.name]
    digits = len(re.sub(r"[^0-9]", "", repr(abs(c.value)).split("e")[0]).strip("0")) or 1
    shifted = [float(f"{c.value * k:.{digits}g}") for k in (10, 0.1)]  # same digits, wrong power of ten
    candidates = [*shifted, *rng.sample(same_unit, min(2, len(same_unit))), *older[-1:]]
    wrong: list[float] = []
    for v in candidates:
        if all(abs(v - w) > 1e-9 * abs(w) for w in [c.value, *wrong]):
            wrong.append(v)
    if len(wrong) < 3:
        return None
    values = [c.value, *rng.sample(wrong, 3)]
    rng.shuffle(values)
    unit = f" {c.unit}" if c.unit else ""
    options = [_show(v) + unit for v in values]
    q = f"Which of these is the CODATA 2022 recommended value of the {c.name}?"
    gt = LETTERS[values.index(c.value)]
    return _Draft(
        _lettered(q, options),
        gt,
        "multiple_choice",
        "physics",
        {"name": c.name, "option_values": values, "options": options},
        (f"constant:{c.name}",),
        tuple(options),
    )


def _element_from_weight(rng: random.Random) -> _Draft:
    el = rng.choice(_unique_mass_elements())
    q = f"Which element has a standard atomic weight of {_show(el.mass)} u? Answer with its chemical symbol."
    return _Draft(q, el.symbol, "exact", "chemistry", {"mass": el.mass}, (f"element:{el.symbol}",))


def _amino_from_mass(rng: random.Random) -> _Draft:
    masses = [a.monoisotopic_mass for a in F.amino_acids()]
    aa = rng.choice([a for a in F.amino_acids() if masses.count(a.monoisotopic_mass) == 1])  # not Leu/Ile
    q = (
        f"Which standard amino acid has a monoisotopic mass (as the free amino acid) of "
        f"{_show(aa.monoisotopic_mass)} Da? Answer with its three-letter code."
    )
    return _Draft(q, aa.code, "exact", "biology", {"mass": aa.monoisotopic_mass}, (f"amino:{aa.letter}",))


# --- reasoning only --------------------------------------------------------------------------


def _given_molecules(rng: random.Random) -> _Draft:
    grams, molar = _pick(rng, 0.1, 200, log=True), _pick(rng, 10, 600, sig=4)
    n_a = F.constant("Avogadro constant").value
    count = grams / molar * n_a  # N = (m / M) N_A
    q = (
        f"A {_show(grams)} g sample of a compound whose molar mass is {_show(molar)} g/mol: taking "
        f"N_A = {_show(n_a)} mol^-1, how many molecules does it contain?"
    )
    return _Draft(q, _gt(count), "numeric", "chemistry", {"grams": grams, "molar_mass": molar, "N_A": n_a})


def _given_photon_energy(rng: random.Random) -> _Draft:
    nm = _pick(rng, 100, 2000)
    h, c, e = (
        F.constant(n).value for n in ("Planck constant", "speed of light in vacuum", "elementary charge")
    )
    energy_ev = h * c / (nm * 1e-9) / e  # E = h c / lambda, in eV
    q = (
        f"Taking h = {_show(h)} J s, c = {_show(c)} m/s and e = {_show(e)} C, what is the energy, in eV, "
        f"of a photon of wavelength {_show(nm)} nm?"
    )
    return _Draft(
        q, _gt(energy_ev), "numeric", "physics", {"nanometres": nm, "h": h, "c": c, "e": e}, unit="eV"
    )


def _given_conversion(rng: random.Random) -> _Draft:
    c = rng.choice([c for c in F.constants() if c.name.endswith(" relationship")])
    source = c.name.removesuffix(" relationship").split("-", 1)[0]
    x = _pick(rng, 0.01, 1000, log=True)
    q = (
        f"Given that 1 {source} is equivalent to {_show(c.value)} {c.unit}, how much is {_show(x)} {source} "
        f"in {c.unit}?"
    )
    return _Draft(
        q,
        _gt(x * c.value),
        "numeric",
        "physics",
        {"factor": c.value, "amount": x, "name": c.name},
        unit=c.unit,
    )


def _given_half_life(rng: random.Random) -> _Draft:
    half, m0 = _pick(rng, 1, 1000), _pick(rng, 1, 100)
    t = _pick(rng, 0.1 * half, 6 * half)  # at most six half-lives
    left = m0 * 0.5 ** (t / half)  # m(t) = m0 2^(-t / T_1/2)
    q = (
        f"A radioactive isotope has a half-life of {_show(half)} years. Of a {_show(m0)} g sample, how many "
        f"grams remain after {_show(t)} years?"
    )
    return _Draft(q, _gt(left), "numeric", "physics", {"half_life": half, "time": t, "grams": m0}, unit="g")


def _given_peptide_mass(rng: random.Random) -> _Draft:
    residues = [rng.choice(F.amino_acids()) for _ in range(rng.randint(3, 6))]
    mass = sum(a.average_mass for a in residues) - (len(residues) - 1) * WATER_AVERAGE  # see _peptide_mass
    given = ", ".join(
        f"{a.code} {_show(a.average_mass)} Da" for a in sorted(set(residues), key=lambda a: a.code)
    )
    name = "-".join(a.code for a in residues)
    q = (
        f"The average masses of the free amino acids are: {given}. Each peptide bond releases one water "
        f"molecule ({WATER_AVERAGE} Da). What is the average molecular mass, in Da, of the linear peptide "
        f"{name}?"
    )
    return _Draft(
        q,
        _gt(mass),
        "numeric",
        "biology",
        {"sequence": "".join(a.letter for a in residues), "peptide": name},
        unit="Da",
    )


def _given_ideal_gas(rng: random.Random) -> _Draft:
    n, temp, litres = _pick(rng, 0.05, 20), _pick(rng, 200, 800), _pick(rng, 0.5, 100)
    r_gas = F.constant("molar gas constant").value
    kpa = n * r_gas * temp / (litres * 1e-3) / 1e3  # p = n R T / V
    q = (
        f"An ideal gas of {_show(n)} mol is held at {_show(temp)} K in a volume of {_show(litres)} L. Taking "
        f"R = {_show(r_gas)} J mol^-1 K^-1, what is its pressure in kPa?"
    )
    return _Draft(
        q,
        _gt(kpa),
        "numeric",
        "chemistry",
        {"moles": n, "kelvin": temp, "litres": litres, "R": r_gas},
        unit="kPa",
    )


def _given_translation_mc(rng: random.Random) -> _Draft | None:
    standard = F.genetic_code(F.STANDARD_CODE_ID)
    sense = [c for c, aa in standard.codons if aa != F.STOP]
    codons = [rng.choice(sense) for _ in range(rng.randint(3, 5))]
    extra = rng.sample(sense, 2)
    shown = sorted(set(codons + extra))
    residues = [_three(standard.translate(c)) for c in codons]
    gold = "-".join(residues)
    swap = list(residues)
    swap[rng.randrange(len(swap))] = _three(standard.translate(extra[0]))
    shifted = residues[1:] + residues[:1]
    wrong = list(
        dict.fromkeys(w for w in ("-".join(residues[::-1]), "-".join(swap), "-".join(shifted)) if w != gold)
    )
    if len(wrong) < 3:
        return None
    mrna = "".join(codons).replace("T", "U")
    table = "; ".join(f"{c.replace('T', 'U')} = {_three(standard.translate(c))}" for c in shown)
    q = f"Codon assignments: {table}. Which peptide does the mRNA 5'-{mrna}-3' encode, read from base 1?"
    return _mc(rng, q, gold, wrong, "biology", {"mrna": mrna})


def _given_largest_volume_mc(rng: random.Random) -> _Draft | None:
    samples = [(_pick(rng, 1, 100), _pick(rng, 0.5, 20)) for _ in range(4)]
    volumes = sorted(m / d for m, d in samples)
    if any(hi / lo < 1.05 for lo, hi in itertools.pairwise(volumes)):
        return None
    texts = [f"{_show(m)} g of a material of density {_show(d)} g/cm^3" for m, d in samples]
    gold = texts[max(range(4), key=lambda i: samples[i][0] / samples[i][1])]  # V = m / rho
    q = "Which sample occupies the largest volume?"
    return _mc(
        rng, q, gold, [t for t in texts if t != gold], "chemistry", {"samples": [list(s) for s in samples]}
    )


def _reverse_complement(rng: random.Random) -> _Draft:
    dna = "".join(rng.choice("ACGT") for _ in range(rng.randint(10, 16)))
    pair = {"A": "T", "T": "A", "C": "G", "G": "C"}
    answer = "".join(pair[b] for b in reversed(dna))
    q = f"What is the reverse complement of the DNA sequence 5'-{dna}-3'? Write it 5' to 3' as plain letters."
    return _Draft(q, answer, "exact", "biology", {"dna": dna})


def _first_stop(rng: random.Random) -> _Draft:
    code = rng.choice([c for c in F.genetic_codes() if c.stop_codons])
    stops = code.stop_codons
    sense = [c for c, aa in code.codons if aa != F.STOP]
    n = rng.randint(5, 9)
    at = rng.randint(2, n)
    codons = [rng.choice(sense) for _ in range(n)]
    codons[at - 1] = rng.choice(stops)
    q = (
        f"In a genetic code whose stop codons are {', '.join(stops)} (its other codons all encode amino "
        f"acids), translation of the DNA reading frame {''.join(codons)} starts at its first base. At which "
        f"codon position (counting from 1) is the first stop codon?"
    )
    return _Draft(q, str(at), "exact", "biology", {"table": code.id, "dna": "".join(codons)})


def _t(name: str, retrieval: bool, kind: str, make: Callable[[random.Random], _Draft | None]) -> Template:
    return Template(name, retrieval, kind, make)


TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (
        _t("moles_in_sample", True, "numeric", _moles_in_sample),
        _t("atoms_in_sample", True, "numeric", _atoms_in_sample),
        _t("volume_from_density", True, "numeric", _volume_from_density),
        _t("photon_energy", True, "numeric", _photon_energy),
        _t("constant_ratio", True, "numeric", _constant_ratio),
        _t("relative_uncertainty", True, "numeric", _relative_uncertainty),
        _t("peptide_mass", True, "numeric", _peptide_mass),
        _t("oxide_molar_mass", True, "numeric", _oxide_molar_mass),
        _t("densest_element", True, "multiple_choice", _densest_element),
        _t("codon_meaning_mc", True, "multiple_choice", _codon_meaning_mc),
        _t("constant_value_mc", True, "multiple_choice", _constant_value_mc),
        _t("codon_meaning", True, "exact", _codon_meaning),
        _t("element_from_weight", True, "exact", _element_from_weight),
        _t("amino_from_mass", True, "exact", _amino_from_mass),
        _t("given_molecules", False, "numeric", _given_molecules),
        _t("given_photon_energy", False, "numeric", _given_photon_energy),
        _t("given_conversion", False, "numeric", _given_conversion),
        _t("given_half_life", False, "numeric", _given_half_life),
        _t("given_peptide_mass", False, "numeric", _given_peptide_mass),
        _t("given_ideal_gas", False, "numeric", _given_ideal_gas),
        _t("given_translation_mc", False, "multiple_choice", _given_translation_mc),
        _t("given_largest_volume_mc", False, "multiple_choice", _given_largest_volume_mc),
        _t("reverse_complement", False, "exact", _reverse_complement),
        _t("first_stop", False, "exact", _first_stop),
    )
}
"""every question template, by name"""


# ---------------------------------------------------------------------------------------------
# corpus: canonical passages (the facts questions need) and distractors


def _density_clause(el: F.Element, wording: int) -> str:
    if el.density is None or el.density_note == "unavailable":
        return (
            "; no density is tabulated for it",
            ". Its density has not been measured",
            "; density: not tabulated",
        )[wording]
    note = el.density_note
    if note.startswith("T="):
        note = f"measured at {note[2:]} °C"
    note = f" ({note})" if note else ""
    return (
        f", and its density is {_show(el.density)} g/cm^3{note}",
        f". A cubic centimetre of it weighs {_show(el.density)} g{note}",
        f"; density {_show(el.density)} g/cm^3{note}",
    )[wording]


def _element_text(el: F.Element, w: int) -> str:
    d, m = _density_clause(el, w), _show(el.mass)
    return (
        f"{el.name.capitalize()} (symbol {el.symbol}) is element number {el.number} of the periodic table. "
        f"Its standard atomic weight is {m} u{d}.",
        f"Atomic number {el.number} belongs to {el.name}, written {el.symbol}. One mole of {el.name} atoms "
        f"has a mass of {m} g{d}.",
        f"{el.symbol}, {el.name}: Z = {el.number}; standard atomic weight {m} g/mol{d}.",
    )[w]


def _constant_text(c: F.Constant, w: int) -> str:
    unit = f" {c.unit}" if c.unit else ""
    val, unc = _show(c.value) + unit, _show(c.uncertainty) + unit
    return (
        f"The CODATA 2022 recommended value of the {c.name} is {val}"
        + (", exact by definition." if c.exact else f", with a standard uncertainty of {unc}."),
        f"{c.name[0].upper()}{c.name[1:]}: {val} (CODATA 2022; "
        + ("exact)." if c.exact else f"standard uncertainty {unc})."),
        f"According to the 2022 CODATA adjustment of the fundamental constants, the {c.name} equals {val}. "
        + ("The value is exact." if c.exact else f"Its standard uncertainty is {unc}."),
    )[w]


def _standard_text(first: str, w: int) -> str:
    standard = F.genetic_code(F.STANDARD_CODE_ID)
    rows = [(c, _three(aa)) for c, aa in standard.codons if c[0] == first]
    sep = (", ", "; ", ", ")[w]
    listing = sep.join((f"{c} {m}", f"{c} → {m}", f"{c} codes for {m}")[w] for c, m in rows)
    return (
        f"In the standard genetic code (NCBI translation table 1), the DNA codons that begin with {first} "
        f"are read as: {listing}.",
        f"Standard code (table 1), codons {first}NN: {listing}.",
        f"Of the 64 codons of the standard genetic code, the sixteen starting with {first} read: {listing}.",
    )[w]


def _code_text(code: F.GeneticCode, w: int) -> str:
    standard = F.genetic_code(F.STANDARD_CODE_ID)
    changes = [(c, _three(aa)) for c, aa in code.codons if aa != standard.translate(c)]
    also = f" (also called {', '.join(code.aliases)})" if code.aliases else ""
    head = (
        f"The {code.name} genetic code, NCBI translation table {code.id}{also},",
        f"NCBI table {code.id}, the {code.name} code{also},",
        f"Translation table {code.id} ({code.name} code{also})",
    )[w]
    if changes:
        diffs = ", ".join(f"{c} is a stop codon" if m == "Stop" else f"{c} encodes {m}" for c, m in changes)
        n = f"{len(changes)} codon{'s' if len(changes) > 1 else ''}"
        body = (
            f" departs from the standard code at {n}: {diffs}. All other codons are read as in the "
            f"standard code.",
            f" differs from the standard code as follows: {diffs}; every other codon keeps its standard "
            f"meaning.",
            f" reassigns {n} relative to the standard code "
            f"({diffs}) and reads the rest as the standard code does.",
        )[w]
    else:
        body = " reads all 64 codons exactly as the standard code does."
    stops = (
        f"Its stop codons are {', '.join(code.stop_codons)}"
        if code.stop_codons
        else "It has no dedicated stop codon"
    )
    either = (
        f" ({', '.join(code.context_stops)} may also end translation, depending on context)"
        if code.context_stops
        else ""
    )
    return f"{head}{body} {stops}{either}; translation may start at {', '.join(code.start_codons)}."


def _amino_text(aa: F.AminoAcid, w: int) -> str:
    mono, avg = _show(aa.monoisotopic_mass), _show(aa.average_mass)
    return (
        f"The amino acid {aa.code} ({aa.letter}) has a monoisotopic mass of {mono} Da and an average mass "
        f"of {avg} Da as the free amino acid.",
        f"{aa.code}, one-letter code {aa.letter}: free amino acid, monoisotopic mass {mono} Da, average "
        f"mass {avg} Da.",
        f"As a free molecule, {aa.code} (single-letter symbol {aa.letter}) weighs {avg} Da on average; its "
        f"monoisotopic mass is {mono} Da.",
    )[w]


def _canonical() -> list[tuple[str, str, Callable[[int], str]]]:
    """(key, topic, render by wording) for every canonical passage, in a fixed order."""
    out: list[tuple[str, str, Callable[[int], str]]] = []
    for el in F.elements():
        out.append((f"element:{el.symbol}", el.name, lambda w, el=el: _element_text(el, w)))
    for c in F.constants():
        out.append((f"constant:{c.name}", c.name, lambda w, c=c: _constant_text(c, w)))
    for first in F.BASES:
        out.append((f"code:1:{first}", "Standard genetic code", lambda w, b=first: _standard_text(b, w)))
    for code in F.genetic_codes():
        if code.id != F.STANDARD_CODE_ID:
            out.append((f"code:{code.id}", f"{code.name} genetic code", lambda w, k=code: _code_text(k, w)))
    for aa in F.amino_acids():
        out.append((f"amino:{aa.letter}", aa.code, lambda w, a=aa: _amino_text(a, w)))
    return out


def show_number(x: float) -> str:
    """A fact's value as the corpus writes it (all digits; ' × 10^n' for an exponent)."""
    return _show(x)


def canonical_ids(passages: Sequence[Passage]) -> dict[str, str]:
    """The id of each canonical passage among `passages`, by its key ('element:Cl', 'constant:Planck
    constant', 'amino:W', ...), found by its text in any of the wordings."""
    keys = {render(w): key for key, _, render in _canonical() for w in range(N_WORDINGS)}
    return {keys[p.text]: p.id for p in passages if p.text in keys}


def _isotope_text(iso: F.Isotope, w: int) -> str:
    m = _show(iso.mass)
    nat = (
        f"natural abundance {_show(iso.abundance)}%"
        if iso.abundance
        else "not found in nature in measurable amounts"
    )
    return (
        f"The isotope {iso.element_name}-{iso.mass_number} ({iso.mass_number}{iso.symbol}) has an isotopic "
        f"mass of {m} u; {nat}.",
        f"{iso.mass_number}{iso.symbol}: a nuclide of {iso.element_name} with {iso.mass_number} nucleons, "
        f"mass {m} u, {nat}.",
        f"Among the isotopes of {iso.element_name}, the one of mass number {iso.mass_number} has a mass of "
        f"{m} u ({nat}).",
    )[w]


def _older_text(c: F.Constant, w: int) -> str:
    unit = f" {c.unit}" if c.unit else ""
    val = _show(c.value) + unit
    unc = "exact" if c.exact else f"standard uncertainty {_show(c.uncertainty)}{unit}"
    return (
        f"In the CODATA {c.year} adjustment the {c.name} was given as {val} ({unc}); later adjustments "
        f"revised it.",
        f"Superseded value (CODATA {c.year}): {c.name} = {val}, {unc}.",
        f"Older tables, following CODATA {c.year}, list the {c.name} as {val} ({unc}).",
    )[w]


def _property_texts(el: F.Element) -> list[Callable[[int], str]]:
    out: list[Callable[[int], str]] = []
    if el.covalent_radius is not None:
        r = _show(el.covalent_radius)
        out.append(
            lambda w: (
                f"The covalent radius of {el.name} ({el.symbol}) is about {r} Å.",
                f"{el.name.capitalize()} atoms have a covalent radius near {r} angstrom.",
                f"Covalent radius, {el.symbol}: {r} Å.",
            )[w]
        )
    if el.crystal_structure:
        s = el.crystal_structure
        out.append(
            lambda w: (
                f"Solid {el.name} crystallizes with {s} lattice symmetry.",
                f"The crystal structure of {el.name} ({el.symbol}) is {s}.",
                f"{el.symbol} crystal lattice: {s}.",
            )[w]
        )
    if el.oxidation_states:
        states = ", ".join(f"{q:+d}" for q in el.oxidation_states)
        out.append(
            lambda w: (
                f"{el.name.capitalize()} forms ions with charges {states}.",
                f"Known oxidation states of {el.name} ({el.symbol}): {states}.",
                f"The ions of {el.symbol} listed in the tables carry charges {states}.",
            )[w]
        )
    return out


def _residue_texts(aa: F.AminoAcid) -> list[Callable[[int], str]]:
    # a residue inside a chain has lost one water: near-miss of the free amino-acid masses
    mono, avg = (
        _show(round(aa.monoisotopic_mass - 18.010565, 6)),
        _show(round(aa.average_mass - WATER_AVERAGE, 4)),
    )
    return [
        lambda w: (
            f"Inside a peptide chain, a {aa.code} residue has a monoisotopic residue mass of {mono} Da.",
            f"Residue mass of {aa.code} ({aa.letter}), monoisotopic: {mono} Da.",
            f"Mass spectrometrists use {mono} Da for the monoisotopic mass of a {aa.code} residue.",
        )[w],
        lambda w: (
            f"The average residue mass of {aa.code} in a protein is {avg} Da.",
            f"{aa.code} residue, average mass: {avg} Da.",
            f"Within a polypeptide, each {aa.code} residue contributes {avg} Da on average.",
        )[w],
    ]


def _distractor_pool() -> list[tuple[str, Callable[[int], str]]]:
    """(topic, render by wording) for every distractor fact, in a fixed order."""
    out: list[tuple[str, Callable[[int], str]]] = []
    for iso in F.isotopes():
        out.append((iso.element_name, lambda w, i=iso: _isotope_text(i, w)))
    for c in F.older_constants():
        out.append((c.name, lambda w, c=c: _older_text(c, w)))
    for el in F.elements():
        out.extend((el.name, f) for f in _property_texts(el))
    for aa in F.amino_acids():
        out.extend((aa.code, f) for f in _residue_texts(aa))
    return out


N_WORDINGS = 3
"""wordings per passage kind"""


def corpus_capacity() -> int:
    """The most distractors `build` can add (every distractor fact in every wording)."""
    return len(_distractor_pool()) * N_WORDINGS


# ---------------------------------------------------------------------------------------------
# build


def build(n_questions: int, seed: int, n_distractors: int = 1000, retrieval_fraction: float = 0.5) -> QASet:
    """Generate `n_questions` questions and their corpus (canonical passages + `n_distractors`), from `seed`.

    `retrieval_fraction` of the questions need a corpus fact (rounded; both splits get at least one when
    n_questions >= 2 and the fraction is strictly between 0 and 1). The same arguments give the same set.
    """
    check_int("n_questions", n_questions, 1)
    check_int("n_distractors", n_distractors, 0)
    check_interval("retrieval_fraction", retrieval_fraction, 0.0, 1.0)
    capacity = corpus_capacity()
    if n_distractors > capacity:
        raise DatasetError(f"n_distractors={n_distractors} is more than the {capacity} distractors there are")
    rng = random.Random(seed)

    n_retrieval = round(n_questions * retrieval_fraction)
    if n_questions >= 2 and 0 < retrieval_fraction < 1:
        n_retrieval = min(max(n_retrieval, 1), n_questions - 1)
    drafts: list[tuple[Template, _Draft]] = []
    seen: set[str] = set()
    for needs, count in ((True, n_retrieval), (False, n_questions - n_retrieval)):
        names = sorted(t.name for t in TEMPLATES.values() if t.needs_retrieval is needs)
        rng.shuffle(names)
        i = 0
        while sum(t.needs_retrieval is needs for t, _ in drafts) < count:
            template = TEMPLATES[names[i % len(names)]]
            i += 1
            for _ in range(50):  # redraw a template's dead ends and duplicates
                draft = template.make(rng)
                if draft is not None and draft.query not in seen:
                    seen.add(draft.query)
                    drafts.append((template, draft))
                    break
            if i > 100 * (count + len(names)):
                raise DatasetError(f"could not draw {count} distinct questions (needs_retrieval={needs})")
    rng.shuffle(drafts)

    # corpus: every canonical passage, then distractors, near-misses of the questions' topics first
    entries: list[tuple[str | None, str, str]] = []  # (canonical key or None, topic, text)
    for key, topic, render in _canonical():
        entries.append((key, topic, render(rng.randrange(N_WORDINGS))))
    pool = _distractor_pool()
    slots = [(i, w) for i in range(len(pool)) for w in range(N_WORDINGS)]
    canon_topics = {key: topic for key, topic, _ in _canonical()}
    wanted = {canon_topics[k] for _, d in drafts for k in d.evidence}
    near = [s for s in slots if pool[s[0]][0] in wanted]
    rest = [s for s in slots if pool[s[0]][0] not in wanted]
    rng.shuffle(near)
    rng.shuffle(rest)
    take_near = near[: n_distractors // 2]
    chosen = take_near + (rest + near[len(take_near) :])[: n_distractors - len(take_near)]
    for i, w in chosen:
        topic, render = pool[i]
        entries.append((None, topic, render(w)))
    rng.shuffle(entries)
    passages = tuple(Passage(f"p{j:05d}", text, topic) for j, (_, topic, text) in enumerate(entries))
    key_to_id = {key: p.id for (key, _, _), p in zip(entries, passages, strict=True) if key is not None}

    questions, recipes = [], []
    for j, (template, d) in enumerate(drafts):
        questions.append(
            Question(
                id=f"sci-{j:04d}",
                query=d.query,
                gt=d.gt,
                answer_type=d.answer_type,
                category=d.category,
                needs_retrieval=template.needs_retrieval,
                choices=d.choices,
                rel_tol=NUMERIC_REL_TOL if d.answer_type == "numeric" else 0.0,
                unit=d.unit,
                evidence=tuple(key_to_id[k] for k in d.evidence),
            )
        )
        recipes.append(Recipe(template.name, d.params))
    return QASet(tuple(questions), passages, tuple(recipes), seed)


# ---------------------------------------------------------------------------------------------
# independent re-derivation of the gold answers (straight from the packages, own arithmetic)


def _rederive_value(recipe: Recipe) -> float | str | int:
    with warnings.catch_warnings():
        return _rederive(recipe)


def _rederive(recipe: Recipe) -> float | str | int:
    """The answer of a recipe from scipy / periodictable / Biopython directly: a number, a string, or
    the index of the correct option."""
    import periodictable
    import scipy.constants as sc
    from Bio import BiopythonWarning
    from Bio.Data import IUPACData
    from Bio.Seq import Seq
    from Bio.SeqUtils import molecular_weight

    warnings.simplefilter("ignore", BiopythonWarning)  # tables whose codons are both stop and sense
    p, t = recipe.params, recipe.template
    el = periodictable.elements.symbol(p["symbol"]) if "symbol" in p else None
    if t == "moles_in_sample":
        return p["grams"] / periodictable.formula(p["symbol"]).mass
    if t == "atoms_in_sample":
        return p["milligrams"] / 1000 * sc.N_A / periodictable.formula(p["symbol"]).mass
    if t == "volume_from_density":
        return p["grams"] / el.density
    if t == "photon_energy":  # (h / e) in eV s times the frequency c / lambda
        return sc.value("Planck constant in eV/Hz") * sc.c / (p["nanometres"] * sc.nano)
    if t == "constant_ratio":
        return sc.value(p["numerator"]) / sc.value(p["denominator"])
    if t == "relative_uncertainty":  # scipy's precision carries the sign of a negative value
        return abs(sc.precision(p["name"]))
    if t in ("peptide_mass", "given_peptide_mass"):
        return molecular_weight(p["sequence"], "protein")
    if t == "oxide_molar_mass":
        return periodictable.formula(p["formula"]).mass
    if t == "densest_element":
        return max(
            range(len(p["options"])), key=lambda i: periodictable.elements.name(p["options"][i]).density
        )
    if t in ("codon_meaning", "codon_meaning_mc"):
        aa = str(Seq(p["codon"]).translate(table=p["table"]))
        meaning = "Stop" if aa == "*" else IUPACData.protein_letters_1to3[aa]
        return meaning if t == "codon_meaning" else p["options"].index(meaning)
    if t == "constant_value_mc":
        exact = sc.value(p["name"])
        return next(i for i, v in enumerate(p["option_values"]) if math.isclose(v, exact, rel_tol=1e-12))
    if t == "element_from_weight":
        (hit,) = [e.symbol for e in periodictable.elements if e.number and e.mass == p["mass"]]
        return hit
    if t == "amino_from_mass":
        (hit,) = [
            IUPACData.protein_letters_1to3[a]
            for a in IUPACData.protein_letters
            if math.isclose(molecular_weight(a, "protein", monoisotopic=True), p["mass"], rel_tol=1e-9)
        ]
        return hit
    if t == "given_molecules":
        return p["grams"] * p["N_A"] / p["molar_mass"]
    if t == "given_photon_energy":
        return p["h"] * p["c"] / (p["e"] * p["nanometres"] * 1e-9)
    if t == "given_conversion":
        return p["amount"] * p["factor"]
    if t == "given_half_life":  # exponential decay with rate ln 2 / T
        return p["grams"] * math.exp(-math.log(2) * p["time"] / p["half_life"])
    if t == "given_ideal_gas":
        return p["moles"] * p["R"] * p["kelvin"] / (p["litres"] / 1000) / 1000
    if t == "given_translation_mc":
        peptide = "-".join(IUPACData.protein_letters_1to3[a] for a in str(Seq(p["mrna"]).translate()))
        return p["options"].index(peptide)
    if t == "given_largest_volume_mc":
        volumes = [m / d for m, d in p["samples"]]
        best = p["samples"][volumes.index(max(volumes))]
        return next(
            i
            for i, o in enumerate(p["options"])
            if o.startswith(f"{_show(best[0])} g ") and f" {_show(best[1])} g/cm^3" in o
        )
    if t == "reverse_complement":
        return str(Seq(p["dna"]).reverse_complement())
    if t == "first_stop":
        return str(Seq(p["dna"]).translate(table=p["table"])).index("*") + 1
    raise DatasetError(f"unknown template {t!r}; known: {', '.join(TEMPLATES)}")


def rederive_answer(question: Question, recipe: Recipe) -> str:
    """The question's gold answer recomputed from the packages' own data, as gt text."""
    value = _rederive_value(recipe)
    if question.answer_type == "multiple_choice":
        return LETTERS[int(value)]
    if question.answer_type == "numeric":
        return repr(float(value))
    return str(value)


def verify(qaset: QASet, rel_tol: float = 1e-5) -> list[str]:
    """The ids of the questions whose gold answer disagrees with `rederive_answer` (empty: all agree)."""
    bad = []
    for q, recipe in zip(qaset.questions, qaset.recipes, strict=True):
        again = rederive_answer(q, recipe)
        if q.answer_type == "numeric":
            ok = math.isclose(float(q.gt), float(again), rel_tol=rel_tol)
        else:
            ok = q.gt == again
        if not ok:
            bad.append(q.id)
    return bad


# ---------------------------------------------------------------------------------------------
# save / load


def save(qaset: QASet, path: str | Path) -> Path:
    """Write the set (questions, corpus, recipes) to one JSON file; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": FORMAT,
        "seed": qaset.seed,
        "questions": [dataclasses.asdict(q) for q in qaset.questions],
        "passages": [dataclasses.asdict(p) for p in qaset.passages],
        "recipes": [dataclasses.asdict(r) for r in qaset.recipes],
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


_TUPLE_FIELDS = ("choices", "evidence")


def load(path: str | Path) -> QASet:
    """Read a set written by `save`."""
    path = Path(path)
    doc = read_json(path, DatasetError)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DatasetError(f"{path}: not a saved sci_refine QA set (expected format {FORMAT!r})")
    try:
        questions = tuple(
            Question(**{k: tuple(v) if k in _TUPLE_FIELDS else v for k, v in q.items()})
            for q in doc["questions"]
        )
        passages = tuple(Passage(**p) for p in doc["passages"])
        recipes = tuple(Recipe(r["template"], dict(r["params"])) for r in doc["recipes"])
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: a record is malformed ({exc})") from None
    if len(recipes) != len(questions):
        raise DatasetError(f"{path}: {len(questions)} questions but {len(recipes)} recipes")
    return QASet(questions, passages, recipes, int(doc.get("seed", 0)))
