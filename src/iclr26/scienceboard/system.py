"""`iclr26 run scienceboard`: start the desktop, run the oracle and null agents (the task set's
validity check) and the model agent over the built-here tasks on the real apps, and print
ScienceBoard's table: success per domain and overall (the mean of the domain rates), with steps,
tokens and each app's start-up time. `tasks=<path>` loads the authors' task files instead and
prints how each maps onto our apps."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from iclr26.agents import (
    Budget,
    Episode,
    LLMAgent,
    NullAgent,
    OracleAgent,
    check_suite,
    run_suite,
    write_html,
)
from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.jsonfile import append_log
from iclr26.core.records import markdown_table
from iclr26.core.system import preset_table
from iclr26.scienceboard.config import DOMAINS, ScienceBoardConfig
from iclr26.scienceboard.suite import BuiltTask, built_tasks
from iclr26.scienceboard.task import load_tasks, map_task

DOMAIN_OF = {"KAlgebra": "algebra", "PyMOL": "biochemistry", "ChimeraX": "biochemistry", "GrassGIS": "gis",
             "Celestia": "astronomy", "Stellarium": "astronomy", "TeXstudio": "documents",
             "Lean": "theorem proving"}  # fmt: skip
NAMES = {"algebra": "Algebra", "biochemistry": "Biochem", "gis": "GIS", "astronomy": "Astron",
         "documents": "Doc"}  # fmt: skip
PAPER_ROWS = [
    ["Claude-3.7, screenshot + a11y tree (paper)", 12.90, 41.37, 8.82, 9.09, 18.75, 15.79, "", ""],
    ["GPT-4o, screenshot + a11y tree (paper)", "", "", "", "", "", 14.45, "", ""],
    ["GPT-4o, screenshot only (paper)", "", "", "", "", "", 1.58, "", ""],
]
"""The paper's success rates (%): Algebra / Biochemistry / GIS / Astronomy / Documents / overall."""
PREFILL = "```python\npyautogui."
"""The prefilled start of each reply (config `prefill`): a pyautogui call, so a small model acts; the
reply then stops at the block's closing fence."""
KINDS = ("direct", "basic", "knowledge", "reasoning", "infeasible")


def select_tasks(cfg: ScienceBoardConfig, per_domain: int, domains: tuple[str, ...] = ()) -> list[BuiltTask]:
    """The built-here tasks of `domains` (default: the config's), at most `per_domain` each, spread
    over the kinds."""
    out = []
    for domain in domains or cfg.domains:
        tasks = [t for t in built_tasks() if DOMAIN_OF[t.spec["type"]] == domain]
        if per_domain:
            by_kind = [[t for t in tasks if t.kind == k] for k in KINDS]
            picked: list[BuiltTask] = []
            while len(picked) < min(per_domain, len(tasks)):
                for group in by_kind:
                    if group and len(picked) < per_domain:
                        picked.append(group.pop(0))
            tasks = picked
        out += tasks
    return out


def _mapping(cfg: ScienceBoardConfig) -> Report:
    """The authors' task files: how many map onto our apps, per app, and why the others do not."""
    tasks = load_tasks(cfg.tasks)
    per_app: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    for t in tasks:
        m = map_task(t)
        per_app[t.type]["supported" if m.supported else "unsupported"] += 1
        for r in m.reasons:
            reasons[r] += 1
    rows = [[app, c["supported"], c["unsupported"]] for app, c in sorted(per_app.items())]
    rows.append(["all", sum(r[1] for r in rows), sum(r[2] for r in rows)])
    table = Table(f"The task files under {cfg.tasks} on our apps", ["app", "runs here", "unsupported"], rows)
    why = Table("Why tasks cannot run here", ["reason", "tasks"], [[r, n] for r, n in reasons.most_common()])
    print(markdown_table(table.columns, table.rows))
    print(markdown_table(why.columns, why.rows))
    return Report(tables=[table, why])


def _needs_images(cfg: ScienceBoardConfig) -> str:
    """What needs a model that sees images ("" when nothing does): the screenshot observation."""
    screenshot = cfg.observation == "screenshot"
    return "observation=screenshot (use a11y_tree for a text model)" if screenshot else ""


def run(cfg: ScienceBoardConfig, ctx: RunContext) -> Report:
    """Run every configured agent over the selected tasks on the desktop and tabulate."""
    if cfg.tasks != "builtin":
        return _mapping(cfg)
    if "llm" in cfg.agents and _needs_images(cfg):
        ctx.require_images(_needs_images(cfg))  # before the oracle and null rows, not after them
    from iclr26.scienceboard.desktop import Desktop
    from iclr26.scienceboard.env import GUI_PARSER, ScienceBoardEnv

    tasks = select_tasks(cfg, cfg.per_domain)
    by_id = {t.task_id: t for t in tasks}
    ctx.log(f"{len(tasks)} tasks: " + ", ".join(f"{d} {sum(DOMAIN_OF[t.spec['type']] == d for t in tasks)}"
                                                for d in cfg.domains))  # fmt: skip
    episodes_file = ctx.out_dir / "episodes.jsonl"
    runs: dict[str, list[Episode]] = {}
    startup: dict[str, list[float]] = defaultdict(list)
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="iclr26-sb-") as tmp, Desktop() as desk:
        for name in cfg.agents:
            ids = [t.task_id for t in tasks]
            if name == "llm":
                chosen = select_tasks(cfg, cfg.llm_per_domain or cfg.per_domain, cfg.llm_domains)
                ids = [t.task_id for t in chosen]
            envs: dict[str, ScienceBoardEnv] = {}
            make_env = _env_factory(cfg, ctx, desk, Path(tmp) / name, by_id, name, envs)
            t0 = time.perf_counter()
            agent_for = _agent_factory(cfg, ctx, name, by_id)
            with ctx.progress(f"{name} on {len(ids)} tasks", len(ids)) as advance:
                episodes = []
                for task_id in ids:
                    t = by_id[task_id]
                    episodes += run_suite(
                        [task_id],
                        make_env,
                        agent_for(t),
                        GUI_PARSER,
                        _budget(cfg, t),
                        episodes_file=episodes_file,
                    )
                    advance(1)
            if name == "llm":
                write_html(ctx.out_dir / "episodes.html", episodes, "the model agent on ScienceBoard")
            seconds[name] = time.perf_counter() - t0
            runs[name] = episodes
            for task_id, env in envs.items():  # why each task passed
                checks = [{"type": r.kind, "passed": r.passed, "detail": r.detail} for r in env.results]
                append_log(ctx.out_dir / "checks.jsonl", {"agent": name, "task": task_id, "checks": checks})
            for env in envs.values():
                if env.startup_s:
                    startup[env.app].append(env.startup_s)
            ctx.log(f"{name}: {sum(e.success for e in episodes)}/{len(episodes)} in {seconds[name]:.0f} s")
    return _report(cfg, ctx, by_id, runs, startup, seconds)


def _agent_factory(cfg: ScienceBoardConfig, ctx: RunContext, name: str, by_id: dict[str, BuiltTask]) -> Any:
    """`agent_for(task)`: the oracle (the reference solutions) and the null agent serve every task; the
    model agent is made per task, as its system prompt names the task's app."""
    from iclr26.scienceboard.env import GUI_PARSER
    from iclr26.scienceboard.prompting import system_prompt

    if name == "oracle":
        oracle = OracleAgent({k: list(t.oracle) for k, t in by_id.items()})
        return lambda task: oracle
    if name == "null":
        null = NullAgent()
        return lambda task: null
    model = ctx.chat_model(images=_needs_images(cfg))

    def agent_for(task: BuiltTask) -> LLMAgent:
        return LLMAgent(
            model, system_prompt(task.spec["type"], cfg.observation), GUI_PARSER,
            max_tokens=cfg.max_tokens, seed=cfg.seed, history_turns=cfg.history_turns,
            name=f"llm:{model.name}", reply_prefix=PREFILL if cfg.prefill else "",
            stop=("\n```",) if cfg.prefill else None,
        )  # fmt: skip

    return agent_for


def _env_factory(
    cfg: ScienceBoardConfig,
    ctx: RunContext,
    desk: Any,
    workdir: Path,
    by_id: dict[str, BuiltTask],
    agent: str,
    envs: dict[str, Any],
) -> Any:
    """`make_env(task_id)` for `run_suite`: a fresh environment per task, kept in `envs` (start-up times,
    check verdicts)."""
    from iclr26.scienceboard.env import ScienceBoardEnv

    def make_env(task_id: str) -> ScienceBoardEnv:
        t = by_id[task_id]
        figure = None
        if cfg.figures and agent == "oracle":
            figure = ctx.out_dir / f"screen_{map_task(t.task()).app}.png"
        env = ScienceBoardEnv(
            t.task(), desk, workdir / task_id, observation=cfg.observation,
            a11y_chars=cfg.a11y_chars, pause_s=cfg.pause_s, figure=figure,
        )  # fmt: skip
        envs[task_id] = env
        return env

    return make_env


def _budget(cfg: ScienceBoardConfig, task: BuiltTask) -> Budget:
    return Budget(max_steps=cfg.max_steps or int(task.spec["steps"]) + 2, max_wall_s=cfg.task_timeout_s)


def domain_rates(episodes: list[Episode], by_id: dict[str, BuiltTask]) -> dict[str, float]:
    """Success (%) per domain of the episodes' tasks."""
    per: dict[str, list[bool]] = defaultdict(list)
    for e in episodes:
        per[DOMAIN_OF[by_id[e.task_id].spec["type"]]].append(e.success)
    return {d: 100 * sum(v) / len(v) for d, v in per.items()}


def _report(
    cfg: ScienceBoardConfig,
    ctx: RunContext,
    by_id: dict[str, BuiltTask],
    runs: dict[str, list[Episode]],
    startup: dict[str, list[float]],
    seconds: dict[str, float],
) -> Report:
    cols = ["agent", *(NAMES[d] for d in DOMAINS), "overall", "steps / task", "tokens / task"]
    rows: list[list[Any]] = []
    for name, episodes in runs.items():
        rates = domain_rates(episodes, by_id)
        overall = statistics.mean(rates.values()) if rates else float("nan")  # the mean of domain rates
        steps = statistics.mean(len(e.steps) for e in episodes) if episodes else 0
        tokens = statistics.mean(e.prompt_tokens + e.completion_tokens for e in episodes) if episodes else 0
        label = episodes[0].agent if episodes else name
        rows.append(
            [label, *(round(rates[d], 1) if d in rates else "" for d in DOMAINS), round(overall, 2),
             round(steps, 1), round(tokens)]
        )  # fmt: skip
    rows += PAPER_ROWS
    caption = (
        f"Observation: {cfg.observation}; {len(by_id)} built-here tasks (PyMOL for ChimeraX, Stellarium for "
        "Celestia); overall is the mean of the domain rates. The paper's rows use its own 169 tasks on the "
        "authors' VM."
    )
    table = Table("Success rate (%) by domain", cols, rows, caption=caption)
    tables = [table]
    print(markdown_table(table.columns, table.rows))
    notes = []
    if "oracle" in runs and "null" in runs:
        check = check_suite(runs["oracle"], runs["null"])
        notes.append(f"task set: {check.describe()}")
    if startup:
        up = Table(
            "App start-up (s): launch to a window on screen and the state probe answering",
            ["app", "starts", "median", "max"],
            [[app, len(v), round(statistics.median(v), 2), round(max(v), 2)]
             for app, v in sorted(startup.items())],
        )  # fmt: skip
        print(markdown_table(up.columns, up.rows))
        tables.append(up)
    verdicts = {n: {e.task_id: "pass" if e.success else "fail" for e in eps} for n, eps in runs.items()}
    per_task = Table(
        "Per task: success by agent",
        ["task", "domain", "kind", *runs],
        [[tid, DOMAIN_OF[t.spec["type"]], t.kind, *(v.get(tid, "") for v in verdicts.values())]
         for tid, t in by_id.items()],
    )  # fmt: skip
    tables.append(per_task)
    notes += [f"{name}: {s:.0f} s wall" for name, s in seconds.items()]
    figures = [p.name for p in sorted(ctx.out_dir.glob("screen_*.png"))]
    return Report(tables=tables, figures=figures, notes=notes)


PRESETS = preset_table(
    # SmolLM2 (2,048 tokens of context per request) fits one earlier turn beside a short tree, not three
    bench=ScienceBoardConfig(history_turns=1, a11y_chars=800),
    # CI: one task per domain, oracle and null only (the apps start; no model)
    smoke={"per_domain": 1, "agents": ("oracle", "null"), "figures": False},
    # the tour: one task per domain, oracle and null; SmolLM2 reading the accessibility tree on GIS
    demo={"per_domain": 1, "max_steps": 2, "llm_domains": ("gis",)},
    # the paper's setting: a served vision model (--llm http) with screenshot and tree, longer replies
    paper={
        "observation": "screenshot_a11y_tree",
        "max_tokens": 1024,
        "a11y_chars": 12000,
        "prefill": False,
        "history_turns": 3,
    },
)
SYSTEM = implemented_system("scienceboard", presets=PRESETS, run=run)
