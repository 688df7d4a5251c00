"""Merge `locomotion.py` result files into the README's locomotion tables (markdown on stdout).

    python benchmarks/pic/table.py benchmarks/pic/results/pic_locomotion_*_10k.json

One row per task × dataset, one column per algorithm: normalized score mean ± sd over seeds, with our
datasets' random/expert returns ("ours") and D4RL's reference returns ("D4RL"); the best mean of each
row in bold. Then gradient steps/s per task, each as a ratio to TD3+BC measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ORDER = ("bc", "td3_bc", "iql", "pic", "edac", "epic")
LABELS = {"bc": "BC", "td3_bc": "TD3+BC", "iql": "IQL", "pic": "PIC-TD3", "edac": "EDAC", "epic": "EPIC"}


def _runs(path: Path) -> list[dict]:
    """One entry per task in a result file: its scores per (dataset, algo), steps/s per algo, EPIC's N."""
    out = []
    for task, res in json.loads(path.read_text())["tasks"].items():
        score_t, speed_t = res["tables"][0], res["tables"][1]
        cols = score_t["columns"]
        scores: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
        for row in score_t["rows"]:
            if row[1] not in LABELS:
                continue  # a floor (random actions, an untrained actor): not a column of these tables
            refs = {}
            for ref in ("ours", "d4rl"):
                if f"normalized ({ref})" in cols:
                    i = cols.index(f"normalized ({ref})")
                    refs[ref] = (row[i], row[i + 1])
            scores[(row[0].split("/", 1)[1], row[1])] = refs
        speed = {row[0]: row[1] for row in speed_t["rows"]}
        cfg = res["config"]
        out.append({"task": task, "scores": scores, "speed": speed, "file": path.name, "config": cfg})
    return out


def _label(algo: str, cfg: dict) -> str:
    if algo not in ("epic", "edac"):
        return LABELS[algo]
    # results saved since the nested configs hold N per algorithm; older ones, one flat num_critics
    n = cfg[algo]["num_critics"] if isinstance(cfg.get(algo), dict) else cfg["num_critics"]
    return f"{LABELS[algo]} (N={n})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    a = ap.parse_args()
    runs = [r for path in a.files for r in _runs(path)]
    merged: dict[str, dict[tuple[str, str], dict]] = {}  # task -> (dataset, algo) -> refs
    labels: dict[str, str] = {}
    for r in runs:
        for (dataset, algo), refs in r["scores"].items():
            if (dataset, algo) in merged.setdefault(r["task"], {}):
                # the same seeds and settings rerun give the same scores; flag it rather than pick silently
                print(f"note: {r['task']} {dataset} {algo} also in {r['file']}; the later file is shown",
                      file=sys.stderr)  # fmt: skip
            merged[r["task"]][(dataset, algo)] = refs
            labels[algo] = _label(algo, r["config"])
    algos = [x for x in ORDER if x in labels]
    print("| task / dataset | score | " + " | ".join(labels[x] for x in algos) + " |")
    print("|---|---|" + "---|" * len(algos))
    for task, scores in merged.items():
        for dataset in ("medium", "medium-replay"):
            for ref, ref_label in (("ours", "ours"), ("d4rl", "D4RL")):
                cells = {x: scores.get((dataset, x), {}).get(ref) for x in algos}
                best = max((v[0] for v in cells.values() if v), default=None)
                texts = []
                for x in algos:
                    v = cells[x]
                    text = "—" if v is None else f"{v[0]:.1f} ± {v[1]:.1f}"
                    texts.append(f"**{text}**" if v and v[0] == best else text)
                name = task.removesuffix("-v5")
                print(f"| {name} {dataset} | {ref_label} | " + " | ".join(texts) + " |")
    print()
    print("steps/s (× TD3+BC in the same run):")
    print()
    print("| task (result file) | " + " | ".join(labels[x] for x in algos) + " |")
    print("|---|" + "---|" * len(algos))
    for r in runs:
        base = r["speed"].get("td3_bc")
        texts = []
        for x in algos:
            v = r["speed"].get(x)
            texts.append("—" if v is None else f"{v:.1f} ({v / base:.2f})" if base else f"{v:.1f}")
        print(f"| {r['task'].removesuffix('-v5')} ({r['file']}) | " + " | ".join(texts) + " |")


if __name__ == "__main__":
    main()
