"""Transformers trained here: a small GPT trained from scratch to learn in context, in the spirit of
Garg et al. 2022 ("What can transformers learn in context?"), for the study of "Is In-Context
Learning Learning?" (arXiv 2509.10414).

Each training sequence is `max_shots + 1` (input, label) pairs

    <bos> x_1 : y_1 ; x_2 : y_2 ; ... ; x_q : y_q

whose labels come from one *random automaton of a task family*, drawn afresh per sequence, so the
only way to label a held-out automaton is to read its exemplars. The loss is the cross-entropy of
every label token (as Garg et al., each prefix is a prompt with 0..max_shots exemplars).

Families (`FAMILY_OF_TASK` maps the real tasks to them):

- `dfa` (PARITY): binary strings labelled by random DFAs with 2–4 states over {0, 1}, start state 0.
- `pattern` (pattern matching): strings over {a, b, c} labelled by "contains p" for a random p of
  length 3–6.
- `stack`, `reversal`, `vending` (the stack, reversal and vending-machine tasks): rule families of
  `families.py` (where pushes and pops act; a permutation of the reversal tokens; coin values and
  prices), each task string rendered one character per task symbol, the task's own rule and the
  rules that agree with it on 90% of its strings held out, one rule in eight kept for validation;
  their inputs are the family's own generator's (`task_mix` and `pool_size` do not apply).

Held out (never trained on, `is_held_out`): the task's own rule — "contains abcabb"; every DFA that
computes PARITY of zeros or its negation on PARITY's support (strings that start with "0", length
>= 4), decided exactly by minimising the DFA restricted to that support — and every automaton
whose labels agree with the task's (or their negation) on at least 90% of a fixed sample of the
task's ID strings (`agreement`): "bcabb" and "cabb", and DFAs that are PARITY but for a few short
strings (e.g. those with a single zero). DFAs constant on the support are never drawn either.
One other automaton in eight (a stable hash of its function) is a *validation* automaton, also
never trained on, so accuracy on unseen random automata can be measured apart from the task's own
(`validation_accuracy`).

Inputs come from the real task's own generator at δ = 0 (`task_mix` of them, from a pool of
`pool_size` strings drawn once per run) or are uniform random strings of the task's shape (the
rest). A pattern-family input is made positive (p written over a random place) or negative (a
random string written there, then each occurrence of p broken), each with probability 1/2; a
DFA whose labels on a sequence are under 20% of either label is redrawn. CPU-scale limits:
training inputs are at most `max_len` characters (longer task strings are left out of the pool;
16 by default) and a sequence holds `max_shots + 1` pairs (20 + 1 by default, at most 24 meant),
so a training sequence has at most `1 + (max_shots + 1) * (max_len + 3)` tokens. At evaluation,
exemplars and queries may be longer than `max_len` (the real tasks' strings are: the model then
extrapolates); a query whose prompt is longer than `context` tokens gets no prediction (None),
and a prompt never has more than `max_shots` exemplars.

Measured (one core each, two runs sharing a busy 2-core machine; 400 test items per cell; the
bench is the defaults, the demo `steps=200`): the bench `dfa` model learns in context on unseen
random DFAs (validation automata: 26% at 0 shots, 80% at 5, 81% at 20), yet stays at chance on
PARITY (ID 50–51.5% at shots 0/2/5/10/20; δ = 0.85: 50–54%). The `pattern` model never left the
chance loss ln 2 in 2500 steps (constant answers: 48% ID, 47% at δ = 0.85; validation 49–52%), nor
in any of our shorter CPU runs once the label cues that need no exemplars were removed. The demo
is at chance on both tasks.

Training is seeded per (step, row), so a run repeats bit for bit on CPU, does not depend on the
number of processes, and resumes from the latest checkpoint exactly; under `torchrun` each rank
trains on its rows of the batch with DistributedDataParallel.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.config import ConfigError
from iclr26.core.distributed import all_reduce_mean, init_distributed
from iclr26.core.schedule import warmup_cosine
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.icl_analysis import families as rule_families
from iclr26.icl_analysis.families import Rule
from iclr26.icl_analysis.prompts import exemplars
from iclr26.icl_analysis.scoring import Score, score
from iclr26.icl_analysis.tasks import TASKS, Item, Splits
from iclr26.icl_analysis.tasks.strings import PATTERN

RULE_FAMILIES = tuple(rule_families.FAMILIES)  # stack, reversal, vending (`families.py`)
FAMILIES = ("dfa", "pattern", *RULE_FAMILIES)
POSITIONS = ("rope", "absolute")
FAMILY_OF_TASK = {"parity": "dfa", "pattern_matching": "pattern"} | {
    f.task: f.name for f in rule_families.FAMILIES.values()
}
TASK_OF_FAMILY = {f: t for t, f in FAMILY_OF_TASK.items()}
ALPHABET = {"dfa": "01", "pattern": "abc"} | {f.name: f.alphabet for f in rule_families.FAMILIES.values()}
# the shortest string each task's generator (or a rule family's) writes
MIN_LEN = {"dfa": 4, "pattern": 8} | {f.name: f.min_len for f in rule_families.FAMILIES.values()}
VALIDATION_SHARE = 8  # one automaton in 8 is kept for validation
HOLD_OUT_AGREEMENT = 0.9  # automata this close to the task's rule on its strings are held out too
REFERENCE_SIZE, REFERENCE_MAX_LEN = 500, 64  # the task strings `agreement` is measured on

# The vocabulary: specials, then the characters of both families (`dfa` and `pattern` share VOCAB; a
# rule family's model has the specials and its own alphabet, `vocab`). Label tokens are not
# characters, so a DFA input's "0" is never read as a label.
SPECIALS = ("<pad>", "<bos>", ":", ";", "<0>", "<1>")
PAD, BOS, SEP, END, NO, YES = range(len(SPECIALS))
CHARS = "01abc"
VOCAB = SPECIALS + tuple(CHARS)
CHAR_ID = {c: len(SPECIALS) + i for i, c in enumerate(CHARS)}


def vocab(family: str) -> tuple[str, ...]:
    """The model's tokens for `family`: VOCAB for `dfa` and `pattern`, the specials and the family's
    alphabet for a rule family."""
    return SPECIALS + tuple(ALPHABET[family]) if family in RULE_FAMILIES else VOCAB


def char_ids(family: str) -> dict[str, int]:
    """Each input character's token id in `family`'s vocabulary."""
    return {c: i for i, c in enumerate(vocab(family)) if i >= len(SPECIALS)}


IGNORE = -100  # targets that carry no loss


@dataclass(frozen=True)
class GPTConfig:
    """A small GPT and its in-context training run on one task family. The defaults are the CPU
    bench run (2500 steps: 11–12.5 minutes on one shared core; `steps=2000` keeps it under 10);
    `steps=200` is the demo (40–45 s)."""

    family: str = "pattern"
    """task family of the training automata: 'dfa' (PARITY held out), 'pattern' (abcabb held out),
    'stack', 'reversal' or 'vending' (the task's own rule held out; `families.py`)"""
    n_layer: int = 2
    """transformer blocks"""
    n_head: int = 4
    """attention heads per block"""
    d_model: int = 64
    """width of the residual stream"""
    tie_head: bool = True
    """tie the output head to the token embedding"""
    positions: str = "rope"
    """'rope' (rotary queries and keys) or 'absolute' (learned position embeddings)"""
    max_shots: int = 20
    """most exemplars before a query (a training sequence holds max_shots + 1 pairs)"""
    max_len: int = 16
    """longest training input in characters (longer ones are redrawn)"""
    task_mix: float = 0.5
    """fraction of training inputs from the real task's generator (the rest: uniform random strings)"""
    pool_size: int = 2000
    """task strings drawn once per run for the training inputs (the task's sampler is slow)"""
    min_states: int = 2
    """fewest states of a random DFA (family 'dfa')"""
    max_states: int = 4
    """most states of a random DFA (family 'dfa')"""
    min_pattern: int = 3
    """shortest random pattern (family 'pattern')"""
    max_pattern: int = 6
    """longest random pattern (family 'pattern')"""
    steps: int = 2500
    """optimizer steps"""
    batch_size: int = 32
    """sequences per step, over all processes"""
    lr: float = 3e-3
    """peak AdamW learning rate"""
    warmup: int = 100
    """linear warm-up steps before the cosine decay"""
    weight_decay: float = 0.0
    """AdamW weight decay"""
    seed: int = 0
    """seed of the initial weights and of every training sequence"""
    device: str = "cpu"
    """torch device ('cpu' or 'cuda'; under torchrun each rank takes its local GPU)"""
    checkpoint_every: int = 200
    """steps between checkpoints (and one at the end)"""
    context: int = 2048
    """longest prompt in tokens at evaluation (beyond the training length the model extrapolates)"""

    def __post_init__(self) -> None:
        check_in("family", self.family, FAMILIES)
        check_in("positions", self.positions, POSITIONS)
        for name in (
            "n_layer",
            "n_head",
            "d_model",
            "max_len",
            "pool_size",
            "steps",
            "batch_size",
            "checkpoint_every",
        ):
            check_int(name, getattr(self, name), 1)
        if self.d_model % (2 * self.n_head):
            raise ConfigError(f"d_model={self.d_model} must be a multiple of 2 * n_head={2 * self.n_head}")
        check_int("max_shots", self.max_shots, 0)
        check_int("context", self.context, self.train_len)
        check_int("warmup", self.warmup, 0)
        check_int("seed", self.seed, 0)
        check_int("min_states", self.min_states, 1)
        check_int("max_states", self.max_states, self.min_states)
        check_int("min_pattern", self.min_pattern, 1)
        check_int("max_pattern", self.max_pattern, self.min_pattern, MIN_LEN["pattern"])
        check_interval("task_mix", self.task_mix, 0.0, 1.0)
        check_interval("lr", self.lr, 0.0, closed=(False, True))
        check_interval("weight_decay", self.weight_decay, 0.0)
        if self.max_len < MIN_LEN[self.family]:
            raise ConfigError(
                f"max_len must be >= {MIN_LEN[self.family]} for family {self.family!r}, got {self.max_len}"
            )
        if not isinstance(self.tie_head, bool):
            raise ConfigError(f"tie_head must be a bool, got {self.tie_head!r}")
        if not isinstance(self.device, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", self.device):
            raise ConfigError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {self.device!r}")

    @property
    def train_len(self) -> int:
        """Longest training sequence in tokens: <bos>, then max_shots + 1 pairs of max_len characters
        + ':', label, ';'."""
        return 1 + (self.max_shots + 1) * (self.max_len + 3)


# ---------------------------------------------------------------------------------------------
# The automata of each family


@dataclass(frozen=True)
class DFA:
    """A DFA over {0, 1} with start state 0: `delta[q][b]` is the next state on bit b."""

    delta: tuple[tuple[int, int], ...]
    accept: tuple[bool, ...]

    def __call__(self, x: str) -> int:
        q = 0
        for c in x:
            q = self.delta[q][c == "1"]
        return int(self.accept[q])


PARITY_DFA = DFA(((1, 0), (0, 1)), (True, False))  # state 0: an even count of zeros


@dataclass(frozen=True)
class Contains:
    """The labelling "the input contains `pattern`"."""

    pattern: str

    def __call__(self, x: str) -> int:
        return int(self.pattern in x)


Automaton = DFA | Contains | Rule


def _support_key(dfa: DFA) -> tuple:
    """The canonical minimal DFA of `dfa` restricted to PARITY's support (first symbol "0", length
    >= 4; everything else rejected): equal keys mean equal functions on the support."""
    # product states (phase, q): phase 0..3 = symbols read so far, 4 = four or more; DEAD = started with 1
    dead = ("dead", 0)
    states, index, trans, acc = [(0, 0)], {(0, 0): 0}, [], []
    i = 0
    while i < len(states):
        phase, q = states[i]
        row = []
        for b in (0, 1):
            if (phase, q) == dead or (phase == 0 and b == 1):
                nxt = dead
            else:
                nxt = (min(phase + 1, 4), dfa.delta[q][b])
            if nxt not in index:
                index[nxt] = len(states)
                states.append(nxt)
            row.append(index[nxt])
        trans.append(row)
        acc.append(phase == 4 and dfa.accept[q])
        i += 1
    # Moore's partition refinement
    block = [int(a) for a in acc]
    while True:
        sig = [(block[s], block[trans[s][0]], block[trans[s][1]]) for s in range(len(states))]
        names = {k: n for n, k in enumerate(dict.fromkeys(sig))}
        new = [names[k] for k in sig]
        if len(set(new)) == len(set(block)):
            break
        block = new
    # canonical numbering: breadth-first from the start block
    order, seen = [block[0]], {block[0]: 0}
    rep = {block[s]: s for s in reversed(range(len(states)))}
    k = 0
    while k < len(order):
        s = rep[order[k]]
        for b in (0, 1):
            t = block[trans[s][b]]
            if t not in seen:
                seen[t] = len(order)
                order.append(t)
        k += 1
    return tuple((seen[block[trans[rep[c]][0]]], seen[block[trans[rep[c]][1]]], acc[rep[c]]) for c in order)


def _negate(dfa: DFA) -> DFA:
    return DFA(dfa.delta, tuple(not a for a in dfa.accept))


_KEYS: dict[DFA, tuple] = {}


def _key(a: Automaton) -> tuple | str:
    """What identifies `a`'s function: its pattern, or its canonical DFA on PARITY's support."""
    if isinstance(a, Contains):
        return a.pattern
    if a not in _KEYS:
        if len(_KEYS) > 500_000:
            _KEYS.clear()
        _KEYS[a] = _support_key(a)
    return _KEYS[a]


@cache
def _reference(family: str) -> tuple[tuple[str, ...], np.ndarray]:
    """A fixed sample of the task's ID strings (δ = 0, half positive, at most REFERENCE_MAX_LEN
    characters) and the task's labels on them, the yardstick of `agreement`."""
    task = TASKS[TASK_OF_FAMILY[family]]
    rng = random.Random(derive_seed(0, "reference", family))
    xs: list[str] = []
    while len(xs) < REFERENCE_SIZE:
        x = task.sample(rng, 0.0, len(xs) % 2 == 0)
        if x is not None and len(x) <= REFERENCE_MAX_LEN:
            xs.append(x)
    return tuple(xs), np.array([task.check(x) for x in xs], dtype=bool)


@cache
def _reference_bits() -> tuple[np.ndarray, np.ndarray]:
    xs, _ = _reference("dfa")
    bits = np.zeros((len(xs), REFERENCE_MAX_LEN), dtype=np.int64)
    for i, x in enumerate(xs):
        bits[i, : len(x)] = [c == "1" for c in x]
    return bits, np.array([len(x) for x in xs])


def _labels_on_reference(a: Automaton) -> np.ndarray:
    if isinstance(a, Contains):
        return np.array([a.pattern in x for x in _reference("pattern")[0]], dtype=bool)
    bits, lengths = _reference_bits()
    delta, q = np.array(a.delta), np.zeros(len(bits), dtype=np.int64)
    for t in range(int(lengths.max())):  # run the DFA on every reference string at once
        q = np.where(t < lengths, delta[q, bits[:, t]], q)
    return np.array(a.accept)[q]


def agreement(a: Automaton) -> float:
    """The share of the task's reference strings on which `a` gives the task's label, or the
    opposite label, whichever is larger (1.0: `a` is the task's rule, or its negation, there)."""
    family = "pattern" if isinstance(a, Contains) else "dfa"
    same = float(np.mean(_labels_on_reference(a) == _reference(family)[1]))
    return max(same, 1.0 - same)


@dataclass(frozen=True)
class _Facts:
    held_out: bool
    validation: bool
    constant: bool


_FACTS: dict[tuple | str, _Facts] = {}


@cache
def _special_keys() -> tuple[frozenset, frozenset]:
    """(the support keys of PARITY and its negation, those of the two constant functions)."""
    parity = frozenset({_support_key(PARITY_DFA), _support_key(_negate(PARITY_DFA))})
    constant = frozenset({_support_key(DFA(((0, 0),), (False,))), _support_key(DFA(((0, 0),), (True,)))})
    return parity, constant


def _facts(a: Automaton) -> _Facts:
    k = _key(a)
    if k not in _FACTS:
        family = "pattern" if isinstance(a, Contains) else "dfa"
        parity, constant = _special_keys()
        exact = a.pattern == PATTERN if isinstance(a, Contains) else k in parity
        _FACTS[k] = _Facts(
            held_out=exact or agreement(a) >= HOLD_OUT_AGREEMENT,
            validation=derive_seed(0, "validation", family, str(k)) % VALIDATION_SHARE == 0,
            constant=isinstance(a, DFA) and k in constant,
        )
    return _FACTS[k]


def is_held_out(a: Automaton) -> bool:
    """Whether `a` is held out as the real task's rule: "contains abcabb", a DFA that computes PARITY
    or its negation on PARITY's support (exactly, by minimisation), or any automaton whose
    `agreement` with the task's labels is at least HOLD_OUT_AGREEMENT (a rule family's: its task's
    rule, or one that close to it; `families.is_held_out`)."""
    if isinstance(a, Rule):
        return rule_families.is_held_out(a)
    return _facts(a).held_out


def is_validation(a: Automaton) -> bool:
    """Whether `a` is a validation automaton (one in VALIDATION_SHARE, by a stable hash of its
    function on the support), never trained on either."""
    if isinstance(a, Rule):
        return rule_families.is_validation(a)
    return _facts(a).validation


def _sample_raw(cfg: GPTConfig, rng: random.Random) -> Automaton:
    if cfg.family == "pattern":
        n = rng.randint(cfg.min_pattern, cfg.max_pattern)
        return Contains("".join(rng.choice("abc") for _ in range(n)))
    n = rng.randint(cfg.min_states, cfg.max_states)
    delta = tuple((rng.randrange(n), rng.randrange(n)) for _ in range(n))
    return DFA(delta, tuple(rng.random() < 0.5 for _ in range(n)))


def sample_automaton(cfg: GPTConfig, rng: random.Random, split: str = "train") -> Automaton:
    """A random automaton of `cfg.family`, never a held-out one nor a DFA constant on the support: a
    training one (not validation), or with `split="validation"` a validation one."""
    check_in("split", split, ("train", "validation"))
    if cfg.family in RULE_FAMILIES:
        return rule_families.sample_rule(cfg.family, rng, split)
    for _ in range(100_000):
        facts = _facts(a := _sample_raw(cfg, rng))
        if not (facts.held_out or facts.constant or facts.validation != (split == "validation")):
            return a
    raise RuntimeError(f"no {split} automaton of family {cfg.family!r} found in 100000 draws")


@cache
def _task_pool(family: str, seed: int, max_len: int, size: int) -> tuple[str, ...]:
    """`size` strings from the task's own generator at δ = 0 (half positive) of at most `max_len`
    characters, drawn once per run: the task's sampler is slow (a pattern string takes ~1 ms)."""
    task = TASKS[TASK_OF_FAMILY[family]]
    rng = random.Random(derive_seed(seed, "task pool", family))
    out: list[str] = []
    while len(out) < size:
        x = task.sample(rng, 0.0, len(out) % 2 == 0)
        if x is not None and len(x) <= max_len:
            out.append(x)
    return tuple(out)


def sample_input(cfg: GPTConfig, rng: random.Random) -> str:
    """One input of the family's task: with probability `task_mix` a string of the task's own
    generator (from the run's pool of `pool_size`), else a uniform random string of the task's shape
    (PARITY's start with "0"), of MIN_LEN to `max_len` characters. Families `dfa` and `pattern` only
    (a rule family's inputs are its own generator's, `families.sample_pair`)."""
    if cfg.family in RULE_FAMILIES:
        raise ConfigError(f"sample_input: family {cfg.family!r} draws its inputs with its rules")
    if rng.random() < cfg.task_mix:
        return rng.choice(_task_pool(cfg.family, cfg.seed, cfg.max_len, cfg.pool_size))
    n = rng.randint(MIN_LEN[cfg.family], cfg.max_len)
    x = "".join(rng.choice(ALPHABET[cfg.family]) for _ in range(n))
    return "0" + x[1:] if cfg.family == "dfa" else x


def _pattern_input(cfg: GPTConfig, rng: random.Random, p: str) -> str:
    """An input for "contains p", positive or negative with probability 1/2, of the length
    `sample_input` drew. Both have a random place overwritten, with p (positive) or with a random
    string of its length (negative), whose occurrences of p then lose one symbol each until none is
    left. (Redrawing negatives would make them shorter, and overwriting only positives would leave
    the task's strings intact only in negatives: label cues that need no exemplars.)"""
    x = list(sample_input(cfg, rng))
    positive = rng.random() < 0.5
    i = rng.randrange(len(x) - len(p) + 1)
    x[i : i + len(p)] = p if positive else [rng.choice(ALPHABET["pattern"]) for _ in p]
    while not positive and (i := "".join(x).find(p)) >= 0:
        j = i + rng.randrange(len(p))
        x[j] = rng.choice([c for c in ALPHABET["pattern"] if c != x[j]])
    return "".join(x)


def sample_pairs(
    cfg: GPTConfig, rng: random.Random, automaton: Automaton | None = None
) -> list[tuple[str, int]]:
    """`max_shots + 1` (input, label) pairs of one automaton (a fresh training one when None). A DFA
    whose labels are nearly constant on the drawn inputs (under 20% of either label) is redrawn."""
    n = cfg.max_shots + 1
    if cfg.family in RULE_FAMILIES:
        rule = automaton if automaton is not None else sample_automaton(cfg, rng)
        if not isinstance(rule, Rule) or rule.family != cfg.family:
            raise ConfigError(f"automaton: {rule!r} is not a rule of family {cfg.family!r}")
        return [rule_families.sample_pair(rule, rng, cfg.max_len) for _ in range(n)]
    for _ in range(1000):
        a = automaton if automaton is not None else sample_automaton(cfg, rng)
        if isinstance(a, Contains):
            xs = [_pattern_input(cfg, rng, a.pattern) for _ in range(n)]
        else:
            xs = [sample_input(cfg, rng) for _ in range(n)]
        ys = [a(x) for x in xs]
        if isinstance(a, Contains) or automaton is not None or n < 5 or 0.2 <= sum(ys) / n <= 0.8:
            return list(zip(xs, ys, strict=True))
    raise RuntimeError("no DFA with balanced labels found in 1000 draws")


# ---------------------------------------------------------------------------------------------
# Sequences


def encode_pairs(pairs: Sequence[tuple[str, int]], family: str = "dfa") -> tuple[list[int], list[int]]:
    """Tokens `<bos> x_1 : y_1 ; ... x_q : y_q` (in `family`'s vocabulary) and next-token targets,
    IGNORE everywhere but at the ':' before each label, where the target is that label's token
    (Garg et al.: loss on every label)."""
    ids = char_ids(family)
    tokens, targets = [BOS], [IGNORE]
    for i, (x, y) in enumerate(pairs):
        if i:
            tokens.append(END)
            targets.append(IGNORE)
        tokens += [ids[c] for c in x]
        targets += [IGNORE] * len(x)
        tokens += [SEP, YES if y else NO]
        targets += [YES if y else NO, IGNORE]
    return tokens, targets


def _pad(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], dtype=torch.long)


def make_batch(cfg: GPTConfig, step: int, rows: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The training batch's `rows` at `step` as (tokens, targets), each (len(rows), T), right-padded
    (harmless under causal attention). Row r of step s is drawn from its own seed stream, so a
    batch does not depend on how the rows are split over processes."""
    encoded = [
        encode_pairs(sample_pairs(cfg, random.Random(derive_seed(cfg.seed, "batch", step, r))), cfg.family)
        for r in rows
    ]
    return _pad([t for t, _ in encoded], PAD), _pad([y for _, y in encoded], IGNORE)


# ---------------------------------------------------------------------------------------------
# The model


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (RoFormer, Su et al. 2021) of x (B, heads, T, d_head): each pair of
    channels (i, i + d_head/2) turned by the angle position * 10000^(-2i/d_head)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Block(nn.Module):
    """A pre-LN transformer block: x + attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d_model: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        b, t, d = x.shape
        # (b, t, 3d) -> 3 x (b, heads, t, d / heads)
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.n_head, d // self.n_head).permute(2, 0, 3, 1, 4)
        if rope is not None:
            q, k = rotate(q, *rope), rotate(k, *rope)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Decoder-only transformer: token embeddings, positions, pre-LN blocks, final LN, head.

    Positions (`GPTConfig.positions`): rotary queries and keys ('rope', the default) or learned
    absolute position embeddings ('absolute'). Measured on family 'pattern' (3 layers, d_model 64,
    batch 32, 16 shots, max_len 20): with rope the loss leaves chance after ~1000 steps; with learned
    embeddings (absolute, or of the pair's index and the offset in the pair) it stayed at ln 2 for
    all 2000 steps, and so did rope with the pair embeddings added in one of two runs.
    """

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.context, self.d_head = cfg.context, cfg.d_model // cfg.n_head
        n_vocab = len(vocab(cfg.family))
        self.tok = nn.Embedding(n_vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.context, cfg.d_model) if cfg.positions == "absolute" else None
        self.blocks = nn.ModuleList(Block(cfg.d_model, cfg.n_head) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, n_vocab, bias=False)
        self.apply(self._init)
        if cfg.tie_head:
            self.head.weight = self.tok.weight

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, vocab) for tokens (B, T), T <= context."""
        t = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok(tokens)
        rope = None
        if self.pos is not None:
            x = x + self.pos(t)
        else:
            half = self.d_head // 2
            angle = t[:, None].float() * 10000.0 ** (-torch.arange(half, device=t.device).float() / half)
            rope = (angle.cos(), angle.sin())
        for block in self.blocks:
            x = block(x, rope)
        return self.head(self.ln_f(x))


def _item_chars(family: str, item: Item, what: str) -> list[int]:
    """The item's token ids: its characters, or (a rule family) its task string rendered one
    character per task symbol (text already in the family's alphabet is taken as rendered: no task
    string is, each has a separator outside it, e.g. the vending machine's ',')."""
    text = item.shown
    if family in RULE_FAMILIES and set(text) - set(ALPHABET[family]):
        rendered = rule_families.FAMILIES[family].render(text)
        if rendered is None:
            raise ConfigError(f"{what}: {text[:30]!r} is not a {TASK_OF_FAMILY[family]} string")
        text = rendered
    bad = sorted(set(text) - set(ALPHABET[family]))
    if bad:
        raise ConfigError(f"{what}: {text[:30]!r} has characters {bad} outside family {family!r}'s alphabet")
    ids = char_ids(family)
    return [ids[c] for c in text]


@dataclass
class ICLGPT:
    """A trained GPT with its config and per-step training loss."""

    cfg: GPTConfig
    net: GPT
    losses: list[float] = field(default_factory=list)

    @torch.inference_mode()
    def label_logits(
        self, shots: Sequence[Item], queries: Sequence[Item], batch_size: int = 64
    ) -> list[float | None]:
        """logit(<1>) - logit(<0>) after each query's ':' given the exemplars; None when the prompt is
        longer than the context."""
        if len(shots) > self.cfg.max_shots:
            raise ConfigError(
                f"shots: {len(shots)} exemplars, but the model was trained with "
                f"max_shots={self.cfg.max_shots}"
            )
        check_int("batch_size", batch_size, 1)
        prefix = [BOS]
        for i, it in enumerate(shots):
            if it.label not in (0, 1):
                raise ConfigError(f"shots[{i}]: label must be 0 or 1, got {it.label!r}")
            prefix += [*_item_chars(self.cfg.family, it, f"shots[{i}]"), SEP, YES if it.label else NO, END]
        prompts = [
            prefix + _item_chars(self.cfg.family, q, f"queries[{i}]") + [SEP] for i, q in enumerate(queries)
        ]
        out: list[float | None] = [None] * len(prompts)
        fits = [i for i, p in enumerate(prompts) if len(p) <= self.net.context]
        self.net.eval()
        device = next(self.net.parameters()).device
        for start in range(0, len(fits), batch_size):
            chunk = fits[start : start + batch_size]
            logits = self.net(_pad([prompts[i] for i in chunk], PAD).to(device))
            last = torch.tensor([len(prompts[i]) - 1 for i in chunk], device=device)
            at = logits[torch.arange(len(chunk), device=device), last]
            for i, v in zip(chunk, (at[:, YES] - at[:, NO]).tolist(), strict=True):
                out[i] = v
        return out

    def predict(self, shots: Sequence[Item], queries: Sequence[Item]) -> list[int | None]:
        """The greedy label (the likelier of the two label tokens) of each query given the exemplars
        `shots`; None when the query's prompt does not fit the context."""
        return [None if v is None else int(v > 0) for v in self.label_logits(shots, queries)]


# ---------------------------------------------------------------------------------------------
# Training

_RESUME_IGNORES = ("device", "checkpoint_every", "steps")  # fields a resumed run may change


def _checkpoints(checkpoint_dir: Path) -> list[Path]:
    found = [
        (int(m.group(1)), p)
        for p in checkpoint_dir.glob("step_*.pt")
        if (m := re.fullmatch(r"step_(\d+)\.pt", p.name))
    ]
    return [p for _, p in sorted(found)]


def latest_checkpoint(checkpoint_dir: Path | str) -> Path | None:
    """The checkpoint with the highest step in `checkpoint_dir`, or None."""
    found = _checkpoints(Path(checkpoint_dir)) if Path(checkpoint_dir).is_dir() else []
    return found[-1] if found else None


def train_icl_gpt(
    cfg: GPTConfig,
    checkpoint_dir: Path | None = None,
    on_progress: Callable[[int, float], None] | None = None,
) -> ICLGPT:
    """Train a GPT on in-context sequences of `cfg.family` (resuming from the latest checkpoint in
    `checkpoint_dir`, which keeps the newest one); `on_progress(step, loss)` after every step.

    A resumed run may change `steps` (not below the checkpoint's step): training then goes on, or
    stops, at the new count, and the learning rate follows the new count's schedule from the step
    reached (`steps` equal to the checkpoint's step: the checkpoint's model, no further step)."""
    if not isinstance(cfg, GPTConfig):
        raise ConfigError(f"cfg must be a GPTConfig, got {type(cfg).__name__}")
    info = init_distributed(cfg.device)
    if cfg.batch_size % info.world_size:
        raise ConfigError(
            f"batch_size={cfg.batch_size} must be a multiple of the {info.world_size} processes"
        )
    torch.manual_seed(derive_seed(cfg.seed, "init"))
    net = GPT(cfg).to(info.device)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, cfg.warmup, cfg.steps, 0.1))
    losses: list[float] = []
    start = 0
    ckpt = latest_checkpoint(checkpoint_dir) if checkpoint_dir is not None else None
    if ckpt is not None:
        state = load_checkpoint(ckpt, info.device)
        saved, now = state["config"], asdict(cfg)
        differ = [k for k in now if k not in _RESUME_IGNORES and saved.get(k) != now[k]]
        if differ:
            raise ConfigError(
                f"checkpoint_dir {checkpoint_dir} holds a run with other {', '.join(differ)}; "
                "use a new folder"
            )
        if int(state["step"]) > cfg.steps:
            raise ConfigError(
                f"checkpoint_dir {checkpoint_dir} holds a run at step {state['step']}, "
                f"beyond steps={cfg.steps}"
            )
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        losses, start = list(state["losses"]), int(state["step"])
    model: nn.Module = net
    if info.world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(net)
    rows = range(info.rank, cfg.batch_size, info.world_size)
    net.train()
    for step in range(start, cfg.steps):
        tokens, targets = make_batch(cfg, step, rows)
        logits = model(tokens.to(info.device))
        loss = F.cross_entropy(logits.flatten(0, 1), targets.to(info.device).flatten(), ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        value = float(all_reduce_mean(loss.detach().clone(), info))
        if not math.isfinite(value):
            raise FloatingPointError(f"training loss is {value} at step {step + 1}; lower lr")
        losses.append(value)
        done = step + 1
        if (
            checkpoint_dir is not None
            and info.is_main
            and (done % cfg.checkpoint_every == 0 or done == cfg.steps)
        ):
            old = _checkpoints(Path(checkpoint_dir))
            payload = {
                "config": asdict(cfg),
                "model": net.state_dict(),
                "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(),
                "losses": losses,
                "step": done,
            }
            save_checkpoint(Path(checkpoint_dir) / f"step_{done:07d}.pt", payload)
            for p in old:
                p.unlink(missing_ok=True)
        if on_progress is not None and info.is_main:
            on_progress(done, value)
    net.eval()
    return ICLGPT(cfg, net, losses)


# ---------------------------------------------------------------------------------------------
# Evaluation on the real tasks


def evaluate_gpt(
    model: ICLGPT, task_name: str, splits: Splits, shots: int, delta: float, n_items: int
) -> Score:
    """Score `model` on the first `n_items` test items at shift `delta` (0: the ID test split), with
    the first `shots` training items as exemplars; a query that does not fit counts as unparsed."""
    if not isinstance(model, ICLGPT):
        raise ConfigError(f"model must be an ICLGPT, got {type(model).__name__}")
    check_in("task_name", task_name, FAMILY_OF_TASK)
    if FAMILY_OF_TASK[task_name] != model.cfg.family:
        raise ConfigError(
            f"task_name={task_name!r} needs a model of family {FAMILY_OF_TASK[task_name]!r}, "
            f"got {model.cfg.family!r}"
        )
    if splits.task != task_name:
        raise ConfigError(f"splits are for task {splits.task!r}, not task_name={task_name!r}")
    check_int("shots", shots, 0, model.cfg.max_shots)
    check_int("n_items", n_items, 1)
    check_interval("delta", delta, 0.0, 1.0, closed=(True, False))
    if delta and delta not in splits.ood:
        raise ConfigError(
            f"delta must be 0 or one of the splits' OOD shifts {sorted(splits.ood)}, got {delta!r}"
        )
    try:
        shown = exemplars(splits.train, shots)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    items = splits.split(delta)[:n_items]
    return score(model.predict(shown, items), [it.label for it in items])


def _validation_sets(
    cfg: GPTConfig, shots: int, n_automata: int, queries: int, seed: int
) -> Iterator[list[Item]]:
    """The labelled items of `n_automata` random validation automata of `cfg.family` (never trained
    on), `shots` exemplars then `queries` queries each, from the training input distribution."""
    check_int("shots", shots, 0, cfg.max_shots)
    check_int("n_automata", n_automata, 1)
    check_int("queries", queries, 1)
    rng = random.Random(derive_seed(seed, "validation accuracy"))
    n = shots + queries - 1
    cfg = replace(cfg, max_shots=n, context=max(cfg.context, 1 + (n + 1) * (cfg.max_len + 3)))
    for _ in range(n_automata):
        a = sample_automaton(cfg, rng, "validation")
        yield [Item(x, y) for x, y in sample_pairs(cfg, rng, a)]


def validation_accuracy(
    model: ICLGPT, shots: int, n_automata: int = 100, queries: int = 10, seed: int = 0
) -> float:
    """Accuracy (%) on `n_automata` random validation automata of the model's family (never trained
    on), each with `shots` exemplars and `queries` queries of the training input distribution."""
    if not isinstance(model, ICLGPT):
        raise ConfigError(f"model must be an ICLGPT, got {type(model).__name__}")
    right = total = 0
    for items in _validation_sets(model.cfg, shots, n_automata, queries, seed):
        predictions = model.predict(items[:shots], items[shots:])
        right += sum(p == it.label for p, it in zip(predictions, items[shots:], strict=True))
        total += len(predictions)
    return 100.0 * right / total


def validation_floors(
    cfg: GPTConfig, shots: int, n_automata: int = 100, queries: int = 10, seed: int = 0
) -> dict[str, float | None]:
    """The trivial floors on the items `validation_accuracy` scores (same seed, same automata):
    `majority_label`, the better constant label over all queries (chosen knowing their label
    share), and `shot_majority`, each automaton's exemplars' majority label (a tie: 0; None at 0
    shots), in %."""
    if not isinstance(cfg, GPTConfig):
        raise ConfigError(f"cfg must be a GPTConfig, got {type(cfg).__name__}")
    ones = total = right = 0
    for items in _validation_sets(cfg, shots, n_automata, queries, seed):
        guess = int(2 * sum(it.label for it in items[:shots]) > shots)
        ones += sum(it.label for it in items[shots:])
        right += sum(it.label == guess for it in items[shots:])
        total += len(items) - shots
    return {
        "majority_label": 100.0 * max(ones, total - ones) / total,
        "shot_majority": 100.0 * right / total if shots else None,
    }


__all__ = [
    "DFA",
    "FAMILIES",
    "FAMILY_OF_TASK",
    "GPT",
    "HOLD_OUT_AGREEMENT",
    "ICLGPT",
    "RULE_FAMILIES",
    "Contains",
    "GPTConfig",
    "Rule",
    "agreement",
    "char_ids",
    "encode_pairs",
    "evaluate_gpt",
    "is_held_out",
    "is_validation",
    "latest_checkpoint",
    "make_batch",
    "sample_automaton",
    "sample_pairs",
    "train_icl_gpt",
    "validation_accuracy",
    "validation_floors",
    "vocab",
]
