"""`iclr26 run glow`: GLoW (arXiv 2509.24116) as a study (`core.study`). Every agent plays every
game × seed at the same env-step budget: GLoW, ReAct and Reflexion with the run's LLM, Go-Explore
without one, a DRRN trained here with its own, larger budget; the floors (uniform random valid
actions, and the no-op agent that takes no step); the suite's oracle (the walkthrough) and null agent
(only "look"); GLoW's ablations when asked. The claim is GLoW's normalised max score against ReAct and
against Reflexion, both named before the run, paired over game × seed, with random play as its floor.
The views: the best score against env steps, LLM calls and tokens per run, the suite's validity and
the ablations. `cells.jsonl` is the run's one ledger: a re-run skips the cells already there.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.glow import reference
from iclr26.glow.agents import GLoWPlayer, ReActPlayer, ReflexionPlayer
from iclr26.glow.config import ABLATIONS, LLM_AGENTS, GlowConfig
from iclr26.glow.drrn import train_drrn
from iclr26.glow.env import TextGame
from iclr26.glow.explore import go_explore, random_agent
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

ROLES = {"glow": "method", "random": "floor", "noop": "floor", "oracle": "oracle", "null": "null"}
FLOORS = {"random": "random action", "noop": "no-op"}
"""The floors: uniform random valid actions (the review's "random beats every LLM agent") and the
no-op agent, which takes no env step (the start state's score). Every other agent is a baseline."""
CLAIM_BASELINES = ("react", "reflexion")
"""The claim's baselines, named before the run: GLoW must beat each (the worst check is reported)."""


def _game_paths(cfg: GlowConfig) -> list[Path]:
    """The suite's generated games (cached) and the user's game files."""
    paths = [make_game(spec) for spec in suite(cfg.suite)] if cfg.suite else []
    return paths + [Path(g) for g in cfg.games]


def _run_label(agent: str) -> str:
    return f"glow ({agent.replace('_', ' ')})" if agent in ABLATIONS else agent


def study(cfg: GlowConfig, paths: Sequence[Path]) -> Study:
    """glow as a study: the arms are the agents and ablations, the units game × seed; the claim (with
    GLoW and a baseline on) is GLoW against ReAct and Reflexion on the normalised max score, paired over
    the units with a bootstrap interval (a bounded score, often 0 or 1), random play its floor: where
    GLoW and the baseline are no better than random on every unit, it is `uninformative`."""
    arms = [Arm(a, ROLES.get(a, "baseline"), floor=FLOORS.get(a, "")) for a in (*cfg.agents, *cfg.ablations)]
    units = [Unit(f"{p.stem}/s{s}", s, {"game": str(p)}) for p in paths for s in range(cfg.seeds)]
    names = {a.name for a in arms}
    baselines = tuple(b for b in CLAIM_BASELINES if b in names)
    claims = []
    if "glow" in names and baselines:
        label = "normalised max score (max score / game max) per game × seed, same LLM and env-step budget"
        floor = "random" if "random" in names else None
        claims.append(
            Claim("normalised", "glow", baselines, interval="bootstrap", floor_arm=floor, label=label)
        )
    metrics = ("normalised", "solved", "steps_used")
    return Study("glow", arms, units, functools.partial(_measure, cfg), claims=claims, metrics=metrics,
                 pass_metric="solved", config=cfg, views=functools.partial(_views, cfg))  # fmt: skip


def run(cfg: GlowConfig, ctx: RunContext) -> Report:
    """Generate the games, then run the study (`core.study.run_study`: resumable from `cells.jsonl`,
    `--jobs` cells at once), tabulate, draw. `experiment=structure` runs `glow.structure`'s study."""
    if cfg.experiment == "structure":
        from iclr26.glow.structure import structure_study

        return run_study(structure_study(cfg, _game_paths(cfg)), ctx).report
    return run_study(study(cfg, _game_paths(cfg)), ctx).report


def _measure(cfg: GlowConfig, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One seeded run of the arm's agent on the unit's game; `solved`: the game's max score reached."""
    model = ctx.chat_model() if arm.name in LLM_AGENTS or arm.name in ABLATIONS else None
    row = _one_run(arm.name, Path(unit.params["game"]), unit.seed, cfg, ctx, model)
    return row | {"solved": int(row["max_score"] >= row["game_max_score"] > 0)}


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
            result = reference.play(agent, reference.oracle(game), game, budget)
        elif agent == "null":
            result = reference.play(agent, reference.NULL, game, budget)
        elif agent == "noop":
            result = reference.play(agent, reference.NOOP, game, budget)
        elif agent == "random":
            result = random_agent(game, budget, rng, episode_steps=cfg.random_episode_steps)
        elif agent == "go_explore":
            result = go_explore(game, budget, rng, explore_steps=cfg.explore_steps)
        elif agent == "drrn":
            drrn_cfg = dataclasses.replace(cfg.drrn, seed=seed)
            result = train_drrn(game, drrn_cfg, ctx.checkpoint_dir / f"drrn-{path.stem}-s{seed}", budget)
        elif agent == "react":
            result = ReActPlayer(model, dataclasses.replace(cfg.react, remap=cfg.remap)).run(game, rng)
        elif agent == "reflexion":
            reflexion_cfg = dataclasses.replace(cfg.reflexion, remap=cfg.remap)
            result = ReflexionPlayer(model, reflexion_cfg).run(game, rng)
        else:
            switches = {**ABLATION_SWITCHES.get(agent, {}), "remap": cfg.remap}
            glow_cfg = dataclasses.replace(cfg.glow, **switches)
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
        "policy_parse_failures": int(getattr(result, "failures", {}).get("policy", 0)),
        "remap": bool(cfg.remap),
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
    cols += ["LLM calls", "tokens", "off-list share", "seconds"]
    caption = (
        "max score: the best game score reached at any step of the run; env steps to the game max: the "
        "mean, over the runs that reached it, of the first step at the game's max score; off-list share: "
        "generated commands not on the valid list (remapped to the nearest valid action with remap on, "
        "sent as generated with it off)"
    )
    return Table("Max score per game and agent", cols, rows, caption=caption)


def soft_constraint_table(runs: list[dict]) -> Table | None:
    """Per LLM agent and remap setting: how often the policy's reply had no command (parse failure,
    no env step) and how often its command was off the valid list (remapped, or sent as generated)."""
    rows = []
    llm = [r for r in runs if r.get("llm_calls", 0) > 0]
    for agent in dict.fromkeys(r["agent"] for r in llm):
        for remap in dict.fromkeys(bool(r.get("remap", True)) for r in llm if r["agent"] == agent):
            mine = [r for r in llm if r["agent"] == agent and bool(r.get("remap", True)) == remap]
            failed = sum(r.get("policy_parse_failures", 0) for r in mine)
            sent = sum(r["actions"] for r in mine)
            off = sum(r["remapped"] for r in mine)
            rows.append(
                [
                    *(agent, "on" if remap else "off", len(mine), sent + failed),
                    round(failed / max(sent + failed, 1), 3),
                    round(off / max(sent, 1), 3),
                    round(float(np.mean([r["normalised"] for r in mine])), 3),
                ]
            )
    if not rows:
        return None
    cols = ["agent", "remap", "runs", "policy replies", "parse-fail share", "off-list share", "normalised"]
    caption = (
        "parse-fail share: policy replies with no readable command (no env step), over all policy "
        "replies; off-list share: commands sent that were not on the valid list, over commands sent "
        "(remap on: each was mapped to the nearest valid action; off, the paper's soft constraint: each "
        "went to the game as generated)"
    )
    return Table("The soft constraint per agent", cols, rows, caption=caption)


def _summary(runs: list[dict]) -> tuple[Table, dict[str, np.ndarray]]:
    """Mean normalised score over games, per agent, and each agent's per-seed means."""
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


def _views(cfg: GlowConfig, result: StudyResult, ctx: RunContext) -> Report:
    """GLoW's own tables and figure from the cells: the summary over games, the per-game table, the
    suite's validity, the ablations, the score curves and one MAR reflection with its restore."""
    order = {a.name: i for i, a in enumerate(result.study.arms)}
    games = list(dict.fromkeys(u.params["game"] for u in result.study.units))
    keyed = [
        ((games.index(u.params["game"]), order[arm], u.seed), cell.metrics)
        for (arm, key), cell in result.cells.items()
        for u in result.study.units
        if u.key == key and arm in order and cell.metrics
    ]
    runs = [m for _, m in sorted(keyed, key=lambda kv: kv[0])]  # game, then agent, then seed
    if not runs:
        return Report()
    scores = _score_table(runs)
    summary, per_agent = _summary(runs)
    ctx.log(f"{summary.title}\n{markdown_table(summary.columns, summary.rows)}")
    tables = [summary, scores]
    validity = _validity_table(runs)
    if validity is not None:
        tables.append(validity)
    soft = soft_constraint_table(runs)
    if soft is not None:
        tables.append(soft)
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
    models = sorted({m for c in result.cells.values() for m in c.models})
    if models:
        notes.append(f"LLM agents used {', '.join(models)} (--llm {ctx.llm_choice().label})")
    return Report(tables=tables, figures=figures, notes=notes)


_LLM_SMALL = {"glow.rollout_steps": 4, "react.episode_steps": 6, "reflexion.episode_steps": 6}
PRESETS = preset_table(
    bench=GlowConfig(),
    # seconds: the tiniest game, one seed, 4 env steps per agent
    smoke={"suite": "smoke", "seeds": 1, "step_budget": 4, "drrn_budget": 100, **_LLM_SMALL},
    # the tour: the tiniest game, every agent, 3 seeds (the claim needs 3 pairs), SmolLM2 (embedded)
    # at a 2-step budget (the oracle's length), the baselines' replies capped at 64 tokens (3 steps at
    # 128 tokens took 119 s at --jobs 2, ReAct 67 s of it; 3 steps at 64 tokens 111 s, 2026-12-07)
    demo={
        **{"suite": "smoke", "seeds": 3, "step_budget": 2, "drrn_budget": 100, **_LLM_SMALL},
        **{"react.max_tokens": 64, "reflexion.max_tokens": 64, "reflexion.reflection_max_tokens": 64},
    },
    # the paper's protocol: 1,000 env steps, 3 seeds, the ablations, a server model (--llm http)
    paper={"step_budget": 1000, "drrn_budget": 100_000, "ablations": ABLATIONS},
)
SYSTEM = implemented_system("glow", presets=PRESETS, run=run)
