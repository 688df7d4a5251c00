"""`iclr26 run sci_refine`: the paper's build-up table (arXiv 2509.21193, Table 3) on one question set,
as a study (`core.study`): every row answers the same questions with the same model and seeds: no
retrieval; explicit RAG (the model's own search tool); the Monitor; + Querier; + Injector; + HSR; +
QAIR. The units are the questions. Beside the rows, reference arms with a known score: the gold answer
(oracle), no answer (null), and two floors a reader judges every row against: the constant answer "A"
and the question copied back as the answer. Accuracy over all questions and per split (needs retrieval
/ reasoning only), tokens, agent steps, retrieval calls and wall time per question.

Each (arm, question) is one line of `cells.jsonl` in the run folder, and every model call is cached
there per row, so an interrupted run resumes and a rerun is instant. `--parallel threads --jobs k`
answers k questions at once against the run's model (its tokens are still counted per cell).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.config import with_changes
from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel
from iclr26.core.llm.cache import CachedChatModel
from iclr26.core.llm.usage import metered
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Reference, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.sci_refine import dataset
from iclr26.sci_refine.config import SciRefineConfig
from iclr26.sci_refine.explicit_rag import ExplicitRAG
from iclr26.sci_refine.figures import buildup_figure
from iclr26.sci_refine.grading import grade
from iclr26.sci_refine.loaders import load_corpus, load_questions
from iclr26.sci_refine.monitor import ImplicitRAG
from iclr26.sci_refine.question import Passage, Question
from iclr26.sci_refine.refine import Attempt, Refiner, Solver, explicit_solver, implicit_solver, plain_solver
from iclr26.sci_refine.retrieval import PassageFilter, Retriever

PAPER_BUILDUP: dict[str, tuple[float, float | None, float | None]] = {
    "baseline": (25.3, 483.6, 43.4),
    "explicit_rag": (41.4, 470.6, 94.8),
    "monitor": (34.5, 218.4, 51.3),
    "querier": (36.8, None, None),
    "injector": (40.3, None, None),
    "hsr": (43.7, None, None),
    "qair": (48.3, 218.9, 53.4),
}
"""the paper's build-up on HLE Bio/Chem Gold: accuracy %, tokens (K) and steps, where it gives them"""
QASET_FILE = "qaset.json"
MONITOR_MODES = {
    "monitor": "monitor",
    "querier": "querier",
    "injector": "injector",
    "hsr": "injector",
    "qair": "injector",
}
"""the Monitor stack's mode per row (HSR and QAIR build on the full stack)"""
REFERENCE_ARMS = (
    Arm("gold", "oracle", params={"answer": "gold"}),
    Arm("no_answer", "null", params={"answer": ""}),
    Arm("constant_A", "floor", floor="constant", params={"answer": "constant"}),
    Arm("copy_question", "floor", floor="copy-the-input", params={"answer": "copy"}),
)
"""Arms whose answer is fixed, graded by the same grader as the rows: the gold answer must pass every
question and no answer none (else the set or grader is broken and no verdict is given); the floors
answer "A" to everything (chance on a four-option question, wrong elsewhere) and copy the question
back (a grader that takes a number from the question would pass it)."""
METRICS = ("correct", "tokens", "steps", "retrieval_calls", "evidence_found")


def _questions(cfg: SciRefineConfig, ctx: RunContext) -> tuple[list[Question], list[Passage]]:
    """The built-here set (built once into the run folder) or the user's question and corpus files."""
    if cfg.data == "builtin":
        path = ctx.out_dir / QASET_FILE
        qaset = dataset.build(cfg.n_questions, cfg.seed, cfg.n_distractors, cfg.retrieval_fraction)
        if path.is_file():  # the folder's answers belong to its set: refuse to mix in another one
            saved = dataset.load(path)
            if (saved.questions, saved.passages) != (qaset.questions, qaset.passages):
                raise UserError(
                    f"{path} holds another question set ({len(saved.questions)} questions, "
                    f"{len(saved.passages)} passages, seed {saved.seed}) than n_questions={cfg.n_questions}, "
                    f"n_distractors={cfg.n_distractors}, retrieval_fraction={cfg.retrieval_fraction}, "
                    f"seed={cfg.seed} builds; run into a new folder (--out)"
                )
        else:
            dataset.save(qaset, path)
        return list(qaset.questions), list(qaset.passages)
    questions = load_questions(cfg.data, cfg.data_format)
    if cfg.limit:
        questions = questions[: cfg.limit]
    if cfg.corpus:
        passages = load_corpus(cfg.corpus)
    else:
        built = dataset.build(1, cfg.seed, cfg.n_distractors)
        passages = list(built.passages)
    return questions, passages


class CorpusSearch:
    """The `search` one answer uses: the retriever's top k, then (optionally) the passage filter;
    counts its own calls and keeps the ids it handed back."""

    def __init__(self, retriever: Retriever, passage_filter: PassageFilter | None) -> None:
        self.retriever, self.filter = retriever, passage_filter
        self.calls = 0
        self.found: list[str] = []
        """ids of every passage handed back, in order (to check retrieval against a question's evidence)"""

    def __call__(self, query: str) -> list[Passage]:
        self.calls += 1
        hits = self.retriever.search(query)
        if self.filter is None or not hits:
            kept = [h.passage for h in hits]
        else:
            kept = [h.passage for h in self.filter(query, hits).kept]
        self.found.extend(p.id for p in kept)
        return kept


def _solver(row: str, model: ChatModel, search: CorpusSearch, cfg: SciRefineConfig) -> Solver:
    """The reasoning call of `row`: plain, with the search tool, or watched by the Monitor stack.

    The Monitor rows stream the main model uncached: a cached stream replays as one delta, which
    would move the Monitor's checks; the seeded stream regenerates the same text on a resume, and
    the Monitor, Querier and Injector calls come from the cache."""
    if row == "baseline":
        return plain_solver(model, cfg.max_tokens, cfg.temperature)
    if row == "explicit_rag":
        explicit = dataclasses.replace(cfg.explicit, max_tokens=cfg.max_tokens, temperature=cfg.temperature)
        return explicit_solver(ExplicitRAG(model, search, explicit))
    monitor = dataclasses.replace(cfg.monitor, mode=MONITOR_MODES[row])
    live = model.model if isinstance(model, CachedChatModel) else model  # the wrapped model: same meter
    rag = ImplicitRAG(live, search, monitor, monitor_model=model)
    return implicit_solver(rag, cfg.max_tokens, cfg.temperature)


def _refiner(row: str, model: ChatModel, solver: Solver, cfg: SciRefineConfig) -> Refiner:
    """Rows up to the Injector: proposers, corrector, selector; then + HSR; then + QAIR."""
    refine = dataclasses.replace(cfg.refine, hsr=row in ("hsr", "qair"), qair=row == "qair")
    return Refiner(model, solver, refine)


def _first_injection(attempts: Sequence[tuple[str, Attempt]]) -> dict[str, Any] | None:
    for stage, a in attempts:
        for inj in a.injected:
            return {
                "stage": stage,
                "before": a.text[max(0, inj.offset - 400) : inj.offset],
                "injected": inj.text,
                "after": a.text[inj.offset + len(inj.text) : inj.offset + len(inj.text) + 300],
                "query": inj.query,
                "passages": list(inj.passage_ids),
            }
    return None


class Bench:
    """What the cells of one process share, opened on first use: the index, and one model per row.

    One cache file per row: rows repeat each other's requests (same prompts and seeds), and a hit costs
    no tokens, so a shared cache would make later rows look cheaper than they are. Cells in threads
    share these; a forked worker opens its own (keyed by its RunContext)."""

    def __init__(self, cfg: SciRefineConfig, questions: Sequence[Question], passages: Sequence[Passage]):
        self.cfg, self.passages = cfg, list(passages)
        self.questions = {q.id: q for q in questions}
        self._lock = threading.Lock()
        self._retriever: Retriever | None = None
        self._models: dict[tuple[int, str], ChatModel] = {}
        self.built_s: float | None = None

    def retriever(self) -> Retriever:
        with self._lock:
            if self._retriever is None:
                started = time.perf_counter()
                self._retriever = Retriever(self.passages, self.cfg.retrieval)
                self.built_s = time.perf_counter() - started
            return self._retriever

    def model(self, row: str, ctx: RunContext) -> ChatModel:
        with self._lock:
            key = (id(ctx), row)
            if key not in self._models:
                self._models[key] = ctx.chat_model(cache_name=f"llm-cache-{row}.sqlite")
            return self._models[key]


def fixed_answer(arm: Arm, q: Question) -> str:
    """The answer of a reference arm (oracle, null, floor) to `q`, from its `answer` param."""
    kind = arm.params["answer"]
    if kind == "gold":
        return f"Answer: {q.gt}"
    if kind == "constant":
        return "Answer: A"
    if kind == "copy":
        return q.query
    return ""


def measure(bench: Bench, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One question through one arm: the row's pipeline (or the arm's fixed answer), graded."""
    cfg, q = bench.cfg, bench.questions[unit.key]
    started = time.perf_counter()
    judge = (lambda: bench.model("judge", ctx)) if cfg.judge == "llm" else (lambda: None)
    record: dict[str, Any] = {"needs_retrieval": q.needs_retrieval, "answer_type": q.answer_type, "gt": q.gt}
    if arm.role in ("oracle", "null", "floor"):
        with metered() as meter:
            g = grade(q, fixed_answer(arm, q), judge())
        steps = search_calls = injections = 0
        found: list[str] = []
        fallback, injection = False, None
    else:
        model = bench.model(arm.name, ctx)
        search = CorpusSearch(
            bench.retriever(), PassageFilter(model, cfg.passage_filter) if cfg.filter_passages else None
        )
        refiner = _refiner(arm.name, model, _solver(arm.name, model, search, cfg), cfg)
        with metered() as meter:  # this cell's calls only, whatever other cells run beside it
            res = refiner.run(q.query, seed=unit.seed)
            g = grade(q, res.final, judge())
        steps, search_calls, found = res.steps, search.calls, search.found
        injections = sum(a.injections for _, a in res.attempts)
        fallback, injection = res.selector_fallback, _first_injection(res.attempts)
    usage = meter.total
    record |= {
        "extracted": g.extracted,
        "correct": int(bool(g.correct)),
        "ungraded": bool(g.ungraded),
        "tokens": int(usage.total_tokens),
        "calls": int(usage.calls),
        "cached_calls": int(usage.cached_calls),
        "steps": int(steps),
        "retrieval_calls": int(search_calls),
        "injections": int(injections),
        # a gold passage among those retrieved for this question (None: the question names no evidence)
        "evidence_found": int(bool(set(found) & set(q.evidence))) if q.evidence else None,
        "selector_fallback": bool(fallback),
        "seconds": round(time.perf_counter() - started, 2),
    }
    if injection is not None:
        record["first_injection"] = injection
    return record


def _method(rows: Sequence[str]) -> str | None:
    """The claim's method: QAIR (the paper's whole pipeline) when run, else the fullest Monitor row run."""
    stack = [r for r in ("qair", "hsr", "injector", "querier", "monitor") if r in rows]
    return stack[0] if stack else None


def study(cfg: SciRefineConfig, questions: Sequence[Question], passages: Sequence[Passage]) -> Study:
    """sci_refine as a study: the rows (the Monitor rows methods, baseline and explicit RAG
    baselines) and the reference arms over the questions. The claims, named before the run: the
    fullest Monitor row run (QAIR in the paper's table) against explicit RAG on accuracy (a 0/1
    metric: paired bootstrap; both at 0 on every question is uninformative) and on tokens (fewer)."""
    bench = Bench(cfg, questions, passages)
    role = {r: "method" if r in MONITOR_MODES else "baseline" for r in cfg.rows}
    arms = [Arm(r, role[r]) for r in cfg.rows] + list(REFERENCE_ARMS)  # type: ignore[arg-type]
    units = [Unit(q.id, derive_seed(cfg.seed, q.id) % 1_000_000) for q in questions]
    method, claims = _method(cfg.rows), []
    if method and "explicit_rag" in cfg.rows:
        label = f"accuracy ({method} vs explicit RAG, same questions)"
        claims.append(
            Claim("correct", method, ("explicit_rag",), interval="bootstrap", floor=0.0, label=label)
        )
        label = f"tokens per question ({method} vs explicit RAG; fewer is better)"
        claims.append(Claim("tokens", method, ("explicit_rag",), higher_is_better=False, label=label))
    refs = [
        Reference(
            f"paper: {r}", {"correct": PAPER_BUILDUP[r][0] / 100}, "arXiv 2509.21193 Table 3, HLE Bio/Chem"
        )
        for r in cfg.rows
    ]
    return Study("sci_refine", arms, units, functools.partial(measure, bench), claims=claims,
                 references=refs, metrics=METRICS, pass_metric="correct", config=cfg, seed=cfg.seed,
                 views=functools.partial(_views, cfg, bench), unit_major=True)  # fmt: skip


def _evidence_rate(rows: list[dict]) -> float | str:
    """% of the answers to questions that name evidence where a gold passage was retrieved ('' if none)."""
    named = [a.get("evidence_found") for a in rows if a.get("evidence_found") is not None]
    return round(100.0 * float(np.mean(named)), 1) if named else ""


def _accuracy(rows: list[dict]) -> float:
    return 100.0 * float(np.mean([r["correct"] for r in rows])) if rows else float("nan")


def _buildup_table(answers: list[dict], rows: Sequence[str]) -> Table:
    body = []
    for row in rows:
        mine = [a for a in answers if a["row"] == row]
        if not mine:
            continue
        paper = PAPER_BUILDUP.get(row)
        body.append(
            [
                row,
                len(mine),
                round(_accuracy(mine), 1),
                round(_accuracy([a for a in mine if a["needs_retrieval"] is True]), 1),
                round(_accuracy([a for a in mine if a["needs_retrieval"] is False]), 1),
                round(float(np.mean([a["tokens"] for a in mine]))),
                round(float(np.mean([a["steps"] for a in mine])), 1),
                round(float(np.mean([a["retrieval_calls"] for a in mine])), 2),
                _evidence_rate(mine),
                round(float(np.mean([a["seconds"] for a in mine])), 1),
                "" if paper is None else paper[0],
                "" if paper is None or paper[1] is None else paper[1],
            ]
        )
    cols = ["row", "questions", "accuracy %", "needs retrieval %", "reasoning only %", "tokens / question"]
    cols += ["steps / question", "retrievals / question", "evidence retrieved %", "seconds / question"]
    cols += ["paper accuracy %"]
    cols += ["paper tokens (K)"]
    caption = (
        "every row answers the same questions with the same model and seeds; evidence retrieved: a gold "
        "passage among the k a search returned (the model is shown the first 3), over the questions that "
        "need retrieval; below the rows, the floors (the constant answer A; the question copied back); "
        "the paper's columns are its HLE Bio/Chem Gold build-up, not measured here"
    )
    return Table("Build-up: each row adds one part", cols, body, caption=caption)


def _grader_check(answers: list[dict]) -> Table:
    """The grader's reference rows, from the oracle and null cells: valid only at 100 / 0."""
    rows = []
    for arm, label in (("gold", "oracle (the gold answer)"), ("no_answer", "null (no answer)")):
        mine = [a for a in answers if a["row"] == arm]
        if mine:
            rows.append([label, round(_accuracy(mine), 1)])
    return Table(
        "Grader check", ["answer", "accuracy %"], rows, caption="the question set is valid only at 100 / 0"
    )


def _transcript(answers: list[dict]) -> str:
    for a in answers:
        inj = a.get("first_injection")
        if inj:
            return (
                f"# An injection ({a['row']} row, question {a['id']}, {inj['stage']} call)\n\n"
                f"Query: `{inj['query']}`; passages: {', '.join(inj['passages']) or '(none)'}\n\n"
                f"> …{inj['before']}**⟦injected: {inj['injected']}⟧**{inj['after']}…\n"
            )
    return ""


def _views(cfg: SciRefineConfig, bench: Bench, result: StudyResult, ctx: RunContext) -> Report:
    """sci_refine's own tables and figure from the cells: the build-up (the rows, then the floors), the
    grader check, the build-up figure, an injection's transcript."""
    answers = [
        {"row": arm.name, "id": cell.unit, **cell.metrics}
        for arm in result.study.arms
        for cell in result.records(arm.name)
    ]
    floors = [a.name for a in REFERENCE_ARMS if a.role == "floor"]
    buildup = _buildup_table(answers, [*cfg.rows, *floors])
    rows_only = dataclasses.replace(buildup, rows=[r for r in buildup.rows if r[0] in cfg.rows])
    ctx.log(f"{buildup.title}\n{markdown_table(buildup.columns, buildup.rows)}")
    notes = []
    if bench.built_s is not None:
        notes.append(
            f"index: {len(bench.passages)} passages, {cfg.retrieval.mode}, built in {bench.built_s:.1f} s"
        )
    if any(a["calls"] for a in answers):
        names = ", ".join(dict.fromkeys(m.name for m, _ in ctx.models)) or "none opened in this run"
        notes.append(f"LLM calls through core.llm (--llm {ctx.llm_choice().label}: {names})")
    figures = [buildup_figure(rows_only, ctx.out_dir / "buildup.png")]
    transcript = _transcript([a for a in answers if a["row"] in cfg.rows])
    if transcript:
        (ctx.out_dir / "transcript.md").write_text(transcript)
        notes.append("transcript.md: a reasoning stream with its injected passage marked")
    method = _method(cfg.rows)
    if method and "explicit_rag" in cfg.rows:
        tokens = {
            r: np.mean([a["tokens"] for a in answers if a["row"] == r] or [np.nan])
            for r in (method, "explicit_rag")
        }
        ours, base = tokens[method], tokens["explicit_rag"]
        notes.append(
            f"tokens per question: {method} {ours:.0f} vs explicit_rag {base:.0f} "
            f"({100 * (ours / base - 1):+.1f}%; paper, qair: −53.5%)"
        )
    return Report(tables=[buildup, _grader_check(answers)], figures=figures, notes=notes)


def run(cfg: SciRefineConfig, ctx: RunContext) -> Report:
    """Build (or load) the questions and corpus, then run the study: every row and reference arm on
    every question (`core.study.run_study`: resumable from `cells.jsonl`; `--parallel threads --jobs k`
    answers k at once)."""
    questions, passages = _questions(cfg, ctx)
    if cfg.experiment == "pools":
        from iclr26.sci_refine.pool_study import pools_study  # it imports this module's reference arms

        return run_study(pools_study(cfg, questions), ctx).report
    if cfg.experiment == "streams":
        from iclr26.sci_refine.stream_study import streams_study

        return run_study(streams_study(cfg, passages), ctx).report
    return run_study(study(cfg, questions, passages), ctx).report


PRESETS = preset_table(
    # the README's build-up with SmolLM2 on 2 cores: 8 built-here questions (4 per split), every row,
    # 3 proposers, short calls; the Monitor decides by log-prob (SmolLM2 writes "no" to every window;
    # its P(yes) / (P(yes) + P(no)) spans about 0.2-0.35); no passage filter (k model calls per search)
    bench=with_changes(
        SciRefineConfig(),
        {
            "monitor.yes_threshold": 0.25,
            "filter_passages": False,
            "n_questions": 8,
            "max_tokens": 128,
            "monitor.window": 256,
            "monitor.overlap": 64,
            "explicit.max_steps": 3,
            "explicit.max_tool_calls": 2,
            "refine.proposers": 3,
            "refine.eval_max_tokens": 48,
            "refine.select_max_tokens": 32,
        },
    ),
    # seconds: two questions, three rows, one short proposal each (no corrector), BM25
    smoke={
        "rows": ("baseline", "explicit_rag", "injector"),
        "n_questions": 2,
        "n_distractors": 50,
        "max_tokens": 32,
        "retrieval.mode": "bm25",
        "monitor.window": 64,
        "monitor.overlap": 16,
        "explicit.max_steps": 2,
        "refine.proposers": 1,
        "refine.corrector": False,
        "refine.hsr": False,
    },
    # the tour: every row on 2 questions (one per split), 2 proposers, no corrector, short calls, BM25
    demo={
        "n_questions": 2,
        "n_distractors": 200,
        "max_tokens": 32,
        "retrieval.mode": "bm25",
        "monitor.window": 64,
        "monitor.overlap": 16,
        "explicit.max_steps": 2,
        "refine.proposers": 2,
        "refine.corrector": False,
        "refine.eval_max_tokens": 24,
        "refine.select_max_tokens": 12,
    },
    # the paper's protocol: a server model (--llm http), 5 proposers, 150 steps, the written Monitor
    # verdict, the passage filter (pass the authors' HLE file as data=)
    paper={
        "n_questions": 200,
        "max_tokens": 8192,
        "filter_passages": True,
        "monitor.window": 512,
        "monitor.overlap": 128,
        "monitor.yes_threshold": 0.0,
        "explicit.max_steps": 150,
        "explicit.max_tool_calls": 20,
        "refine.proposers": 5,
        "refine.eval_max_tokens": 160,
        "refine.select_max_tokens": 256,
    },
)
SYSTEM = implemented_system("sci_refine", presets=PRESETS, run=run)
