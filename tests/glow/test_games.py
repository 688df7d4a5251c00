"""Game generation: specs, suites, determinism from the seed and the cache."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from iclr26.core.errors import UserError
from iclr26.glow.env import GameError
from iclr26.glow.games import KINDS, GameSpec, make_game, suite


def _one_line_error(excinfo: pytest.ExceptionInfo, *words: str) -> str:
    msg = str(excinfo.value)
    assert isinstance(excinfo.value, UserError) and "\n" not in msg
    for word in words:
        assert word in msg, msg
    return msg


def _z8_without_serial(path: Path) -> bytes:
    """The story file with its header serial number (bytes 0x12-0x17, the compile date) blanked."""
    data = bytearray(path.read_bytes())
    data[0x12:0x18] = b"\0" * 6
    return bytes(data)


def test_spec_name_and_settings():
    spec = GameSpec("cooking", 3, 7)
    assert spec.name == "tw-cooking-l3-s7"
    assert spec.challenge_settings() == {
        "recipe": 2, "take": 2, "go": 6, "recipe_seed": 0, "split": None,
        "open": True, "cook": False, "cut": True, "drop": False,
    }  # fmt: skip
    assert GameSpec("coin_collector", 3, 0).challenge_settings() == {"level": 105}
    assert GameSpec("treasure_hunter", 5, 0).challenge_settings() == {"level": 25}
    assert GameSpec("coin_collector", 7, 0).challenge_settings() == {"level": 230}
    assert GameSpec("cooking", 7, 0).challenge_settings()["recipe"] == 5


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"kind": "zork", "level": 1, "seed": 0}, ("GameSpec.kind", "'zork'", "coin_collector")),
        ({"kind": "cooking", "level": 0, "seed": 0}, ("GameSpec.level", "0")),
        ({"kind": "cooking", "level": 8, "seed": 0}, ("GameSpec.level", "8")),
        ({"kind": "cooking", "level": "2", "seed": 0}, ("GameSpec.level", "'2'")),
        ({"kind": "cooking", "level": True, "seed": 0}, ("GameSpec.level",)),
        ({"kind": "cooking", "level": 1, "seed": -1}, ("GameSpec.seed", "-1")),
    ],
)
def test_bad_spec(kwargs, words):
    with pytest.raises(UserError) as e:
        GameSpec(**kwargs)
    _one_line_error(e, *words)


def test_suites_are_fixed_and_named_tw():
    assert suite("smoke") == suite("smoke")
    assert 1 <= len(suite("smoke")) <= 2
    assert {s.kind for s in suite("demo")} == set(KINDS)
    bench = suite("bench")
    assert len(bench) == 8 and len({s.level for s in bench}) >= 3 and len(set(bench)) == 8
    for name in ("smoke", "demo", "bench"):
        assert all(s.name.startswith("tw-") for s in suite(name))
    with pytest.raises(UserError) as e:
        suite("paper")
    _one_line_error(e, "suite", "'paper'", "smoke")


def test_make_game_rejects_non_spec(tmp_path):
    with pytest.raises(GameError) as e:
        make_game("tw-cooking-l1-s0", tmp_path)  # type: ignore[arg-type]
    _one_line_error(e, "GameSpec")


def test_generation_is_deterministic_and_cached(tw_game, tmp_path):
    spec = GameSpec("coin_collector", 1, 0)
    assert tw_game.name == f"{spec.name}.z8" and tw_game.with_suffix(".json").is_file()
    again = make_game(spec, tmp_path)  # a second, independent generation from the same seed
    assert again != tw_game
    assert json.loads(again.with_suffix(".json").read_text()) == json.loads(
        tw_game.with_suffix(".json").read_text()
    )
    assert _z8_without_serial(again) == _z8_without_serial(tw_game)
    start = time.perf_counter()
    assert make_game(spec, tmp_path) == again  # cached: no generation
    assert time.perf_counter() - start < 0.1
    assert sorted(p.name for p in tmp_path.iterdir()) == [spec.name]  # no temp folder left behind
    assert sorted(p.suffix for p in again.parent.iterdir()) == [".json", ".z8"]


def test_default_cache_dir(monkeypatch, tmp_path, tw_game):
    import shutil

    from iclr26.glow.games import default_games_dir

    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path))
    assert default_games_dir() == tmp_path / "glow" / "games"
    shutil.copytree(tw_game.parent, default_games_dir() / tw_game.parent.name)  # pre-seeded cache
    assert (
        make_game(GameSpec("coin_collector", 1, 0))
        == default_games_dir() / tw_game.parent.name / tw_game.name
    )
