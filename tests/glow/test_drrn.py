"""The DRRN baseline: it learns small games, counts its env steps, and resumes bit for bit."""

from __future__ import annotations

import time
import zlib
from dataclasses import replace

import pytest
import torch

from iclr26.core.config import ConfigError, field_help
from iclr26.glow.drrn import (
    CHECKPOINT_NAME,
    DRRN,
    QUICK,
    DRRNConfig,
    HashingTokenizer,
    evaluate_drrn,
    train_drrn,
)
from tests.glow.test_explore import CorridorGame

FAKE = replace(QUICK, max_episode_steps=20, eps_decay_steps=250, checkpoint_every=60)


def _same_params(a: DRRN, b: DRRN) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_every_config_field_has_a_docstring():
    help_ = field_help(DRRNConfig)
    assert set(help_) == {f for f in DRRNConfig.__dataclass_fields__}
    assert all(help_.values()), [k for k, v in help_.items() if not v]


def test_config_checks_name_the_field():
    with pytest.raises(ConfigError, match="eps_end"):
        DRRNConfig(eps_start=0.1, eps_end=0.5)
    with pytest.raises(ConfigError, match="exploration"):
        DRRNConfig(exploration="boltzmann")
    with pytest.raises(ConfigError, match="replay_size"):
        DRRNConfig(replay_size=8, batch_size=64)
    with pytest.raises(ConfigError, match="gamma"):
        DRRNConfig(gamma=1.5)


def test_hashing_tokenizer_is_stable_and_bounded():
    tok = HashingTokenizer(vocab_size=97, max_tokens=3)
    ids = tok("Go EAST, then take the coin!")
    assert ids == tuple(1 + zlib.crc32(w.encode()) % 96 for w in ("take", "the", "coin"))  # last 3 words
    assert all(1 <= i < 97 for i in ids)
    assert tok("") == tok("...")  # no words: one placeholder token, never an empty sequence


def test_q_values_have_one_entry_per_candidate_action():
    torch.manual_seed(0)
    net = DRRN(vocab_size=50, embedding_dim=8, hidden_dim=16)
    states = [(1, 2, 3), (4,)]
    actions = [[(5,), (6, 7), (8, 9, 10)], [(11,)]]
    q = net(states, actions)
    assert [t.shape for t in q] == [torch.Size([3]), torch.Size([1])]
    # padding does not leak: a state scored alone or beside a longer one gives the same Q values
    alone = net([states[0]], [actions[0]])[0]
    torch.testing.assert_close(q[0], alone, rtol=1e-5, atol=1e-6)


def test_drrn_learns_the_corridor_where_an_untrained_one_does_not():
    untrained = train_drrn(CorridorGame(), FAKE, None, budget_steps=0)
    assert untrained.steps_used == 0 and untrained.curve == []
    assert evaluate_drrn(untrained.network, CorridorGame(), FAKE) == 0
    start = time.perf_counter()
    game = CorridorGame(budget=10_000)
    result = train_drrn(game, FAKE, None, budget_steps=500)
    seconds = time.perf_counter() - start
    assert result.steps_used == 500 == game.steps_used  # the env steps it used, counted by the game too
    assert [s for s, _ in result.curve] == list(range(1, 501))
    assert result.gradient_steps == (500 - FAKE.learn_start) // FAKE.update_every + 1
    assert evaluate_drrn(result.network, CorridorGame(), FAKE) == 1  # greedy: east ×3, take coin
    assert result.episode_scores[-5:] == [1] * 5
    assert seconds < 30, f"{seconds:.1f}s"


def test_training_stops_at_the_games_budget():
    game = CorridorGame(budget=45)
    result = train_drrn(game, FAKE, None, budget_steps=1000)
    assert result.steps_used == 45 == game.steps_used == len(result.curve)


class Interrupted(Exception):
    pass


class CrashingCorridor(CorridorGame):
    """Raises (as a kill would stop the process) when asked for its `crash_at`-th step."""

    def __init__(self, crash_at: int) -> None:
        super().__init__()
        self.crash_at = crash_at

    def step(self, action: str):
        if self.steps_used + 1 == self.crash_at:
            raise Interrupted
        return super().step(action)


def test_resumed_run_equals_the_uninterrupted_one(tmp_path):
    budget = 300
    whole = train_drrn(CorridorGame(), FAKE, tmp_path / "whole", budget)
    again = train_drrn(CorridorGame(), FAKE, tmp_path / "again", budget)  # seeded: repeats exactly
    assert again.curve == whole.curve and _same_params(again.network, whole.network)

    with pytest.raises(Interrupted):
        train_drrn(CrashingCorridor(crash_at=171), FAKE, tmp_path / "cut", budget)
    assert (tmp_path / "cut" / CHECKPOINT_NAME).exists() and (tmp_path / "cut" / "config.json").exists()
    resumed = train_drrn(CorridorGame(), FAKE, tmp_path / "cut", budget)
    assert resumed.resumed_from is not None and 60 <= resumed.resumed_from < 171
    assert resumed.steps_used == whole.steps_used == budget
    assert resumed.curve == whole.curve
    assert resumed.episode_scores == whole.episode_scores and resumed.episodes == whole.episodes
    assert resumed.gradient_steps == whole.gradient_steps
    assert _same_params(resumed.network, whole.network)  # bit for bit

    # a larger budget continues a finished run from its last checkpoint
    longer = train_drrn(CorridorGame(), FAKE, tmp_path / "whole", budget + 50)
    assert longer.resumed_from is not None and longer.steps_used == budget + 50


def test_resume_refuses_another_config_or_a_smaller_budget(tmp_path):
    train_drrn(CorridorGame(), FAKE, tmp_path, 80)
    with pytest.raises(ValueError, match="lr"):
        train_drrn(CorridorGame(), replace(FAKE, lr=5e-4), tmp_path, 80)
    with pytest.raises(ValueError, match="budget_steps"):
        train_drrn(CorridorGame(), FAKE, tmp_path, 10)


def _learns_textworld_game(path, budget: int, config: DRRNConfig) -> float:
    """Train on the game at `path` for `budget` env steps; check that greedy play then scores its
    maximum where the untrained network's does not; return the training time."""
    from iclr26.glow.env import TextGame

    with TextGame(path) as probe:
        assert probe.scored and probe.max_score >= 1
        untrained = train_drrn(probe, config, None, budget_steps=0)
        assert evaluate_drrn(untrained.network, probe, config) < probe.max_score
    with TextGame(path, step_budget=budget) as game:
        start = time.perf_counter()
        result = train_drrn(game, config, None, budget_steps=10 * budget)
        seconds = time.perf_counter() - start
        assert result.steps_used == game.steps_used == budget  # the wrapper's budget stops it
    with TextGame(path) as fresh:
        assert evaluate_drrn(result.network, fresh, config) == fresh.max_score, result.episode_scores[-10:]
    return seconds


def test_drrn_learns_a_generated_easy_textworld_game(tw_game):
    config = replace(QUICK, max_episode_steps=20, eps_decay_steps=150)
    seconds = _learns_textworld_game(tw_game, 300, config)  # 2 rooms: go west, take coin
    assert seconds < 60, f"{seconds:.1f}s"


@pytest.mark.slow
def test_drrn_learns_a_five_room_textworld_game(glow_games_dir):
    from iclr26.glow.games import GameSpec, make_game

    path = make_game(GameSpec("coin_collector", 2, 0), glow_games_dir)  # 5 rooms, quest length 5
    seconds = _learns_textworld_game(path, 1000, replace(QUICK, eps_decay_steps=500))
    assert seconds < 60, f"{seconds:.1f}s"
