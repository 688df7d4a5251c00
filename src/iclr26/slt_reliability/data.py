"""A synthetic signing corpus with known semantics, in place of PHOENIX-2014T and CSL-Daily (the
corpora of arXiv 2510.18439, which cannot be downloaded here).

Each gloss has a motion prototype: smooth 2D trajectories of 50 keypoints (8 body points, then 21
per hand) driven by a few sinusoids and a straight path of each wrist, a hand-shape blend (finger
curls, spread) and a hand orientation; elbows follow by two-link inverse kinematics and the body
moves little. A signer changes the size (scale), the signing space (gain of the motion about the
rest pose), the speed (time stretch), the handedness (a mirror image with left and right swapped),
the position and the keypoint noise. Neighbouring signs are co-articulated: the last frames of one
sign are crossfaded into the first frames of the next, so a video has no jumps at sign boundaries.

A small grammar per dataset generates gloss sequences and their translations, with a different word
order and added function words (`TOMORROW NORTH RAIN` -> "tomorrow there will be rain in the
north"); entity words (people, places, objects, numbers) are marked, for CHAIR. Two datasets:
`phoenix_like` (weather forecasts, time-place-weather order) and `csl_like` (daily life,
time-subject-object-verb order with the time moved to the end of the translation). Test signers
are held out. Everything is deterministic from `seed` (NumPy generators seeded from the seed, the
dataset's CRC-32 and a stream number; no Python `hash`).
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from iclr26.core.errors import UserError
from iclr26.core.validation import check_in, check_int

__all__ = [
    "BODY_KEYPOINTS",
    "DATASETS",
    "ENTITY_PRIORS",
    "FPS",
    "LEFT_HAND",
    "N_KEYPOINTS",
    "RIGHT_HAND",
    "Corpus",
    "CorpusConfig",
    "EntityPrior",
    "GlossPrototype",
    "Sample",
    "Signer",
    "build_corpus",
    "check_sample",
    "check_samples",
    "check_vocabulary",
    "coarticulate",
    "make_corpus",
    "make_signers",
    "render_glosses",
]

FPS = 25
"""frames per second of every video"""
BODY_KEYPOINTS = (
    "nose",
    "neck",
    "right_shoulder",
    "left_shoulder",
    "right_elbow",
    "left_elbow",
    "right_wrist",
    "left_wrist",
)
N_HAND = 21  # wrist, then root, two joints and tip of thumb, index, middle, ring, pinky
RIGHT_HAND = slice(8, 8 + N_HAND)
LEFT_HAND = slice(8 + N_HAND, 8 + 2 * N_HAND)
N_KEYPOINTS = 8 + 2 * N_HAND  # 50
DATASETS = ("phoenix_like", "csl_like")
ENTITY_PRIORS = ("none", "uniform", "skewed")

# The mirror image swaps left and right: keypoint i of the mirrored signer is keypoint MIRROR[i].
MIRROR = np.array([0, 1, 3, 2, 5, 4, 7, 6, *range(LEFT_HAND.start, LEFT_HAND.stop), *range(8, 8 + N_HAND)])


# --------------------------------------------------------------------------------------------
# The containers (the contract shared with models.py and reliability.py)


@dataclass(frozen=True)
class Sample:
    """One signed sentence: a keypoint video, its glosses and its translation."""

    id: str
    """e.g. "phoenix_like/test/00012" """
    keypoints: np.ndarray
    """(T, K, 2) float32, K = N_KEYPOINTS = 50 (body then hands), frames at 25 fps"""
    glosses: tuple[str, ...]
    """the gloss sequence, upper case"""
    text: tuple[str, ...]
    """the spoken-language translation as lower-case words (no punctuation)"""
    entities: frozenset[str]
    """the entity words of `text` (people, places, objects, numbers)"""
    signer: int
    dataset: str
    """"phoenix_like" or "csl_like" (or the name given to the real-data loader)"""
    counter_prior: bool = False
    """drawn against the entity prior (`CorpusConfig.entity_prior`): every place's weather and number
    are ones the prior makes rare (only in the test split of a corpus with a prior)"""


@dataclass
class Corpus:
    """Three splits and their vocabularies."""

    name: str
    train: list[Sample]
    dev: list[Sample]
    test: list[Sample]
    glosses: tuple[str, ...]
    """gloss vocabulary (sorted)"""
    words: tuple[str, ...]
    """text vocabulary (sorted)"""
    entity_words: frozenset[str]
    """every word that is an entity (for CHAIR)"""
    prior: EntityPrior | None = None
    """the entity prior the sentences were drawn from (`CorpusConfig.entity_prior`); None: none"""


@dataclass(frozen=True)
class CorpusConfig:
    """How videos are rendered; the defaults give about 110 frames (4.4 s) a sentence, like PHOENIX-2014T."""

    n_signers: int = 9
    """signers in all (PHOENIX-2014T has 9)"""
    n_test_signers: int = 2
    """the last signers, seen only in test"""
    coarticulation: int = 5
    """frames over which one sign is crossfaded into the next (0: plain concatenation)"""
    max_step: float | None = 0.08
    """longest keypoint move per frame in a crossfade (before the signer's scale and gain); farther poses
    get extra transition frames. None: always `coarticulation` frames"""
    gloss_frames: tuple[int, int] = (12, 20)
    """range of a gloss's prototype duration in frames, before the signer's speed"""
    rest_frames: tuple[int, int] = (6, 9)
    """range of the rest-pose hold before and after the sentence (frames, before crossfading)"""
    signer_noise: tuple[float, float] = (0.002, 0.005)
    """range of a signer's keypoint jitter (standard deviation, before the signer's scale); larger: harder
    signers"""
    entity_prior: str = "none"
    """phoenix_like only. none: the grammar as it is (every entity uniform and independent). uniform or
    skewed: place-first translations ("in the north there will be rain"), so the decoder has written the
    place before it writes the place's weather or temperature; under skewed each place has a dominant
    weather and a set of usual numbers (drawn with probability `dominance`), under uniform neither"""
    dominance: float = 0.8
    """under entity_prior=skewed: P(the place's dominant weather | place) and P(one of the place's usual
    numbers | place)"""
    counter_prior: float = 0.3
    """under entity_prior=uniform or skewed: the share of test sentences drawn against the prior (every
    weather and number of the sentence not its place's dominant or usual one)"""

    def __post_init__(self) -> None:
        check_int("n_signers", self.n_signers, 2)
        check_int("n_test_signers", self.n_test_signers, 1, self.n_signers - 1)
        check_int("coarticulation", self.coarticulation, 0, 8)
        lo, hi = self.gloss_frames
        if not 2 * self.coarticulation + 1 <= lo <= hi:
            raise UserError(
                f"gloss_frames={self.gloss_frames} must be a (low, high) range with low >= 2 * coarticulation"
                f" + 1 = {2 * self.coarticulation + 1}; raise gloss_frames or lower coarticulation"
            )
        lo, hi = self.rest_frames
        if not self.coarticulation + 1 <= lo <= hi:
            raise UserError(
                f"rest_frames={self.rest_frames} must be a (low, high) range with low >= coarticulation + 1"
                f" = {self.coarticulation + 1}"
            )
        lo, hi = self.signer_noise
        if not 0 <= lo <= hi:
            raise UserError(f"signer_noise={self.signer_noise} must be a (low, high) range, 0 <= low <= high")
        check_in("entity_prior", self.entity_prior, ENTITY_PRIORS)
        if not 0 < self.dominance < 1:
            raise UserError(f"dominance must be in (0, 1), got {self.dominance}")
        if not 0 <= self.counter_prior <= 1:
            raise UserError(f"counter_prior must be in [0, 1], got {self.counter_prior}")


# --------------------------------------------------------------------------------------------
# Kinematics: rest pose, hands, arms


def _rng(seed: int, *key: str | int) -> np.random.Generator:
    """A generator for one stream: the seed plus CRC-32s of the string parts (stable across runs)."""
    parts = [int(seed)] + [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in key]
    return np.random.default_rng(parts)


_SHOULDER = np.array([[-0.2, -0.02], [0.2, -0.02]])  # right, left (the signer's right is at x < 0)
_NOSE = np.array([0.0, 0.18])
_REST_WRIST = np.array([[-0.17, -0.5], [0.17, -0.5]])
_UPPER_ARM = 0.3
_HAND_SIZE = 0.11
_ROOT_ANGLE = np.array([-1.1, -0.35, 0.0, 0.35, 0.7])
_ROOT_RADIUS = np.array([0.25, 0.45, 0.48, 0.46, 0.42])
_SEGMENT = np.array(
    [[0.2, 0.16, 0.13], [0.22, 0.15, 0.12], [0.25, 0.16, 0.13], [0.23, 0.15, 0.12], [0.18, 0.12, 0.1]]
)
_CURL_SIGN = np.array([1.0, 0.5, 0.2, -0.5, -1.0])


def _hand(curl: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Hand-local keypoints of a right hand pointing up: curl (n, 5) in [0, 1], spread (n,) -> (n, 21, 2)."""
    n = len(curl)
    alpha = _ROOT_ANGLE * (0.7 + 0.6 * spread[:, None])  # (n, 5)
    root = _ROOT_RADIUS * np.stack([np.sin(alpha), np.cos(alpha)], -1).transpose(2, 0, 1)  # (2, n, 5)
    j = np.arange(1, 4)
    theta = alpha[..., None] + _CURL_SIGN[:, None] * 0.5 * curl[..., None] * j  # (n, 5, 3)
    length = _SEGMENT * (1 - 0.55 * curl[..., None] * j / 3)  # (n, 5, 3)
    seg = length * np.stack([np.sin(theta), np.cos(theta)])  # (2, n, 5, 3)
    finger = root[..., None] + np.concatenate(
        [np.zeros((2, n, 5, 1)), np.cumsum(seg, -1)], -1
    )  # (2, n, 5, 4)
    pts = np.concatenate([np.zeros((2, n, 1)), finger.reshape(2, n, 20)], -1)  # (2, n, 21)
    return pts.transpose(1, 2, 0)


def _place_hand(local: np.ndarray, wrist: np.ndarray, angle: np.ndarray, mirror: bool) -> np.ndarray:
    """Rotate hand-local points (n, 21, 2) by angle (n,), mirror for a left hand, move to wrist (n, 2)."""
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    x, y = local[..., 0], local[..., 1]
    px, py = c * x - s * y, s * x + c * y
    if mirror:
        px = -px
    return wrist[:, None, :] + _HAND_SIZE * np.stack([px, py], -1)


def _elbow(shoulder: np.ndarray, wrist: np.ndarray, side: float) -> np.ndarray:
    """The elbow (n, 2) of an arm from shoulder (2,) to wrist (n, 2): one upper-arm length from the
    shoulder, between hanging down-outward (side -1 for the right arm, +1 for the left) and pointing at
    the wrist. Smooth in the wrist everywhere it can reach (the only singular point is above the head)."""
    down_out = np.array([0.3 * side, -1.0]) / np.hypot(0.3, 1.0)
    v = wrist - shoulder + 0.6 * down_out
    return shoulder + _UPPER_ARM * v / np.linalg.norm(v, axis=-1, keepdims=True)


def _skeleton(
    wrist: np.ndarray,
    curl: np.ndarray,
    spread: np.ndarray,
    angle: np.ndarray,
    nose: np.ndarray,
    sway: np.ndarray,
) -> np.ndarray:
    """All 50 keypoints (n, 50, 2) from wrists (n, 2, 2), curls (n, 2, 5), spreads (n, 2), hand angles
    (n, 2), nose (n, 2) and a shoulder sway (n, 2); hand index 0 is the right hand."""
    n = len(wrist)
    out = np.empty((n, N_KEYPOINTS, 2))
    out[:, 0] = nose
    out[:, 1] = sway * 0.5
    for h, side in ((0, -1.0), (1, 1.0)):
        shoulder = _SHOULDER[h] + sway
        out[:, 2 + h] = shoulder
        out[:, 4 + h] = _elbow(shoulder, wrist[:, h], side)
        out[:, 6 + h] = wrist[:, h]
        hand = _place_hand(_hand(curl[:, h], spread[:, h]), wrist[:, h], angle[:, h], mirror=h == 1)
        out[:, RIGHT_HAND if h == 0 else LEFT_HAND] = hand
    return out


_REST_CURL, _REST_SPREAD, _REST_ANGLE = 0.3, 0.3, np.pi - 0.25


@lru_cache(maxsize=1)
def _rest_pose() -> np.ndarray:
    """The rest pose (50, 2): hands hanging, fingers relaxed; symmetric under MIRROR."""
    pose = _skeleton(
        _REST_WRIST[None],
        np.full((1, 2, 5), _REST_CURL),
        np.full((1, 2), _REST_SPREAD),
        np.full((1, 2), _REST_ANGLE),
        _NOSE[None],
        np.zeros((1, 2)),
    )[0]
    return pose


def _smoothstep(u: np.ndarray) -> np.ndarray:
    return u * u * (3 - 2 * u)


# --------------------------------------------------------------------------------------------
# Gloss prototypes and signers


@dataclass(frozen=True)
class GlossPrototype:
    """The motion of one gloss for a right-handed signer of scale 1, as functions of normalized
    time u in [0, 1]: each wrist = base + (u - 1/2) path + Σ_j a_j sin(2π f_j u + φ_j)."""

    gloss: str
    frames: int
    """duration in frames at speed 1"""
    base: np.ndarray  # (2, 2) wrist centres, right then left
    path: np.ndarray  # (2, 2) straight movement of each wrist over the sign
    amp: np.ndarray  # (2, J, 2) sinusoid amplitudes per hand, component, coordinate
    freq: np.ndarray  # (2, J, 2) cycles per sign
    phase: np.ndarray  # (2, J, 2)
    curl: np.ndarray  # (2, 2, 5) finger curls at the start and end, per hand
    spread: np.ndarray  # (2, 2) finger spread at the start and end, per hand
    angle: np.ndarray  # (2, 3) hand angle: offset, amplitude, cycles per sign
    head: np.ndarray  # (2, 2) nod (y) and shake (x) amplitude; cycles of each in (2,)
    head_freq: np.ndarray

    @classmethod
    def sample(cls, gloss: str, rng: np.random.Generator, frames: tuple[int, int]) -> GlossPrototype:
        """A random prototype: one-handed (60 %), two-handed symmetric (20 %) or with a static base hand."""
        J = 3
        kind = rng.choice(3, p=[0.6, 0.2, 0.2])
        base = np.empty((2, 2))
        base[0] = rng.uniform([-0.3, -0.35], [0.05, 0.2])
        path = np.zeros((2, 2))
        path[0] = rng.normal(0, 0.1, 2)
        amp = np.zeros((2, J, 2))
        amp[0] = rng.uniform(0.0, 0.06, (J, 2)) / np.arange(1, J + 1)[:, None]
        freq = np.zeros((2, J, 2))
        freq[0] = rng.choice([0.5, 1.0, 1.5], (J, 2))
        phase = np.zeros((2, J, 2))
        phase[0] = rng.uniform(0, 2 * np.pi, (J, 2))
        curl = np.empty((2, 2, 5))
        curl[0] = rng.uniform(0, 1, (2, 5))
        spread = np.empty((2, 2))
        spread[0] = rng.uniform(0, 1, 2)
        angle = np.empty((2, 3))
        angle[0] = [rng.uniform(-1.2, 1.2), rng.uniform(0, 0.5), rng.choice([0.5, 1.0])]
        if kind == 1:  # symmetric: the left hand mirrors the right
            base[1], path[1] = base[0] * [-1, 1], path[0] * [-1, 1]
            amp[1], freq[1], phase[1] = amp[0], freq[0], phase[0] + [[np.pi, 0.0]]
            curl[1], spread[1], angle[1] = curl[0], spread[0], angle[0]
        else:  # at rest (0) or a static base hand in front of the body (2)
            base[1] = _REST_WRIST[1] if kind == 0 else rng.uniform([-0.05, -0.3], [0.2, 0.0])
            amp[1, 0] = rng.uniform(0, 0.01, 2)
            freq[1, 0], phase[1, 0] = 0.5, rng.uniform(0, 2 * np.pi, 2)
            curl[1] = _REST_CURL if kind == 0 else rng.uniform(0, 1, 5)
            spread[1] = _REST_SPREAD if kind == 0 else rng.uniform(0, 1)
            angle[1] = [_REST_ANGLE if kind == 0 else rng.uniform(-0.5, 1.5), 0.0, 0.5]
        head = rng.uniform(0, 0.015, 2) * (rng.random(2) < 0.3)
        return cls(
            gloss=gloss,
            frames=int(rng.integers(frames[0], frames[1] + 1)),
            base=base,
            path=path,
            amp=amp,
            freq=freq,
            phase=phase,
            curl=curl,
            spread=spread,
            angle=angle,
            head=head,
            head_freq=rng.choice([1.0, 1.5, 2.0], 2),
        )

    def render(self, n: int) -> np.ndarray:
        """The sign over n frames, (n, 50, 2) float64, for a right-handed signer of scale 1."""
        u = np.linspace(0.0, 1.0, n)
        wave = (self.amp * np.sin(2 * np.pi * self.freq * u[:, None, None, None] + self.phase)).sum(2)
        wrist = self.base + (u[:, None, None] - 0.5) * self.path + wave  # (n, 2, 2)
        s = _smoothstep(u)[:, None]
        curl = self.curl[:, 0] * (1 - s[..., None]) + self.curl[:, 1] * s[..., None]  # (n, 2, 5)
        spread = self.spread[:, 0] * (1 - s) + self.spread[:, 1] * s  # (n, 2)
        angle = self.angle[:, 0] + self.angle[:, 1] * np.sin(2 * np.pi * self.angle[:, 2] * u[:, None])
        head = self.head * np.sin(2 * np.pi * self.head_freq * u[:, None])  # (n, 2): shake x, nod y
        sway = 0.05 * (wrist[:, 0] - self.base[0])
        return _skeleton(wrist, curl, spread, angle, _NOSE + head, sway)


@dataclass(frozen=True)
class Signer:
    """How one person signs: the transform applied to every prototype."""

    id: int
    scale: float
    """body size"""
    gain: float
    """size of the signing space: motion about the rest pose is multiplied by it"""
    speed: float
    """time stretch: durations are multiplied by it"""
    left_handed: bool
    """mirror image, left and right keypoints swapped"""
    offset: tuple[float, float]
    """position in the frame"""
    noise: float
    """standard deviation of the keypoint jitter"""


def make_signers(
    seed: int, name: str, n: int, noise: tuple[float, float] = (0.002, 0.005)
) -> tuple[Signer, ...]:
    """n signers; signers 3, 7, 11, ... are left-handed (one in train, one in test with 9 signers)."""
    rng = _rng(seed, name, "signers")
    return tuple(
        Signer(
            id=i,
            scale=float(rng.uniform(0.85, 1.15)),
            gain=float(rng.uniform(0.85, 1.15)),
            speed=float(rng.uniform(0.8, 1.25)),
            left_handed=i % 4 == 3,
            offset=(float(rng.normal(0, 0.03)), float(rng.normal(0, 0.03))),
            noise=float(rng.uniform(*noise)),
        )
        for i in range(n)
    )


def coarticulate(segments: Sequence[np.ndarray], c: int, max_step: float | None = None) -> np.ndarray:
    """Join segments (n_i, K, 2), crossfading the last c frames of each into the first c frames of the
    next with smoothstep weights (c = 0: concatenation). With `max_step`, a boundary whose end and start
    poses are far apart gets a longer crossfade (movement epenthesis: the two poses are held for the extra
    frames), so that the blend moves no keypoint more than about max_step per frame. Inner segments need at
    least 2c frames, the first and last at least c."""
    if c == 0:
        return np.concatenate(segments)
    assert all(len(s) >= 2 * c for s in segments[1:-1]), "inner segments shorter than 2c frames"
    assert min(len(segments[0]), len(segments[-1])) >= c, "end segments shorter than c frames"
    parts = [segments[0][:-c]]
    for prev, seg in itertools.pairwise(segments):
        e = 0
        if max_step is not None:  # smoothstep over L frames has slope <= 1.5 / (L + 1)
            d = float(np.linalg.norm(seg[0] - prev[-1], axis=-1).max())
            e = max(0, int(np.ceil(1.5 * d / max_step)) - 1 - c)
        a = np.concatenate([prev[-c:], np.broadcast_to(prev[-1], (e, *prev.shape[1:]))])
        b = np.concatenate([np.broadcast_to(seg[0], (e, *seg.shape[1:])), seg[:c]])
        w = _smoothstep(np.arange(1, c + e + 1) / (c + e + 1))[:, None, None]
        parts.append((1 - w) * a + w * b)
        parts.append(seg[c:-c])
    parts.append(segments[-1][-c:])
    return np.concatenate(parts)


class _Renderer:
    """Renders gloss sequences for the signers of one dataset, caching prototypes by duration."""

    def __init__(self, name: str, seed: int, glosses: Iterable[str], config: CorpusConfig) -> None:
        self.config = config
        self.protos = {
            g: GlossPrototype.sample(g, _rng(seed, name, "gloss", g), config.gloss_frames) for g in glosses
        }
        self.signers = make_signers(seed, name, config.n_signers, config.signer_noise)
        self._cache: dict[tuple[str, int], np.ndarray] = {}
        self.rest = _rest_pose()

    def _segment(self, gloss: str, n: int) -> np.ndarray:
        key = (gloss, n)
        if key not in self._cache:
            self._cache[key] = self.protos[gloss].render(n)
        return self._cache[key]

    def render(self, glosses: Sequence[str], signer: Signer, rng: np.random.Generator) -> np.ndarray:
        """(T, 50, 2) float32: rest, the signs (speed jittered per sign), rest; then the signer transform."""
        cfg, c = self.config, self.config.coarticulation
        rest_n = rng.integers(cfg.rest_frames[0], cfg.rest_frames[1] + 1, 2)
        segs = [np.broadcast_to(self.rest, (int(rest_n[0]), N_KEYPOINTS, 2))]
        jitter = rng.uniform(0.9, 1.1, len(glosses))
        for g, j in zip(glosses, jitter, strict=True):
            n = max(2 * c + 1, round(self.protos[g].frames * signer.speed * j))
            segs.append(self._segment(g, n))
        segs.append(np.broadcast_to(self.rest, (int(rest_n[1]), N_KEYPOINTS, 2)))
        x = coarticulate(segs, c, cfg.max_step)
        x = self.rest + signer.gain * (x - self.rest)
        if signer.left_handed:
            x = x[:, MIRROR] * np.array([-1.0, 1.0])
        x = x * signer.scale + np.asarray(signer.offset) + rng.normal(0, 0.01, 2)
        x = x + rng.normal(0, signer.noise, x.shape)
        return x.astype(np.float32)


def render_glosses(
    name: str, glosses: Sequence[str], *, signer: int = 0, seed: int = 0, config: CorpusConfig | None = None
) -> np.ndarray:
    """The video (T, 50, 2) of one gloss sequence of dataset `name` by one signer (for tests and
    figures; the render noise comes from a generator seeded by `seed`)."""
    config = config or CorpusConfig()
    grammar = _grammar(name)
    for g in glosses:
        check_in("gloss", g, grammar.glosses)
    check_int("signer", signer, 0, config.n_signers - 1)
    r = _Renderer(name, seed, glosses, config)
    return r.render(glosses, r.signers[signer], _rng(seed, name, "render"))


# --------------------------------------------------------------------------------------------
# Grammars: gloss sequences and their translations


Clause = tuple[list[str], list[str]]  # glosses, words


def _words(*phrases: str) -> list[str]:
    return [w for p in phrases for w in p.split()]


@dataclass(frozen=True)
class _Grammar:
    """A lexicon (gloss -> words), the entity words, the function words and a sentence sampler."""

    lexicon: dict[str, str]
    entity_words: frozenset[str]
    function_words: frozenset[str]
    sentence: Callable[[np.random.Generator], Clause]
    glosses: tuple[str, ...] = field(init=False)
    words: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        lex_words = {w for p in self.lexicon.values() for w in p.split()}
        object.__setattr__(self, "glosses", tuple(sorted(self.lexicon)))
        object.__setattr__(self, "words", tuple(sorted(lex_words | self.function_words)))
        assert self.entity_words <= lex_words, sorted(self.entity_words - lex_words)


def _pick(rng: np.random.Generator, table: Sequence[str] | dict[str, object]) -> str:
    keys = list(table)
    return keys[int(rng.integers(len(keys)))]


# --- phoenix_like: weather forecasts (DGS-like order: time, place, weather; negation and "maybe" last)

_PH_TIME = {
    "TODAY": "today",
    "TOMORROW": "tomorrow",
    "TONIGHT": "tonight",
    "MORNING": "in the morning",
    "AFTERNOON": "in the afternoon",
    "EVENING": "in the evening",
    "WEEKEND": "at the weekend",
    **{
        d.upper(): f"on {d}"
        for d in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    },
}
_PH_PLACE = {
    "NORTH": "in the north",
    "SOUTH": "in the south",
    "EAST": "in the east",
    "WEST": "in the west",
    "NORTHWEST": "in the north west",
    "SOUTHEAST": "in the south east",
    "COAST": "at the coast",
    "MOUNTAINS": "in the mountains",
    "ALPS": "in the alps",
    "BAVARIA": "in bavaria",
    "BERLIN": "in berlin",
    "HAMBURG": "in hamburg",
    "RHINE": "along the rhine",
    "NORTHSEA": "at the north sea",
    "BALTIC": "at the baltic sea",
    "GERMANY": "in germany",
}
_PH_WEATHER = {
    "RAIN": "rain",
    "SNOW": "snow",
    "FOG": "fog",
    "THUNDERSTORM": "thunderstorms",
    "SHOWER": "showers",
    "SUN": "sunshine",
    "CLOUD": "clouds",
    "FROST": "frost",
    "HAIL": "hail",
    "STORM": "storms",
}
_NUMBER = {
    "ZERO": "zero",
    "ONE": "one",
    "TWO": "two",
    "THREE": "three",
    "FOUR": "four",
    "FIVE": "five",
    "SIX": "six",
    "SEVEN": "seven",
    "EIGHT": "eight",
    "NINE": "nine",
    "TEN": "ten",
    "TWELVE": "twelve",
    "FIFTEEN": "fifteen",
    "TWENTY": "twenty",
    "TWENTY-FIVE": "twenty five",
    "THIRTY": "thirty",
    "FIFTY": "fifty",
}
_PH_NUMBER = {k: v for k, v in _NUMBER.items() if k != "FIFTY"}
_PH_STATE = {
    "WARM": "warm",
    "COLD": "cold",
    "MILD": "mild",
    "HOT": "hot",
    "FRIENDLY": "friendly",
    "CHANGEABLE": "changeable",
}
_PH_STRENGTH = {"STRONG": "strong", "WEAK": "weak"}
_PH_OTHER = {
    "TEMPERATURE": "temperatures",
    "DEGREE": "degrees",
    "MINUS": "minus",
    "MAYBE": "may",
    "NOT": "no",
    "THEN": "then",
    "WIND": "wind",
}
_PLACE_FUNCTION = {"in", "the", "at", "along", "on"}


def _ph_clause(rng: np.random.Generator) -> Clause:
    place = _pick(rng, _PH_PLACE)
    pp = _PH_PLACE[place]
    w = _pick(rng, _PH_WEATHER)
    kind = int(rng.integers(7))
    if kind == 0:
        return [place, w], _words("there will be", _PH_WEATHER[w], pp)
    if kind == 1:
        return [place, w, "MAYBE"], _words("there may be", _PH_WEATHER[w], pp)
    if kind == 2:
        return [place, w, "NOT"], _words("there will be no", _PH_WEATHER[w], pp)
    if kind == 3:
        n = _pick(rng, _PH_NUMBER)
        minus = rng.random() < 0.3
        g = [place, "TEMPERATURE", *(["MINUS"] if minus else []), n, "DEGREE"]
        return g, _words("temperatures of", "minus" if minus else "", _PH_NUMBER[n], "degrees", pp)
    if kind == 4:
        s = _pick(rng, _PH_STATE)
        return [place, s], _words("it will be", _PH_STATE[s], pp)
    if kind == 5:
        s = _pick(rng, _PH_STRENGTH)
        return ["WIND", s, place], _words("there will be a", _PH_STRENGTH[s], "wind", pp)
    w2 = _pick(rng, [x for x in _PH_WEATHER if x != w])
    return [place, w, "THEN", w2], _words(pp, "first", _PH_WEATHER[w], "and then", _PH_WEATHER[w2])


def _ph_sentence_of(
    rng: np.random.Generator, clause: Callable[[np.random.Generator], tuple[Clause, bool]], need_pair: bool
) -> Clause:
    """[TIME] clause [clause [clause]]: the time leads, clauses (each with whether it pairs its place with
    a weather or number) are joined by "and"; redrawn until it has 3–9 glosses and, with `need_pair`, a
    pairing clause."""
    while True:
        glosses: list[str] = []
        words: list[str] = []
        if rng.random() < 0.85:
            t = _pick(rng, _PH_TIME)
            glosses, words = [t], _words(_PH_TIME[t])
        paired = False
        for i in range(int(rng.choice([1, 2, 3], p=[0.45, 0.4, 0.15]))):
            (g, w), pairs = clause(rng)
            paired |= pairs
            glosses += g
            words += (["and"] if i else []) + w
        if 3 <= len(glosses) <= 9 and (paired or not need_pair):
            return glosses, words


def _ph_sentence(rng: np.random.Generator) -> Clause:
    """A phoenix_like sentence of `_ph_clause`s."""
    return _ph_sentence_of(rng, lambda r: (_ph_clause(r), True), need_pair=False)


_PHOENIX = _Grammar(
    lexicon={
        **_PH_TIME,
        **_PH_PLACE,
        **_PH_WEATHER,
        **_PH_NUMBER,
        **_PH_STATE,
        **_PH_STRENGTH,
        **_PH_OTHER,
    },
    entity_words=frozenset(
        {w for p in _PH_PLACE.values() for w in p.split()} - _PLACE_FUNCTION
        | {w for p in _PH_WEATHER.values() for w in p.split()}
        | {w for p in _PH_NUMBER.values() for w in p.split()}
        | {"wind"}
    ),
    function_words=frozenset({"there", "will", "may", "be", "of", "it", "a", "first", "and", "then", "no"}),
    sentence=_ph_sentence,
)


@dataclass(frozen=True)
class EntityPrior:
    """The conditionals of a phoenix_like corpus with an entity prior: each place's dominant weather and
    usual numbers (drawn once per corpus seed). Under `skewed` a clause draws its place's dominant weather
    (or one of its usual numbers) with probability `dominance`, else one of the others; otherwise every
    option is equally likely. A counter-prior draw takes one of the others."""

    skewed: bool
    dominance: float
    weather: dict[str, str]
    """place gloss -> its dominant weather gloss"""
    numbers: dict[str, tuple[str, ...]]
    """place gloss -> its usual number glosses"""

    @classmethod
    def draw(cls, seed: int, name: str, skewed: bool, dominance: float, n_usual: int = 3) -> EntityPrior:
        """The places' dominant weathers (a permutation, so every weather dominates one or two places)
        and `n_usual` usual numbers per place."""
        rng = _rng(seed, name, "prior")
        places, weathers, numbers = list(_PH_PLACE), list(_PH_WEATHER), list(_PH_NUMBER)
        perm = rng.permutation(len(places))
        weather = {p: weathers[int(perm[i]) % len(weathers)] for i, p in enumerate(places)}
        usual = {
            p: tuple(numbers[int(j)] for j in sorted(rng.choice(len(numbers), n_usual, replace=False)))
            for p in places
        }
        return cls(skewed, dominance, weather, usual)

    def _draw(self, rng: np.random.Generator, options: list[str], usual: Sequence[str], counter: bool) -> str:
        rare = [o for o in options if o not in usual]
        if counter:
            return rare[int(rng.integers(len(rare)))]
        if self.skewed:
            pool = list(usual) if rng.random() < self.dominance else rare
            return pool[int(rng.integers(len(pool)))]
        return options[int(rng.integers(len(options)))]

    def weather_of(self, rng: np.random.Generator, place: str, counter: bool = False) -> str:
        """A weather gloss for `place`."""
        return self._draw(rng, list(_PH_WEATHER), (self.weather[place],), counter)

    def number_of(self, rng: np.random.Generator, place: str, counter: bool = False) -> str:
        """A temperature (number gloss) for `place`."""
        return self._draw(rng, list(_PH_NUMBER), self.numbers[place], counter)

    def usual(self, place: str, gloss: str) -> bool:
        """Whether `gloss` (a weather or a number) is what the prior expects at `place`."""
        return gloss == self.weather[place] or gloss in self.numbers[place]


def _ph_prior_clause(rng: np.random.Generator, prior: EntityPrior, counter: bool) -> tuple[Clause, bool]:
    """A phoenix_like clause with its place first in the translation (the glosses as in `_ph_clause`),
    the weather and numbers drawn from `prior`; and whether it pairs its place with a weather or number."""
    place = _pick(rng, _PH_PLACE)
    pp = _PH_PLACE[place]
    kind = int(rng.integers(7))
    if kind <= 2:
        w = prior.weather_of(rng, place, counter)
        forms = (((), "there will be"), (("MAYBE",), "there may be"), (("NOT",), "there will be no"))
        extra, phrase = forms[kind]
        return ([place, w, *extra], _words(pp, phrase, _PH_WEATHER[w])), True
    if kind == 3:
        n = prior.number_of(rng, place, counter)
        minus = rng.random() < 0.3
        g = [place, "TEMPERATURE", *(["MINUS"] if minus else []), n, "DEGREE"]
        return (g, _words(pp, "temperatures of", "minus" if minus else "", _PH_NUMBER[n], "degrees")), True
    if kind == 4:
        s = _pick(rng, _PH_STATE)
        return ([place, s], _words(pp, "it will be", _PH_STATE[s])), False
    if kind == 5:
        s = _pick(rng, _PH_STRENGTH)
        return (["WIND", s, place], _words(pp, "there will be a", _PH_STRENGTH[s], "wind")), False
    w = prior.weather_of(rng, place, counter)
    others = [x for x in _PH_WEATHER if x != w and not (counter and prior.usual(place, x))]
    w2 = others[int(rng.integers(len(others)))]
    return ([place, w, "THEN", w2], _words(pp, "first", _PH_WEATHER[w], "and then", _PH_WEATHER[w2])), True


def _ph_prior_sentence(rng: np.random.Generator, prior: EntityPrior, counter: bool = False) -> Clause:
    """A phoenix_like sentence of `_ph_prior_clause`s; a counter-prior sentence pairs at least one place
    with a weather or number."""
    return _ph_sentence_of(rng, lambda r: _ph_prior_clause(r, prior, counter), need_pair=counter)


# --- csl_like: daily life (CSL-like order: time, subject, object, verb; negation and questions last)

_CSL_SUBJECT = {"I": "i", "YOU": "you", "WE": "we", "HE": "he", "SHE": "she"}
_CSL_PERSON = {
    "MOTHER": "mother",
    "FATHER": "father",
    "BROTHER": "brother",
    "SISTER": "sister",
    "FRIEND": "friend",
    "TEACHER": "teacher",
    "DOCTOR": "doctor",
    "CHILD": "child",
    "GRANDMOTHER": "grandmother",
    "NEIGHBOR": "neighbour",
}
_CSL_TIME = {  # gloss -> (words, past tense)
    "YESTERDAY": ("yesterday", True),
    "LAST-WEEK": ("last week", True),
    "LAST-YEAR": ("last year", True),
    "TOMORROW": ("tomorrow", False),
    "TONIGHT": ("tonight", False),
    "NEXT-WEEK": ("next week", False),
    "NEXT-YEAR": ("next year", False),
}
_CSL_OBJECT = {  # gloss -> (noun, determiner, plural or "" for mass nouns)
    "BOOK": ("book", "a", "books"),
    "NEWSPAPER": ("newspaper", "a", "newspapers"),
    "APPLE": ("apple", "an", "apples"),
    "RICE": ("rice", "some", ""),
    "NOODLES": ("noodles", "some", ""),
    "TEA": ("tea", "some", ""),
    "PHONE": ("phone", "a", "phones"),
    "TICKET": ("ticket", "a", "tickets"),
    "BIKE": ("bike", "a", "bikes"),
    "UMBRELLA": ("umbrella", "an", "umbrellas"),
    "KEY": ("key", "a", "keys"),
    "BAG": ("bag", "a", "bags"),
    "COMPUTER": ("computer", "a", "computers"),
}
_CSL_PLACE = {
    "SCHOOL": "school",
    "HOSPITAL": "hospital",
    "SHOP": "shop",
    "HOME": "home",
    "PARK": "park",
    "STATION": "station",
    "RESTAURANT": "restaurant",
    "LIBRARY": "library",
    "BANK": "bank",
    "OFFICE": "office",
}
_CSL_NUMBER = {
    k: v for k, v in _NUMBER.items() if k not in {"ZERO", "TWELVE", "FIFTEEN", "TWENTY-FIVE", "THIRTY"}
}
_CSL_VERB = {  # gloss -> (base, past)
    "GO": ("go", "went"),
    "BUY": ("buy", "bought"),
    "READ": ("read", "read"),
    "EAT": ("eat", "ate"),
    "DRINK": ("drink", "drank"),
    "BORROW": ("borrow", "borrowed"),
    "LOSE": ("lose", "lost"),
    "VISIT": ("visit", "visited"),
    "CALL": ("call", "called"),
    "MEET": ("meet", "met"),
}
_CSL_OBJECTS_OF = {
    "BUY": tuple(_CSL_OBJECT),
    "READ": ("BOOK", "NEWSPAPER"),
    "EAT": ("APPLE", "RICE", "NOODLES"),
    "DRINK": ("TEA",),
    "BORROW": ("BOOK", "UMBRELLA", "BIKE", "COMPUTER", "NEWSPAPER"),
    "LOSE": ("PHONE", "TICKET", "KEY", "BAG", "UMBRELLA"),
}
_CSL_OTHER = {
    "NOT": "not",
    "WHERE": "where",
    "WHAT": "what",
    "WITH": "with",
    "THEN": "then",
    "PRICE": "for",
    "YUAN": "yuan",
}


def _v(verb: str, past: bool, negated: bool = False) -> str:
    base, past_form = _CSL_VERB[verb]
    if negated:
        return f"did not {base}" if past else f"will not {base}"
    return past_form if past else f"will {base}"


def _to(place: str) -> str:
    return "home" if place == "HOME" else f"to the {_CSL_PLACE[place]}"


def _at(place: str) -> str:
    return "at home" if place == "HOME" else f"at the {_CSL_PLACE[place]}"


def _subject(rng: np.random.Generator) -> tuple[str, str]:
    if rng.random() < 0.5:
        s = _pick(rng, _CSL_SUBJECT)
        return s, _CSL_SUBJECT[s]
    p = _pick(rng, _CSL_PERSON)
    return p, f"my {_CSL_PERSON[p]}"


def _csl_clause(rng: np.random.Generator, past: bool, subject: tuple[str, str] | None) -> Clause:
    """One clause; with subject None the subject is dropped (second clause of "... and then ...")."""
    sg, sw = ([subject[0]], subject[1]) if subject else ([], "")
    kind = int(rng.integers(7))
    place = _pick(rng, _CSL_PLACE)
    verb = _pick(rng, _CSL_OBJECTS_OF)
    obj = _CSL_OBJECTS_OF[verb][int(rng.integers(len(_CSL_OBJECTS_OF[verb])))]
    noun, det, _ = _CSL_OBJECT[obj]
    if kind == 0:
        return [*sg, place, "GO"], _words(sw, _v("GO", past), _to(place))
    if kind == 1:
        return [*sg, obj, verb], _words(sw, _v(verb, past), det, noun)
    if kind == 2:
        return [*sg, obj, verb, "NOT"], _words(sw, _v(verb, past, negated=True), det, noun)
    if kind == 3:
        obj = _pick(rng, [o for o, (_, _, pl) in _CSL_OBJECT.items() if pl])
        n = _pick(rng, _CSL_NUMBER)
        noun, _, plural = _CSL_OBJECT[obj]
        return [*sg, n, obj, "BUY"], _words(
            sw, _v("BUY", past), _CSL_NUMBER[n], noun if n == "ONE" else plural
        )
    if kind == 4:
        person = _pick(rng, _CSL_PERSON)
        v = _pick(rng, ("VISIT", "CALL", "MEET"))
        return [*sg, person, v], _words(sw, _v(v, past), "my", _CSL_PERSON[person])
    if kind == 5:
        person = _pick(rng, _CSL_PERSON)
        return [*sg, person, "WITH", place, "GO"], _words(
            sw, _v("GO", past), _to(place), "with my", _CSL_PERSON[person]
        )
    return [*sg, place, obj, verb], _words(sw, _v(verb, past), det, noun, _at(place))


def _csl_sentence(rng: np.random.Generator) -> Clause:
    """TIME clause [THEN clause], a question, or a price; the time moves to the end of the first clause."""
    while True:
        t = _pick(rng, _CSL_TIME)
        tw, past = _CSL_TIME[t]
        u = rng.random()
        if u < 0.12:  # TIME YOU [PLACE] GO WHERE / TIME YOU VERB WHAT
            if rng.random() < 0.5:
                glosses, words = (
                    [t, "YOU", "GO", "WHERE"],
                    _words("where", "did you go" if past else "will you go", tw),
                )
            else:
                v = _pick(rng, ("EAT", "BUY", "READ", "DRINK"))
                base = _CSL_VERB[v][0]
                glosses = [t, "YOU", v, "WHAT"]
                words = _words("what", f"did you {base}" if past else f"will you {base}", tw)
        elif u < 0.22:  # [TIME SUBJ] OBJ BUY PRICE N YUAN
            s = _subject(rng)
            obj = _pick(rng, _CSL_OBJECT)
            noun, det, _ = _CSL_OBJECT[obj]
            n = _pick(rng, _CSL_NUMBER)
            glosses = [t, s[0], obj, "BUY", "PRICE", n, "YUAN"]
            words = _words(s[1], _v("BUY", past), det, noun, "for", _CSL_NUMBER[n], "yuan", tw)
        else:
            s = _subject(rng)
            g, w = _csl_clause(rng, past, s)
            glosses, words = [t, *g], [*w, *tw.split()]
            if rng.random() < 0.35:
                g2, w2 = _csl_clause(rng, past, None)
                glosses += ["THEN", *g2]
                words += ["and", "then", *w2]
        if 3 <= len(glosses) <= 9:
            return glosses, words


_CSL = _Grammar(
    lexicon={
        **_CSL_SUBJECT,
        **_CSL_PERSON,
        **{k: v[0] for k, v in _CSL_TIME.items()},
        **{k: f"{noun} {plural}".strip() for k, (noun, _, plural) in _CSL_OBJECT.items()},
        **_CSL_PLACE,
        **_CSL_NUMBER,
        **{k: " ".join(v) for k, v in _CSL_VERB.items()},
        **_CSL_OTHER,
    },
    entity_words=frozenset(
        set(_CSL_PERSON.values())
        | {w for n, _, pl in _CSL_OBJECT.values() for w in (n, pl) if w}
        | set(_CSL_PLACE.values())
        | {w for p in _CSL_NUMBER.values() for w in p.split()}
    ),
    function_words=frozenset({"my", "did", "will", "and", "to", "at", "the", "a", "an", "some"}),
    sentence=_csl_sentence,
)

_GRAMMARS = {"phoenix_like": _PHOENIX, "csl_like": _CSL}


def _grammar(name: str) -> _Grammar:
    return _GRAMMARS[check_in("name", name, DATASETS)]


# --------------------------------------------------------------------------------------------
# Corpora


def make_corpus(
    name: str,
    *,
    seed: int = 0,
    n_train: int = 2000,
    n_dev: int = 200,
    n_test: int = 300,
    config: CorpusConfig | None = None,
) -> Corpus:
    """The synthetic corpus `name` ("phoenix_like" or "csl_like"): train and dev are signed by the
    first n_signers - n_test_signers signers, test only by the others. Deterministic from `seed`;
    each split has its own random stream, so changing n_train leaves dev and test unchanged."""
    grammar = _grammar(name)
    for arg, value in (("n_train", n_train), ("n_dev", n_dev), ("n_test", n_test)):
        check_int(arg, value, 0)
    check_int("seed", seed, 0)
    config = config or CorpusConfig()
    prior = None
    if config.entity_prior != "none":
        if name != "phoenix_like":
            raise UserError(f"entity_prior={config.entity_prior!r} is for phoenix_like only, not {name!r}")
        prior = EntityPrior.draw(seed, name, config.entity_prior == "skewed", config.dominance)
    renderer = _Renderer(name, seed, grammar.glosses, config)
    n_seen = config.n_signers - config.n_test_signers
    splits: dict[str, list[Sample]] = {}
    for split, n, signers in (
        ("train", n_train, renderer.signers[:n_seen]),
        ("dev", n_dev, renderer.signers[:n_seen]),
        ("test", n_test, renderer.signers[n_seen:]),
    ):
        rng = _rng(seed, name, "split", split)
        samples = []
        for i in range(n):
            counter = False
            if prior is None:
                glosses, words = grammar.sentence(rng)
            else:
                counter = split == "test" and bool(rng.random() < config.counter_prior)
                glosses, words = _ph_prior_sentence(rng, prior, counter)
            signer = signers[int(rng.integers(len(signers)))]
            samples.append(
                Sample(
                    id=f"{name}/{split}/{i:05d}",
                    keypoints=renderer.render(glosses, signer, rng),
                    glosses=tuple(glosses),
                    text=tuple(words),
                    entities=frozenset(words) & grammar.entity_words,
                    signer=signer.id,
                    dataset=name,
                    counter_prior=counter,
                )
            )
        splits[split] = samples
    return Corpus(
        name=name,
        **splits,
        glosses=grammar.glosses,
        words=grammar.words,
        entity_words=grammar.entity_words,
        prior=prior,
    )


def build_corpus(
    name: str,
    train: list[Sample],
    dev: list[Sample],
    test: list[Sample],
    entity_words: Iterable[str] = (),
) -> Corpus:
    """A corpus over given samples (e.g. real data): the vocabularies are those of the three splits."""
    every = [*train, *dev, *test]
    return Corpus(
        name=name,
        train=train,
        dev=dev,
        test=test,
        glosses=tuple(sorted({g for s in every for g in s.glosses})),
        words=tuple(sorted({w for s in every for w in s.text})),
        entity_words=frozenset(entity_words),
    )


# --------------------------------------------------------------------------------------------
# Validation (one-line errors that name the sample)


def check_sample(sample: Sample, min_frames: int = 1) -> Sample:
    """`sample` when its keypoints are a finite (T, K, C) array with T >= min_frames (the model's
    stride, or 1); else a `UserError` naming the sample."""
    x = sample.keypoints
    if not isinstance(x, np.ndarray) or x.ndim != 3:
        shape = getattr(x, "shape", type(x).__name__)
        raise UserError(f"sample {sample.id}: keypoints must be a (T, K, 2) array, got shape {shape}")
    if not np.isfinite(x).all():
        bad = ~np.isfinite(x)
        frames = np.unique(np.nonzero(bad)[0])
        raise UserError(
            f"sample {sample.id}: keypoints contain {int(bad.sum())} NaN or infinite values"
            f" (first at frame {int(frames[0])} of {len(x)}); interpolate or drop the missing keypoints"
        )
    if len(x) < min_frames:
        raise UserError(
            f"sample {sample.id}: video has {len(x)} frames, shorter than the minimum of {min_frames}"
            " (the model's temporal stride); drop the sample or pad the video"
        )
    if not sample.glosses and not sample.text:
        raise UserError(f"sample {sample.id}: has neither glosses nor a translation")
    return sample


def check_samples(samples: Iterable[Sample], min_frames: int = 1) -> list[Sample]:
    """`check_sample` on each sample; the list of samples."""
    return [check_sample(s, min_frames) for s in samples]


def check_vocabulary(sample: Sample, corpus: Corpus) -> Sample:
    """`sample` when all its glosses are in corpus.glosses and all its words in corpus.words; else a
    `UserError` naming the sample and the first unknown token (e.g. a sample from another dataset)."""
    for kind, tokens, vocab in (
        ("gloss", sample.glosses, corpus.glosses),
        ("word", sample.text, corpus.words),
    ):
        known = set(vocab)
        unknown = [t for t in tokens if t not in known]
        if unknown:
            raise UserError(
                f"sample {sample.id}: {kind} {unknown[0]!r} is not in the {kind} vocabulary of corpus"
                f" {corpus.name!r} ({len(known)} {kind}s; {len(unknown)} unknown in this sample);"
                " translate it with a model trained on its own dataset"
            )
    return sample
