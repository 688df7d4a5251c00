"""`iclr26 run devops_gym`: write the built-here suite (or load a Terminal-Bench task folder), run the
oracle and null agents (the suite's validity check) and the shell agent over a chat model, and
print DevOps-Gym's category table: success per category, Overall over build, monitoring, issue
resolving and test generation, and end-to-end apart; with per-task time, steps and tokens."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

from iclr26.agents import NULL, ORACLE, Episode, write_html
from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.errors import UserError
from iclr26.core.records import markdown_table
from iclr26.core.system import preset_table
from iclr26.devops_gym.agent import null_agent, oracle_agent, shell_agent
from iclr26.devops_gym.config import DevOpsConfig
from iclr26.devops_gym.evaluate import COLUMNS, TASK_COLUMNS, category_row, run_agent, task_rows
from iclr26.devops_gym.runner import RunLimits, TrialResult
from iclr26.devops_gym.task import Task, load_tasks

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


def run(cfg: DevOpsConfig, ctx: RunContext) -> Report:
    """Run every configured agent over the selected tasks and tabulate."""
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
        local = tasks
    else:
        local = [t for t in tasks if not t.needs_docker]
        if len(local) < len(tasks):
            ctx.log(f"{len(tasks) - len(local)} tasks need Docker (no workspace/): they need runner=docker")
        if not local:
            raise UserError(f"every selected task under {root} needs Docker: set runner=docker")
    limits = RunLimits(
        command_timeout_s=cfg.command_timeout_s,
        max_steps=cfg.max_steps,
        output_chars=cfg.output_chars,
        agent_timeout_s=cfg.agent_timeout_s or None,
    )
    trials_file = ctx.out_dir / "trials.jsonl"
    results: dict[str, list[TrialResult]] = {}
    seconds: dict[str, float] = {}
    for name in cfg.agents:
        t0 = time.perf_counter()
        if name == "llm":
            model = ctx.chat_model()
            agent = shell_agent(
                model,
                max_tokens=cfg.max_tokens,
                history_turns=cfg.history_turns or None,
                seed=cfg.seed,
                prefill_command=cfg.prefill_command,
            )
            subset = _llm_subset(local, cfg.llm_tasks)
            with ctx.progress(f"{agent.name} on {len(subset)} tasks", len(subset)) as advance:
                trials = run_agent(
                    subset, agent, limits, trials_file, runner=cfg.runner, on_result=lambda _: advance(1)
                )
        else:
            agent = oracle_agent(local) if name == "oracle" else null_agent()
            with ctx.progress(f"{agent.name} on {len(local)} tasks", len(local)) as advance:
                trials = run_agent(
                    local,
                    agent,
                    limits,
                    trials_file,
                    oracle=name == "oracle",
                    jobs=cfg.jobs,
                    backend=cfg.backend,
                    runner=cfg.runner,
                    on_result=lambda _: advance(1),
                )
        results[agent.name] = trials
        seconds[agent.name] = time.perf_counter() - t0
        if name == "llm":  # the transcripts, as a page to read
            episodes = [Episode.from_json(t.episode) for t in trials]
            write_html(ctx.out_dir / "episodes.html", episodes, f"{agent.name} on DevOps-Gym")
        ctx.log(
            f"{agent.name}: {sum(t.resolved for t in trials)}/{len(trials)} resolved, "
            f"{seconds[agent.name]:.0f} s"
        )
    return _report(cfg, local, results, seconds)


def _report(
    cfg: DevOpsConfig, tasks: list[Task], results: dict[str, list[TrialResult]], seconds: dict[str, float]
) -> Report:
    rows = [category_row(name, trials) for name, trials in results.items()]
    table = Table(
        f"Success by category ({len(tasks)} tasks)",
        COLUMNS,
        rows + [list(r) for r in PAPER_ROWS],
        caption="Overall = mean of build, monitoring, issue resolving and test generation; end-to-end apart. "
        "The oracle must resolve every task and the null agent none (the suite's validity check).",
    )
    notes = [f"{name}: {s:.0f} s wall" for name, s in seconds.items()]
    oracle, null = results.get(ORACLE), results.get(NULL)
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
    llm = [trials for name, trials in results.items() if name not in (ORACLE, NULL)]
    tables = [table]
    if llm:
        tables.append(Table("The LLM agent per task", TASK_COLUMNS, task_rows(llm[0])))
        modes: dict[str, int] = defaultdict(int)
        for t in llm[0]:
            modes[t.failure_mode] += 1
        notes.append("llm failure modes: " + ", ".join(f"{k} {v}" for k, v in sorted(modes.items())))
        overall = category_row("llm", llm[0])[5]
        notes.append(
            f"{llm[0][0].agent if llm[0] else 'llm'}: Overall {overall}% "
            "(paper: 27.54% for the best agent, Claude Code + Claude-4-Sonnet; end-to-end 0% for all)"
        )
    print(markdown_table(table.columns, table.rows))
    return Report(tables=tables, notes=notes)  # a benchmark paper: no method-vs-baseline claim


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
    # CI: the five categories, Go and the monitored services only, oracle and null, a few seconds each
    smoke={"languages": ("go", "python"), "per_category": 1, "agents": ("oracle", "null")},
    # the tour: two tasks per category (Go and services), oracle and null, SmolLM2 on one task per category
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
