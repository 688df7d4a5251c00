"""Generate the locomotion datasets (the `mujoco` generation preset) into a shared data dir, resumably.

    python benchmarks/pic/generate.py HalfCheetah-v5 Walker2d-v5 --data-dir runs/pic_data_sac   # SAC
    python benchmarks/pic/generate.py Hopper-v5 --agent td3 --seed 1 --data-dir runs/pic_data_td3_seed1

Progress (env step, seconds, latest evaluation return) is printed every 5,000 env steps. An
interrupted run continues from `<data dir>/<env>/checkpoint.pt` when the same command is rerun.
A run repeats bitwise from its seed, resumed or not, on CPUs with AVX2 (MKL's AVX2 path is pinned).
The locomotion driver (`locomotion.py`) then reuses these datasets when given the same seed.

    python benchmarks/pic/generate.py HalfCheetah-v5 Walker2d-v5 Hopper-v5 --summary \
        --data-dir runs/pic_data_sac runs/pic_data_td3 --link runs/pic_data \
        --history benchmarks/pic/results/pic_datasets_td3_2026-12-01.json

`--summary` generates nothing: it prints the README's dataset table from the manifests already in
the data dirs and saves it to `results/pic_datasets.json` (per task the agent with the higher
held-out expert return in `tasks`, the other in `other_runs`), with each agent's evaluation curve,
and draws the curves in `results/behavior_curves.png`. `--link` points `runs/pic_data/<task>` at the
chosen datasets, where `stacked_table.py` reads them; `--history` adds an earlier summary's curves.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# MKL's AVX2 code path on every CPU, set before torch makes its first MKL call: unset, MKL takes the
# widest path the CPU has and the same seed gives another run on an AVX-512 CPU than on an AVX2 one
# (`iclr26.pic.data.blas_numerics`; the manifests record the setting)
os.environ.setdefault("MKL_CBWR", "AVX2")

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.pic.config import generation_preset
from iclr26.pic.generation import generate_datasets


def _progress(env_id: str):
    """A progress callback that prints every 5,000 env steps and each written dataset."""
    t0, last = time.time(), {"eval": float("nan")}

    def progress(step: int, total: int, info: dict) -> None:
        if info.get("eval_return") is not None:
            last["eval"] = info["eval_return"]
        took = f"{env_id} {time.time() - t0:.0f}s"
        if info.get("phase") == "dataset":
            print(f"{took} wrote {info['name']} -> {info['path']}", flush=True)
        elif step % 5000 == 0:
            print(f"{took} step {step}/{total} eval {last['eval']:.1f}", flush=True)

    return progress


def training_windows(folder: Path, window: int = 25_000) -> list[dict]:
    """From the run's replay buffer (its checkpoint): per `window` env steps, the mean length and
    return of the training episodes that end in it and the share of saturated actions (|a| > 0.99),
    which tell a stuck agent (short "lunge and fall" episodes) from a slow one."""
    import torch

    ckpt = folder / "checkpoint.pt"
    if not ckpt.is_file():
        return []
    buf = torch.load(ckpt, weights_only=True)["buffer"]
    rewards, actions = buf["rewards"].numpy(), buf["actions"].numpy()
    ends = np.flatnonzero(buf["terminals"].numpy() | buf["timeouts"].numpy())
    starts = np.r_[0, ends[:-1] + 1]
    returns = np.add.reduceat(rewards, starts) if len(ends) else np.zeros(0)
    rows = []
    for lo in range(0, len(rewards), window):
        inside = (ends >= lo) & (ends < lo + window)
        rows.append(
            {
                "steps": [lo, min(lo + window, len(rewards))],
                "episodes": int(inside.sum()),
                "mean_length": float((ends - starts + 1)[inside].mean()) if inside.any() else None,
                "mean_return": float(returns[inside].mean()) if inside.any() else None,
                "saturated_actions": float((np.abs(actions[lo : lo + window]) > 0.99).mean()),
            }
        )
    return rows


def value_check(folder: Path, config: dict, episodes: int = 30, first: int = 50) -> dict | None:
    """The final agent's critics against what happened: over the last `episodes` training episodes,
    the mean of min_j Q_j(s_t, a_t) and of the discounted return from t (γ = the agent's), for the
    first `first` steps of each. Close values with short, terminated episodes mean a real local
    optimum (e.g. Hopper's "lunge and fall"), not value overestimation. SAC's Q is the soft Q."""
    import torch

    from iclr26.pic.behavior import AGENTS

    ckpt = folder / "checkpoint.pt"
    if not ckpt.is_file():
        return None
    state = torch.load(ckpt, weights_only=True)
    buf, name = state["buffer"], config.get("agent", "td3")
    obs, act = buf["observations"], buf["actions"]
    agent_cls = AGENTS[name]
    agent = agent_cls.create(obs.shape[1], act.shape[1], agent_cls.config_cls(**config[name]))
    agent.load_state_dict(state["agent"])
    rewards, gamma = buf["rewards"].numpy().astype(np.float64), agent.config.gamma
    terminals = buf["terminals"].numpy()
    ends = np.flatnonzero(terminals | buf["timeouts"].numpy())
    starts = np.r_[0, ends[:-1] + 1]
    q_means, g_means = [], []
    for lo, hi in list(zip(starts, ends, strict=True))[-episodes:]:
        g, returns = 0.0, np.zeros(hi - lo + 1)
        for t in range(hi, lo - 1, -1):
            g = rewards[t] + gamma * g
            returns[t - lo] = g
        with torch.no_grad():
            q = agent.critic.min_value(torch.cat([obs[lo : hi + 1], act[lo : hi + 1]], -1)).numpy()
        q_means.append(q[:first].mean())
        g_means.append(returns[:first].mean())
    last = list(zip(starts, ends, strict=True))[-episodes:]
    return {
        "episodes": len(last),
        "min_q": float(np.mean(q_means)),
        "discounted_return": float(np.mean(g_means)),
        "terminated_share": float(np.mean([terminals[hi] for _, hi in last])),
        "mean_length": float(np.mean([hi - lo + 1 for lo, hi in last])),
    }


def summary(envs: list[str], data_dirs: list[str]) -> list[dict]:
    """Per task and data dir that holds its finished datasets: the behaviour agent's curve, best
    snapshot, medium cut, and each dataset's size and return. Per task, the row with the higher
    held-out expert return is `chosen` (the issue's rule: whichever agent reaches the higher one)."""
    rows = []
    for env_id, data_dir in [(e, d) for e in envs for d in data_dirs]:
        folder = Path(data_dir) / env_id
        if not (folder / "generation.json").is_file():
            print(f"{folder}: no generation.json (not finished), left out", flush=True)
            continue
        gen = json.loads((folder / "generation.json").read_text())
        manifests = {
            n: json.loads((folder / f"{n}.json").read_text()) for n in ("medium", "medium-replay", "expert")
        }
        refs = manifests["medium"]["reference_returns"]
        medium = manifests["medium"]["behavior"]
        d4rl = refs.get("d4rl") or [None, None]
        rows.append(
            {
                "env_id": env_id,
                "data_dir": str(folder),
                "agent": gen["config"].get("agent", "td3"),
                "d4rl_random_return": d4rl[0],
                "d4rl_expert_return": d4rl[1],
                "curve": [[s["step"], s["eval_return"]] for s in gen["snapshots"]],
                "training_windows": training_windows(folder),
                "value_check": value_check(folder, gen["config"]),
                "train_seconds": gen["train_seconds"],
                "numerics": gen.get("numerics"),  # None: written before the manifests recorded it
                "total_steps": gen["config"]["total_steps"],
                "random_return": refs["random"],
                "expert_return": refs["expert"],
                "expert_step": manifests["expert"]["behavior"]["step"],
                "medium_step": medium["step"],
                "medium_eval_return": medium["eval_return"],
                "datasets": {
                    n: {
                        "N": m["N"],
                        "episodes": m["episodes"],
                        "mean_episode_return": m["mean_episode_return"],
                    }
                    for n, m in manifests.items()
                },
            }
        )
    for env_id in envs:
        mine = [r for r in rows if r["env_id"] == env_id]
        best = max(mine, key=lambda r: r["expert_return"], default=None)
        for r in mine:
            r["chosen"] = r is best
    print("| task | agent | random / expert return (expert at step) | D4RL expert | medium: snapshot step, "
          "eval return | medium: N, mean return | medium-replay: N, mean return |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        med, rep = r["datasets"]["medium"], r["datasets"]["medium-replay"]
        expert = f"{r['random_return']:.0f} / {r['expert_return']:.0f} ({r['expert_step'] // 1000}k)"
        cut = f"{r['medium_step'] // 1000}k, {r['medium_eval_return']:.0f}"
        sizes = [f"{d['N']:,}, {d['mean_episode_return']:.0f}" for d in (med, rep)]
        d4rl = f"{r['d4rl_expert_return']:,.0f}" if r["d4rl_expert_return"] is not None else "—"
        agent = r["agent"].upper() + (" (chosen)" if r["chosen"] else "")
        print(f"| {r['env_id']} | {agent} | {expert} | {d4rl} | {cut} | {sizes[0]} | {sizes[1]} |")
    return rows


def load_history(path: Path) -> list[dict]:
    """The rows of an earlier `--summary` JSON (datasets since replaced), each labelled by its date
    and machine, for their curves: where an agent stopped on earlier code or another CPU. A summary
    older than the curves gives its best snapshot alone (one point)."""
    old = json.loads(path.read_text())
    when = f"{old['date'][:10]}, {old['machine'].split(',')[0]}"
    return [
        {"env_id": r["env_id"], "agent": r.get("agent", "td3"), "label": when,
         "curve": r.get("curve") or [[r["expert_step"], r["expert_return"]]],
         "expert_return": r["expert_return"], "source": str(path)}
        for r in old["tasks"]
    ]  # fmt: skip


AGENT_COLORS = {"sac": "C0", "td3": "C1"}  # one colour per behaviour agent in every panel


def plot_curves(rows: list[dict], history: list[dict], path: Path) -> None:
    """Per task, each behaviour agent's evaluation return over env steps (one colour per agent,
    earlier runs dotted), the chosen agent's line thicker, D4RL's expert return dashed; one legend
    below the panels."""
    from iclr26.core.records import pyplot, save_figure

    plt = pyplot()
    envs = list(dict.fromkeys(r["env_id"] for r in rows + history))
    last_step = max(s for r in rows + history for s, _ in r["curve"])  # one x range for every task
    fig, axes = plt.subplots(1, len(envs), figsize=(4.2 * len(envs), 3.6), squeeze=False)
    legend: dict[str, Any] = {}
    for ax, env_id in zip(axes[0], envs, strict=True):
        d4rl = None
        for r in [r for r in rows + history if r["env_id"] == env_id]:
            steps, returns = zip(*r["curve"], strict=True)
            label = r["agent"].upper() + (f" ({r['label']})" if "label" in r else "")
            label += ", best snapshot" if len(steps) == 1 else ""
            style = {"ls": ":", "marker": "o" if len(steps) == 1 else None} if "label" in r else {"ls": "-"}
            width = 2.2 if r.get("chosen") else 1.2
            (line,) = ax.plot(
                np.array(steps) / 1000, returns, c=AGENT_COLORS.get(r["agent"]), lw=width, **style
            )
            legend.setdefault(label, line)
            d4rl = r.get("d4rl_expert_return", d4rl)
        if d4rl is not None:
            legend.setdefault("D4RL expert", ax.axhline(d4rl, ls="--", c="gray"))
        ax.set_xlim(0, last_step / 1000 * 1.03)
        ax.set_title(env_id)
        ax.set_xlabel("env steps (k)")
        ax.set_ylabel("eval return")
    fig.legend(
        legend.values(), legend.keys(), loc="lower center", ncol=len(legend), fontsize=8, frameon=False
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    save_figure(fig, path.parent, path.stem)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("envs", nargs="+")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--data-dir", nargs="+", default=["runs/pic_data_sac"],
        help="where the datasets go (one); with --summary, every dir to tabulate",
    )  # fmt: skip
    ap.add_argument("--total-steps", type=int, default=0, help="0: the preset's (300k)")
    ap.add_argument("--agent", choices=("td3", "sac"), default="sac", help="behaviour agent (D4RL: SAC)")
    ap.add_argument(
        "--summary", action="store_true", help="tabulate the existing manifests, generate nothing"
    )
    ap.add_argument("--history", nargs="*", type=Path, default=[], help="earlier --summary JSONs to plot")
    ap.add_argument("--link", type=Path, help="with --summary: make LINK/<task> point at the chosen data")
    a = ap.parse_args()
    if a.summary:
        path = Path(__file__).parent / "results" / "pic_datasets.json"
        rows = summary(a.envs, a.data_dir)
        history = [h for f in a.history for h in load_history(f)]
        out = {**provenance(), "tasks": [r for r in rows if r["chosen"]], "other_runs": [
            r for r in rows if not r["chosen"]], "history": history}  # fmt: skip
        path.write_text(json.dumps(out, indent=1) + "\n")
        plot_curves(rows, history, path.with_name("behavior_curves"))
        print(f"saved {path} and behavior_curves.png")
        if a.link:
            a.link.mkdir(parents=True, exist_ok=True)
            for r in out["tasks"]:
                target, link = Path(r["data_dir"]).resolve(), a.link / r["env_id"]
                link.unlink(missing_ok=True)
                link.symlink_to(target, target_is_directory=True)
                print(f"{link} -> {target}")
        return
    if len(a.data_dir) != 1:
        ap.error(f"generation writes into one --data-dir, got {len(a.data_dir)}")
    for env_id in a.envs:
        over = {"seed": a.seed, "agent": a.agent} | ({"total_steps": a.total_steps} if a.total_steps else {})
        t0 = time.time()
        paths = generate_datasets(
            env_id, f"{a.data_dir[0]}/{env_id}", generation_preset("mujoco", **over), _progress(env_id)
        )
        print(f"{env_id} done in {time.time() - t0:.0f}s: {sorted(paths)}", flush=True)


if __name__ == "__main__":
    main()
