"""`iclr26 run scienceboard`: start the desktop and run the study (`core.study`) over the built-here
tasks on the real apps: the oracle and null agents (the task set's validity check), the always-FAIL
and random-click floors and the model agent; print ScienceBoard's table: success per domain and
overall (the mean of the domain rates), with steps, tokens and each app's start-up time, and judge the
model agent against the floors. `tasks=<path>` loads the authors' task files instead and prints how
each maps onto our apps."""

from __future__ import annotations

import functools
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iclr26.agents import (
    Budget,
    LLMAgent,
    NullAgent,
    OracleAgent,
    run_episode,
)
from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.errors import UserError
from iclr26.core.records import markdown_table
from iclr26.core.study import Arm, Study, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.scienceboard.command_space import COMMAND_APPS, command_prompt, reference_commands
from iclr26.scienceboard.config import AGENTS, TASK_ONLY, ScienceBoardConfig
from iclr26.scienceboard.floors import RandomClicks, always_fail
from iclr26.scienceboard.grounding import GroundingAgent, NoisyOracleAgent, plan, pointer_actions
from iclr26.scienceboard.suite import BuiltTask, built_tasks
from iclr26.scienceboard.task import APPS, load_tasks, map_task
from iclr26.scienceboard.views import DOMAIN_OF, views

PREFILL = "```python\npyautogui."
"""The prefilled start of each reply (config `prefill`): a pyautogui call, so a small model acts; the
reply then stops at the block's closing fence."""
COMMAND_PREFILL = "```python\ncommand("
"""The same in the command action space: the reply starts a `command(` call."""
KINDS = ("direct", "basic", "knowledge", "reasoning", "infeasible")


def select_tasks(
    cfg: ScienceBoardConfig,
    per_domain: int,
    domains: tuple[str, ...] = (),
    keep: Callable[[BuiltTask], bool] | None = None,
) -> list[BuiltTask]:
    """The built-here tasks of `domains` (default: the config's; only `task_ids` when the config names
    them; only those `keep` keeps), at most `per_domain` each, spread over the kinds."""
    every = [t for t in built_tasks() if keep is None or keep(t)]
    if cfg.task_ids:
        unknown = sorted(set(cfg.task_ids) - {t.task_id for t in every})
        if unknown:
            raise UserError(f"task_ids: no built-here task {', '.join(unknown)}")
        every = [t for t in every if t.task_id in cfg.task_ids]
    out = []
    for domain in domains or cfg.domains:
        tasks = [t for t in every if DOMAIN_OF[t.spec["type"]] == domain]
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


ARMS = {
    "oracle": Arm("oracle", "oracle"),
    "null": Arm("null", "null"),
    "always_fail": Arm("always_fail", "floor", floor="always-FAIL"),
    "random_click": Arm("random_click", "floor", floor="random clicks"),
    "llm": Arm("llm", "method"),
}
"""The arms by `agents` name: the oracle (the reference solutions: must pass every task), the null
(DONE at once: must pass none), the two floors (`floors.py`) and the method (the model agent)."""
FLOORS = ("always_fail", "random_click")


def study(cfg: ScienceBoardConfig, desk: Any = None, workdir: Path | None = None) -> Study:
    """ScienceBoard as a study: the units are the selected built-here tasks, the arms the agents. The
    claim (with the llm and a floor on) is the model agent against each floor on tasks passed, named
    before the run, paired over the tasks the agent ran with a bootstrap interval (a 0/1 metric); 0 vs
    0 everywhere is `uninformative`. A floor is the claim's baseline, so its own floor is the constant
    0. `desk` (a running `Desktop`) and `workdir` are what `measure` needs to run a cell. The
    `experiment` switch picks the grounding or command study instead."""
    if cfg.experiment == "grounding":
        return grounding_study(cfg, desk, workdir)
    if cfg.experiment == "command":
        return command_study(cfg, desk, workdir)
    tasks = select_tasks(cfg, cfg.per_domain)
    arms = [ARMS[a] for a in AGENTS if a in cfg.agents]
    units = [Unit(t.task_id, cfg.seed, {"domain": DOMAIN_OF[t.spec["type"]], "kind": t.kind}) for t in tasks]
    claims = []
    floors = tuple(f for f in FLOORS if f in cfg.agents)
    if "llm" in cfg.agents and floors:
        label = "tasks passed (0/1), paired over the tasks the model agent ran"
        claims.append(Claim("success", "llm", floors, interval="bootstrap", floor=0.0, label=label))
    chosen = select_tasks(cfg, cfg.llm_per_domain or cfg.per_domain, cfg.llm_domains)
    llm_units = {t.task_id for t in chosen}
    by_id = {t.task_id: t for t in tasks}
    measure = functools.partial(_measure, cfg, by_id, llm_units, desk, workdir)
    return Study("scienceboard", arms, units, measure, claims=claims, metrics=["success", "steps"],
                 pass_metric="success", config=cfg, seed=cfg.seed,
                 views=functools.partial(views, cfg, by_id))  # fmt: skip


def _study(cfg: ScienceBoardConfig, tasks: list[BuiltTask], arms: list[Arm], claims: list[Claim],
           desk: Any, workdir: Path | None) -> Study:  # fmt: skip
    """A study over `tasks` with `arms` and `claims`, measured and shown as the success table's."""
    units = [Unit(t.task_id, cfg.seed, {"domain": DOMAIN_OF[t.spec["type"]], "kind": t.kind}) for t in tasks]
    by_id = {t.task_id: t for t in tasks}
    measure = functools.partial(_measure, cfg, by_id, set(by_id), desk, workdir)
    return Study(f"scienceboard-{cfg.experiment}", arms, units, measure, claims=claims,
                 metrics=["success", "steps"], pass_metric="success", config=cfg, seed=cfg.seed,
                 views=functools.partial(views, cfg, by_id))  # fmt: skip


def _points(task: BuiltTask) -> bool:
    return pointer_actions(task.oracle) > 0


def grounding_study(cfg: ScienceBoardConfig, desk: Any = None, workdir: Path | None = None) -> Study:
    """Grounding versus planning, on the tasks whose reference solution points (`per_domain` each): the
    oracle (σ = 0), the oracle with Gaussian pointer noise of each `noise_px` (`grounding.jitter`), the
    scripted grounding-only agent (the plan as text, elements found in the accessibility tree) and the
    two floors. Claims, named before the run: the grounding agent beats each floor, and against the
    oracle (the ceiling); each noise level loses tasks against the oracle (lower success is the claim)."""
    tasks = select_tasks(cfg, cfg.per_domain, keep=_points)
    noise = [Arm(f"noise_{s}", "method", params={"sigma": s}) for s in cfg.noise_px]
    arms = [ARMS["oracle"], *noise, Arm("grounding", "method"), ARMS["always_fail"], ARMS["random_click"]]
    label = "tasks passed (0/1), paired over the tasks"
    claims = [
        Claim("success", "grounding", FLOORS, interval="bootstrap", floor=0.0, label=label),
        Claim("success", "grounding", ("oracle",), interval="bootstrap", label=label),
        *(Claim("success", a.name, ("oracle",), higher_is_better=False, interval="bootstrap",
                label="tasks passed (0/1); lower than the oracle is the claim") for a in noise),
    ]  # fmt: skip
    return _study(cfg, tasks, arms, claims, desk, workdir)


def _state_task(task: BuiltTask) -> bool:
    """A task of an app with a command input that ends in a state (no ANSWER, no FAIL)."""
    return APPS.get(task.spec["type"]) in COMMAND_APPS and task.kind in ("direct", "basic", "knowledge")


def command_study(cfg: ScienceBoardConfig, desk: Any = None, workdir: Path | None = None) -> Study:
    """The command action space, on the KAlgebra, PyMOL and GRASS tasks that end in a state
    (`per_domain` each): the model with `command('text')` seeing the tree (`llm_command`) or the task
    alone (`llm_command_task`), each against the same model with pyautogui seeing the tree
    (`llm_pixel`) and the two floors, named before the run; the reference solution in the command space
    (`oracle_command`) must pass every task, so the space can solve them."""
    domains = tuple(d for d in cfg.domains if d in ("algebra", "biochemistry", "gis"))
    tasks = select_tasks(cfg, cfg.per_domain, domains, keep=_state_task)
    arms = [
        Arm("llm_command", "method", params={"action_space": "command"}),
        Arm("llm_command_task", "method", params={"action_space": "command", "observation": TASK_ONLY}),
        Arm("llm_pixel", "baseline"),
        Arm("oracle_command", "oracle", params={"action_space": "command"}),
        ARMS["always_fail"],
        ARMS["random_click"],
    ]
    label = "tasks passed (0/1), paired over the tasks"
    baselines = ("llm_pixel", *FLOORS)
    claims = [
        Claim("success", arm, baselines, interval="bootstrap", floor=0.0, label=label)
        for arm in ("llm_command", "llm_command_task")
    ]
    return _study(cfg, tasks, arms, claims, desk, workdir)


def run(cfg: ScienceBoardConfig, ctx: RunContext) -> Report:
    """Every configured agent on each selected task on the desktop (`core.study.run_study`: resumable
    from `cells.jsonl`), then ScienceBoard's domain table. The cells run one at a time: they share
    one desktop, and the reference solutions click fixed points of a screen they have to themselves."""
    if cfg.tasks != "builtin":
        return _mapping(cfg)
    if "llm" in cfg.agents and _needs_images(cfg):
        ctx.require_images(_needs_images(cfg))  # before the oracle and null rows, not after them
    from iclr26.scienceboard.desktop import Desktop

    if ctx.jobs > 1:
        ctx.log(f"scienceboard runs one task at a time on its one desktop (--jobs {ctx.jobs} ignored)")
    with tempfile.TemporaryDirectory(prefix="iclr26-sb-") as tmp, Desktop() as desk:
        return run_study(study(cfg, desk, Path(tmp)), ctx, jobs=1, parallel="process").report


def _agent(cfg: ScienceBoardConfig, ctx: RunContext, arm: Arm, task: BuiltTask, desk: Any = None) -> Any:
    """The arm's agent for `task`: the model agent is made per task, as its system prompt names the
    task's app."""
    from iclr26.scienceboard.env import GUI_PARSER
    from iclr26.scienceboard.prompting import SEEN, system_prompt

    if arm.name == "oracle":
        return OracleAgent({task.task_id: list(task.oracle)})
    if arm.name == "oracle_command":
        return OracleAgent({task.task_id: reference_commands(task.oracle)})
    if "sigma" in arm.params:
        return NoisyOracleAgent({task.task_id: task.oracle}, arm.params["sigma"], cfg.seed)
    if arm.name == "grounding":
        assert desk is not None
        app = map_task(task.task()).app
        return GroundingAgent({task.task_id: plan(task.oracle, app)}, desk.nodes)
    if arm.name == "null":
        return NullAgent()
    if arm.name == "always_fail":
        return always_fail()
    if arm.name == "random_click":
        steps = int(task.spec["steps"])  # its clicks, then DONE within the budget
        return RandomClicks(cfg.seed, clicks=min(steps, _budget(cfg, task).max_steps - 1))
    model = ctx.chat_model(images=_needs_images(cfg))
    command = arm.params.get("action_space") == "command"
    seen = SEEN.get(arm.params.get("observation", cfg.observation), "nothing else")
    prompt = (command_prompt(task.spec["type"], seen) if command
              else system_prompt(task.spec["type"], cfg.observation))  # fmt: skip
    prefill = (COMMAND_PREFILL if command else PREFILL) if cfg.prefill else ""
    return LLMAgent(
        model, prompt, GUI_PARSER,
        max_tokens=cfg.max_tokens, seed=cfg.seed, history_turns=cfg.history_turns,
        name=f"llm:{model.name}" + (" (command space)" if command else ""), reply_prefix=prefill,
        stop=("\n```",) if cfg.prefill else None,
    )  # fmt: skip


def _measure(
    cfg: ScienceBoardConfig,
    by_id: dict[str, BuiltTask],
    llm_units: set[str],
    desk: Any,
    workdir: Path,
    arm: Arm,
    unit: Unit,
    ctx: RunContext,
) -> dict[str, Any]:
    """One agent on one task in a fresh environment (its app started, the checks run at the end):
    `success` (0/1), steps, the app's start-up time, the checks' verdicts and the episode. The llm arm
    runs only its `llm_domains` / `llm_per_domain` subset: elsewhere the cell is empty."""
    from iclr26.scienceboard.env import GUI_PARSER, ScienceBoardEnv

    if arm.name == "llm" and unit.key not in llm_units:
        return {}
    if desk is None:
        raise UserError("scienceboard: a cell needs the desktop (run it through system.run)")
    t = by_id[unit.key]
    figure = None
    if cfg.figures and arm.name == "oracle":
        figure = ctx.out_dir / f"screen_{map_task(t.task()).app}.png"
    env = ScienceBoardEnv(
        t.task(), desk, workdir / arm.name / unit.key,
        observation=arm.params.get("observation", cfg.observation),
        a11y_chars=cfg.a11y_chars, pause_s=cfg.pause_s, figure=figure,
        action_space=arm.params.get("action_space", "pixel"),
    )  # fmt: skip
    agent = _agent(cfg, ctx, arm, t, desk)
    episode = run_episode(unit.key, env, agent, GUI_PARSER, _budget(cfg, t))
    checks = [{"type": r.kind, "passed": r.passed, "detail": r.detail} for r in env.results]
    out = {"success": int(episode.success), "steps": len(episode.steps), "app": env.app,
           "startup_s": env.startup_s, "checks": checks, "episode": episode.to_json()}  # fmt: skip
    if isinstance(agent, GroundingAgent):  # the plan's elements it found in the tree, and missed
        out |= {"found": agent.found, "missed": agent.missed}
    return out


def _budget(cfg: ScienceBoardConfig, task: BuiltTask) -> Budget:
    return Budget(max_steps=cfg.max_steps or int(task.spec["steps"]) + 2, max_wall_s=cfg.task_timeout_s)


DEMO_TASKS = ("kalgebra-direct-define", "grass-infeasible-satellite", "tex-direct-water")
"""The tour's tasks: KAlgebra, GRASS and TeXstudio start in about a second (Stellarium takes six)."""

PRESETS = preset_table(
    # SmolLM2 (2,048 tokens of context per request) fits one earlier turn beside a short tree, not three
    bench=ScienceBoardConfig(history_turns=1, a11y_chars=800),
    # CI: one task per domain, the oracle, the null and the two floors (the apps start; no model)
    smoke={"per_domain": 1, "agents": ("oracle", "null", "always_fail", "random_click"), "figures": False},
    # the tour: three tasks on the quick-starting apps, an infeasible one among them (where always-FAIL
    # scores), every arm; SmolLM2 reading the accessibility tree on all three, two steps each
    demo={"task_ids": DEMO_TASKS, "max_steps": 2},
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
