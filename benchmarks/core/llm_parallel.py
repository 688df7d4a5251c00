"""LLM cells k at a time against one server: sci_refine's suite at k = 1 and k = 4 in flight.

    python benchmarks/core/llm_parallel.py                  # 8 questions, 3 rows, k = 1 and 4
    python benchmarks/core/llm_parallel.py --questions 16 --jobs 1 2 4

The server is the embedded SmolLM2-135M's own llama.cpp HTTP server (xllamacpp, `n_parallel` slots
decoding together, on 127.0.0.1), reached as a user's server is: only `ICLR26_LLM_BASE_URL` set, the
run `--llm http --parallel threads --jobs k`. Every run starts in a new folder, so its response cache
is empty (no call is answered from it; checked), and the reasoning temperature is 0. Saves
results/llm_parallel.json: wall seconds per k, the speed-up over k = 1, whether every cell's answer
and tokens are the same as at k = 1, with the command, date and machine. Not part of the test suite.

    python benchmarks/core/llm_parallel.py --slots 1 --tag slots1   # requests queue: same answers

With `--slots 4` the server decodes the k requests in one batch, and llama.cpp's batched kernels are
not bit-identical to one sequence at a time, so a greedy reply may differ; with one slot it cannot.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.llm.embedded import EmbeddedChatModel, embedded_threads
from iclr26.core.runner import run_system
from iclr26.sci_refine import SYSTEM

RESULTS = Path(__file__).parent / "results" / "llm_parallel.json"
COMPARED = ("extracted", "correct", "tokens", "calls", "steps", "retrieval_calls")


def _cells(run_dir: Path) -> dict[tuple[str, str], dict]:
    lines = (run_dir / CELLS_FILE).read_text().splitlines()
    return {(c["arm"], c["unit"]): c["metrics"] for c in map(json.loads, lines)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--slots", type=int, default=4, help="the server's n_parallel slots")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--tag", default="", help="suffix of the results file, for another configuration")
    args = ap.parse_args()
    settings = {
        "rows": "baseline,explicit_rag,injector",
        "n_questions": str(args.questions),
        "max_tokens": str(args.max_tokens),
        "temperature": "0",
    }
    server = EmbeddedChatModel(n_parallel=args.slots)
    os.environ["ICLR26_LLM_BASE_URL"] = server.base_url
    os.environ["ICLR26_LLM_MAX_CONCURRENCY"] = str(max(args.jobs))
    for var in ("ICLR26_LLM_MODEL", "ICLR26_LLM_API_KEY"):
        os.environ.pop(var, None)
    root = Path(tempfile.mkdtemp(prefix="llm_parallel-"))
    runs: dict[int, dict] = {}
    cells: dict[int, dict] = {}
    try:
        for k in args.jobs:
            out = root / f"k{k}"
            started = time.perf_counter()
            record, run_dir = run_system(
                SYSTEM, "smoke", settings, out=out, llm="http", jobs=k, parallel="threads"
            )
            wall = time.perf_counter() - started
            cells[k] = _cells(run_dir)
            usage = record.llm_usage or {}
            runs[k] = {
                "wall_s": round(wall, 2),
                "calls": usage.get("calls"),
                "cached_calls": usage.get("cached_calls"),
                "tokens": usage.get("total_tokens"),
            }
            assert not usage.get("cached_calls"), "a fresh run folder answered from its cache"
            print(f"k={k}: {wall:.1f} s, {usage.get('calls')} calls")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)
    first = args.jobs[0]
    for k in args.jobs:
        diff = [
            f"{arm}/{unit}: {m}"
            for (arm, unit), metrics in cells[first].items()
            for m in COMPARED
            if cells[k].get((arm, unit), {}).get(m) != metrics.get(m)
        ]
        runs[k] |= {"speed_up": round(runs[first]["wall_s"] / runs[k]["wall_s"], 2),
                    "answers_equal": not diff, "differences": diff[:20]}  # fmt: skip
    payload = {
        **provenance(),
        "suite": f"sci_refine smoke, {args.questions} questions, rows baseline, explicit_rag, injector "
        f"(+ 4 reference arms that call no model), max_tokens {args.max_tokens}, temperature 0",
        "server": f"embedded SmolLM2-135M-Instruct (xllamacpp HTTP on 127.0.0.1), {args.slots} slots, "
        f"{embedded_threads()} llama.cpp threads, no prompt-prefix reuse",
        "runs": {str(k): v for k, v in runs.items()},
    }
    path = RESULTS.with_stem(f"{RESULTS.stem}_{args.tag}") if args.tag else RESULTS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(json.dumps(payload["runs"], indent=1))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
