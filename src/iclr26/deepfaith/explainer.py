"""The amortized explainer: a transformer encoder over the input's feature tokens.

Each feature (a tabular column, an image patch, a text token's embedding) becomes one token: a
linear embedding of its elements plus a learned embedding of its position (feature identity) and
of the class being explained. The encoder's output at each token is that feature's attribution, so
one forward pass explains a whole batch without touching the target model (DeepFaith §4; the paper
uses a 6-layer, 768-wide encoder over 196 image patches — our `paper` preset's shape).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from iclr26.deepfaith.space import FeatureSpace


@dataclass(frozen=True)
class ExplainerConfig:
    """Shape of the encoder."""

    width: int = 64
    depth: int = 2
    heads: int = 4
    ffn: int = 128
    dropout: float = 0.1

    def __post_init__(self) -> None:
        if self.width % self.heads:
            raise ValueError(f"width ({self.width}) must divide by heads ({self.heads})")
        if min(self.width, self.depth, self.heads, self.ffn) < 1 or not 0 <= self.dropout < 1:
            raise ValueError(f"invalid explainer shape {self}")


class AmortizedExplainer(nn.Module):
    """x (B, *shape), class c (B,) -> attribution s (B, d)."""

    def __init__(self, space: FeatureSpace, classes: int, cfg: ExplainerConfig = ExplainerConfig()) -> None:
        super().__init__()
        self.space, self.classes, self.cfg = space, classes, cfg
        self.embed = nn.Sequential(nn.Linear(space.group_size, cfg.width), nn.LayerNorm(cfg.width))
        self.position = nn.Parameter(torch.randn(space.d, cfg.width) * 0.02)
        self.class_embedding = nn.Embedding(classes, cfg.width)
        layer = nn.TransformerEncoderLayer(
            cfg.width, cfg.heads, cfg.ffn, cfg.dropout, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, cfg.depth, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(cfg.width), nn.Linear(cfg.width, 1))

    def forward(self, x: Tensor, target: Tensor) -> Tensor:
        self.space.check(x)
        if target.shape != (len(x),):
            raise ValueError(f"target must have shape ({len(x)},), got {tuple(target.shape)}")
        tokens = self.embed(self.space.tokens(x)) + self.position + self.class_embedding(target)[:, None]
        return self.head(self.encoder(tokens)).squeeze(-1)

    @torch.no_grad()
    def explain(self, x: Tensor, target: Tensor, batch: int = 1024) -> Tensor:
        """Attributions in eval mode, in batches."""
        was_training = self.training
        self.eval()
        out = torch.cat([self(xb, tb) for xb, tb in zip(x.split(batch), target.split(batch), strict=True)])
        self.train(was_training)
        return out

    def state(self) -> dict:
        """Everything needed to rebuild the explainer: weights, space, class count, shape."""
        return {
            "weights": self.state_dict(),
            "classes": self.classes,
            "cfg": asdict(self.cfg),
            "space": {
                "shape": self.space.shape,
                "groups": self.space.groups,
                "baseline": self.space.baseline,
            },
        }

    @classmethod
    def from_state(cls, state: dict) -> AmortizedExplainer:
        """Inverse of `state()`."""
        sp = state["space"]
        model = cls(
            FeatureSpace(tuple(sp["shape"]), sp["groups"], sp["baseline"]),
            state["classes"],
            ExplainerConfig(**state["cfg"]),
        )
        model.load_state_dict(state["weights"])
        return model
