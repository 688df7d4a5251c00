"""Explanation tasks on data that ships in installed packages, each with a target model trained here.

- tabular: sklearn `breast_cancer` (30 features, 2 classes) and `wine` (13 features, 3 classes),
  standardized; an MLP; one feature per column, baseline 0 (the training mean).
- image: sklearn `digits` (8×8, 10 classes; one feature per pixel) and scikit-image `lfw_subset`
  (25×25 faces vs non-faces; one feature per 5×5 patch); a small CNN; baseline 0 (black).
- text: `sentiment`, template sentences of stop words (sklearn's list) with one to three words of
  the VADER lexicon (vaderSentiment's `vader_lexicon.txt`) inserted; the label is the sign of the
  summed valence, so the truly important tokens are known. The target model is a CNN over token
  embeddings; explanations are per token and a token is removed by the zero (pad) embedding.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int
from iclr26.deepfaith.space import FeatureSpace, image_space, tabular_space, token_space

TASKS = ("breast_cancer", "wine", "digits", "lfw", "sentiment")
MODALITY = {
    "breast_cancer": "tabular",
    "wine": "tabular",
    "digits": "image",
    "lfw": "image",
    "sentiment": "text",
}
NEGATIONS = frozenset(
    {"not", "no", "nor", "never", "none", "nothing", "nobody", "neither", "cannot", "without"}
)


@dataclass
class Task:
    """Data, feature space and a trained target model for one explanation task."""

    name: str
    modality: str
    space: FeatureSpace
    model: nn.Module  # (B, *space.shape) -> logits, eval mode, frozen
    classes: int
    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor
    test_accuracy: float
    cam_layer: nn.Module | None = None  # the last conv layer, for Grad-CAM (image tasks)
    relevant_test: Tensor | None = None  # (N_test, d) bool: the truly important features (text)
    words_test: list[list[str]] | None = None  # the test sentences (text)

    def to(self, device: torch.device | str) -> Task:
        """Move the target model, the data and the space to `device` (in place); returns self."""
        self.model.to(device)
        for name in ("x_train", "y_train", "x_test", "y_test"):
            setattr(self, name, getattr(self, name).to(device))
        self.space = FeatureSpace(
            self.space.shape, self.space.groups.to(device), self.space.baseline.to(device)
        )
        return self

    def predict(self, x: Tensor) -> Tensor:
        """The target model's predicted class."""
        with torch.no_grad():
            return self.model(x).argmax(-1)


class MLP(nn.Module):
    """The tabular target model."""

    def __init__(self, d: int, classes: int, width: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, classes)
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class SmallCNN(nn.Module):
    """The image target model; `cam_layer` is its last convolution."""

    def __init__(self, classes: int, pool: bool) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2) if pool else nn.Identity()
        self.cam_layer = nn.Conv2d(16, 32, 3, padding=1)
        self.head = nn.Linear(32 * 16, classes)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.cam_layer(self.pool(torch.relu(self.conv1(x)))))
        return self.head(nn.functional.adaptive_avg_pool2d(h, 4).flatten(1))


class TokenCNN(nn.Module):
    """The text target model on token embeddings (B, L, E): conv over time, sum-pool, linear."""

    def __init__(self, dim: int, classes: int, channels: int = 32) -> None:
        super().__init__()
        self.conv = nn.Conv1d(dim, channels, 3, padding=1)
        self.head = nn.Linear(channels, classes)

    def forward(self, e: Tensor) -> Tensor:
        return self.head(torch.relu(self.conv(e.transpose(1, 2))).sum(-1))


def _split(
    n: int, test_fraction: float, y: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified random split of range(n)."""
    train, test = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = max(1, round(len(idx) * test_fraction))
        test.extend(idx[:k])
        train.extend(idx[k:])
    return rng.permutation(np.array(train)), rng.permutation(np.array(test))


def _fit(model: nn.Module, x: Tensor, y: Tensor, epochs: int, lr: float, seed: int, batch: int = 64) -> None:
    """Adam on cross-entropy, mini-batches in a seeded order."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    model.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(x), generator=gen).split(batch):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)


def _accuracy(model: nn.Module, x: Tensor, y: Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(-1) == y).float().mean())


def vader_lexicon() -> dict[str, float]:
    """Word -> mean valence, read from the lexicon file inside the vaderSentiment package."""
    import vaderSentiment

    path = Path(vaderSentiment.__file__).parent / "vader_lexicon.txt"
    lexicon = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2:
            lexicon[parts[0]] = float(parts[1])
    return lexicon


def sentiment_sentences(
    n: int, length: int, rng: np.random.Generator, words_per_polarity: int = 60, min_valence: float = 1.5
) -> tuple[list[str], list[list[str]], np.ndarray, np.ndarray]:
    """(vocabulary, sentences, labels, relevant-token mask) of the template sentiment set.

    Vocabulary index 0 is the pad token. Each sentence is `length` stop words with 1–3 lexicon
    words at random positions; label 1 when their summed valence is positive. Sentences whose
    summed valence is within ±0.5 of zero are redrawn, so every label is decided by its
    sentiment words.
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    lexicon = vader_lexicon()
    fillers = sorted(w for w in ENGLISH_STOP_WORDS if w not in lexicon and w not in NEGATIONS and w.isalpha())
    strong = sorted(w for w, v in lexicon.items() if w.isalpha() and len(w) > 2 and abs(v) >= min_valence)
    pos = [w for w in strong if lexicon[w] > 0]
    neg = [w for w in strong if lexicon[w] < 0]
    pos = sorted(rng.choice(pos, size=min(words_per_polarity, len(pos)), replace=False).tolist())
    neg = sorted(rng.choice(neg, size=min(words_per_polarity, len(neg)), replace=False).tolist())
    vocab = ["<pad>", *fillers, *pos, *neg]
    sentiment = pos + neg
    sentences, labels, relevant = [], [], []
    while len(sentences) < n:
        k = int(rng.integers(1, 4))
        words = [sentiment[i] for i in rng.integers(0, len(sentiment), size=k)]
        total = sum(lexicon[w] for w in words)
        if abs(total) < 0.5:
            continue
        sentence = [fillers[i] for i in rng.integers(0, len(fillers), size=length)]
        positions = rng.choice(length, size=k, replace=False)
        mask = np.zeros(length, dtype=bool)
        for p, w in zip(positions, words, strict=True):
            sentence[p] = w
            mask[p] = True
        sentences.append(sentence)
        labels.append(int(total > 0))
        relevant.append(mask)
    return vocab, sentences, np.array(labels), np.stack(relevant)


def load_task(
    name: str, seed: int = 0, text_size: int = 2000, text_length: int = 12, embed_dim: int = 16
) -> Task:
    """Load `name`'s data, split it (70/30, stratified, seeded) and train its target model."""
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; choose from {TASKS}")
    check_int("seed", seed)
    check_int("text_size", text_size, 1)
    check_int("text_length", text_length, 3)  # room for up to 3 sentiment words
    check_int("embed_dim", embed_dim, 1)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    if name in ("breast_cancer", "wine"):
        from sklearn import datasets

        data = datasets.load_breast_cancer() if name == "breast_cancer" else datasets.load_wine()
        x, y = data.data.astype(np.float32), data.target.astype(np.int64)
        tr, te = _split(len(x), 0.3, y, rng)
        mu, sd = x[tr].mean(0), x[tr].std(0) + 1e-6
        x = (x - mu) / sd
        classes = int(y.max()) + 1
        model: nn.Module = MLP(x.shape[1], classes)
        space = tabular_space(x.shape[1])
        epochs, lr = 60, 1e-3
    elif name in ("digits", "lfw"):
        if name == "digits":
            from sklearn.datasets import load_digits

            d = load_digits()
            x, y = (d.images / 16.0).astype(np.float32)[:, None], d.target.astype(np.int64)
            space, model, epochs = image_space(1, 8, 8, patch=1), SmallCNN(10, pool=False), 15
        else:
            from skimage.data import lfw_subset

            x = lfw_subset().astype(np.float32)[:, None]
            y = np.r_[np.ones(100), np.zeros(len(x) - 100)].astype(np.int64)  # first 100 are faces
            space, model, epochs = image_space(1, 25, 25, patch=5), SmallCNN(2, pool=True), 60
        tr, te = _split(len(x), 0.3, y, rng)
        classes, lr = int(y.max()) + 1, 3e-3
    else:
        vocab, sentences, y, relevant = sentiment_sentences(text_size, text_length, rng)
        word_id = {w: i for i, w in enumerate(vocab)}
        ids = torch.tensor([[word_id[w] for w in s] for s in sentences])
        embedding = nn.Embedding(len(vocab), embed_dim, padding_idx=0)
        classifier = TokenCNN(embed_dim, 2)
        tr, te = _split(len(ids), 0.3, y, rng)
        # train embedding and classifier together on token ids, then explain the classifier on embeddings
        joint = nn.Sequential(embedding, classifier)
        _fit(joint, ids[tr], torch.from_numpy(y[tr]), epochs=30, lr=1e-2, seed=seed)
        with torch.no_grad():
            x_all = embedding(ids)
        yt = torch.from_numpy(y)
        return Task(
            name,
            "text",
            token_space(text_length, embed_dim),
            classifier,
            2,
            x_all[tr],
            yt[tr],
            x_all[te],
            yt[te],
            _accuracy(classifier, x_all[te], yt[te]),
            relevant_test=torch.from_numpy(relevant[te]),
            words_test=[sentences[i] for i in te],
        )
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    _fit(model, xt[tr], yt[tr], epochs=epochs, lr=lr, seed=seed)
    return Task(
        name,
        MODALITY[name],
        space,
        model,
        classes,
        xt[tr],
        yt[tr],
        xt[te],
        yt[te],
        _accuracy(model, xt[te], yt[te]),
        cam_layer=getattr(model, "cam_layer", None),
    )
