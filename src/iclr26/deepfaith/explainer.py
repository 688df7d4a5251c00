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

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.deepfaith.metrics import check_target
from iclr26.deepfaith.space import FeatureSpace


@dataclass(frozen=True)
class ExplainerConfig:
    """Shape of the encoder."""

    width: int = 64
    """token width of the encoder"""
    depth: int = 2
    """transformer encoder layers"""
    heads: int = 4
    """attention heads (width must divide by heads)"""
    ffn: int = 128
    """hidden width of each layer's feed-forward block"""
    dropout: float = 0.1
    """dropout in the encoder layers, in [0, 1)"""

    def __post_init__(self) -> None:
        for name in ("width", "depth", "heads", "ffn"):
            check_int(name, getattr(self, name), 1)
        check_interval("dropout", self.dropout, 0, 1, closed=(True, False))
        if self.width % self.heads:
            raise ConfigError(f"width ({self.width}) must divide by heads ({self.heads})")


class AmortizedExplainer(nn.Module):
    """x (B, *shape), class c (B,) -> attribution s (B, d)."""

    def __init__(self, space: FeatureSpace, classes: int, cfg: ExplainerConfig = ExplainerConfig()) -> None:
        super().__init__()
        check_int("classes", classes, 1)
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
        check_target(target, len(x))
        tokens = self.embed(self.space.tokens(x)) + self.position + self.class_embedding(target)[:, None]
        return self.head(self.encoder(tokens)).squeeze(-1)

    @torch.no_grad()
    def explain(self, x: Tensor, target: Tensor, batch: int = 1024) -> Tensor:
        """Attributions in eval mode, in batches."""
        check_int("batch", batch, 1)
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
