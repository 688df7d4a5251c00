"""The optional LLM generation agent: how often a chat model's proposed mission (instruction and
sub-tasks, as JSON) passes the validator (`missions.check_proposal`). The paper's GPT-4o-mini
agent: 64%. Default model: the embedded SmolLM2-135M (JSON-schema constrained when the backend
supports it); `--backend http` asks the server at ICLR26_LLM_BASE_URL.

    python benchmarks/conavbench/llm_generation.py --triples 30

Saves results/llm_generation_<backend>.json with every proposal's verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.conavbench import missions, tools
from iclr26.conavbench.house import generate_scene
from iclr26.core.llm import get_chat_model
from iclr26.core.seeding import derive_seed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--triples", type=int, default=30)
    ap.add_argument("--backend", default="embedded")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    model = get_chat_model(a.backend)
    rows, reasons = [], Counter()
    for k in range(a.triples):
        rng = np.random.default_rng(derive_seed(a.seed, "llm-generation", k))
        scene = generate_scene(rng, f"gen_{k:03d}", n_rooms=int(rng.integers(6, 11)))
        triple = missions.sample_triple(rng, scene, tools.ShortestPaths(scene))
        if triple is None:
            continue
        p = missions.propose_instruction(model, scene, triple, seed=k)
        reasons[p.reason or "passed"] += 1
        rows.append({"scene": scene.id, "ok": p.ok, "reason": p.reason, "instruction": p.instruction[:200]})
        print(k, p.ok, p.reason[:80], flush=True)
    rate = sum(r["ok"] for r in rows) / len(rows)
    out = Path(__file__).parent / "results" / f"llm_generation_{a.backend}.json"
    payload = {**provenance(), "model": getattr(model, "name", a.backend), "proposals": len(rows)}
    payload |= {"success_rate": round(100 * rate, 1), "reasons": dict(reasons.most_common()), "rows": rows}
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"success rate {100 * rate:.1f}% of {len(rows)}; saved {out}")
    close = getattr(model, "close", None)
    if close:
        close()


if __name__ == "__main__":
    main()
