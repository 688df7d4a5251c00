"""Image classification tasks from images that ship inside installed packages (no downloads).

- `digits`: sklearn's 1,797 8×8 handwritten digits, 10 classes, upsampled to 16×16.
- `lfw`: scikit-image's `lfw_subset`, 200 25×25 crops, faces vs non-faces, resized to 32×32.
- `textures`: 48×48 crops of six scikit-image photos (brick, grass, gravel, camera, coins,
  rocket); the class is the source photo — a longer-sequence task (144 tokens at patch 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from iclr26.core.validation import check_in, check_interval

TASKS = ("digits", "lfw", "textures")


@dataclass(frozen=True)
class ImageTask:
    """Train/test tensors of one task: images (N, C, H, W) in [0, 1], integer labels."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    classes: int

    @property
    def image_size(self) -> int:
        return self.x_train.shape[-1]


def _split(x: np.ndarray, y: np.ndarray, test_fraction: float, seed: int) -> tuple:
    from sklearn.model_selection import train_test_split

    return train_test_split(x, y, test_size=test_fraction, random_state=seed, stratify=y)


def _resize(x: np.ndarray, size: int) -> np.ndarray:
    t = torch.as_tensor(x, dtype=torch.float32)[:, None]
    return F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False).numpy()


def _textures(per_class: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    import skimage.color
    import skimage.data

    names = ("brick", "grass", "gravel", "camera", "coins", "rocket")
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for label, name in enumerate(names):
        img = getattr(skimage.data, name)()
        if img.ndim == 3:
            img = skimage.color.rgb2gray(img)
        img = img.astype(np.float32)
        img = (img - img.min()) / max(float(img.max() - img.min()), 1e-6)
        h, w = img.shape
        for _ in range(per_class):
            r, c = rng.integers(0, h - size), rng.integers(0, w - size)
            xs.append(img[r : r + size, c : c + size])
            ys.append(label)
    return np.stack(xs), np.array(ys)


def load_task(name: str, seed: int = 0, test_fraction: float = 0.25) -> ImageTask:
    """Load task `name` (digits, lfw, textures) with a stratified split seeded by `seed`."""
    check_in("task", name, TASKS)
    check_interval("test_fraction", test_fraction, 0, 1, closed=(False, False))
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        x, y, classes = _resize(d.images / 16.0, 16), d.target, 10
    elif name == "lfw":
        import skimage.data

        imgs = skimage.data.lfw_subset()  # first 100 faces, then 100 non-faces
        x, y, classes = _resize(imgs, 32), np.r_[np.ones(100), np.zeros(100)].astype(int), 2
    else:  # textures
        x, y = _textures(per_class=150, size=48, seed=1234)
        x, classes = x[:, None], 6
    x = x.reshape(len(x), 1, x.shape[-2], x.shape[-1])
    xtr, xte, ytr, yte = _split(x, y, test_fraction, seed)
    return ImageTask(
        name,
        torch.as_tensor(xtr, dtype=torch.float32),
        torch.as_tensor(ytr, dtype=torch.long),
        torch.as_tensor(xte, dtype=torch.float32),
        torch.as_tensor(yte, dtype=torch.long),
        classes,
    )
