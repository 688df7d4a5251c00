"""The capability ladder for the LLM agent: the same tasks without and with the needed command named.

    L="--preset bench --set agents=constant,llm --set task_ids=<the demo's ten> --set llm_tasks=5
       --set max_steps=2 --set max_tokens=32 --set agent_timeout_s=120"
    python benchmarks/devops_gym/run.py $L --set named_command=false --tag ladder_base
    python benchmarks/devops_gym/run.py $L --set named_command=true --tag ladder_named
    python benchmarks/devops_gym/ladder.py      # reads both, saves results/devops_gym_ladder.json

Per rung: tasks resolved, and what the agent's commands were: only comments (no command at all), the
named command (`bash solution.sh`) run, or some other command. A rung where the model runs the named
command and still fails would say "cannot solve"; a rung where it writes no command at all says
"cannot act in the format".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.records import markdown_table

RESULTS = Path(__file__).parent / "results"
RUNGS = (("no command named", "ladder_base"), ("`bash solution.sh` named", "ladder_named"))
COLUMNS = ["rung", "tasks", "resolved", "floor resolved", "commands", "comment only", "named command run",
           "other command", "verdict (llm vs floor)"]  # fmt: skip


def command_kind(command: str) -> str:
    """`comment` (no line but comments and blanks), `named` (runs solution.sh), else `other`."""
    lines = [x.strip() for x in command.splitlines() if x.strip() and not x.strip().startswith("#")]
    if not lines:
        return "comment"
    return "named" if any("solution.sh" in x for x in lines) else "other"


def rung_row(name: str, tag: str) -> list:
    """One rung's row from its saved run (`devops_gym_bench_<tag>.json` and its cells)."""
    saved = json.loads((RESULTS / f"devops_gym_bench_{tag}.json").read_text())
    ledger = (RESULTS / f"devops_gym_bench_{tag}.cells.jsonl").read_text()
    cells = [json.loads(x) for x in ledger.splitlines()]
    llm = [c["metrics"] for c in cells if c["arm"] == "llm" and c["metrics"]]
    floor = {c["unit"]: c["metrics"]["resolved"] for c in cells if c["arm"] == "constant"}
    kinds = [command_kind(s["action"]["content"]) for m in llm for s in m["episode"]["steps"]
             if s.get("action") and s["action"].get("kind") == "code"]  # fmt: skip
    check = saved.get("claim_check") or {}
    verdict = f"{check.get('verdict', '')} ({check.get('interval', '')})" if check else "not run"
    resolved, floor_resolved = sum(m["resolved"] for m in llm), sum(floor.get(m["task_id"], 0) for m in llm)
    counts = [kinds.count(k) for k in ("comment", "named", "other")]
    return [name, len(llm), resolved, floor_resolved, len(kinds), *counts, verdict]


def main() -> None:
    if len(sys.argv) > 1:
        print(__doc__)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    missing = [t for _, t in RUNGS if not (RESULTS / f"devops_gym_bench_{t}.json").is_file()]
    if missing:
        print(f"error: run the rungs first (no results/devops_gym_bench_{missing[0]}.json): see --help")
        sys.exit(2)
    rows = [rung_row(name, tag) for name, tag in RUNGS]
    print(markdown_table(COLUMNS, rows))
    out = RESULTS / "devops_gym_ladder.json"
    out.write_text(json.dumps({**provenance(), "columns": COLUMNS, "rows": rows}, indent=1) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
