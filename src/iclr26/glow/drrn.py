"""The RL baseline of GLoW (arXiv 2509.24116): a DRRN trained here, reporting the env steps it used.

DRRN (He et al. 2016, "Deep Reinforcement Learning with a Natural Language Action Space"), in the
GRU form of Jericho's DRRN (Hausknecht et al. 2020): a state encoder and an action encoder, sharing a
word embedding, map the state text and each valid action to vectors; an MLP scores each pair:

    h_s = GRU_s(E[tokens(last action | observation)]),  h_a = GRU_a(E[tokens(a)])
    Q(s, a) = MLP([h_s; h_a])                                                       # Eq. (1)

Acting samples from the valid actions with π(a|s) ∝ exp(Q(s, a) / T) (He et al.'s softmax
selection), or ε-greedily. Learning is one-step Q-learning from a uniform replay buffer, with a
double-Q target from a periodically copied target network:

    y = r + γ (1 − done) Q_target(s', argmax_{a' ∈ A(s')} Q(s', a'))                 # Eq. (2)
    L = Huber(Q(s, a) − y)

Our environment gives the observation only (no separate look/inventory), so the state text is the
last action plus the observation. Tokens come from a hashing vocabulary (a word's CRC32 modulo the
vocabulary size), so the vocabulary never grows and needs no fitting.

Training checkpoints atomically at episode boundaries; a run resumed from its checkpoint continues
bit for bit as the uninterrupted run (same parameters, curve and episode scores), because the
checkpoint holds the networks, optimizer, replay buffer, RNG state and counters, and the game is
deterministic after a reset.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint, write_text_atomic
from iclr26.core.config import ConfigError, config_to_dict
from iclr26.core.device import resolve_device
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.glow.env import BudgetExhausted, TextGame
from iclr26.glow.explore import BaselineResult


@dataclass(frozen=True)
class DRRNConfig:
    """DRRN hyperparameters; defaults follow Jericho's DRRN (Hausknecht et al. 2020) where it sets them."""

    embedding_dim: int = 128
    """word embedding width (shared by the state and action encoders)"""
    hidden_dim: int = 128
    """GRU hidden width of both encoders, and of the Q MLP"""
    vocab_size: int = 8192
    """hashing vocabulary size: a word's id is 1 + CRC32(word) mod (vocab_size − 1); 0 pads"""
    max_tokens: int = 128
    """state texts keep their last max_tokens tokens (actions are short)"""
    gamma: float = 0.9
    """discount factor γ"""
    lr: float = 1e-4
    """Adam learning rate"""
    batch_size: int = 64
    """transitions per gradient step"""
    replay_size: int = 100_000
    """replay buffer capacity (oldest transitions are overwritten)"""
    learn_start: int = 64
    """env steps of experience before the first gradient step"""
    update_every: int = 1
    """env steps between gradient steps"""
    target_update_every: int = 500
    """env steps between copies of the online network into the target network"""
    exploration: Literal["softmax", "epsilon"] = "softmax"
    """how actions are sampled while training: softmax over Q / temperature, or ε-greedy"""
    temperature: float = 1.0
    """softmax temperature T (exploration=softmax)"""
    eps_start: float = 1.0
    """ε at the first step (exploration=epsilon)"""
    eps_end: float = 0.05
    """ε after eps_decay_steps (exploration=epsilon)"""
    eps_decay_steps: int = 10_000
    """env steps over which ε falls linearly from eps_start to eps_end"""
    max_episode_steps: int = 100
    """env steps before an episode is cut and the game reset"""
    grad_clip: float = 5.0
    """gradient-norm clip"""
    checkpoint_every: int = 1000
    """env steps between checkpoints (taken at the next episode boundary)"""
    seed: int = 0
    """seed of the network initialisation, exploration and replay sampling"""
    device: str = "cpu"
    """cpu, cuda, cuda:N or auto"""
    num_threads: int = 1
    """torch CPU threads while training and evaluating (restored after): networks this small run
    fastest on one, and far slower when threads contend for busy cores"""

    def __post_init__(self) -> None:
        for name in ("embedding_dim", "hidden_dim", "max_tokens", "batch_size", "update_every"):
            check_int(f"DRRNConfig.{name}", getattr(self, name), 1)
        for name in ("target_update_every", "max_episode_steps", "checkpoint_every", "eps_decay_steps"):
            check_int(f"DRRNConfig.{name}", getattr(self, name), 1, unit="env steps")
        check_int("DRRNConfig.vocab_size", self.vocab_size, 2)
        check_int("DRRNConfig.learn_start", self.learn_start, 0, unit="env steps")
        check_int("DRRNConfig.seed", self.seed, 0)
        check_int("DRRNConfig.num_threads", self.num_threads, 1)
        check_interval("DRRNConfig.gamma", self.gamma, 0.0, 1.0)
        check_interval("DRRNConfig.lr", self.lr, 0.0, closed=(False, True))
        check_interval("DRRNConfig.temperature", self.temperature, 0.0, closed=(False, True))
        check_interval("DRRNConfig.grad_clip", self.grad_clip, 0.0, closed=(False, True))
        check_interval("DRRNConfig.eps_start", self.eps_start, 0.0, 1.0)
        check_interval("DRRNConfig.eps_end", self.eps_end, 0.0, 1.0)
        check_in("DRRNConfig.exploration", self.exploration, ("softmax", "epsilon"))
        check_int("DRRNConfig.replay_size", self.replay_size, self.batch_size)
        if self.eps_end > self.eps_start:
            raise ConfigError(
                f"DRRNConfig.eps_end={self.eps_end} is above eps_start={self.eps_start}; ε only decays"
            )


QUICK = DRRNConfig(
    embedding_dim=32,
    hidden_dim=64,
    vocab_size=2048,
    max_tokens=64,
    lr=1e-3,
    batch_size=32,
    learn_start=32,
    update_every=2,
    target_update_every=100,
    exploration="epsilon",
    eps_decay_steps=1000,
    max_episode_steps=30,
    checkpoint_every=500,
)
"""For budgets of a few thousand env steps on small games (tests, the demo): small networks, a larger
learning rate, ε-greedy exploration decayed over the first 1,000 steps, short episodes."""


_WORD = re.compile(r"[a-z0-9]+")


class HashingTokenizer:
    """Lower-cased alphanumeric words hashed into `vocab_size` ids (0 is padding); a stable hash
    (CRC32), so ids are the same in every process."""

    def __init__(self, vocab_size: int, max_tokens: int) -> None:
        self.vocab_size = vocab_size
        self.max_tokens = max_tokens
        self._cache: dict[str, tuple[int, ...]] = {}

    def __call__(self, text: str) -> tuple[int, ...]:
        ids = self._cache.get(text)
        if ids is None:
            words = _WORD.findall(text.lower())[-self.max_tokens :] or ["<empty>"]
            ids = tuple(1 + zlib.crc32(w.encode()) % (self.vocab_size - 1) for w in words)
            if len(self._cache) < 200_000:
                self._cache[text] = ids
        return ids


class DRRN(nn.Module):
    """Q(s, a) = MLP([GRU_s(E s); GRU_a(E a)]) over token-id sequences (Eq. 1)."""

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.state_gru = nn.GRU(embedding_dim, hidden_dim, batch_first=True)
        self.action_gru = nn.GRU(embedding_dim, hidden_dim, batch_first=True)
        self.q_mlp = nn.Sequential(nn.Linear(2 * hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 1))

    def _encode(self, seqs: list[tuple[int, ...]], gru: nn.GRU) -> torch.Tensor:
        """(N, hidden) last GRU states of N token sequences of any lengths ≥ 1."""
        device = self.embedding.weight.device
        lengths = torch.tensor([len(s) for s in seqs])
        ids = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.tensor(s)
        packed = pack_padded_sequence(
            self.embedding(ids.to(device)), lengths, batch_first=True, enforce_sorted=False
        )
        _, h = gru(packed)  # h: (1, N, hidden), in the input order
        return h[0]

    def forward(
        self, states: list[tuple[int, ...]], actions: list[list[tuple[int, ...]]]
    ) -> list[torch.Tensor]:
        """Q values of each state's candidate actions: B tensors, the i-th of shape (len(actions[i]),)."""
        counts = [len(a) for a in actions]
        flat = [a for acts in actions for a in acts]
        if not flat:
            return [torch.zeros(0, device=self.embedding.weight.device) for _ in actions]
        h_s = self._encode(states, self.state_gru)  # (B, hidden)
        h_a = self._encode(flat, self.action_gru)  # (Σk, hidden)
        h_s = h_s.repeat_interleave(torch.tensor(counts, device=h_s.device), dim=0)  # (Σk, hidden)
        q = self.q_mlp(torch.cat([h_s, h_a], dim=-1)).squeeze(-1)  # Eq. (1)
        return list(q.split(counts))


@dataclass(frozen=True)
class Transition:
    """One env step as token ids: (s, a, r, s', A(s'), done)."""

    state: tuple[int, ...]
    action: tuple[int, ...]
    reward: float
    next_state: tuple[int, ...]
    next_actions: tuple[tuple[int, ...], ...]
    done: bool


@dataclass
class DRRNResult(BaselineResult):
    """A DRRN training run: the best-score curve per env step, plus the trained network."""

    episodes: int = 0
    """episodes started (completed or cut at max_episode_steps) during training"""
    episode_scores: list[int] = field(default_factory=list)
    """the final score of each finished episode"""
    gradient_steps: int = 0
    """gradient steps taken"""
    resumed_from: int | None = None
    """env step of the checkpoint the run resumed from (None: started fresh)"""
    network: DRRN | None = field(default=None, repr=False, compare=False)
    """the trained online network (for evaluate_drrn)"""


def _epsilon(config: DRRNConfig, step: int) -> float:
    frac = min(step / config.eps_decay_steps, 1.0)
    return config.eps_start + frac * (config.eps_end - config.eps_start)


def _state_text(last_action: str, obs: str) -> str:
    return f"{last_action} | {obs}"


class _Learner:
    """The update rule (Eq. 2) and everything a checkpoint must hold."""

    def __init__(self, config: DRRNConfig, device: torch.device) -> None:
        self.config = config
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(config.seed, "drrn", "init"))
            self.q = DRRN(config.vocab_size, config.embedding_dim, config.hidden_dim).to(device)
            self.q_target = DRRN(config.vocab_size, config.embedding_dim, config.hidden_dim).to(device)
        self.q_target.load_state_dict(self.q.state_dict())
        self.q_target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=config.lr)
        self.rng = np.random.default_rng(derive_seed(config.seed, "drrn", "act"))
        self.replay: list[Transition] = []
        self.replay_pos = 0
        self.gradient_steps = 0

    def push(self, t: Transition) -> None:
        if len(self.replay) < self.config.replay_size:
            self.replay.append(t)
        else:
            self.replay[self.replay_pos] = t
        self.replay_pos = (self.replay_pos + 1) % self.config.replay_size

    def act(self, state: tuple[int, ...], actions: list[tuple[int, ...]], step: int) -> int:
        """Index of the action to take in `state` while training."""
        with torch.no_grad():
            q = self.q([state], [actions])[0].cpu().double().numpy()
        c = self.config
        if c.exploration == "epsilon":
            if self.rng.random() < _epsilon(c, step):
                return int(self.rng.integers(len(actions)))
            return int(np.argmax(q))
        logits = q / c.temperature
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(len(actions), p=p / p.sum()))

    def update(self) -> dict[str, float]:
        """One gradient step on a uniform replay batch; returns the loss."""
        c = self.config
        idx = self.rng.integers(len(self.replay), size=c.batch_size)
        batch = [self.replay[i] for i in idx]
        device = self.q.embedding.weight.device
        q_sa = torch.cat(self.q([t.state for t in batch], [[t.action] for t in batch]))  # (B,)
        with torch.no_grad():
            nxt = [t.next_actions if not t.done else () for t in batch]
            s2 = [t.next_state for t in batch]
            q_online = self.q(s2, [list(a) for a in nxt])
            q_tgt = self.q_target(s2, [list(a) for a in nxt])
            q_next = torch.stack(
                [
                    qt[qo.argmax()] if len(qo) else torch.zeros((), device=device)
                    for qo, qt in zip(q_online, q_tgt, strict=True)
                ]
            )  # double Q: the online net picks a', the target net values it
            r = torch.tensor([t.reward for t in batch], dtype=q_sa.dtype, device=device)
            not_done = torch.tensor([not t.done for t in batch], dtype=q_sa.dtype, device=device)
            y = r + c.gamma * not_done * q_next  # Eq. (2)
        loss = F.smooth_l1_loss(q_sa, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.q.parameters(), c.grad_clip)
        self.optimizer.step()
        self.gradient_steps += 1
        return {"loss": loss.item()}

    def sync_target(self) -> None:
        self.q_target.load_state_dict(self.q.state_dict())

    def state_dict(self) -> dict[str, Any]:
        return {
            "q": self.q.state_dict(),
            "q_target": self.q_target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": self.rng.bit_generator.state,
            "replay": [
                (t.state, t.action, t.reward, t.next_state, t.next_actions, t.done) for t in self.replay
            ],
            "replay_pos": self.replay_pos,
            "gradient_steps": self.gradient_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.q.load_state_dict(state["q"])
        self.q_target.load_state_dict(state["q_target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.rng.bit_generator.state = state["rng"]
        self.replay = [Transition(*t) for t in state["replay"]]
        self.replay_pos = state["replay_pos"]
        self.gradient_steps = state["gradient_steps"]


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """torch's CPU thread count set to `n` inside the block, restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_RUNTIME_FIELDS = ("device", "num_threads")
"""config fields a resumed run may change (where it runs, not what it computes)"""

CHECKPOINT_NAME = "drrn.pt"
"""the checkpoint file inside checkpoint_dir (the resolved config is saved beside it as config.json)"""


def train_drrn(
    game: TextGame,
    config: DRRNConfig = DRRNConfig(),
    checkpoint_dir: Path | str | None = None,
    budget_steps: int = 10_000,
) -> DRRNResult:
    """Train a DRRN on `game` for `budget_steps` env steps (resuming from `checkpoint_dir` if it holds
    a checkpoint); return the best-score curve per env step, episodes and wall time.

    A checkpoint is written atomically at the first episode boundary after every
    `config.checkpoint_every` env steps, and when the run ends on an episode boundary. A run that is
    interrupted and called again with the same arguments continues from the last checkpoint and ends
    bit for bit as an uninterrupted one (timings aside).
    """
    if not isinstance(config, DRRNConfig):
        raise TypeError(f"config must be a DRRNConfig, got {type(config).__name__}")
    check_int("budget_steps", budget_steps, 0, unit="env steps")
    with _torch_threads(config.num_threads):
        return _train(game, config, checkpoint_dir, budget_steps)


def _train(
    game: TextGame, config: DRRNConfig, checkpoint_dir: Path | str | None, budget_steps: int
) -> DRRNResult:
    device = resolve_device(config.device)
    tokenize = HashingTokenizer(config.vocab_size, config.max_tokens)
    learner = _Learner(config, device)
    steps, episodes, best, seconds_before = 0, 0, 0, 0.0
    curve: list[tuple[int, int]] = []
    episode_scores: list[int] = []
    resumed_from: int | None = None
    path = Path(checkpoint_dir) / CHECKPOINT_NAME if checkpoint_dir is not None else None

    if path is not None and path.exists():
        ckpt = load_checkpoint(path, device)
        now = config_to_dict(config)
        diff = sorted(k for k, v in now.items() if k not in _RUNTIME_FIELDS and ckpt["config"].get(k) != v)
        if diff or ckpt["game"] != game.name:
            raise ValueError(
                f"checkpoint {path} was made for game {ckpt['game']!r} with config fields {diff} different "
                f"from this call's (game {game.name!r}); use a new checkpoint_dir"
            )
        if ckpt["steps"] > budget_steps:
            raise ValueError(
                f"checkpoint {path} is at env step {ckpt['steps']}, past budget_steps={budget_steps}; "
                "raise budget_steps or use a new checkpoint_dir"
            )
        learner.load_state_dict(ckpt["learner"])
        steps, episodes, best = ckpt["steps"], ckpt["episodes"], ckpt["best"]
        curve, episode_scores = [tuple(p) for p in ckpt["curve"]], list(ckpt["episode_scores"])
        seconds_before, resumed_from = ckpt["seconds"], ckpt["steps"]
    last_checkpoint = steps
    start = time.perf_counter()

    def checkpoint() -> None:
        nonlocal last_checkpoint
        assert path is not None
        payload = {
            "config": config_to_dict(config),
            "game": game.name,
            "learner": learner.state_dict(),
            "steps": steps,
            "episodes": episodes,
            "best": best,
            "curve": curve,
            "episode_scores": episode_scores,
            "seconds": seconds_before + time.perf_counter() - start,
        }
        save_checkpoint(path, payload)
        write_text_atomic(path.parent / "config.json", json.dumps(config_to_dict(config), indent=2))
        last_checkpoint = steps

    def steps_left() -> int:
        left = budget_steps - steps
        return max(0, left if game.budget_left is None else min(left, game.budget_left))

    at_boundary = True  # whether the last episode ended on its own (not cut by the budget)
    try:
        while steps_left() > 0:
            if path is not None and steps - last_checkpoint >= config.checkpoint_every:
                checkpoint()  # episode boundary: the game's state is just "after reset"
            obs, last_action = game.reset(), ""
            episodes += 1
            best = max(best, game.score)
            actions = game.valid_actions()
            taken, done = 0, False
            at_boundary = False
            while taken < config.max_episode_steps and actions and steps_left() > 0:
                s = tokenize(_state_text(last_action, obs))
                a_ids = [tokenize(a) for a in actions]
                i = learner.act(s, a_ids, steps)
                obs, reward, done, _ = game.step(actions[i])
                steps += 1
                taken += 1
                best = max(best, game.score)
                curve.append((steps, best))
                next_actions = [] if done else game.valid_actions()
                next_state = tokenize(_state_text(actions[i], obs))
                next_ids = tuple(tokenize(a) for a in next_actions)
                learner.push(Transition(s, a_ids[i], float(reward), next_state, next_ids, bool(done)))
                if len(learner.replay) >= max(config.learn_start, 1) and steps % config.update_every == 0:
                    learner.update()
                if steps % config.target_update_every == 0:
                    learner.sync_target()
                last_action, actions = actions[i], next_actions
                if done:
                    break
            if taken == 0:  # no valid action right after a reset: nothing more can happen
                break
            if done or taken == config.max_episode_steps or not actions:
                at_boundary = True
                episode_scores.append(game.score)
    except BudgetExhausted:
        at_boundary = False
    if path is not None and at_boundary and steps > last_checkpoint:
        checkpoint()
    return DRRNResult(
        agent="drrn",
        game=game.name,
        game_max_score=game.max_score,
        curve=curve,
        steps_used=steps,
        seconds=seconds_before + time.perf_counter() - start,
        details={"episodes": episodes, "gradient_steps": learner.gradient_steps},
        episodes=episodes,
        episode_scores=episode_scores,
        gradient_steps=learner.gradient_steps,
        resumed_from=resumed_from,
        network=learner.q,
    )


def evaluate_drrn(network: DRRN, game: TextGame, config: DRRNConfig, episode_steps: int | None = None) -> int:
    """The score of one greedy episode (argmax Q over the valid actions, ties to the first) of
    `network` on `game`, from a reset, for at most `episode_steps` (default config.max_episode_steps)."""
    if not isinstance(network, DRRN):
        raise TypeError(f"network must be a DRRN (DRRNResult.network), got {type(network).__name__}")
    episode_steps = config.max_episode_steps if episode_steps is None else episode_steps
    check_int("episode_steps", episode_steps, 1, unit="env steps")
    with _torch_threads(config.num_threads):
        return _evaluate(network, game, config, episode_steps)


def _evaluate(network: DRRN, game: TextGame, config: DRRNConfig, episode_steps: int) -> int:
    tokenize = HashingTokenizer(config.vocab_size, config.max_tokens)
    obs, last_action = game.reset(), ""
    best = game.score
    network.eval()
    try:
        with torch.no_grad():
            for _ in range(episode_steps):
                actions = game.valid_actions()
                if not actions:
                    break
                q = network([tokenize(_state_text(last_action, obs))], [[tokenize(a) for a in actions]])[0]
                last_action = actions[int(q.argmax())]
                obs, _, done, _ = game.step(last_action)
                best = max(best, game.score)
                if done:
                    break
    except BudgetExhausted:
        pass
    finally:
        network.train()
    return best
