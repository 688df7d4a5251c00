"""Generated text games for GLoW (arXiv 2509.24116): TextWorld challenges compiled to `.z8`, offline.

The paper evaluates on Jericho games (Zork1, Deephome, ...), which users load by path (`env.TextGame`).
The games we can ship are generated here by TextWorld's bundled Inform 7 compilers, deterministically
from a seed, and cached once per machine. Every file is named `tw-...`: Jericho reads the score of a
TextWorld game only under that prefix.

Level table (our levels 1-5 -> TextWorld challenge settings; harder = bigger world, more objects,
longer quest):

=====  ============================  ==================================  ================================
level  coin_collector (`--level`)    treasure_hunter (`--level`)         cooking (recipe/take/go, skills)
=====  ============================  ==================================  ================================
1      2: 2 rooms, quest length 2    1: easy, 5 rooms, quest length 1    1/1/1
2      5: 5 rooms, quest length 5    5: easy, 5 rooms, quest length 3    2/1/1, open
3      105: 10 rooms (5 dead ends)   12: medium, 10 rooms, doors/boxes   2/2/6, open cut
4      110: 20 rooms (10 dead ends)  18: medium, 10 rooms, longer quest  3/3/9, open cook cut
5      215: 45 rooms (30 dead ends)  25: hard, 20 rooms, locked doors    4/4/12, open cook cut
6      125: quest length 25          28: hard, 20 rooms, locked doors    4/4/12, open cook cut drop
7      230: quest length 30          30: hard, the longest quest         5/5/12, open cook cut drop
=====  ============================  ==================================  ================================

Levels 5-7 are the hard-exploration games (issue 60): TextWorld levels 25-30 of coin collector (the
quest's length in rooms; 1xx adds dead ends, 2xx more of them) and treasure hunter, and cooking with 4-5
ingredients to find (level 4: 3).

cooking: `--recipe` ingredients, `--take` of them to find, `--go` rooms; skills `--open`, `--cook`, `--cut`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26.core.cache_dir import user_cache_dir
from iclr26.core.validation import check_in, check_int
from iclr26.glow.env import GameError

__all__ = ["KINDS", "LEVELS", "SUITES", "GameSpec", "default_games_dir", "make_game", "suite"]

KINDS = ("treasure_hunter", "coin_collector", "cooking")  # TextWorld challenges tw-<kind>
LEVELS = (1, 2, 3, 4, 5, 6, 7)

# Our level -> the challenge's settings (see the table in the module docstring).
_COIN_COLLECTOR_LEVEL = {1: 2, 2: 5, 3: 105, 4: 110, 5: 215, 6: 125, 7: 230}
_TREASURE_HUNTER_LEVEL = {1: 1, 2: 5, 3: 12, 4: 18, 5: 25, 6: 28, 7: 30}
_COOKING = {  # level -> (recipe, take, go, skills)
    1: (1, 1, 1, ()),
    2: (2, 1, 1, ("open",)),
    3: (2, 2, 6, ("open", "cut")),
    4: (3, 3, 9, ("open", "cook", "cut")),
    5: (4, 4, 12, ("open", "cook", "cut")),
    6: (4, 4, 12, ("open", "cook", "cut", "drop")),
    7: (5, 5, 12, ("open", "cook", "cut", "drop")),
}


@dataclass(frozen=True)
class GameSpec:
    """One generated game: a TextWorld challenge `kind`, our difficulty `level` (1-5) and a `seed`."""

    kind: str  # one of KINDS
    level: int  # 1 (tiny) .. 7 (hard exploration); see the level table
    seed: int  # TextWorld's global generation seed, 0 <= seed < 2**31

    def __post_init__(self) -> None:
        check_in("GameSpec.kind", self.kind, KINDS)
        check_int("GameSpec.level", self.level, LEVELS[0], LEVELS[-1])
        check_int("GameSpec.seed", self.seed, 0, 2**31 - 1)

    @property
    def name(self) -> str:
        """File stem `tw-<kind>-l<level>-s<seed>` (the `tw-` prefix lets Jericho read the score)."""
        return f"tw-{self.kind}-l{self.level}-s{self.seed}"

    def challenge_settings(self) -> dict[str, Any]:
        """The settings TextWorld's `tw-<kind>` challenge receives (as `tw-make` would pass them)."""
        if self.kind == "coin_collector":
            return {"level": _COIN_COLLECTOR_LEVEL[self.level]}
        if self.kind == "treasure_hunter":
            return {"level": _TREASURE_HUNTER_LEVEL[self.level]}
        recipe, take, go, skills = _COOKING[self.level]
        settings: dict[str, Any] = {"recipe": recipe, "take": take, "go": go, "recipe_seed": 0, "split": None}
        settings.update({skill: skill in skills for skill in ("open", "cook", "cut", "drop")})
        return settings


SUITES: dict[str, tuple[GameSpec, ...]] = {
    # CI: the tiniest game (2 rooms, 2 steps to win; about 2 s to generate).
    "smoke": (GameSpec("coin_collector", 1, 0),),
    # The tour: three small games, one of each kind.
    "demo": (GameSpec("coin_collector", 2, 0), GameSpec("treasure_hunter", 2, 0), GameSpec("cooking", 1, 0)),
    # The ablations (the paper runs them on one game, Zork1): the demo suite's treasure hunter, the
    # game where full GLoW with SmolLM2 reaches the max score on every seed (on the cooking game it
    # scores 0 on every seed, which leaves nothing for an ablation to take away).
    "ablation": (GameSpec("treasure_hunter", 2, 0),),
    # Eight games over world size, objects and quest length.
    "bench": (
        GameSpec("coin_collector", 2, 1),
        GameSpec("coin_collector", 3, 1),
        GameSpec("coin_collector", 4, 1),
        GameSpec("treasure_hunter", 2, 1),
        GameSpec("treasure_hunter", 3, 1),
        GameSpec("treasure_hunter", 4, 1),
        GameSpec("cooking", 2, 1),
        GameSpec("cooking", 3, 1),
    ),
    # Hard exploration (issue 60): TextWorld treasure hunter level 25, coin collector level 125 (a
    # 25-room quest among dead ends) and cooking with 3 and 4 ingredients in 9 and 12 rooms. At 1,000
    # env steps random play and uniform Go-Explore score 0 on the first two; on cooking with 3
    # ingredients (dense scores) 0.27 and 0.30 (benchmarks/glow/results/glow_bench_hard.json).
    "hard": (
        GameSpec("treasure_hunter", 5, 1),
        GameSpec("coin_collector", 6, 1),
        GameSpec("cooking", 4, 1),
        GameSpec("cooking", 5, 1),
    ),
}


def suite(name: str) -> tuple[GameSpec, ...]:
    """The named suite of game specs ("smoke", "demo", "ablation" or "bench"), always the same games."""
    return SUITES[check_in("suite", name, tuple(SUITES))]


def default_games_dir() -> Path:
    """Where generated games are cached: `<iclr26 cache>/glow/games`."""
    return user_cache_dir() / "glow" / "games"


def _game_file(folder: Path, spec: GameSpec) -> Path:
    return folder / f"{spec.name}.z8"


def make_game(spec: GameSpec, cache_dir: Path | None = None) -> Path:
    """The `.z8` file of `spec` (its `.json` logic beside it), generated once and cached by name.

    Generation writes into a temporary folder inside the cache, then renames it into place, so an
    interrupted or concurrent run never leaves a half-written game. A second call is a stat.
    """
    if not isinstance(spec, GameSpec):
        raise GameError(f"spec must be a GameSpec, got {type(spec).__name__} {spec!r}")
    root = Path(cache_dir) if cache_dir is not None else default_games_dir()
    final = root / spec.name
    path = _game_file(final, spec)
    if path.is_file() and path.with_suffix(".json").is_file():
        return path
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=root))
    try:
        _generate(spec, _game_file(tmp, spec))
        for extra in tmp.iterdir():  # keep only the game and its logic (drop the Inform 7 source)
            if extra.suffix not in (".z8", ".json"):
                extra.unlink()
        try:
            os.replace(tmp, final)
        except OSError:  # another process finished first: keep its copy
            if not (path.is_file() and path.with_suffix(".json").is_file()):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _generate(spec: GameSpec, path: Path) -> None:
    """Build and compile the game with TextWorld's Python API (what `tw-make tw-<kind>` does)."""
    import textworld
    import textworld.challenges
    from textworld.generator import compile_game

    _, make, _ = textworld.challenges.CHALLENGES[f"tw-{spec.kind}"]
    options = textworld.GameOptions()
    options.seeds = spec.seed
    options.path = str(path)
    options.file_ext = ".z8"
    options.force_recompile = True
    try:
        with warnings.catch_warnings():  # the cooking challenge plays a scratch copy, not named tw-*
            warnings.filterwarnings("ignore", message=".*is not fully supported")
            game = make(settings=spec.challenge_settings(), options=options)
            compile_game(game, options)
    except Exception as e:  # TextWorld raises plain exceptions for settings it cannot realise
        raise GameError(f"TextWorld could not generate {spec.name}: {type(e).__name__}: {e}") from e
    if not path.is_file():
        raise GameError(f"TextWorld did not write {path} for {spec.name}")
