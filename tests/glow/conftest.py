"""Generated TextWorld games shared by the glow tests: made once per session in a temporary cache."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def glow_games_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session-wide cache folder for generated games (not the user's cache)."""
    pytest.importorskip("textworld")
    pytest.importorskip("jericho")
    return tmp_path_factory.mktemp("glow-games")


@pytest.fixture(scope="session")
def tw_game(glow_games_dir: Path) -> Path:
    """A tiny coin-collector game (2 rooms; walkthrough "go west", "take coin"; max score 1)."""
    from iclr26.glow.games import GameSpec, make_game

    return make_game(GameSpec("coin_collector", 1, 0), glow_games_dir)


@pytest.fixture(scope="session")
def tw_cooking(glow_games_dir: Path) -> Path:
    """A small cooking game (one room, a one-ingredient recipe; walkthrough of 5 commands; max score 3)."""
    from iclr26.glow.games import GameSpec, make_game

    return make_game(GameSpec("cooking", 1, 0), glow_games_dir)
