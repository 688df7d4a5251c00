"""Merge `locomotion.py` result files into the README's locomotion tables (markdown on stdout).

    python benchmarks/pic/table.py benchmarks/pic/results/pic_locomotion_*_10k.json

One row per task × dataset, one column per algorithm: normalized score mean ± sd over seeds, with our
datasets' random/expert returns ("ours") and D4RL's reference returns ("D4RL"); the best mean of each
row in bold. Then gradient steps/s per task, each as a ratio to TD3+BC measured in the same run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ORDER = ("bc", "td3_bc", "iql", "pic", "edac", "epic")
LABELS = {"bc": "BC", "td3_bc": "TD3+BC", "iql": "IQL", "pic": "PIC-TD3", "edac": "EDAC", "epic": "EPIC"}


def _tables(path: Path) -> dict[str, dict]:
    """task -> {"scores": {(dataset, algo): {ref: (mean, sd)}}, "speed": {algo: steps/s}, "steps": int}."""
    out = {}
    for task, res in json.loads(path.read_text())["tasks"].items():
        score_t, speed_t = res["tables"][0], res["tables"][1]
        cols = score_t["columns"]
        scores: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
        for row in score_t["rows"]:
            dataset = row[0].split("/", 1)[1]
            refs = {}
            for ref in ("ours", "d4rl"):
                if f"normalized ({ref})" in cols:
                    i = cols.index(f"normalized ({ref})")
                    refs[ref] = (row[i], row[i + 1])
            scores[(dataset, row[1])] = refs
        speed = {row[0]: row[1] for row in speed_t["rows"]}
        out[task] = {"scores": scores, "speed": speed, "steps": res["config"]["steps"], "file": path.name}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    a = ap.parse_args()
    tasks: dict[str, dict] = {}
    for path in a.files:
        tasks.update(_tables(path))
    algos = [x for x in ORDER if any(x == al for t in tasks.values() for (_, al) in t["scores"])]
    print("| task / dataset | score | " + " | ".join(LABELS[x] for x in algos) + " |")
    print("|---|---|" + "---|" * len(algos))
    for task, t in tasks.items():
        for dataset in ("medium", "medium-replay"):
            for ref, ref_label in (("ours", "ours"), ("d4rl", "D4RL")):
                cells = {x: t["scores"].get((dataset, x), {}).get(ref) for x in algos}
                best = max((v[0] for v in cells.values() if v), default=None)
                texts = []
                for x in algos:
                    v = cells[x]
                    text = "—" if v is None else f"{v[0]:.1f} ± {v[1]:.1f}"
                    texts.append(f"**{text}**" if v and v[0] == best else text)
                name = task.removesuffix("-v5")
                print(f"| {name} {dataset} | {ref_label} | " + " | ".join(texts) + " |")
    print()
    print("| task (run) | " + " | ".join(f"{LABELS[x]} steps/s (× TD3+BC)" for x in algos) + " |")
    print("|---|" + "---|" * len(algos))
    for task, t in tasks.items():
        base = t["speed"].get("td3_bc")
        texts = []
        for x in algos:
            v = t["speed"].get(x)
            texts.append("—" if v is None else f"{v:.1f} ({v / base:.2f})" if base else f"{v:.1f}")
        print(f"| {task.removesuffix('-v5')} ({t['file']}) | " + " | ".join(texts) + " |")


if __name__ == "__main__":
    main()
