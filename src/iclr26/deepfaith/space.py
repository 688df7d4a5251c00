"""The feature space an explanation lives in: which input elements form each feature, and the
baseline that "removes" a feature.

Every task (tabular, image, text) is explained at the level of d features: a tabular column, an
image pixel or patch, a text token (its embedding vector). An attribution is a (B, d) tensor.
The unified notation of the faithfulness metrics only needs one operation on inputs: replace the
features outside a kept set by the baseline, x_S = m ⊙ x + (1 − m) ⊙ x̄ with m the expanded mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class FeatureSpace:
    """A grouping of the input elements (shape `shape`) into `d` equal-sized features."""

    shape: tuple[int, ...]  # one input, without the batch dimension
    groups: Tensor  # long, `shape`: the feature index of every input element
    baseline: Tensor  # float, `shape`: the value a removed element takes

    def __post_init__(self) -> None:
        if tuple(self.groups.shape) != tuple(self.shape) or tuple(self.baseline.shape) != tuple(self.shape):
            raise ValueError(
                f"groups {tuple(self.groups.shape)} and baseline {tuple(self.baseline.shape)} "
                f"must both have the input shape {self.shape}"
            )
        counts = torch.bincount(self.groups.flatten())
        if counts.numel() == 0 or (counts == 0).any():
            raise ValueError("groups must number features 0..d-1 with no gaps")
        if (counts != counts[0]).any():
            raise ValueError(f"features must have equal sizes, got sizes {sorted(set(counts.tolist()))}")

    @property
    def d(self) -> int:
        """Number of features."""
        return int(self.groups.max()) + 1

    @property
    def group_size(self) -> int:
        """Input elements per feature."""
        return self.groups.numel() // self.d

    @property
    def index(self) -> Tensor:
        """(d, group_size) flat element indices of each feature, in element order."""
        order = torch.argsort(self.groups.flatten(), stable=True)
        return order.view(self.d, self.group_size)

    def check(self, x: Tensor, name: str = "x") -> None:
        """Raise if `x` is not a batch of inputs of this space."""
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if tuple(x.shape[1:]) != tuple(self.shape):
            raise ValueError(
                f"{name} must have shape (batch, {', '.join(map(str, self.shape))}), got {tuple(x.shape)}"
            )

    def check_attribution(self, attr: Tensor, batch: int, name: str = "attribution") -> None:
        """Raise if `attr` is not a (batch, d) attribution."""
        if not isinstance(attr, Tensor) or attr.shape != (batch, self.d):
            got = tuple(attr.shape) if isinstance(attr, Tensor) else type(attr).__name__
            raise ValueError(f"{name} must have shape ({batch}, {self.d}) (one value per feature), got {got}")

    def expand(self, mask: Tensor) -> Tensor:
        """(..., d) feature mask -> (..., *shape) element mask."""
        return mask[..., self.groups.to(mask.device)]

    def keep(self, x: Tensor, mask: Tensor) -> Tensor:
        """x_S: keep the features where `mask` is 1 and set the rest to the baseline.

        `x` is (B, *shape) and `mask` (B, d) or (B, K, d); the result is (B, *shape) or
        (B, K, *shape). Fractional masks interpolate between x and x̄.
        """
        m = self.expand(mask.to(x.dtype))
        base = self.baseline.to(x)
        if mask.dim() == 3:
            x = x.unsqueeze(1)
        return m * x + (1 - m) * base

    def remove(self, x: Tensor, mask: Tensor) -> Tensor:
        """Set the features where `mask` is 1 to the baseline."""
        return self.keep(x, 1 - mask.to(x.dtype))

    def tokens(self, x: Tensor) -> Tensor:
        """(B, *shape) -> (B, d, group_size): each feature's elements, the explainer's input tokens."""
        return x.flatten(1)[:, self.index.to(x.device)]

    def to_elements(self, attr: Tensor) -> Tensor:
        """(B, d) feature attribution -> (B, *shape), each element carrying its feature's value."""
        return self.expand(attr)

    def from_elements(self, attr: Tensor) -> Tensor:
        """(B, *shape) element attribution -> (B, d), summed over each feature's elements."""
        flat = attr.flatten(1)
        out = torch.zeros(flat.shape[0], self.d, dtype=flat.dtype, device=flat.device)
        return out.index_add_(1, self.groups.flatten().to(flat.device), flat)


def tabular_space(n_features: int, baseline: Tensor | None = None) -> FeatureSpace:
    """One feature per column; the baseline defaults to 0 (the mean of standardized data)."""
    base = torch.zeros(n_features) if baseline is None else baseline.float()
    return FeatureSpace((n_features,), torch.arange(n_features), base)


def image_space(
    channels: int, height: int, width: int, patch: int = 1, baseline: float = 0.0
) -> FeatureSpace:
    """Square `patch`×`patch` superpixels (all channels together), numbered row-major."""
    if height % patch or width % patch:
        raise ValueError(f"patch {patch} must divide the image size {height}x{width}")
    rows = torch.arange(height) // patch
    cols = torch.arange(width) // patch
    cell = rows[:, None] * (width // patch) + cols[None, :]
    groups = cell.expand(channels, height, width).contiguous()
    return FeatureSpace((channels, height, width), groups, torch.full((channels, height, width), baseline))


def token_space(length: int, dim: int) -> FeatureSpace:
    """One feature per token of a (length, dim) embedding sequence; removal = the zero (pad) vector."""
    groups = torch.arange(length)[:, None].expand(length, dim).contiguous()
    return FeatureSpace((length, dim), groups, torch.zeros(length, dim))
