"""`iclr26 run sci_refine`: the paper's build-up table (arXiv 2509.21193, Table 3) on one question set,
every row answering the same questions with the same model and seeds: no retrieval; explicit RAG (the
model's own search tool); the Monitor; + Querier; + Injector; + HSR; + QAIR. Accuracy over all
questions and per split (needs retrieval / reasoning only), tokens, agent steps, retrieval calls and
wall time per question, from core.llm's usage meters.

Each answered (row, question) is appended to `answers.jsonl` in the run folder, and every model call is
cached there, so an interrupted run resumes and a rerun is instant.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.config import with_changes
from iclr26.core.errors import UserError
from iclr26.core.intervals import bootstrap_interval
from iclr26.core.jsonfile import append_log, read_log
from iclr26.core.llm.base import ChatModel
from iclr26.core.llm.cache import CachedChatModel
from iclr26.core.llm.usage import Usage
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
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
ANSWERS_FILE = "answers.jsonl"
QASET_FILE = "qaset.json"
MONITOR_MODES = {
    "monitor": "monitor",
    "querier": "querier",
    "injector": "injector",
    "hsr": "injector",
    "qair": "injector",
}
"""the Monitor stack's mode per row (HSR and QAIR build on the full stack)"""


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
    """The `search` every retrieving row uses: the retriever's top k, then (optionally) the passage
    filter; counts its own calls and the filter's tokens (not part of any reasoning call)."""

    def __init__(self, retriever: Retriever, passage_filter: PassageFilter | None, model: ChatModel) -> None:
        self.retriever, self.filter, self.model = retriever, passage_filter, model
        self.calls = 0
        self.usage = Usage()
        self.found: list[str] = []
        """ids of every passage handed back, in order (to check retrieval against a question's evidence)"""

    def __call__(self, query: str) -> list[Passage]:
        self.calls += 1
        hits = self.retriever.search(query)
        if self.filter is None or not hits:
            kept = [h.passage for h in hits]
        else:
            before = self.model.usage.total
            try:
                kept = [h.passage for h in self.filter(query, hits).kept]
            finally:  # a failed filter call still spent tokens
                self.usage = self.usage + (self.model.usage.total - before)
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


def _answer(
    row: str, q: Question, refiner: Refiner, search: CorpusSearch, cfg: SciRefineConfig, model: Any
) -> dict:
    """One question through one row's pipeline, graded; a JSON-able record."""
    started = time.perf_counter()
    search_calls, search_usage, found = search.calls, search.usage, len(search.found)
    res = refiner.run(q.query, seed=derive_seed(cfg.seed, q.id) % 1_000_000)
    g = grade(q, res.final, model if cfg.judge == "llm" else None)
    usage = res.usage + (search.usage - search_usage)
    record = {
        "row": row,
        "id": q.id,
        "needs_retrieval": q.needs_retrieval,
        "answer_type": q.answer_type,
        "gt": q.gt,
        "extracted": g.extracted,
        "correct": bool(g.correct),
        "ungraded": bool(g.ungraded),
        "tokens": int(usage.total_tokens),
        "calls": int(usage.calls),
        "cached_calls": int(usage.cached_calls),
        "steps": int(res.steps),
        "retrieval_calls": int(search.calls - search_calls),
        "injections": int(sum(a.injections for _, a in res.attempts)),
        # a gold passage among those retrieved for this question (None: the question names no evidence)
        "evidence_found": bool(set(search.found[found:]) & set(q.evidence)) if q.evidence else None,
        "selector_fallback": bool(res.selector_fallback),
        "seconds": round(time.perf_counter() - started, 2),
    }
    injection = _first_injection(res.attempts)
    if injection is not None:
        record["first_injection"] = injection
    return record


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
        paper = PAPER_BUILDUP[row]
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
                paper[0],
                "" if paper[1] is None else paper[1],
            ]
        )
    cols = ["row", "questions", "accuracy %", "needs retrieval %", "reasoning only %", "tokens / question"]
    cols += ["steps / question", "retrievals / question", "evidence retrieved %", "seconds / question"]
    cols += ["paper accuracy %"]
    cols += ["paper tokens (K)"]
    caption = (
        "every row answers the same questions with the same model and seeds; evidence retrieved: a gold "
        "passage among the k a search returned (the model is shown the first 3), over the questions that "
        "need retrieval; the paper's columns are its HLE Bio/Chem Gold build-up, not measured here"
    )
    return Table("Build-up: each row adds one part", cols, body, caption=caption)


def _grader_check(questions: Sequence[Question]) -> Table:
    """The grader's reference rows: the gold answers must all pass, an empty answer none."""
    oracle = [grade(q, f"Answer: {q.gt}").correct for q in questions]
    null = [grade(q, "").correct for q in questions]
    rows = [["oracle (the gold answer)", round(100.0 * np.mean(oracle), 1)]]
    rows.append(["null (no answer)", round(100.0 * np.mean([bool(c) for c in null]), 1)])
    return Table(
        "Grader check", ["answer", "accuracy %"], rows, caption="the question set is valid only at 100 / 0"
    )


def _paired_margin(answers: list[dict], a: str, b: str, seed: int) -> tuple[float, float, float]:
    """Accuracy of rows a and b over the questions both answered, and the half-width of the paired
    bootstrap interval of their difference."""
    by_id = {(r["row"], r["id"]): r for r in answers}
    ids = [i for (row, i) in by_id if row == a and (b, i) in by_id]
    x = np.array([by_id[(a, i)]["correct"] for i in ids], dtype=float)
    y = np.array([by_id[(b, i)]["correct"] for i in ids], dtype=float)
    if len(ids) < 2:  # no interval from fewer than two questions
        nan = float("nan")
        return (100 * float(x.mean()) if ids else nan), (100 * float(y.mean()) if ids else nan), nan
    lo, hi = bootstrap_interval(lambda u, v: 100 * float(u.mean() - v.mean()), [x, y], seed=seed)
    return 100 * float(x.mean()), 100 * float(y.mean()), (hi - lo) / 2


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


def run(cfg: SciRefineConfig, ctx: RunContext) -> Report:
    """Build (or load) the questions and corpus, run every row on every question, tabulate, draw."""
    questions, passages = _questions(cfg, ctx)
    answers_file = ctx.out_dir / ANSWERS_FILE
    answers = read_log(answers_file)
    done = {(a["row"], a["id"]) for a in answers}
    # question-major: a run stopped early (or sized by time) has every row on the same questions
    todo = [(row, q) for q in questions for row in cfg.rows if (row, q.id) not in done]
    notes = []
    if todo:
        started = time.perf_counter()
        retriever = Retriever(passages, cfg.retrieval)
        built_s = time.perf_counter() - started
        notes.append(f"index: {len(passages)} passages, {cfg.retrieval.mode}, built in {built_s:.1f} s")
        # one cache per row: rows repeat each other's requests (same prompts and seeds), and a hit
        # costs no tokens, so a shared cache would make later rows look cheaper than they are
        models = {
            row: ctx.chat_model(cache_name=f"llm-cache-{row}.sqlite")
            for row in dict.fromkeys(r for r, _ in todo)
        }
        searches = {
            row: CorpusSearch(
                retriever, PassageFilter(m, cfg.passage_filter) if cfg.filter_passages else None, m
            )
            for row, m in models.items()
        }
        refiners = {
            row: _refiner(row, m, _solver(row, m, searches[row], cfg), cfg) for row, m in models.items()
        }
        with ctx.progress("answers", len(todo)) as advance:
            for row, q in todo:
                record = _answer(row, q, refiners[row], searches[row], cfg, models[row])
                append_log(answers_file, record)
                answers.append(record)
                advance(1)
        name = next(iter(models.values())).name
        notes.append(f"LLM calls through core.llm (--llm {ctx.llm_choice().label}: {name})")
    buildup = _buildup_table(answers, cfg.rows)
    ctx.log(f"{buildup.title}\n{markdown_table(buildup.columns, buildup.rows)}")
    tables = [buildup, _grader_check(questions)]
    figures = [buildup_figure(buildup, ctx.out_dir / "buildup.png")]
    transcript = _transcript(answers)
    if transcript:
        (ctx.out_dir / "transcript.md").write_text(transcript)
        notes.append("transcript.md: a reasoning stream with its injected passage marked")
    claim = None
    ours, base, margin = float("nan"), float("nan"), float("nan")
    if "qair" in cfg.rows and "explicit_rag" in cfg.rows:
        ours, base, margin = _paired_margin(answers, "qair", "explicit_rag", cfg.seed)
    if not np.isnan(margin):
        claim = ClaimCheck(
            "accuracy % (Monitor stack + HSR + QAIR vs explicit RAG, same questions)",
            "qair",
            round(ours, 1),
            "explicit_rag",
            round(base, 1),
            margin=round(margin, 1),
        )
        tokens = {
            r: np.mean([a["tokens"] for a in answers if a["row"] == r]) for r in ("qair", "explicit_rag")
        }
        notes.append(
            f"tokens per question: qair {tokens['qair']:.0f} vs explicit_rag {tokens['explicit_rag']:.0f} "
            f"({100 * (tokens['qair'] / tokens['explicit_rag'] - 1):+.1f}%; paper −53.5%)"
        )
    return Report(tables=tables, figures=figures, claim_check=claim, notes=notes)


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
