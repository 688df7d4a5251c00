"""The study: the contract between a system and `core`.

A system's `run` describes its experiment as a `Study` and hands it to `run_study`:

- `arms`: the method, its baselines, and reference arms with a declared expectation: an `oracle`
  (passes every unit), a `null` (passes none) and `floor`s, the trivial policies a reader needs to judge
  any row (chance, constant label, always-FAIL, random action, copy-the-input, untrained model);
- `units`: what the comparison is paired over (dataset × seed, task, question);
- `measure(arm, unit, ctx) -> dict`: one cell, the paper's method in it and the modules it calls;
- `claims`: metric, method, baselines named before the run, direction (`core.claim.Claim`);
- `references`: constants from a paper, shown beside the arms, never a verdict's baseline;
- `views`: the system's own tables and figures, computed from the cells.

`run_study` enumerates arms × units, skips the cells already in the run folder's ledger
(`core.ledger`, `cells.jsonl`), runs the rest in this process, in `jobs` processes or on Ray, appends
each to the ledger as it finishes, checks the reference arms' expectations, judges the claims with the
one rule (`core.claim.judge`) and builds the standard table: mean and interval per arm × metric.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
import multiprocessing
import multiprocessing.util
import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from iclr26.core.claim import Claim, judge, worst
from iclr26.core.config import config_to_dict
from iclr26.core.interrupt import interrupt_workers, raise_if_interrupted
from iclr26.core.intervals import bootstrap_interval, wilson_interval
from iclr26.core.ledger import CELLS_FILE, CellRecord, append_cell, config_hash, read_cells
from iclr26.core.records import ClaimCheck, Report, Table, format_cell
from iclr26.core.seeding import derive_seed, set_seed
from iclr26.core.system import RunContext

Role = Literal["method", "baseline", "oracle", "null", "floor"]
ROLES: tuple[str, ...] = ("method", "baseline", "oracle", "null", "floor")
REFERENCE_ROLES = ("oracle", "null", "floor")
"""The reference arms: each declares what it should score, so that a reader can judge every other row."""


@dataclass(frozen=True)
class Arm:
    """One arm of a study. A `floor` names its trivial policy in `floor` ("chance", "constant",
    "always-FAIL", "random action", "copy", "untrained", ...); `params` is anything `measure` needs."""

    name: str
    role: Role = "method"
    floor: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"arm {self.name!r}: role must be one of {ROLES}, got {self.role!r}")
        if (self.role == "floor") != bool(self.floor):
            raise ValueError(
                f"arm {self.name!r}: a floor arm, and only a floor arm, names its trivial policy"
            )

    @property
    def label(self) -> str:
        """The role as the standard table shows it: `floor (chance)`, `oracle`, ..."""
        return f"floor ({self.floor})" if self.role == "floor" else self.role


@dataclass(frozen=True)
class Unit:
    """One unit the arms are paired over: a unique `key`, its `seed`, and what `measure` needs."""

    key: str
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reference:
    """A constant from a paper (or another run), shown beside the arms: `values` by metric. It is never
    a verdict's baseline: nothing here was measured under this run's conditions."""

    name: str
    values: Mapping[str, float]
    source: str


Measure = Callable[[Arm, Unit, RunContext], Mapping[str, Any]]


@dataclass
class Study:
    """A system's experiment, as `core` runs it (see the module docstring).

    `metrics` are the standard table's columns (default: every numeric metric measured). `pass_metric`
    is the 0/1 metric an oracle must pass on every unit and a null on none. `config` (the system's
    config) is hashed into every cell, and `seed` seeds each cell's stream (`derive_seed`)."""

    name: str
    arms: Sequence[Arm]
    units: Sequence[Unit]
    measure: Measure
    claims: Sequence[Claim] = ()
    references: Sequence[Reference] = ()
    metrics: Sequence[str] = ()
    pass_metric: str = ""
    config: Any = None
    seed: int = 0
    views: Callable[[StudyResult, RunContext], Report] | None = None
    unit_major: bool = False  # cells run unit after unit (seed after seed), not arm after arm

    def __post_init__(self) -> None:
        names = [a.name for a in self.arms]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"study {self.name!r}: arm names must be unique and at least one, got {names}")
        keys = [u.key for u in self.units]
        if len(set(keys)) != len(keys):
            raise ValueError(f"study {self.name!r}: unit keys must be unique")
        arms = {a.name: a for a in self.arms}
        refs = {r.name for r in self.references}
        for c in self.claims:
            for name in (c.method, *c.baselines):
                if name in refs:
                    raise ValueError(
                        f"study {self.name!r}: {name!r} is a Reference (a constant from elsewhere); a claim "
                        "compares arms measured in this run"
                    )
                if name not in arms:
                    raise ValueError(f"study {self.name!r}: the claim names {name!r}, not an arm ({names})")
            if arms[c.method].role != "method":
                raise ValueError(
                    f"study {self.name!r}: the claim's method {c.method!r} is a {arms[c.method].role}"
                )
            if c.floor_arm is not None and arms.get(c.floor_arm, Arm("", "method")).role != "floor":
                raise ValueError(
                    f"study {self.name!r}: the claim's floor_arm {c.floor_arm!r} is not a floor arm"
                )
        if any(a.role in ("oracle", "null") for a in self.arms) and not self.pass_metric:
            raise ValueError(f"study {self.name!r}: an oracle or null arm needs the study's pass_metric")

    def arm(self, name: str) -> Arm:
        """The arm called `name`."""
        return next(a for a in self.arms if a.name == name)

    def cells(self) -> list[tuple[Arm, Unit]]:
        """Every (arm, unit) in the order they run with jobs=1: arm-major, or unit-major."""
        if self.unit_major:
            return [(a, u) for u in self.units for a in self.arms]
        return [(a, u) for a in self.arms for u in self.units]

    def config_hash(self) -> str:
        """The hash of `config` every cell records."""
        cfg = self.config
        if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
            cfg = config_to_dict(cfg)
        return config_hash(cfg)


@dataclass
class StudyResult:
    """What `run_study` found: the cells, the reference arms' failures, the claims' checks, the report."""

    study: Study
    cells: dict[tuple[str, str], CellRecord]
    invalid: list[str]
    checks: list[ClaimCheck]  # one per claim and baseline, in declaration order
    report: Report = field(default_factory=Report)

    def values(self, arm: str, metric: str) -> dict[str, float]:
        """`metric` of `arm` per unit key, for the units that have it (in the study's unit order)."""
        out = {}
        for u in self.study.units:
            cell = self.cells.get((arm, u.key))
            if cell is not None and metric in cell.metrics:
                out[u.key] = cell.metrics[metric]
        return out

    def records(self, arm: str) -> list[CellRecord]:
        """The cells of `arm`, in unit order."""
        return [self.cells[(arm, u.key)] for u in self.study.units if (arm, u.key) in self.cells]


# ------------------------------------------------------------------------------------------- cells


def run_cell(study: Study, arm: Arm, unit: Unit, ctx: RunContext, *, seed_globals: bool = True) -> CellRecord:
    """Measure one cell: seed its stream (Python, NumPy and torch's global generators: not when cells
    share this process's threads), time it, and count the language-model usage it made (`metered`)."""
    from iclr26.core.llm.identity import model_identity
    from iclr26.core.llm.usage import metered

    raise_if_interrupted()  # a pool worker told to stop starts no cell queued for it before
    if seed_globals:
        set_seed(derive_seed(study.seed, arm.name, unit.key))
    start = time.perf_counter()
    with metered() as meter:
        metrics = dict(study.measure(arm, unit, ctx))
    wall = time.perf_counter() - start
    used = meter.total
    tokens = used.as_dict() if used.calls else None
    models = sorted({model_identity(m) for m, _ in ctx.models}) if tokens else []
    return CellRecord(
        arm.name, unit.key, metrics, unit.seed, round(wall, 3), tokens, models, study.config_hash()
    )


_WORKER: dict[str, Any] = {}  # a pool worker's study and context, set once by `_init_worker`


def _context_fields(ctx: RunContext) -> dict[str, Any]:
    """What a worker's own RunContext copies of the run's: every field but its console and what it
    accumulates (its models, usage reported from elsewhere)."""
    own = ("console", "models", "reported")
    return {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx) if f.name not in own}


def cell_threads(threads: int) -> int:
    """The torch threads a cell may use: `threads`, or 1 in a process `--jobs N` forked. A parent that
    ran torch's OpenMP pool (training before the study) leaves the forked child a pool that never
    answers, so a second thread there waits for ever (vff, vincie and laplacianformer hung so)."""
    return 1 if multiprocessing.parent_process() is not None else threads


def _init_worker(study: Study, ctx: RunContext) -> None:
    own = RunContext(**_context_fields(ctx))
    _WORKER.update(study=study, ctx=own)
    multiprocessing.util.Finalize(own, own.close_models, exitpriority=10)  # the worker's models, at its exit


def _pool_cell(i: int, j: int) -> dict[str, Any]:
    study: Study = _WORKER["study"]
    return dataclasses.asdict(run_cell(study, study.arms[i], study.units[j], _WORKER["ctx"]))


def _ray_cell(study: Study, fields: dict[str, Any], i: int, j: int) -> dict[str, Any]:
    ctx = RunContext(**fields)
    try:
        return dataclasses.asdict(run_cell(study, study.arms[i], study.units[j], ctx))
    finally:
        ctx.close_models()


Parallel = Literal["process", "threads", "ray"]
PARALLEL = ("process", "threads", "ray")
"""Where cells run: `jobs` forked processes; `jobs` threads of this process, for cells that wait on a
language-model server (they share the run's models, and each cell's tokens are still its own); Ray."""


def run_study(
    study: Study, ctx: RunContext, *, jobs: int | None = None, parallel: Parallel | None = None
) -> StudyResult:
    """Run the cells of `study` not yet in the run folder's ledger, `jobs` at a time (in this process
    for 1, else in a process pool, or with `parallel="threads"` in threads sharing the run's models;
    `parallel="ray"` on the Ray cluster `RAY_ADDRESS` names, or a local one), append each to the
    ledger as it finishes, and judge the claims. SIGINT/SIGTERM (under
    `core.interrupt.stop_on_signals`) stop the workers; what finished stays in the ledger. For a
    measure that is deterministic given its seed, the ledger does not depend on `jobs`. `jobs` and
    `parallel` default to the run's (`iclr26 run --jobs N --parallel ray`)."""
    jobs = ctx.jobs if jobs is None else jobs
    parallel = ctx.parallel if parallel is None else parallel  # type: ignore[assignment]
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
    path = ctx.out_dir / CELLS_FILE
    cells = read_cells(path, expect_hash=study.config_hash())
    at = {(a.name, u.key): (i, j) for i, a in enumerate(study.arms) for j, u in enumerate(study.units)}
    todo = [at[(a.name, u.key)] for a, u in study.cells() if (a.name, u.key) not in cells]

    def record(cell: CellRecord) -> None:
        append_cell(path, cell)
        cells[cell.key] = cell
        m = ", ".join(f"{k} {format_cell(v)}" for k, v in cell.metrics.items() if _scalar(v))
        ctx.log(f"{cell.arm} on {cell.unit}: {m} ({cell.wall_s:.1f} s)")

    if parallel not in PARALLEL:
        raise ValueError(f"parallel must be one of {PARALLEL}, got {parallel!r}")
    if parallel == "process" and jobs > 1 and len(todo) > 1:
        fork = multiprocessing.get_context("fork")  # the study (closures too) reaches the workers as is
        pool = ProcessPoolExecutor(jobs, mp_context=fork, initializer=_init_worker, initargs=(study, ctx))
        _run_pool(study, ctx, todo, jobs, pool, _pool_cell, record)
    elif parallel == "threads" and jobs > 1 and len(todo) > 1:
        threads = ThreadPoolExecutor(jobs, thread_name_prefix="cell")
        _run_pool(study, ctx, todo, jobs, threads, functools.partial(_thread_cell, study, ctx), record)
    elif todo:
        with ctx.progress(f"{study.name}: cells", total=len(todo)) as advance:
            if parallel == "ray":
                _run_ray(study, ctx, todo, lambda c: (record(c), advance(1)))
            else:
                for i, j in todo:
                    record(run_cell(study, study.arms[i], study.units[j], ctx))
                    advance(1)
    result = _judge(study, cells, ctx)
    if parallel == "ray" or (parallel == "process" and jobs > 1):
        _report_worker_usage(ctx, [cells[(study.arms[i].name, study.units[j].key)].tokens for i, j in todo])
    return result


def _report_worker_usage(ctx: RunContext, spent: Sequence[Mapping[str, Any] | None]) -> None:
    """Add the model usage of cells run in other processes (their models are not this process's) to
    the run's `llm_usage` in results.json."""
    from iclr26.core.llm.usage import Usage

    names = {f.name for f in dataclasses.fields(Usage)}
    for tokens in spent:
        if tokens and tokens.get("calls"):
            ctx.add_usage(Usage(**{k: v for k, v in tokens.items() if k in names}))


def _run_pool(
    study: Study,
    ctx: RunContext,
    todo: list[tuple[int, int]],
    jobs: int,
    pool: Executor,
    cell: Callable[[int, int], dict[str, Any]],
    record: Callable[[CellRecord], None],
) -> None:
    """The cells `todo` on `pool` (`jobs` workers), each recorded as it finishes. A cell that raises
    stops the cells not yet started; those running finish and are recorded, then the first error is
    raised."""
    with pool:
        try:
            futures = [pool.submit(cell, i, j) for i, j in todo]  # forks now, before a progress thread
            error: BaseException | None = None
            with ctx.progress(f"{study.name}: cells ({jobs} at once)", total=len(todo)) as advance:
                for future in as_completed(futures):
                    if future.cancelled():
                        continue
                    try:
                        done = CellRecord(**future.result())
                    except Exception as e:
                        if error is None:
                            error = e
                            for other in futures:
                                other.cancel()
                        continue
                    record(done)
                    advance(1)
            if error is not None:
                raise error
        except KeyboardInterrupt:
            if isinstance(pool, ProcessPoolExecutor):  # each worker stops its cell through its own cleanup
                interrupt_workers(pool)
            else:  # threads cannot be stopped: the cells running finish, no other starts
                pool.shutdown(wait=False, cancel_futures=True)
            raise


def _thread_cell(study: Study, ctx: RunContext, i: int, j: int) -> dict[str, Any]:
    """One cell in a thread of this process, sharing the run's models (a server's `max_concurrency`
    bounds the requests of all cells together); the global generators are not reseeded."""
    run = functools.partial(run_cell, study, study.arms[i], study.units[j], ctx, seed_globals=False)
    return dataclasses.asdict(contextvars.copy_context().run(run))


def _run_ray(
    study: Study, ctx: RunContext, todo: list[tuple[int, int]], done: Callable[[CellRecord], Any]
) -> None:
    try:
        import ray
    except ImportError as e:
        raise ImportError("parallel='ray' needs Ray: pip install 'iclr26[all]' or ray") from e
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), include_dashboard=False, log_to_driver=False,
                 configure_logging=False)  # fmt: skip
    remote = ray.remote(num_cpus=1)(_ray_cell)
    fields = _context_fields(ctx)
    pending = [remote.remote(study, fields, i, j) for i, j in todo]
    try:
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            for ref in finished:
                done(CellRecord(**ray.get(ref)))
    except KeyboardInterrupt:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise


# ------------------------------------------------------------------------------- checks and tables


def _scalar(v: Any) -> bool:
    return isinstance(v, int | float)  # bool too: a pass is 1


def check_references(study: Study, cells: Mapping[tuple[str, str], CellRecord]) -> list[str]:
    """The failures of the oracle and null arms' expectations, one line each (an oracle that fails a
    unit, a null that passes one): any makes the suite invalid."""
    out = []
    for arm in study.arms:
        if arm.role not in ("oracle", "null"):
            continue
        bad = []
        for u in study.units:
            cell = cells.get((arm.name, u.key))
            if cell is None or study.pass_metric not in cell.metrics:
                continue
            passed = bool(cell.metrics[study.pass_metric])
            if passed != (arm.role == "oracle"):
                bad.append(u.key)
        if bad:
            what = "failed" if arm.role == "oracle" else "passed"
            shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
            out.append(f"the {arm.role} arm {arm.name!r} {what} {len(bad)} unit(s): {shown}")
    return out


def _judge(study: Study, cells: dict[tuple[str, str], CellRecord], ctx: RunContext) -> StudyResult:
    invalid = check_references(study, cells)
    result = StudyResult(study, cells, invalid, [])
    for claim in study.claims:
        floors = result.values(claim.floor_arm, claim.metric) if claim.floor_arm else None
        method = result.values(claim.method, claim.metric)
        for baseline in claim.baselines:
            check = judge(claim, baseline, method, result.values(baseline, claim.metric), floors)
            check.floors = floor_means(
                result, claim.metric, method.keys() & result.values(baseline, claim.metric).keys()
            )
            if invalid:
                check = dataclasses.replace(
                    check, verdict="not tested", rule="the suite is invalid: " + "; ".join(invalid)
                )
            result.checks.append(check)
    views = study.views(result, ctx) if study.views is not None else Report()
    tables = [*views.tables, standard_table(result)]
    if len(result.checks) > 1:
        tables.append(claims_table(result.checks))
    primary = None
    if study.claims:
        n = len(study.claims[0].baselines)
        primary = worst(result.checks[:n])
    notes = [f"invalid suite: {line}" for line in invalid] + list(views.notes)
    result.report = Report(tables=tables, figures=list(views.figures), claim_check=primary, notes=notes)
    return result


def floor_means(result: StudyResult, metric: str, keys: Collection[str]) -> dict[str, float] | None:
    """Each floor arm's mean of `metric` over `keys` (the units a claim paired), for the reader to
    set beside the method and its baseline; None when the study has no floor arm."""
    out = {}
    for arm in result.study.arms:
        if arm.role != "floor":
            continue
        vals = [float(v) for k, v in result.values(arm.name, metric).items() if k in keys and _scalar(v)]
        vals = [v for v in vals if math.isfinite(v)]
        if vals:
            out[arm.name] = float(np.mean(vals))
    return out or None


def arm_interval(
    values: Sequence[float], bootstrap: bool = False, rate: bool | None = None
) -> tuple[float, float]:
    """The 95% interval of a mean over units: Wilson for a 0/1 metric, a percentile bootstrap when
    declared, else ± 2 standard errors (a point with one unit, which the standard table leaves out).
    `rate` says whether the metric is a 0/1 rate; None: when every value is 0 or 1."""
    x = np.asarray(values, dtype=np.float64)
    if not len(x):
        return math.nan, math.nan
    if rate if rate is not None else np.isin(x, (0.0, 1.0)).all():
        lo, hi = wilson_interval(int(x.sum()), len(x))
        return max(0.0, lo), min(1.0, hi)  # 0 of n is [0, ...], not a rounding error above it
    if len(x) < 2:
        return float(x[0]), float(x[0])
    if bootstrap:
        return bootstrap_interval(np.mean, [x], n_boot=2000, seed=0)
    half = 2 * float(x.std(ddof=1)) / math.sqrt(len(x))
    return float(x.mean()) - half, float(x.mean()) + half


def _metrics(result: StudyResult) -> list[str]:
    if result.study.metrics:
        return list(result.study.metrics)
    seen: dict[str, None] = {}
    for cell in result.cells.values():
        seen.update({k: None for k, v in cell.metrics.items() if _scalar(v) and v is not None})
    return list(seen)


_ROLE_ORDER = {"method": 0, "baseline": 1, "floor": 2, "oracle": 3, "null": 4}


def standard_table(result: StudyResult) -> Table:
    """Mean and 95% interval per arm × metric over the units each arm has, with n units; the method
    first, then its baselines, the floors and the oracle and null, then the references' constants."""
    study = result.study
    metrics = _metrics(result)
    boot = {c.metric for c in study.claims if c.interval == "bootstrap"}
    cols = ["arm", "role", "n units"]
    for m in metrics:
        cols += [m, f"{m} 95% interval"]
    rows: list[list[Any]] = []

    def finite(arm: str, m: str) -> list[float]:
        vals = [float(v) for v in result.values(arm, m).values() if _scalar(v) and v is not None]
        return [v for v in vals if math.isfinite(v)]

    # a 0/1 rate when every arm's every value is 0 or 1 (an F1 in % that is 0 for one arm is not)
    rate = {m: all(v in (0.0, 1.0) for a in study.arms for v in finite(a.name, m)) for m in metrics}
    for arm in sorted(study.arms, key=lambda a: _ROLE_ORDER[a.role]):
        measured = [c for c in result.records(arm.name) if c.metrics]  # an arm may leave a unit's cell empty
        row: list[Any] = [arm.name, arm.label, len(measured)]
        for m in metrics:
            vals = finite(arm.name, m)
            lo, hi = arm_interval(vals, m in boot, rate[m])
            spread = len(vals) > 1 or (vals and rate[m])  # one unit: no interval, but a rate's
            row += [float(np.mean(vals)) if vals else None,
                    f"[{format_cell(lo)}, {format_cell(hi)}]" if spread else None]  # fmt: skip
        rows.append(row)
    for ref in study.references:
        row = [ref.name, f"reference ({ref.source})", None]
        for m in metrics:
            row += [ref.values.get(m), None]
        rows.append(row)
    caption = (
        f"{study.name}: {len(study.units)} unit(s); interval: Wilson for a 0/1 metric, else ± 2 SE over units"
        + (" (paired bootstrap where a claim declares it)" if boot else "")
        + "; references are constants from elsewhere, not measured here."
    )
    if result.invalid:
        caption += " INVALID SUITE: " + "; ".join(result.invalid) + "."
    return Table(f"{study.name}: every arm, mean over units", cols, rows, caption=caption)


def claims_table(checks: Sequence[ClaimCheck]) -> Table:
    """One row per claim and baseline: the means, the verdict, n pairs and the interval of the difference."""
    rows = [
        [c.metric, c.method, c.baseline, c.method_value, c.baseline_value, c.verdict, c.n,
         None if c.interval is None else f"[{format_cell(c.interval[0])}, {format_cell(c.interval[1])}]"]
        for c in checks
    ]  # fmt: skip
    cols = [
        "metric",
        "method",
        "baseline",
        "method mean",
        "baseline mean",
        "verdict",
        "pairs",
        "difference interval",
    ]
    return Table("Claim checks (paired over units)", cols, rows)
