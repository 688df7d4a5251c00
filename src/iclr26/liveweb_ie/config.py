"""The `liveweb_ie` run's config: which sites, queries and pages, which methods, the drift versions
evaluated, and the model's budget (the model is the run's: `--llm`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int
from iclr26.liveweb_ie.release import TYPES
from iclr26.liveweb_ie.sites import SITE_KEYS

METHODS = ("oracle", "null", "empty", "rules", "heuristic", "cot", "reflexion", "autoscraper", "vgs")
"""oracle: the generator's XPaths (the upper bound, not a model); null: a value on no page (F1 0
everywhere); empty: the empty extraction (the floor); rules: PyPI autoscraper learnt from the first
page's values; cot, reflexion, autoscraper: LLM XPath baselines; vgs: the paper's method"""
LLM_METHODS = ("cot", "reflexion", "autoscraper", "vgs")


@dataclass(frozen=True)
class LiveWebConfig:
    """Everything the run uses; the defaults are the README's bench."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path")

    release: str = ""
    """empty: our generated sites; else the folder of a LiveWeb-IE release (dataset.json ...) to load and
    summarise (scoring it needs the live web)"""
    sites: tuple[str, ...] = SITE_KEYS
    """the generated sites: books, quotes, tables, shop, papers"""
    types: tuple[str, ...] = TYPES
    """query types to run: type_1 (one attribute, one value), type_2 (several, one each), type_3 (one,
    many values), type_4 (several, many)"""
    records_per_type: int = 6
    """queries per type (type_1 .. type_4), spread over the sites and groups (0: every query)"""
    pages_per_group: int = 20
    """pages each wrapper is applied to per version, evenly spread over the group (0: all)"""
    versions: tuple[int, ...] = (0, 1, 2, 4)
    """clock versions scored; wrappers are made at the first. 0: as built; 1: content drift; 2: layout v2
    (and content); 4: layout v3"""
    methods: tuple[str, ...] = METHODS
    """the methods to run (the table also prints the paper's rows); oracle and null check the metric,
    empty is the floor VGS's claim is read against"""
    max_tokens: int = 96
    """reply length of one model call, tokens"""
    html_chars: int = 3000
    """characters of compacted HTML the HTML-reading baselines see (SmolLM2's context is 2,048 tokens)"""
    region_height: int = 720
    """VGS: the height of one screenshot region, pixels (the viewport is 1280 wide)"""
    max_regions: int = 4
    """VGS: regions per page (the page's top)"""
    region_chars: int = 1200
    """VGS: characters of a region's text rendering for a text-only model"""
    prefill: bool = True
    """start replies with their format ("Region ", "XPath: /", a JSON opening); SmolLM2 needs it, the paper
    preset turns it off"""
    reflexion_rounds: int = 2
    """Reflexion: revisions after a failed trial"""
    autoscraper_steps: int = 3
    """AutoScraper-style: propose / step back rounds per attribute"""
    seed: int = 0
    """seeds the sites' content and drift, the query set and the model's sampling"""

    def __post_init__(self) -> None:
        for s in self.sites:
            check_in("sites", s, SITE_KEYS)
        for m in self.methods:
            check_in("methods", m, METHODS)
        for t in self.types:
            check_in("types", t, TYPES)
        if not self.sites or not self.methods or not self.types:
            raise ConfigError("sites, methods and types must each name at least one")
        if not self.versions or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in self.versions
        ):
            raise ConfigError(f"versions must be ints >= 0, got {self.versions!r}")
        if list(self.versions) != sorted(set(self.versions)):
            raise ConfigError(f"versions must be increasing without repeats, got {self.versions!r}")
        for name in ("records_per_type", "pages_per_group", "seed"):
            check_int(name, getattr(self, name), 0)
        check_int("max_tokens", self.max_tokens, 16)
        check_int("html_chars", self.html_chars, 200)
        check_int("region_height", self.region_height, 100)
        check_int("max_regions", self.max_regions, 1, 20)
        check_int("region_chars", self.region_chars, 100)
        check_int("reflexion_rounds", self.reflexion_rounds, 0)
        check_int("autoscraper_steps", self.autoscraper_steps, 1)
