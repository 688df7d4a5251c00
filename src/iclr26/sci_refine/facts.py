"""Structured scientific facts read from installed packages, for the built-here QA set of Eigen-1
(arXiv 2509.21193). Nothing is downloaded.

- CODATA physical constants (the 2022 adjustment) from `scipy.constants`, and the values of the older
  adjustments scipy keeps (2002-2018), used only for near-miss distractor paragraphs;
- element data from `periodictable`: symbol, name, atomic number, standard atomic weight, density,
  covalent radius, crystal structure, oxidation states, and isotopes (mass, natural abundance);
- Biopython's NCBI genetic codes (`Bio.Data.CodonTable`) and amino-acid data (`Bio.Data.IUPACData`):
  three-letter codes and monoisotopic / average masses of the free amino acids.

Every function returns a tuple of small frozen records in a fixed order and caches it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

__all__ = [
    "BASES",
    "STANDARD_CODE_ID",
    "AminoAcid",
    "Constant",
    "Element",
    "GeneticCode",
    "Isotope",
    "amino_acid",
    "amino_acids",
    "constant",
    "constants",
    "element",
    "elements",
    "genetic_code",
    "genetic_codes",
    "isotopes",
    "older_constants",
]

BASES = "TCAG"
"""the order NCBI lists codons in (first, second, third base)"""
STANDARD_CODE_ID = 1
"""NCBI translation table 1, the standard genetic code"""
STOP = "*"
"""the one-letter symbol of a stop codon"""


@dataclass(frozen=True)
class Constant:
    """One CODATA recommended value."""

    name: str
    """scipy's key, e.g. 'Planck constant'"""
    value: float
    """the recommended value, in `unit`"""
    unit: str
    """the unit as scipy writes it, e.g. 'J Hz^-1' ('' for a pure number)"""
    uncertainty: float
    """the standard uncertainty, in `unit` (0 for an exact constant)"""
    year: int = 2022
    """the CODATA adjustment the value comes from"""

    @property
    def exact(self) -> bool:
        """Whether the value is exact by definition (zero uncertainty)."""
        return self.uncertainty == 0.0


@dataclass(frozen=True)
class Element:
    """One chemical element's tabulated properties."""

    number: int
    """atomic number Z"""
    symbol: str
    """chemical symbol, e.g. 'Nb'"""
    name: str
    """lower-case English name, e.g. 'niobium'"""
    mass: float
    """standard atomic weight in u (g/mol)"""
    density: float | None
    """density in g/cm^3 of the element in its usual form; None where unknown"""
    density_note: str
    """periodictable's caveat on the density, e.g. 'T=25' (measured at 25 C); '' if none"""
    covalent_radius: float | None
    """covalent radius in angstrom; None where unknown"""
    crystal_structure: str
    """lattice symmetry, e.g. 'BCC'; '' where unknown"""
    oxidation_states: tuple[int, ...]
    """the charges of the element's ions periodictable lists"""


@dataclass(frozen=True)
class Isotope:
    """One isotope of an element."""

    symbol: str
    """the element's symbol"""
    element_name: str
    """the element's name"""
    mass_number: int
    """A, the number of nucleons"""
    mass: float
    """isotopic mass in u"""
    abundance: float
    """natural abundance in percent (0 for a synthetic or trace isotope)"""


@dataclass(frozen=True)
class GeneticCode:
    """One NCBI translation table: the amino acid (one-letter) each of the 64 DNA codons encodes."""

    id: int
    """the NCBI table number"""
    name: str
    """its main name, e.g. 'Vertebrate Mitochondrial'"""
    aliases: tuple[str, ...]
    """its other names"""
    codons: tuple[tuple[str, str], ...]
    """(codon, one-letter amino acid or '*' for stop) for all 64 codons, in NCBI (TCAG) order"""
    start_codons: tuple[str, ...]
    """the codons that may start translation"""
    context_stops: tuple[str, ...] = ()
    """codons read as an amino acid (as in `codons`) that may also end translation, by context"""

    def translate(self, codon: str) -> str:
        """The one-letter amino acid a DNA or RNA codon encodes, '*' for a stop codon."""
        return dict(self.codons)[codon.upper().replace("U", "T")]

    @property
    def stop_codons(self) -> tuple[str, ...]:
        """The stop codons, in NCBI order."""
        return tuple(c for c, aa in self.codons if aa == STOP)


@dataclass(frozen=True)
class AminoAcid:
    """One of the 20 standard amino acids."""

    letter: str
    """one-letter code"""
    code: str
    """three-letter code, e.g. 'Trp'"""
    monoisotopic_mass: float
    """monoisotopic mass of the free amino acid in Da"""
    average_mass: float
    """average mass of the free amino acid in Da"""


@functools.cache
def constants() -> tuple[Constant, ...]:
    """The CODATA 2022 constants scipy holds (about 355), sorted by name."""
    from scipy.constants import find, physical_constants

    out = []
    for name in sorted(find()):  # find() lists the current adjustment only
        value, unit, unc = physical_constants[name]
        out.append(Constant(name, float(value), unit, float(unc), 2022))
    return tuple(out)


@functools.cache
def older_constants() -> tuple[Constant, ...]:
    """Values from the older CODATA adjustments scipy keeps (2002-2018) that differ from the 2022 one.

    These are near-misses: the corpus uses them for distractor paragraphs only. Empty if this scipy
    does not keep them."""
    from scipy.constants import _codata

    current_values = {(c.value, c.unit) for c in constants()}
    out = []
    for year in (2002, 2006, 2010, 2014, 2018):
        table = getattr(_codata, f"_physical_constants_{year}", None) or {}
        for name in sorted(table):
            value, unit, unc = table[name]
            if (value, unit) in current_values:
                continue  # a current value (perhaps under an older name): the same fact, not a near-miss
            out.append(Constant(name, float(value), unit, float(unc), year))
    return tuple(out)


@functools.cache
def constant(name: str) -> Constant:
    """The CODATA 2022 constant of this name (scipy's key)."""
    for c in constants():
        if c.name == name:
            return c
    raise KeyError(f"no CODATA 2022 constant named {name!r}")


def _optional(x: object) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)  # type: ignore[arg-type]


@functools.cache
def elements() -> tuple[Element, ...]:
    """Elements 1-118 in order of atomic number."""
    import periodictable

    out = []
    for el in periodictable.elements:
        if el.number == 0:  # periodictable's neutron
            continue
        structure = getattr(el, "crystal_structure", None) or {}
        out.append(
            Element(
                number=int(el.number),
                symbol=el.symbol,
                name=el.name,
                mass=float(el.mass),
                density=_optional(el.density),
                density_note=str(getattr(el, "density_caveat", "") or ""),
                covalent_radius=_optional(getattr(el, "covalent_radius", None)),
                crystal_structure=str(structure.get("symmetry", "")) if isinstance(structure, dict) else "",
                oxidation_states=tuple(int(q) for q in (getattr(el, "ions", ()) or ())),
            )
        )
    return tuple(out)


@functools.cache
def element(symbol: str) -> Element:
    """The element with this chemical symbol."""
    for el in elements():
        if el.symbol == symbol:
            return el
    raise KeyError(f"no element with symbol {symbol!r}")


@functools.cache
def isotopes() -> tuple[Isotope, ...]:
    """Every isotope periodictable lists with a mass, by atomic number then mass number."""
    import periodictable

    out = []
    for el in periodictable.elements:
        if el.number == 0:
            continue
        for iso in el:
            mass = _optional(getattr(iso, "mass", None))
            if mass is None:
                continue
            abundance = _optional(getattr(iso, "abundance", None)) or 0.0
            out.append(Isotope(el.symbol, el.name, int(iso.isotope), mass, abundance))
    return tuple(out)


def _main_name(names: list[str | None]) -> tuple[str, tuple[str, ...]]:
    clean = [n for n in names if n and not n.startswith("SGC")]  # SGCn: an old numbering, not a name
    return clean[0], tuple(clean[1:])


@functools.cache
def genetic_codes() -> tuple[GeneticCode, ...]:
    """All of Biopython's unambiguous NCBI DNA translation tables, by table number."""
    from Bio.Data.CodonTable import unambiguous_dna_by_id

    out = []
    for table_id in sorted(unambiguous_dna_by_id):
        table = unambiguous_dna_by_id[table_id]
        name, aliases = _main_name(list(table.names))
        codons = tuple(
            (a + b + c, table.forward_table.get(a + b + c, STOP)) for a in BASES for b in BASES for c in BASES
        )
        either = tuple(c for c, aa in codons if aa != STOP and c in table.stop_codons)
        out.append(GeneticCode(table_id, name, aliases, codons, tuple(table.start_codons), either))
    return tuple(out)


def genetic_code(table_id: int) -> GeneticCode:
    """The NCBI translation table with this number."""
    for code in genetic_codes():
        if code.id == table_id:
            return code
    raise KeyError(f"no NCBI translation table {table_id}")


@functools.cache
def amino_acids() -> tuple[AminoAcid, ...]:
    """The 20 standard amino acids, in one-letter alphabetical order."""
    from Bio.Data import IUPACData

    return tuple(
        AminoAcid(
            letter,
            IUPACData.protein_letters_1to3[letter],
            float(IUPACData.monoisotopic_protein_weights[letter]),
            float(IUPACData.protein_weights[letter]),
        )
        for letter in IUPACData.protein_letters
    )


def amino_acid(letter_or_code: str) -> AminoAcid:
    """The amino acid with this one-letter or three-letter code."""
    for aa in amino_acids():
        if letter_or_code in (aa.letter, aa.code):
            return aa
    raise KeyError(f"no standard amino acid {letter_or_code!r}")
