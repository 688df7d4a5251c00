"""`iclr26 run devops_gym`: write the built-here suite (or load a Terminal-Bench task folder), then run
the study (`core.study`): the oracle and null agents (the suite's validity check), the constant-label
floor and the shell agent over the run's model, on each task; print DevOps-Gym's category table
(success per category, Overall over build, monitoring, issue resolving and test generation,
end-to-end apart) with per-task time, steps and tokens, and judge the agent against the floor."""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from pathlib import Path
from typing import Any

from iclr26.agents import Agent, Episode, write_html
from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.errors import UserError
from iclr26.core.records import markdown_table
from iclr26.core.study import Arm, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.devops_gym.agent import constant_agent, null_agent, oracle_agent, shell_agent
from iclr26.devops_gym.config import AGENTS, DevOpsConfig
from iclr26.devops_gym.evaluate import COLUMNS, TASK_COLUMNS, category_row, run_task, task_rows
from iclr26.devops_gym.observer import chunk_s, observer_agent, observer_commands
from iclr26.devops_gym.runner import RunLimits, TrialResult
from iclr26.devops_gym.task import SOLUTION, Task, load_tasks

PAPER_ROWS = [
    ["Claude Code + Claude-4-Sonnet (paper)", 51.85, 20.56, 23.87, 13.87, 27.54, 0.0, ""],
    ["OpenHands + Qwen3-Coder-30B (paper)", 20.37, 5.89, 13.22, 6.13, 11.40, 0.0, ""],
]
"""The paper's leaderboard rows (build / monitoring / issue / test generation / Overall, %);
end-to-end is 0 for every agent there."""


def select_tasks(cfg: DevOpsConfig, root: Path) -> list[Task]:
    """The tasks of the chosen categories and languages, at most `per_category` each."""
    tasks = [t for t in load_tasks(root) if t.spec.category in cfg.categories]
    if cfg.task_ids:
        known = {t.task_id for t in tasks}
        unknown = [i for i in cfg.task_ids if i not in known]
        if unknown:
            raise UserError(f"task_ids: no task {', '.join(unknown)} under {root} (ids are category/name)")
        tasks = [t for t in tasks if t.task_id in cfg.task_ids]
    if cfg.tasks == "builtin":
        tasks = [t for t in tasks if set(t.spec.tags) & set(cfg.languages)]
    by_category: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_category[t.spec.category].append(t)
    if cfg.per_category:
        by_category = {c: _spread(ts, cfg.per_category) for c, ts in by_category.items()}
    chosen = [t for c in cfg.categories for t in by_category.get(c, [])]
    if not chosen:
        raise UserError(f"no task matches categories={cfg.categories} languages={cfg.languages} under {root}")
    return chosen


def _in_turn(groups: list[list[Task]], k: int) -> list[Task]:
    """At most `k` tasks taken from the groups in turn (the first of each, then the second, ...)."""
    queues = [list(g) for g in groups]
    out: list[Task] = []
    while len(out) < min(k, sum(map(len, groups))):
        for q in queues:
            if q and len(out) < k:
                out.append(q.pop(0))
    return out


def _spread(tasks: list[Task], k: int) -> list[Task]:
    """At most `k` tasks, alternating languages so a small selection covers both."""
    by_lang: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_lang[t.spec.tags[0] if t.spec.tags else ""].append(t)
    return _in_turn([by_lang[lang] for lang in sorted(by_lang)], k)


def _llm_subset(tasks: list[Task], k: int) -> list[Task]:
    """`k` tasks spread over the categories in turn (all when k is 0)."""
    if not k or k >= len(tasks):
        return tasks
    by_category: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_category[t.spec.category].append(t)
    return _in_turn(list(by_category.values()), k)


def _tasks(cfg: DevOpsConfig, ctx: RunContext) -> list[Task]:
    """The selected tasks this runner can run (the built-here suite is written into the run folder)."""
    if cfg.tasks == "builtin":
        from iclr26.devops_gym.suite import build_suite

        root = build_suite(ctx.out_dir / "tasks", seed=cfg.seed)
    else:
        root = Path(cfg.tasks).expanduser()
    tasks = select_tasks(cfg, root)
    if cfg.runner == "docker":
        from iclr26.devops_gym.docker import docker_available

        ok, why = docker_available()
        if not ok:
            raise UserError(f"runner=docker needs a Docker engine: {why}")
        return tasks
    local = [t for t in tasks if not t.needs_docker]
    if len(local) < len(tasks):
        ctx.log(f"{len(tasks) - len(local)} tasks need Docker (no workspace/): they need runner=docker")
    if not local:
        raise UserError(f"every selected task under {root} needs Docker: set runner=docker")
    return local


ARMS = {
    "oracle": Arm("oracle", "oracle"),
    "null": Arm("null", "null"),
    "constant": Arm("constant", "floor", floor="constant label"),
    "observer": Arm("observer", "method"),
    "llm": Arm("llm", "method"),
}
"""The arms by `agents` name: the oracle (solution.sh), the null (DONE at once), the floor (the
constant label `healthy` on monitoring, nothing elsewhere), the scripted monitor (/proc thresholds,
monitoring tasks only) and the method (the shell agent)."""
NAMED_COMMAND = f"""

The fix is scripted for you: run `bash {SOLUTION}` in your shell, then reply DONE."""
"""What the capability ladder's rung (`named_command`) adds to the llm agent's instruction."""


def named_command_task(task: Task) -> Task:
    """`task` with the ladder's rung in its instruction (run it with the solution exposed: the
    runner's `oracle=True`); its verifier unchanged."""
    spec = dataclasses.replace(task.spec, instruction=task.spec.instruction.rstrip() + NAMED_COMMAND)
    return dataclasses.replace(task, spec=spec)


def study(cfg: DevOpsConfig, tasks: list[Task]) -> Study:
    """devops_gym as a study: the units are the tasks, the arms the agents; the claim (with the llm and
    the floor on) is the shell agent against the constant-label floor on tasks resolved, paired over the
    tasks with a bootstrap interval (a 0/1 metric); where both resolve nothing (0 vs 0) it is
    `uninformative`. The floor is the claim's baseline, so the claim's own floor is the constant 0: an
    agent below the floor arm did not hold, not "uninformative"."""
    arms = [ARMS[a] for a in AGENTS if a in cfg.agents]
    units = [Unit(t.task_id, cfg.seed, {"category": t.spec.category}) for t in tasks]
    claims = []
    if "llm" in cfg.agents and "constant" in cfg.agents:
        label = "tasks resolved (0/1), paired over the tasks the agent ran"
        claims.append(Claim("resolved", "llm", ("constant",), interval="bootstrap", floor=0.0, label=label))
    if "observer" in cfg.agents and "constant" in cfg.agents:
        label = "monitoring tasks resolved (0/1), paired over the monitoring tasks"
        observed = Claim("resolved", "observer", ("constant",), interval="bootstrap", floor=0.0, label=label)
        claims.append(observed)
    llm_units = {t.task_id for t in _llm_subset(tasks, cfg.llm_tasks)}
    measure = functools.partial(_measure, cfg, {t.task_id: t for t in tasks}, llm_units)
    views = functools.partial(_views, cfg)
    return Study("devops_gym", arms, units, measure, claims=claims, metrics=["resolved"],
                 pass_metric="resolved", config=cfg, seed=cfg.seed, views=views)  # fmt: skip


def run(cfg: DevOpsConfig, ctx: RunContext) -> Report:
    """Every configured agent on each selected task (`core.study.run_study`: resumable from
    `cells.jsonl`, `--jobs` tasks at once, one sandbox each), then the category table."""
    return run_study(study(cfg, _tasks(cfg, ctx)), ctx).report


def _agent(cfg: DevOpsConfig, arm: Arm, task: Task, ctx: RunContext) -> Agent:
    if arm.name == "oracle":
        return oracle_agent([task])
    if arm.name == "constant":
        return constant_agent([task])
    if arm.name == "observer":
        return observer_agent([task], cfg.command_timeout_s)
    if arm.name == "null":
        return null_agent()
    return shell_agent(
        ctx.chat_model(),
        max_tokens=cfg.max_tokens,
        history_turns=cfg.history_turns or None,
        seed=cfg.seed,
        prefill_command=cfg.prefill_command,
    )


def _measure(
    cfg: DevOpsConfig, tasks: dict[str, Task], llm_units: set[str], arm: Arm, unit: Unit, ctx: RunContext
) -> dict[str, Any]:
    """One agent on one task: `resolved` (0/1) and the trial's record (its episode included, for the
    transcripts page). The llm arm runs only its `llm_tasks` subset: elsewhere the cell is empty."""
    if arm.name == "llm" and unit.key not in llm_units:
        return {}
    task = tasks[unit.key]
    if arm.name == "observer" and task.spec.category != "monitor":
        return {}  # the scripted monitor watches services; it has nothing to do elsewhere
    max_steps, wall = cfg.max_steps, cfg.agent_timeout_s or None
    if arm.name == "observer":  # its script needs its own steps and the latest onset's time
        max_steps = max(max_steps, len(observer_commands(chunk_s(cfg.command_timeout_s))) + 1)
        wall = max(wall or task.spec.max_agent_timeout_sec, 60.0)
    named = arm.name == "llm" and cfg.named_command
    if named:
        task = named_command_task(task)
    limits = RunLimits(
        command_timeout_s=cfg.command_timeout_s,
        max_steps=max_steps,
        output_chars=cfg.output_chars,
        agent_timeout_s=wall,
    )
    trial = run_task(
        task, _agent(cfg, arm, task, ctx), limits, oracle=arm.name == "oracle" or named, runner=cfg.runner
    )
    return {**dataclasses.asdict(trial), "resolved": int(trial.resolved)}


def _trials(result: StudyResult, arm: str) -> list[TrialResult]:
    """The trials of `arm` read back from its cells (the empty ones left out)."""
    return [
        TrialResult(**{**c.metrics, "resolved": bool(c.metrics["resolved"])})
        for c in result.records(arm)
        if c.metrics
    ]


def _views(cfg: DevOpsConfig, result: StudyResult, ctx: RunContext) -> Report:
    """DevOps-Gym's category table (every agent, the paper's rows below), the llm's per-task table and
    transcripts page, the suite's validity line and the task start-up times."""
    results = {a.name: _trials(result, a.name) for a in result.study.arms}
    names = {a: trials[0].agent if trials else a for a, trials in results.items()}
    n = len(result.study.units)
    table = Table(
        f"Success by category ({n} tasks)",
        COLUMNS,
        [category_row(names[a], trials) for a, trials in results.items()] + [list(r) for r in PAPER_ROWS],
        caption="Overall = mean of build, monitoring, issue resolving and test generation; end-to-end apart. "
        "The oracle must resolve every task and the null agent none (the suite's validity check); the "
        "constant floor reports 'healthy' on every monitoring task without looking.",
    )
    notes = []
    oracle, null = results.get("oracle"), results.get("null")
    if oracle is not None and null is not None:
        failed = [t.task_id for t in oracle if not t.resolved]
        passed = [t.task_id for t in null if t.resolved]
        valid = not failed and not passed
        notes.append(
            f"suite {'valid' if valid else 'INVALID'}: oracle {len(oracle) - len(failed)}/{len(oracle)}, "
            f"null {len(passed)}/{len(null)}"
            + (f"; oracle fails {failed}" if failed else "")
            + (f"; null passes {passed}" if passed else "")
        )
    setup = [t.setup_s for trials in results.values() for t in trials]
    if setup:
        notes.append(
            f"task startup (sandbox, tmux, service): median {sorted(setup)[len(setup) // 2]:.2f} s, "
            f"max {max(setup):.2f} s"
        )
    tables = [table]
    llm = results.get("llm")
    if llm:
        tables.append(Table("The LLM agent per task", TASK_COLUMNS, task_rows(llm)))
        episodes = [Episode.from_json(t.episode) for t in llm]  # the transcripts, as a page to read
        write_html(ctx.out_dir / "episodes.html", episodes, f"{names['llm']} on DevOps-Gym")
        modes: dict[str, int] = defaultdict(int)
        for t in llm:
            modes[t.failure_mode] += 1
        notes.append("llm failure modes: " + ", ".join(f"{k} {v}" for k, v in sorted(modes.items())))
        overall = category_row("llm", llm)[5]
        notes.append(
            f"{names['llm']}: Overall {overall}% "
            "(paper: 27.54% for the best agent, Claude Code + Claude-4-Sonnet; end-to-end 0% for all)"
        )
    print(markdown_table(table.columns, table.rows))
    return Report(tables=tables, notes=notes)


DEMO_TASKS = (
    "build/go-compilation-error",
    "build/go-misconfigured-module",
    "monitor/memory-leak",
    "monitor/healthy-1",
    "issue_resolving/go-semver",
    "issue_resolving/go-textutil",
    "test_generation/go-semver",
    "test_generation/go-textutil",
    "end_to_end/go-catalog-cache",
    "end_to_end/go-logship-descriptors",
)
"""The tour's ten tasks: two per category, Go and the monitored services (no JVM start-up)."""

PRESETS = preset_table(
    # SmolLM2's context is 2,048 tokens: short replies, two exchanges of history, 1,500 characters of output
    bench=DevOpsConfig(
        max_steps=6,
        max_tokens=128,
        history_turns=2,
        output_chars=1500,
        command_timeout_s=20.0,
        agent_timeout_s=180.0,
    ),
    # CI: the five categories, Go and the monitored services only, oracle, null and the floor
    smoke={"languages": ("go", "python"), "per_category": 1, "agents": ("oracle", "null", "constant")},
    # the tour: two tasks per category (Go and services), oracle, null and the floor, SmolLM2 on one
    # task per category
    demo={
        "task_ids": DEMO_TASKS,
        "llm_tasks": 5,
        "max_steps": 2,
        "max_tokens": 64,
        "command_timeout_s": 10.0,
        "agent_timeout_s": 45.0,
    },
    # the paper's protocol: every task, a strong served model (--llm http), a long step budget
    paper={
        "max_steps": 50,
        "max_tokens": 2048,
        "history_turns": 0,
        "output_chars": 10_000,
        "prefill_command": False,
    },
)
SYSTEM = implemented_system("devops_gym", presets=PRESETS, run=run)
