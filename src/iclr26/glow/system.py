"""`iclr26 run glow`: every agent on every game at the same env-step budget (GLoW, ReAct and
Reflexion with the same LLM; random and Go-Explore without one; a DRRN trained here with its own,
larger budget), seeded runs, the best score reached against env steps, LLM calls and tokens per
run, and GLoW's ablations (arXiv 2509.24116).

Each finished run is appended to `runs.jsonl` in the run folder; a re-run skips the runs already
there, so an interrupted run resumes and loses only the run in progress.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.jsonfile import append_log, read_log
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
from iclr26.core.system import preset_table
from iclr26.glow.agents import GLoWPlayer, ReActPlayer, ReflexionPlayer
from iclr26.glow.config import ABLATIONS, LLM_AGENTS, GlowConfig
from iclr26.glow.drrn import train_drrn
from iclr26.glow.env import TextGame
from iclr26.glow.explore import go_explore, null_agent, oracle_agent, random_agent
from iclr26.glow.figures import score_curves
from iclr26.glow.games import make_game, suite

ABLATION_SWITCHES = {
    "no_mar": {"mar": False},
    "no_global": {"global_memory": False},
    "no_frontier": {"frontier": False},
    "no_all": {"mar": False, "global_memory": False, "frontier": False},
}
PAPER_ZORK1 = {"glow": 73.0, "no_mar": 70.0, "no_global": 62.0, "no_frontier": 61.7, "no_all": 51.3}
"""The paper's Zork1 max scores (GPT-4.1-mini, 1,000 env steps, mean of 3 runs) for GLoW and its ablations."""
RUNS_FILE = "runs.jsonl"


def _game_paths(cfg: GlowConfig) -> list[Path]:
    """The suite's generated games (cached) and the user's game files."""
    paths = [make_game(spec) for spec in suite(cfg.suite)] if cfg.suite else []
    return paths + [Path(g) for g in cfg.games]


def _run_label(agent: str) -> str:
    return f"glow ({agent.replace('_', ' ')})" if agent in ABLATIONS else agent


def _one_run(agent: str, path: Path, seed: int, cfg: GlowConfig, ctx: RunContext, model: Any) -> dict:
    """One seeded run of `agent` on the game at `path`; a JSON-able row."""
    budget = cfg.drrn_budget if agent == "drrn" else cfg.step_budget
    rng = np.random.default_rng(derive_seed(seed, agent, path.name))
    started = time.perf_counter()
    # Jericho records its walkthroughs at the game's own seed, which FrotzEnv uses for seed 0: the
    # oracle always plays there (TextWorld games are deterministic, so any seed would do for them)
    game_seed = 0 if agent == "oracle" else seed
    with TextGame(path, step_budget=budget, seed=game_seed) as game:
        game.require_scored()
        if agent == "oracle":
            result = oracle_agent(game, budget)
        elif agent == "null":
            result = null_agent(game, budget)
        elif agent == "random":
            result = random_agent(game, budget, rng, episode_steps=cfg.random_episode_steps)
        elif agent == "go_explore":
            result = go_explore(game, budget, rng, explore_steps=cfg.explore_steps)
        elif agent == "drrn":
            drrn_cfg = dataclasses.replace(cfg.drrn, seed=seed)
            result = train_drrn(game, drrn_cfg, ctx.checkpoint_dir / f"drrn-{path.stem}-s{seed}", budget)
        elif agent == "react":
            result = ReActPlayer(model, cfg.react).run(game, rng)
        elif agent == "reflexion":
            result = ReflexionPlayer(model, cfg.reflexion).run(game, rng)
        else:
            glow_cfg = dataclasses.replace(cfg.glow, **ABLATION_SWITCHES.get(agent, {}))
            result = GLoWPlayer(model, glow_cfg).run(game, rng)
    row = {
        "agent": _run_label(agent),
        "game": path.stem,
        "seed": seed,
        "max_score": int(result.max_score),
        "game_max_score": int(result.game_max_score),
        "normalised": float(result.normalised_score),
        "steps_used": int(result.steps_used),
        "curve": [list(c) for c in result.curve],
        "llm_calls": int(getattr(result, "llm_calls", 0)),
        "tokens": int(getattr(result, "prompt_tokens", 0) + getattr(result, "completion_tokens", 0)),
        "remapped": int(getattr(result, "remapped", 0)),
        "actions": int(getattr(result, "actions", result.steps_used)),
        "parse_failures": int(getattr(result, "parse_failures", 0)),
        "seconds": round(time.perf_counter() - started, 2),
    }
    transcript = getattr(result, "transcript", None)
    if transcript and agent == "glow":
        row["transcript"] = transcript
    return row


def _mean_sd(values: Sequence[float]) -> str:
    v = np.asarray(values, dtype=np.float64)
    return f"{v.mean():.2f} ± {v.std(ddof=1):.2f}" if len(v) > 1 else f"{v.mean():.2f}"


def _steps_to_max(run: dict) -> int | None:
    """The env step at which the run first reached the game's max score (None: never)."""
    return next((step for step, best in run["curve"] if best >= run["game_max_score"] > 0), None)


def _steps_to_max_cell(runs: list[dict]) -> str:
    """Mean steps to the max score over the runs that reached it, and how many did ("12.3 (2/3)")."""
    reached = [s for s in map(_steps_to_max, runs) if s is not None]
    mean = f"{np.mean(reached):.1f}" if reached else "—"
    return f"{mean} ({len(reached)}/{len(runs)})"


def _score_table(runs: list[dict]) -> Table:
    rows = []
    for game in dict.fromkeys(r["game"] for r in runs):
        for agent in dict.fromkeys(r["agent"] for r in runs):
            mine = [r for r in runs if r["game"] == game and r["agent"] == agent]
            if not mine:
                continue
            rows.append(
                [
                    *(
                        game,
                        agent,
                        len(mine),
                        _mean_sd([r["max_score"] for r in mine]),
                        mine[0]["game_max_score"],
                    ),
                    round(float(np.mean([r["normalised"] for r in mine])), 3),
                    _steps_to_max_cell(mine),
                    round(float(np.mean([r["steps_used"] for r in mine]))),
                    round(float(np.mean([r["llm_calls"] for r in mine])), 1),
                    round(float(np.mean([r["tokens"] for r in mine]))),
                    round(float(np.mean([r["remapped"] / max(r["actions"], 1) for r in mine])), 3),
                    round(float(np.mean([r["seconds"] for r in mine])), 1),
                ]
            )
    cols = ["game", "agent", "seeds", "max score (mean ± sd)", "game max", "normalised"]
    cols += ["env steps to the game max (runs that got there)", "env steps"]
    cols += ["LLM calls", "tokens", "remapped share", "seconds"]
    caption = (
        "max score: the best game score reached at any step of the run; env steps to the game max: the "
        "mean, over the runs that reached it, of the first step at the game's max score; remapped share: "
        "generated commands mapped to the nearest valid action (the soft constraint)"
    )
    return Table("Max score per game and agent", cols, rows, caption=caption)


def _summary(runs: list[dict]) -> tuple[Table, dict[str, np.ndarray]]:
    """Mean normalised score over games, per agent; per-seed means for the claim's margin."""
    per_agent: dict[str, np.ndarray] = {}
    rows = []
    for agent in dict.fromkeys(r["agent"] for r in runs):
        mine = [r for r in runs if r["agent"] == agent]
        seeds = sorted({r["seed"] for r in mine})
        by_seed = np.array([np.mean([r["normalised"] for r in mine if r["seed"] == s]) for s in seeds])
        per_agent[agent] = by_seed
        rows.append(
            [
                agent,
                _mean_sd(by_seed.tolist()),
                round(float(np.mean([r["steps_used"] for r in mine]))),
                round(float(np.mean([r["llm_calls"] for r in mine])), 1),
                round(float(np.mean([r["tokens"] for r in mine]))),
            ]
        )
    cols = ["agent", "normalised max score (mean over games; ± sd over seeds)", "env steps per run"]
    cols += ["LLM calls per run", "tokens per run"]
    return Table("Summary over games", cols, rows), per_agent


def _ablation_table(per_agent: dict[str, np.ndarray], runs: list[dict]) -> Table:
    rows = []
    for name in ("glow", *ABLATIONS):
        label = _run_label(name)
        if label in per_agent:
            mine = [r for r in runs if r["agent"] == label]
            rows.append(
                [label, _mean_sd(per_agent[label].tolist()), _steps_to_max_cell(mine), PAPER_ZORK1[name]]
            )
    return Table(
        "GLoW ablations (normalised max score, mean over games)",
        ["variant", "normalised max score here", "env steps to the game max", "paper: Zork1 max score"],
        rows,
        caption="the paper's column is its Zork1 score with GPT-4.1-mini, not measured here",
    )


def _validity_table(runs: list[dict]) -> Table | None:
    """The suite's check: the oracle must reach every game's max score and the null agent none."""
    rows = []
    for game in dict.fromkeys(r["game"] for r in runs):
        ref = {a: [r for r in runs if r["game"] == game and r["agent"] == a] for a in ("oracle", "null")}
        if not all(ref.values()):
            continue
        oracle_ok = all(r["max_score"] >= r["game_max_score"] > 0 for r in ref["oracle"])
        null_ok = all(r["max_score"] == 0 for r in ref["null"])
        rows.append(
            [
                game,
                ref["oracle"][0]["game_max_score"],
                max(r["max_score"] for r in ref["oracle"]),
                ref["oracle"][0]["steps_used"],
                max(r["max_score"] for r in ref["null"]),
                "valid" if oracle_ok and null_ok else "INVALID",
            ]
        )
    if not rows:
        return None
    return Table(
        "Suite validity (oracle: the walkthrough; null: only 'look')",
        ["game", "game max", "oracle max score", "oracle env steps", "null max score", "verdict"],
        rows,
        caption="a game is a valid task only when the oracle reaches its max score and null scores 0",
    )


def transcript_excerpt(transcript: list[dict], before: int = 3, after: int = 4) -> str:
    """Markdown of the first reflection that a later restore followed, with the steps around them."""
    kinds = [e["kind"] for e in transcript]
    for i, kind in enumerate(kinds):
        if kind == "reflection":
            j = next((k for k in range(i + 1, len(kinds)) if kinds[k] == "restore"), None)
            if j is None:
                continue
            lines = []
            for e in transcript[max(0, i - before) : j + after]:
                fields = {k: v for k, v in e.items() if k not in ("kind", "steps_used")}
                lines.append(
                    f"- **{e['kind']}** (after {e['steps_used']} env steps): `{json.dumps(fields)[:600]}`"
                )
            return "\n".join(lines)
    return ""


def run(cfg: GlowConfig, ctx: RunContext) -> Report:
    """Generate the games, run every agent and seed (resuming from runs.jsonl), tabulate, draw."""
    paths = _game_paths(cfg)
    plan = [(a, p, s) for p in paths for a in (*cfg.agents, *cfg.ablations) for s in range(cfg.seeds)]
    runs_file = ctx.out_dir / RUNS_FILE
    runs = read_log(runs_file)
    done = {(r["agent"], r["game"], r["seed"]) for r in runs}
    todo = [(a, p, s) for a, p, s in plan if (_run_label(a), p.stem, s) not in done]
    needs_llm = any(a in LLM_AGENTS or a in ABLATIONS for a, _, _ in todo)
    model = ctx.chat_model() if needs_llm else None
    if todo:
        with ctx.progress("runs", len(todo)) as advance:
            for agent, path, seed in todo:
                row = _one_run(agent, path, seed, cfg, ctx, model)
                append_log(runs_file, row)
                runs.append(row)
                advance(1)
    scores = _score_table(runs)
    summary, per_agent = _summary(runs)
    ctx.log(f"{summary.title}\n{markdown_table(summary.columns, summary.rows)}")
    tables = [summary, scores]
    validity = _validity_table(runs)
    if validity is not None:
        ctx.log(f"{validity.title}\n{markdown_table(validity.columns, validity.rows)}")
        tables.append(validity)
    if cfg.ablations:
        tables.append(_ablation_table(per_agent, runs))
    figures = [score_curves(runs, ctx.out_dir / "curves.png")]
    notes = []
    excerpts = (
        transcript_excerpt(r["transcript"]) for r in runs if r["agent"] == "glow" and r.get("transcript")
    )
    excerpt = next((e for e in excerpts if e), "")  # each transcript searched once
    if excerpt:
        (ctx.out_dir / "transcript.md").write_text(
            f"# GLoW: a reflection and the restore after it\n\n{excerpt}\n"
        )
        notes.append("transcript.md: one MAR reflection and the restore that followed it")
    baselines = [a for a in ("react", "reflexion") if a in per_agent]
    claim = None
    if "glow" in per_agent and baselines:
        best = max(baselines, key=lambda a: per_agent[a].mean())
        g, b = per_agent["glow"], per_agent[best]
        se = math.sqrt(g.var(ddof=1) / len(g) + b.var(ddof=1) / len(b)) if min(len(g), len(b)) > 1 else 0.0
        claim = ClaimCheck(
            "normalised max score (mean over games), same LLM and env-step budget",
            "glow",
            round(float(g.mean()), 3),
            best,
            round(float(b.mean()), 3),
            margin=round(1.96 * se, 3),
        )
    if model is not None:
        notes.append(f"LLM agents used {model.name} through core.llm (--llm {ctx.llm_choice().label})")
    return Report(tables=tables, figures=figures, claim_check=claim, notes=notes)


_LLM_SMALL = {"glow.rollout_steps": 4, "react.episode_steps": 6, "reflexion.episode_steps": 6}
PRESETS = preset_table(
    bench=GlowConfig(),
    # seconds: the tiniest game, one seed, 4 env steps per agent
    smoke={"suite": "smoke", "seeds": 1, "step_budget": 4, "drrn_budget": 100, **_LLM_SMALL},
    # the tour: the tiniest game, every agent, 2 seeds, SmolLM2 (embedded) at a 6-step budget
    demo={"suite": "smoke", "seeds": 2, "step_budget": 6, "drrn_budget": 200, **_LLM_SMALL},
    # the paper's protocol: 1,000 env steps, 3 seeds, the ablations, a server model (--llm http)
    paper={"step_budget": 1000, "drrn_budget": 100_000, "ablations": ABLATIONS},
)
SYSTEM = implemented_system("glow", presets=PRESETS, run=run)
