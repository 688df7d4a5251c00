"""Approximation error of the Nyström + Newton–Schulz Laplacian attention against the exact
O(N²) Laplacian-kernel attention, as the number of landmarks and of iterations varies.

Queries, keys and values are image patches (the `textures` task, 144 tokens of 4×4 patches)
mapped to heads by fixed random projections, so the token sequences have the spatial
smoothness of real images. Error = ‖Y_nyström − Y_exact‖_F / ‖Y_exact‖_F, averaged over images.

    python benchmarks/laplacianformer/approximation.py
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import torch
from einops import rearrange

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.laplacianformer import exact_laplacian_attention, nystrom_laplacian_attention
from iclr26.laplacianformer.baselines import landmark_pool
from iclr26.laplacianformer.data import load_task
from iclr26.laplacianformer.laplace_kernel import laplace_kernel
from iclr26.laplacianformer.newton_schulz import newton_schulz_inverse

LANDMARKS = (4, 9, 16, 36, 72, 144)
ITERS = (2, 5, 10, 20, 40)
HEAD_DIM, LAM, IMAGES = 16, 4.0, 32


def tokens(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v (IMAGES, 144, HEAD_DIM) from texture patches through random projections."""
    task = load_task("textures", seed=0)
    x = task.x_test[:IMAGES].double()
    patches = rearrange(x, "b c (h p) (w q) -> b (h w) (c p q)", p=4, q=4)  # 144 × 16
    patches = (patches - patches.mean()) / patches.std()
    g = torch.Generator().manual_seed(seed)
    proj = [torch.randn(16, HEAD_DIM, generator=g, dtype=torch.float64) * 0.25 for _ in range(3)]
    return patches @ proj[0], patches @ proj[1], patches @ proj[2]


def main() -> None:
    torch.set_num_threads(2)
    q, k, v = tokens()
    rows = []
    for norm in ("none", "injective"):
        exact = exact_laplacian_attention(q, k, v, LAM, norm)
        for m in LANDMARKS:
            w = laplace_kernel(landmark_pool(q, m), landmark_pool(k, m), LAM)
            cond = float(torch.linalg.cond(w + 1e-4 * torch.eye(m, dtype=w.dtype)).median())
            for iters in ITERS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    approx = nystrom_laplacian_attention(q, k, v, m, LAM, ns_iters=iters, normalization=norm)
                    x = newton_schulz_inverse(w + 1e-4 * torch.eye(m, dtype=w.dtype), iters, tol=None)
                eye = torch.eye(m, dtype=w.dtype)
                resid = float((torch.linalg.matrix_norm(eye - (w + 1e-4 * eye) @ x) / m**0.5).median())
                err = ((approx - exact).flatten(1).norm(dim=1) / exact.flatten(1).norm(dim=1)).mean()
                rows.append([norm, m, iters, float(err), resid, cond])
                print(
                    f"{norm:9s} m={m:4d} iters={iters:3d}  rel.err {float(err):.4f}  "
                    f"NS residual {resid:.2e}  cond(W) {cond:.1e}"
                )
    out = Path(__file__).parent / "results" / "approximation.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                **provenance(),
                "lam": LAM,
                "head_dim": HEAD_DIM,
                "images": IMAGES,
                "tokens": 144,
                "columns": ["normalization", "landmarks", "ns_iters", "rel_error", "ns_residual", "cond_W"],
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
