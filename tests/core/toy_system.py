"""A tiny real system for testing the runner and CLI: ridge regression vs the mean."""

from dataclasses import dataclass

import torch

from iclr26.core import ClaimCheck, Report, RunContext, System, Table, set_seed


@dataclass(frozen=True)
class ToyConfig:
    seed: int = 0
    n: int = 200
    dim: int = 5
    noise: float = 0.1
    ridge: float = 1e-2
    fail: bool = False

    def __post_init__(self) -> None:
        if self.n < 2 * self.dim:
            raise ValueError(f"n must be at least 2*dim={2 * self.dim}, got n={self.n}")


def run_toy(cfg: ToyConfig, ctx: RunContext) -> Report:
    if cfg.fail:
        raise RuntimeError("asked to fail")
    s = set_seed(cfg.seed)
    x = torch.randn(cfg.n, cfg.dim, generator=s.torch_generator)
    w = torch.randn(cfg.dim, generator=s.torch_generator)
    y = x @ w + cfg.noise * torch.randn(cfg.n, generator=s.torch_generator)
    half = cfg.n // 2
    xtr, ytr, xte, yte = x[:half], y[:half], x[half:], y[half:]
    for _ in ctx.track(range(3), "toy work"):
        pass
    a = xtr.T @ xtr + cfg.ridge * torch.eye(cfg.dim)
    w_hat = torch.linalg.solve(a, xtr.T @ ytr)
    mse_ridge = float(((xte @ w_hat - yte) ** 2).mean())
    mse_mean = float(((ytr.mean() - yte) ** 2).mean())
    perm = s.rng.permutation(4).tolist()
    return Report(
        tables=[
            Table(
                "test MSE",
                ["method", "mse", "perm"],
                [["ridge", mse_ridge, str(perm)], ["mean", mse_mean, None]],
            )
        ],
        claim_check=ClaimCheck("mse", "ridge", mse_ridge, "mean", mse_mean, higher_is_better=False),
        notes=[f"n={cfg.n}"],
    )


TOY = System(
    name="toy",
    number=0,
    title="A toy",
    claim="ridge beats the mean",
    presets={
        "smoke": ToyConfig(n=20),
        "demo": ToyConfig(),
        "bench": ToyConfig(n=400),
        "paper": ToyConfig(n=10_000),
    },
    run=run_toy,
)
