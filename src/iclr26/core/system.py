"""The System record: what every paper's subpackage registers, and what `run` receives.

A system's `system` module (`iclr26.<name>.system`) defines its config, its four presets
(`preset_table`) and `SYSTEM = implemented_system(...)`. The catalog (`iclr26.catalog`) lists all
19 papers and imports a system's module only when that system is asked for; a paper without a
`system` module is *planned*, and the CLI says so rather than pretend.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from rich.console import Console

from iclr26.core.config import ConfigError, apply_overrides, with_changes
from iclr26.core.progress import progress_task, track
from iclr26.core.records import Report

T = TypeVar("T")
# smoke: CI, seconds · demo: the tour, at most 2 minutes on 2 cores, real data, the same comparison
# small · bench: the CPU run behind the README figures (minutes to an hour) · paper: the paper's scale
PRESETS = ("smoke", "demo", "bench", "paper")


RUN_MODEL_ROLE = "run"
"""the run's model in the run folder's llm-models.json (`check_run_model`)"""


@dataclass
class RunContext:
    """What a running system gets besides its config: its folder, a console, progress helpers and
    the run's model.

    `out_dir` is the run folder; checkpoints go under `out_dir / "checkpoints"`, so re-running
    with `--out` on the same folder resumes. `llm` is the run's model choice (`--llm`, an
    `iclr26.core.llm.LLMChoice`); left None it is `auto`, resolved at first use.
    """

    out_dir: Path
    console: Console = field(default_factory=Console)
    llm: Any = None  # LLMChoice (core.llm is imported only by runs that use a model)
    models: list[tuple[Any, Any]] = field(default_factory=list)  # (model, its usage when made)
    reported: list[Any] = field(default_factory=list)  # Usage of models made elsewhere (Ray workers)
    jobs: int = 1  # cells of a study run at once (`--jobs`; `core.study.run_study`)
    parallel: str = "process"  # where they run: "process" (a pool of `jobs`) or "ray" (`--parallel`)

    def llm_choice(self) -> Any:
        """The run's `LLMChoice` (`auto` resolved against the environment on first use)."""
        if self.llm is None:
            from iclr26.core.llm.choice import resolve_llm

            self.llm = resolve_llm("auto")
        return self.llm

    def chat_model(
        self,
        *,
        cache: bool = True,
        max_concurrency: int | None = None,
        cache_name: str = "llm-cache.sqlite",
        images: str = "",
    ) -> Any:
        """The run's model (`--llm`), whose token and time usage goes into results.json
        (`llm_usage`: what this run spent, also on a model shared with other runs). With `cache`,
        answers are kept in the run folder's `cache_name`, so a resumed run never asks the same
        question twice (give conditions whose cost is compared their own cache file: a hit costs
        no tokens). `images` names what needs a model that sees images (e.g. "the VLM row"):
        with a text-only choice that is a one-line `UserError` before the model is opened. The
        served model's identity is recorded in the run folder; resuming it with another model is
        a `UserError` (`check_run_model`)."""
        from iclr26.core.llm.identity import check_run_model, model_identity

        choice = self.llm_choice()
        if images:
            self.require_images(images)
        db = self.out_dir / cache_name if cache else None
        model = choice.open(cache=db, max_concurrency=max_concurrency)
        try:
            check_run_model(self.out_dir, RUN_MODEL_ROLE, model_identity(model))
        except BaseException:
            close = getattr(model, "close", None)
            if close is not None:
                close()
            raise
        self.models.append((model, model.usage.total))
        return model

    def require_images(self, what: str) -> None:
        """Raise a one-line `UserError` when the run's model cannot see images, naming `what`
        needs them (call it before the work that leads up to the model's part)."""
        from iclr26.core.errors import UserError

        choice = self.llm_choice()
        if not choice.sees_images:
            raise UserError(
                f"{what} needs a model that sees images, and --llm {choice.label} reads text only: "
                "serve a vision model (e.g. vLLM with Qwen2.5-VL) and run with --llm http and "
                "ICLR26_LLM_BASE_URL"
            )

    def add_usage(self, usage: Any) -> None:
        """Count the `Usage` of a model this process did not make (a Ray worker's, sent back with
        its result) in the run's `llm_usage`."""
        self.reported.append(usage)

    def llm_usage(self) -> dict[str, float | int] | None:
        """The summed usage of every model made by `chat_model` and of the usage reported with
        `add_usage`, or None when there was none."""
        if not self.models and not self.reported:
            return None
        from iclr26.core.llm import Usage

        total, seen = Usage(), set()
        for model, at_start in self.models:  # wrappers of one model share its meter: count it once
            if id(model.usage) not in seen:
                seen.add(id(model.usage))
                total = total + (model.usage.total - at_start)
        for usage in self.reported:
            total = total + usage
        return total.as_dict()

    def close_models(self) -> None:
        """Close the models made by `chat_model` (servers stopped, caches closed)."""
        for m, _ in self.models:
            close = getattr(m, "close", None)
            if close is not None:
                close()

    @property
    def checkpoint_dir(self) -> Path:
        """The run's checkpoint folder (created on first use)."""
        path = self.out_dir / "checkpoints"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def log(self, message: str) -> None:
        """Print one line of progress commentary."""
        self.console.print(message, highlight=False)

    def track(self, iterable: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        """Iterate with a progress bar (or log lines when not on a terminal)."""
        return track(self.console, iterable, description, total)

    def progress(self, description: str, total: int) -> AbstractContextManager[Callable[[int], None]]:
        """A context yielding `advance(n=1)` for work that is not a simple loop."""
        return progress_task(self.console, description, total)


RunFn = Callable[[Any, RunContext], Report]
C = TypeVar("C")


def preset_table(
    *, bench: C, smoke: Mapping[str, Any], demo: Mapping[str, Any], paper: Mapping[str, Any]
) -> dict[str, C]:
    """A system's four presets, written once as changes to `bench` (the README figures' config):
    `smoke` (seconds, CI), `demo` (the tour: at most 2 minutes on 2 cores), `bench`, `paper` (the
    paper's scale). Keys may be dotted to reach nested configs (`{"td3.lr": 1e-4}`)."""
    return {
        "smoke": with_changes(bench, smoke),
        "demo": with_changes(bench, demo),
        "bench": bench,
        "paper": with_changes(bench, paper),
    }


def system_attributes(package: str) -> Callable[[str], Any]:
    """A system package's module-level `__getattr__`: `SYSTEM` and `PRESETS` load from
    `<package>.system` on first use, so importing any other module of the package (or listing the
    catalog) does not import the system and the catalog."""

    def __getattr__(name: str) -> Any:
        if name in ("SYSTEM", "PRESETS"):
            return getattr(importlib.import_module(f"{package}.system"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


@dataclass(frozen=True)
class System:
    """One paper's system: identity, claim, presets (config instances) and the `run` function."""

    name: str
    number: int
    title: str
    claim: str
    presets: Mapping[str, Any] = field(default_factory=dict)
    run: RunFn | None = None
    readme: str = ""
    unavailable: str = ""  # why an implemented system cannot load here (a missing extra)

    def __post_init__(self) -> None:
        if self.run is not None:
            missing = [p for p in PRESETS if p not in self.presets]
            if missing:
                raise ValueError(f"system {self.name!r} is implemented but lacks presets {missing}")
            for p, cfg in self.presets.items():
                if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
                    raise TypeError(f"system {self.name!r}: preset {p!r} must be a config instance")

    @property
    def status(self) -> Literal["implemented", "planned", "unavailable"]:
        """`implemented` when the system has a `run`, `unavailable` when it cannot be imported
        here (a missing optional dependency), else `planned`."""
        if self.unavailable:
            return "unavailable"
        return "implemented" if self.run is not None else "planned"

    def config(self, preset: str = "demo", overrides: Mapping[str, str] | None = None) -> Any:
        """The preset's config with `--set` overrides applied (errors name the field)."""
        if preset not in self.presets:
            raise ConfigError(
                f"system {self.name!r} has no preset {preset!r}; presets are: " + ", ".join(self.presets)
            )
        return apply_overrides(self.presets[preset], overrides or {})
