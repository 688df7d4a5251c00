"""Tables and plot for the DASH README from the H200 run's JSON lines, with the DAG model's
predicted schedule ranking beside the measured one.

    python benchmarks/dash/report.py [--results benchmarks/dash/results/h200.jsonl]
    python benchmarks/dash/report.py --results RUN.jsonl --spin-free   # issue 31's table and plot

Writes `report.md` and `h200_backward.png` next to the JSON lines; with `--spin-free` (alias
`--two-pass`) prints the spin-free variants' table (two-pass dQ, per-KV-block partials, each with its
`ratio_to_atomic`) and draws `<results stem>.png` beside the JSON lines. Variants a run did not
time are left out, so older runs give their old tables.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from pathlib import Path

from iclr26.dash.simulator import compare_schedules

SCHEDULES = ("ascending", "descending", "shift")
SPIN_FREE = {"two_pass": "two-pass", "partials": "partials"}  # dq_mode -> label
HERE = Path(__file__).resolve().parent


def _rank(values: dict[str, float], higher_is_better: bool) -> str:
    """'a > b ≈ c': schedules best first; ≈ when within 2%."""
    order = sorted(values, key=values.get, reverse=higher_is_better)
    out = order[0]
    for prev, cur in itertools.pairwise(order):
        a, b = values[prev], values[cur]
        close = abs(a - b) <= 0.02 * max(abs(a), abs(b))
        out += (" ≈ " if close else " > ") + cur
    return out


def _table(head: list[str], rows: list[list]) -> str:
    def fmt(x):
        return (
            f"{x:.0f}"
            if isinstance(x, float) and abs(x) >= 10
            else (f"{x:.2f}" if isinstance(x, float) else str(x))
        )

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(fmt(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def _spin_free_in(rows: list[dict]) -> list[str]:
    """The spin-free dQ modes (issue 31) that the run's table phase timed."""
    return [m for m in SPIN_FREE if any(f"bwd_ours_{m}" in r for r in rows if r["phase"] == "table")]


def _ratio(r: dict, mode: str) -> float:
    """A variant's backward TFLOP/s over our atomic backward's at the same shape in the same run."""
    return r.get(f"ratio_to_atomic_ours_{mode}", r[f"bwd_ours_{mode}"] / r["bwd_ours_atomic"])


def _latest_table_rows(rows: list[dict], modes: list[str]) -> list[dict]:
    """The latest table row per (head_dim, mask, seq) that timed `modes`, head_dim 128 first."""
    last = {
        (r["hdim"], r["causal"], r["seq"]): r
        for r in rows
        if r["phase"] == "table" and all(f"bwd_ours_{m}" in r for m in modes)
    }
    return sorted(last.values(), key=lambda r: (-r["hdim"], not r["causal"], r["seq"]))


def spin_free_section(rows: list[dict]) -> str:
    """Issue 31's table: the spin-free deterministic variants against our atomic backward
    (`ratio_to_atomic`), the best ordered-spin schedule, and SDPA flash and cuDNN, in backward
    TFLOP/s; above it, each variant's check-phase repeatability and error."""
    modes = _spin_free_in(rows)
    md = []
    for m in modes:
        checks = [r for r in rows if r["phase"] == "check" and m in r["max_err"]]
        worst = max((max(r["max_err"][m]) - max(r["max_err"]["atomic"]) for r in checks), default=0.0)
        md.append(
            f"- Check phase: {len(checks)} cases (bf16/fp16 × head_dim 64/128 × causal/full × 3 schedules × "
            f"2 grids, length 1000): {SPIN_FREE[m]} bitwise repeatable over 3 runs in "
            f"{sum(bool(r['repeatable'][m]) for r in checks)}/{len(checks)}; its largest error against "
            f"fp32 SDPA minus the atomic backward's: {worst:.1e}."
        )
    same = [
        r["partials_equals_two_pass"]
        for r in rows
        if r["phase"] == "check" and "partials_equals_two_pass" in r
    ]
    if same:
        md.append(
            f"- Partials give the same bits as two-pass (O, dQ, dK, dV) in {sum(same)}/{len(same)} cases."
        )
    md.append("")
    labels = [SPIN_FREE[m] for m in modes]
    head = ["head_dim", "mask", "seq", "atomic", *labels, *(f"{x} / atomic" for x in labels),
            "best ordered / atomic", "flash", "cuDNN", *(f"{x} / flash" for x in labels)]  # fmt: skip
    body = []
    for r in _latest_table_rows(rows, modes):
        ordered = max(r.get(f"ratio_to_atomic_ours_{s}", 0.0) for s in SCHEDULES)
        flash, cudnn = r.get("bwd_flash", math.nan), r.get("bwd_cudnn", math.nan)  # nan: backend failed
        body.append([r["hdim"], "causal" if r["causal"] else "full", r["seq"], r["bwd_ours_atomic"],
                     *(r[f"bwd_ours_{m}"] for m in modes), *(_ratio(r, m) for m in modes), ordered,
                     flash, cudnn, *(r[f"bwd_ours_{m}"] / flash for m in modes)])  # fmt: skip
    return "\n".join(md) + _table(head, body)


def _panel(ax, hdim: int, mask: str) -> None:
    """One (head_dim, mask) panel's axes: log2 lengths, title, grid."""
    ax.set_xscale("log", base=2)
    ax.set_title(f"head_dim {hdim}, {mask}")
    ax.set_xlabel("sequence length")
    ax.grid(alpha=0.3)


def spin_free_plot(rows: list[dict], path: Path) -> Path:
    """Backward TFLOP/s against length: the spin-free variants, our atomic, the best ordered
    schedule, flash, cuDNN."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = _spin_free_in(rows)
    last = _latest_table_rows(rows, modes)
    fig, axes = plt.subplots(1, 4, figsize=(18, 3.8), sharey=True)
    for ax, (hdim, causal) in zip(axes, itertools.product((128, 64), (True, False)), strict=True):
        rs = sorted((r for r in last if (r["hdim"], r["causal"]) == (hdim, causal)), key=lambda r: r["seq"])
        seqs = [r["seq"] for r in rs]
        lines = {f"{SPIN_FREE[m]} (deterministic)": [r[f"bwd_ours_{m}"] for r in rs] for m in modes}
        lines |= {
            "ours atomic": [r["bwd_ours_atomic"] for r in rs],
            "best ordered (deterministic)": [max(r[f"bwd_ours_{s}"] for s in SCHEDULES) for r in rs],
            "SDPA flash": [r.get("bwd_flash", math.nan) for r in rs],
            "SDPA cuDNN": [r.get("bwd_cudnn", math.nan) for r in rs],
        }
        for label, ys in lines.items():
            ax.plot(seqs, ys, marker="o", label=label)
        _panel(ax, hdim, "causal" if causal else "full")
    axes[0].set_ylabel("backward TFLOP/s (bf16)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=HERE / "results" / "h200.jsonl")
    ap.add_argument("--r", type=float, default=0.25, help="reduction/compute cost ratio for the DAG model")
    ap.add_argument(
        "--spin-free",
        "--two-pass",
        action="store_true",
        help="print only the spin-free variants' table (issue 31) and draw <results stem>.png",
    )
    a = ap.parse_args()
    rows = [json.loads(line) for line in a.results.read_text().splitlines()]
    if a.spin_free:
        print(spin_free_section(rows))
        print(f"saved {spin_free_plot(rows, a.results.with_suffix('.png'))}")
        return
    env = next(r for r in rows if r["phase"] == "env")
    md = [
        f"Measured on {env['gpu']} ({env['sms']} SMs), torch {env['torch']}, triton {env['triton']}, "
        f"{env['date']}; `python benchmarks/dash/device_h200.py --out DIR`, then this script.",
        "",
    ]

    checks = [r for r in rows if r["phase"] == "check"]
    by_dtype: dict[str, float] = {}
    for r in checks:
        err = max(max(v) for v in r["max_err"].values())
        by_dtype[r["dtype"]] = max(by_dtype.get(r["dtype"], 0.0), err)
    det_modes = [
        m for m in ("ordered", "ordered_lazy", *SPIN_FREE) if any(m in r["repeatable"] for r in checks)
    ]
    det_rep = {m: all(r["repeatable"][m] for r in checks if m in r["repeatable"]) for m in det_modes}
    lazy_same = [r["lazy_equals_ordered"] for r in checks if r.get("lazy_equals_ordered") is not None]
    md += [
        "### Correctness and repeatability (check phase)",
        "",
        f"- {len(checks)} cases (bf16/fp16 × head_dim 64/128 × causal/full × 3 schedules × default grid / "
        "3 persistent programs), length 1000 (tails in every tile): largest |error| against fp32 SDPA "
        "over O, dQ, dK, dV: "
        + ", ".join(f"{k.replace('torch.', '')} {v:.4f}" for k, v in by_dtype.items())
        + ".",
        "- Deterministic backward bitwise equal over 3 runs in every case: "
        + ", ".join(f"{m} {ok}" for m, ok in det_rep.items())
        + (f". Lazy release gives the same bits as eager: {all(lazy_same)}." if lazy_same else "."),
        f"- In-kernel ordered sum equals the deferred fixed-order sum bitwise: "
        f"{sum(bool(r['ordered_equals_deferred']) for r in checks)}/{len(checks)} cases (see the README).",
        "",
    ]
    sdpa = [r for r in rows if r["phase"] == "sdpa_det"]
    if sdpa:
        md += [
            "### PyTorch SDPA under `torch.use_deterministic_algorithms(True)` (16k, head_dim 128, 3 runs)",
            "",
            _table(
                ["backend", "mask", "backward bitwise repeatable"],
                [
                    [r["backend"], "causal" if r["causal"] else "full", r.get("repeatable", r.get("error"))]
                    for r in sdpa
                ],
            ),
            "",
        ]

    table_rows = [r for r in rows if r["phase"] == "table"]
    has_lazy = any("bwd_ours_ascending_lazy" in r for r in table_rows)  # not in --quick runs
    spin_free = _spin_free_in(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(18, 3.8))
    panel = 0
    for hdim in (128, 64):
        for causal in (True, False):
            rs = sorted(
                (r for r in table_rows if r["hdim"] == hdim and r["causal"] == causal), key=lambda r: r["seq"]
            )
            if not rs:
                continue
            mask = "causal" if causal else "full"
            body, rank_rows = [], []
            for r in rs:
                det = {s: r[f"bwd_ours_{s}"] for s in SCHEDULES}
                best = max(det.values())
                lazy = [r.get(f"bwd_ours_{s}_lazy", float("nan")) for s in SCHEDULES] if has_lazy else []
                free = [r.get(f"bwd_ours_{m}", float("nan")) for m in spin_free]
                free_ratio = [_ratio(r, m) if f"bwd_ours_{m}" in r else float("nan") for m in spin_free]
                sdpa = [r["bwd_flash"], r["bwd_efficient"], r["bwd_cudnn"]]
                gains = [
                    best / r["bwd_ours_atomic"],
                    *free_ratio,
                    det["descending"] / det["ascending"],
                    det["shift"] / det["ascending"],
                ]
                body.append(
                    [
                        r["seq"],
                        *(det[s] for s in SCHEDULES),
                        *lazy,
                        *free,
                        r["bwd_ours_atomic"],
                        *sdpa,
                        *gains,
                    ]
                )
                b, h = r["batch"], r["heads"]
                bm, bn = r["bwd_cfg_det"][0], r["bwd_cfg_det"][1]
                pred = {}
                for ratio in (a.r, 2 * a.r):
                    res = compare_schedules(math.ceil(r["seq"] / bm), math.ceil(r["seq"] / bn), causal, b * h,
                                            env["sms"], 1.0, ratio, block_m=bm, block_n=bn)  # fmt: skip
                    pred[ratio] = {s: res[s].makespan for s in SCHEDULES}
                p0 = pred[a.r]
                rank_rows.append(
                    [r["seq"], _rank(det, True), _rank(p0, False), _rank(pred[2 * a.r], False),
                     p0["ascending"] / p0["shift"], p0["ascending"] / p0["descending"]]
                )  # fmt: skip
            md += [
                f"### Backward TFLOP/s, head_dim {hdim}, {mask} mask, bf16, 16k tokens "
                f"(batch = 16k/seq, heads = {2048 // hdim})",
                "",
                f"Tiles: deterministic {rs[0]['bwd_cfg_det']}, atomic {rs[0]['bwd_cfg']} "
                "(BLOCK_M, BLOCK_N, warps, stages; each the best of the sweep for its mode; the spin-free "
                "variants use the atomic's).",
                "",
                _table(
                    [
                        "seq",
                        *(f"{s} (det.)" for s in SCHEDULES),
                        *(f"{s} lazy" for s in SCHEDULES if has_lazy),
                        *(f"{SPIN_FREE[m]} (det.)" for m in spin_free),
                        "ours atomic",
                        "SDPA flash",
                        "SDPA efficient",
                        "SDPA cuDNN",
                        "best ordered / atomic",
                        *(f"{SPIN_FREE[m]} / atomic" for m in spin_free),
                        "desc./asc.",
                        "shift/asc.",
                    ],
                    body,
                ),
                "",
                f"Schedule ranking, measured vs the DAG model (r/c = {a.r} and {2 * a.r}; ≈: within 2%):",
                "",
                _table(
                    [
                        "seq",
                        "measured",
                        f"model r/c={a.r}",
                        f"model r/c={2 * a.r}",
                        "model shift ×",
                        "model desc. ×",
                    ],
                    rank_rows,
                ),
                "",
            ]
            ax = axes[panel]
            panel += 1
            xs = [r["seq"] for r in rs]
            for key, label, style in [
                *((f"bwd_ours_{s}", f"{s} (det.)", "-o") for s in SCHEDULES),
                *((f"bwd_ours_{m}", f"{SPIN_FREE[m]} (det.)", "-.D") for m in spin_free),
                ("bwd_ours_atomic", "ours atomic", "--s"),
                ("bwd_flash", "SDPA flash", ":^"),
                ("bwd_cudnn", "SDPA cuDNN", ":v"),
            ]:
                ax.plot(xs, [r.get(key, float("nan")) for r in rs], style, label=label)
            _panel(ax, hdim, mask)
    axes[0].set_ylabel("backward TFLOP/s")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Attention backward on {env['gpu']} (bf16): deterministic schedules vs atomic and SDPA")
    fig.tight_layout()
    fig.savefig(a.results.parent / "h200_backward.png", dpi=120)

    sweep = [r for r in rows if r["phase"] == "sweep" and "tflops" in r]
    md += [
        "### Tile sweep at seq 16k (backward TFLOP/s)",
        "",
        _table(
            ["head_dim", "mask", "tiles", "prefetch", "mode", "TFLOP/s"],
            [
                [
                    r["hdim"],
                    "causal" if r["causal"] else "full",
                    tuple(r["bwd"]),
                    r.get("prefetch"),
                    r["mode"],
                    r["tflops"],
                ]
                for r in sweep
            ],
        ),
        "",
    ]
    if spin_free:
        md += [
            "### Spin-free deterministic variants (issue 31), backward TFLOP/s",
            "",
            spin_free_section(rows),
            "",
        ]
    (a.results.parent / "report.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
