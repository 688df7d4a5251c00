"""PIC/EPIC at scale on one H200: the stacked trainer on the three tasks × medium / medium-replay ×
{BC, TD3+BC, IQL, PIC, EPIC (N = 10)} × 3 seeds, for as many steps as fit the time budget.

    # here, once: compact data (float16, 50k-transition subsamples, peer tables) into .picdata (~40 MB)
    python benchmarks/pic/stacked_table.py --data-dir runs/pic_data --prepare .picdata
    # on the GPU machine (carry [".picdata"]); writes OUT/pic/pic_h200.json and OUT/pic/actors.pt
    PYTHONPATH=src python benchmarks/pic/device_h200.py --data .picdata --out $OUT/pic --budget-s 420
    # back here: unpack, evaluate every run's actor on MuJoCo, tabulate (results/pic_stacked_h200.json)
    python benchmarks/pic/device_h200.py --unpack FETCHED/pic --into runs/pic_h200
    python benchmarks/pic/stacked_table.py --evaluate runs/pic_h200 --tag h200
    # the CPU rehearsal of every path above, with toy data of the tasks' shapes (a test runs it)
    python benchmarks/pic/device_h200.py --check --out /tmp/picgpu

Each (task, algorithm) stack (2 datasets × 3 seeds = 6 runs) trains in its own process, all 15 at
once: one eager stack is bound by Python's kernel launches, so the GPU serves several. A first round
measures each stack's steps/s with all 15 running (each for at least 20 s); every stack then trains
the same number of steps, the slowest stack's rate × the rest of the budget (rounded down to 1000); a
stack still running 30 s before the budget's end stops at the end of its 5% chunk and reports the
steps it reached. Each stack's actors and JSON land in OUT/pic/stacks as it finishes, so a run cut
off still returns them (`--unpack` reads either layout). Also measured: one stack of
48 runs (TD3+BC and PIC, 2 datasets × 24 seeds) against the SYSTEMS.md probe's 13,200 run-updates/s
for 50 stacked runs. The GPU machine has torch but no gymnasium, MuJoCo or faiss: nothing here imports
them there (`--check` hides them), and evaluation happens back on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # stacked_table.py
sys.path.insert(0, str(HERE.parent))  # _meta.py
HIDDEN = ("gymnasium", "mujoco", "faiss")  # absent on the GPU machine


def _hide_cpu_only_packages() -> None:
    for name in HIDDEN:
        sys.modules[name] = None  # type: ignore[assignment]  # an import now raises ImportError


# --------------------------------------------------------------------------------------- worker


def worker(a: argparse.Namespace) -> None:
    """One (task, algorithm) stack: `--probe` times it, otherwise it trains `--steps` steps and saves."""
    import stacked_table as st

    from iclr26.core.checkpoint import write_text_atomic
    from iclr26.pic.stacked import stack_runs
    from iclr26.pic.train import train_offline

    torch.set_num_threads(1)
    data = [st.load_compact(a.data, a.task, name) for name in st.DATASETS]
    seeds = list(range(a.seeds))
    datasets = [d[0] for d in data]
    stack = stack_runs(
        a.algorithm,
        datasets,
        seeds,
        st.CONFIGS.get(a.algorithm, {}) | json.loads(a.config),
        peers=[d[1] for d in data],
        return_range_scales=[d[2]["return_range_scale"] for d in data],
        device=a.device,
    )
    sync = torch.cuda.synchronize if a.device.startswith("cuda") else (lambda: None)
    if a.probe:
        for _ in range(a.warmup):
            stack.algorithm.update(stack.sampler.sample())
        sync()
        # at least `probe` steps and `probe_s` seconds: the fast stacks keep running while the slow
        # ones are timed, so every rate is measured with all stacks sharing the GPU
        t0, n = time.perf_counter(), 0
        while n < a.probe or time.perf_counter() - t0 < a.probe_s:
            for _ in range(10):
                stack.algorithm.update(stack.sampler.sample())
            n += 10
            sync()
        rate = n / (time.perf_counter() - t0)
        result = {"task": a.task, "algorithm": a.algorithm, "runs": stack.runs, "stack_steps_per_s": rate,
                  "run_updates_per_s": rate * stack.runs}  # fmt: skip
    else:
        # in 5% chunks (the stack's state stays in memory), so a stack that would overrun the
        # deadline stops at the end of a chunk with what it reached
        t0, done, chunk, history = time.perf_counter(), 0, max(1, a.steps // 20), []
        while done < a.steps:
            n = min(chunk, a.steps - done)
            part = train_offline(stack.algorithm, stack.sampler, n, log_every=n)
            history += [{**row, "step": row["step"] + done} for row in part]
            done += n
            if a.deadline and time.time() > a.deadline:
                break
        sync()
        wall = time.perf_counter() - t0
        st.save_actors(a.result.with_suffix(".pt"), stack, data)
        result = {
            "task": a.task,
            "algorithm": a.algorithm,
            "runs": stack.runs_info,
            "steps": done,
            "steps_planned": a.steps,
            "wall_s": wall,
            "stack_steps_per_s": done / wall,
            "run_updates_per_s": done * stack.runs / wall,
            "config": st.CONFIGS.get(a.algorithm, {}),
            "score_dtype": getattr(stack.algorithm.config, "score_dtype", None),
            "history": history,
        }
    write_text_atomic(a.result, json.dumps(result))


# --------------------------------------------------------------------------------------- parent


def _spawn(jobs: list[list[str]], env: dict[str, str]) -> None:
    """Run every worker command at once; raise with the first failure's output."""
    pipe = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    procs = [subprocess.Popen([sys.executable, __file__, *job], env=env, **pipe) for job in jobs]
    outputs = [p.communicate()[0] for p in procs]
    for job, p, text in zip(jobs, procs, outputs, strict=True):
        if p.returncode != 0:
            raise RuntimeError(f"worker {' '.join(job)} failed ({p.returncode}):\n{text[-3000:]}")


def run(a: argparse.Namespace) -> dict:
    """Probe all stacks together, size the steps to the budget, train all stacks together."""
    import stacked_table as st

    t_start = time.time()
    device = "cuda" if torch.cuda.is_available() and not a.check else "cpu"
    work = a.out / "stacks"  # under OUT: what a run cut off had finished still comes back
    work.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(HERE.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]),
    )
    if a.check:
        env["PIC_DEVICE_CHECK"] = "1"
    stacks = [(t, alg) for t in st.TASKS for alg in st.ALGORITHMS]
    common = ["--data", str(a.data), "--device", device, "--config", a.config]

    def job(task: str, algo: str, result: Path, *extra: str) -> list[str]:
        return ["--worker", "--task", task, "--algorithm", algo, "--result", str(result), *common, *extra]

    probe_steps, probe_s, warmup = (3, 0, 1) if a.check else (100, 20, 50)

    def timing(seconds: float) -> list[str]:
        return ["--probe", str(probe_steps), "--probe-s", str(seconds), "--warmup", str(warmup)]

    seeds = ["--seeds", str(a.seeds)]
    _spawn([job(t, alg, work / f"probe_{t}_{alg}.json", *timing(probe_s), *seeds) for t, alg in stacks], env)
    probes = [json.loads((work / f"probe_{t}_{alg}.json").read_text()) for t, alg in stacks]
    # 48-run stacks, one at a time alone on the GPU, against the probe's 13,200 run-updates/s for 50 runs
    big_seeds = "2" if a.check else "24"
    for alg in ("td3_bc", "pic"):
        alone = timing(min(probe_s, 5))  # nothing to compete with: a shorter window suffices
        _spawn([job(st.TASKS[1], alg, work / f"big_{alg}.json", *alone, "--seeds", big_seeds)], env)
    big = [json.loads((work / f"big_{alg}.json").read_text()) for alg in ("td3_bc", "pic")]
    (a.out / "pic_h200_probe.json").write_text(json.dumps({"probes": probes, "stacked_48": big}))
    left = a.budget_s - (time.time() - t_start) - (5 if a.check else 45)  # startup and saving
    slowest = min(p["stack_steps_per_s"] for p in probes)
    unit = 1 if a.check else 1000
    steps = max(unit, int(slowest * left) // unit * unit)
    if a.max_steps:
        steps = min(steps, a.max_steps)
    print(f"probe: slowest stack {slowest:.0f} steps/s, {left:.0f} s left: {steps} steps per run", flush=True)
    # stacks still running at the deadline stop at the end of their current chunk
    stop = ["--deadline", str(t_start + a.budget_s - (0 if a.check else 30))]
    train = ["--steps", str(steps), *seeds, *stop]
    _spawn([job(t, alg, work / f"train_{t}_{alg}.json", *train) for t, alg in stacks], env)
    records = [json.loads((work / f"train_{t}_{alg}.json").read_text()) for t, alg in stacks]
    actors = {f"{t}_{alg}": torch.load(work / f"train_{t}_{alg}.pt", weights_only=True) for t, alg in stacks}
    metas = {f"{t}/{n}": st.load_compact(a.data, t, n)[2] for t in st.TASKS for n in st.DATASETS}
    from _meta import provenance

    summary = {
        **provenance(),
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "check": a.check,
        "budget_s": a.budget_s,
        "steps_per_run": steps,
        "probes": probes,
        "stacked_48": big,
        "probe_reference": {"one_eager_run_updates_per_s": 229, "stacked_50_run_updates_per_s": 13_200},
        "data_meta": metas,
        "records": records,
        "wall_s": time.time() - t_start,
    }
    (a.out / "pic_h200.json").write_text(json.dumps(summary))
    torch.save(actors, a.out / "actors.pt")
    for t, alg in stacks:  # now in actors.pt; the JSONs stay for a look
        (work / f"train_{t}_{alg}.pt").unlink()
    total = sum(r["run_updates_per_s"] for r in records)
    reached = sorted({r["steps"] for r in records})
    print(f"trained {len(records)} stacks × {a.seeds * 2} runs × {reached} steps; {total:.0f} run-updates/s "
          f"together; wrote {a.out}", flush=True)  # fmt: skip
    return summary


def unpack(folder: Path, into: Path) -> None:
    """`pic_h200.json` and `actors.pt` from the GPU run, in the layout `stacked_table.py --evaluate`
    reads; from a run cut off before those were written, the stacks it finished (`stacks/`)."""
    (into / "actors").mkdir(parents=True, exist_ok=True)
    if not (folder / "pic_h200.json").is_file():
        done = sorted(p for p in (folder / "stacks").glob("train_*.json") if p.with_suffix(".pt").is_file())
        for path in done:
            key = path.stem.removeprefix("train_")
            (into / path.name).write_text(path.read_text())
            (into / "actors" / f"{key}.pt").write_bytes(path.with_suffix(".pt").read_bytes())
        print(
            f"no pic_h200.json (the run was cut off): unpacked the {len(done)} stacks it finished into {into}"
        )
        return
    summary = json.loads((folder / "pic_h200.json").read_text())
    actors = torch.load(folder / "actors.pt", weights_only=True)
    for key, saved in actors.items():
        torch.save(saved, into / "actors" / f"{key}.pt")
    for rec in summary["records"]:
        (into / f"train_{rec['task']}_{rec['algorithm']}.json").write_text(json.dumps(rec))
    (into / "data_meta.json").write_text(json.dumps(summary["data_meta"], indent=1))
    (into / "device_summary.json").write_text(
        json.dumps({k: v for k, v in summary.items() if k not in ("records", "data_meta")}, indent=1)
    )
    print(f"unpacked {len(actors)} stacks into {into}")


def check(out: Path) -> None:
    """Toy compact data of the tasks' shapes, the whole device run on the CPU, then unpacking and the
    CPU evaluation (1 episode per run)."""
    import stacked_table as st

    from iclr26.pic.peers import peer_table

    dims = {"HalfCheetah-v5": (17, 6), "Hopper-v5": (11, 3), "Walker2d-v5": (17, 6)}
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for task in st.TASKS:
        obs_dim, act_dim = dims[task]
        for name in st.DATASETS:
            n = 64
            obs = rng.normal(size=(n, obs_dim)).astype(np.float32)
            arrays = {
                "observations": obs.astype(np.float16),
                "actions": rng.uniform(-1, 1, (n, act_dim)).astype(np.float16),
                "rewards": rng.normal(size=n).astype(np.float32),
                "next_observations": (obs + 0.1).astype(np.float16),
                "terminals": rng.uniform(size=n) < 0.05,
                "timeouts": np.arange(n) % 32 == 31,
            }
            np.savez_compressed(
                data / f"{task}_{name}.npz", **arrays, peers=peer_table(obs, st.K).astype(np.int32)
            )
            refs = {"random": 0.0, "expert": 1000.0}
            meta = {"env_id": task, "dataset": name, "transitions": n, "return_range_scale": 1.0,
                    "reference_returns": refs, "agent": "sac"}  # fmt: skip
            (data / f"{task}_{name}.json").write_text(json.dumps(meta))
    ns = argparse.Namespace(data=data, out=out / "device", budget_s=120, seeds=2, check=True, max_steps=4,
                            config=json.dumps({"hidden": [16, 16], "batch_size": 8}))  # fmt: skip
    summary = run(ns)
    n_stacks = len(st.TASKS) * len(st.ALGORITHMS)
    assert summary["steps_per_run"] >= 1 and len(summary["records"]) == n_stacks
    unpack(out / "device", out / "unpacked")
    metas = json.loads((out / "unpacked" / "data_meta.json").read_text())
    rows = st.evaluate_stacks(out / "unpacked", lambda t, n: metas[f"{t}/{n}"], episodes=1)
    md, claim = st.table(rows, [json.loads(p.read_text()) for p in (out / "unpacked").glob("train_*.json")])
    assert len(rows) == n_stacks * 4, len(rows)  # 2 datasets × 2 seeds per stack in the check
    # a run cut off after one stack finished: only `stacks/` came back
    cut = out / "cut" / "stacks"
    cut.mkdir(parents=True)
    rec = summary["records"][0]
    key = f"{rec['task']}_{rec['algorithm']}"
    (cut / f"train_{key}.json").write_text(json.dumps(rec))
    torch.save(torch.load(out / "device" / "actors.pt", weights_only=True)[key], cut / f"train_{key}.pt")
    unpack(cut.parent, out / "cut_unpacked")
    rows_cut = st.evaluate_stacks(out / "cut_unpacked", lambda t, n: {}, episodes=1)  # meta: in the actors
    same = [r["return"] for r in rows if f"{r['task']}_{r['algorithm']}" == key]
    assert [r["return"] for r in rows_cut] == same
    print(md)
    print("check passed:", json.dumps({k: claim[k] for k in ("holds", "pic_over_td3_bc_throughput")}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(".picdata"))
    ap.add_argument("--out", type=Path, default=Path("runs/pic_h200_out"))
    ap.add_argument("--budget-s", type=float, default=420.0, help="seconds for probing and training")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-steps", type=int, default=1_000_000)
    ap.add_argument("--config", default="{}", help="JSON changes to every algorithm's config")
    ap.add_argument("--check", action="store_true", help="the whole run on the CPU with toy data")
    ap.add_argument("--unpack", type=Path, default=None)
    ap.add_argument("--into", type=Path, default=Path("runs/pic_h200"))
    # worker arguments (one stack per process)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--task", help=argparse.SUPPRESS)
    ap.add_argument("--algorithm", help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cpu", help=argparse.SUPPRESS)
    ap.add_argument("--probe", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--probe-s", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        if os.environ.get("PIC_DEVICE_CHECK"):
            _hide_cpu_only_packages()
        worker(a)
    elif a.unpack:
        unpack(a.unpack, a.into)
    elif a.check:
        check(a.out)
    else:
        _hide_cpu_only_packages()
        run(a)


if __name__ == "__main__":
    main()
