"""A built-here LFQA-E comparison set whose labels are known by construction (for the demo; nothing
is downloaded).

LFQA-E (arXiv 2410.01945) asks how often a long-form QA metric agrees with human pairwise
preferences. Without the released data we make comparisons whose preferred side follows from how
the two responses were made:

- Source: Python's own documentation topics (`pydoc_data.topics`, shipped with the interpreter).
  Each topic with at least 4 usable prose sentences gives a question (from its heading), a context
  (the raw topic text, trimmed at a blank line) and a reference: its first 4–8 prose sentences
  with the markup, grammar productions, code blocks and headings taken out. The reference's
  sentences are its key facts.
- Responses are controlled edits of the reference, applied in the order they are listed:
  `drop:i` (remove key fact i), `truncate:m` (keep the first m facts; only as the first edit),
  `contradict:i` (fact i with one keyword swapped, a number changed or a negation toggled, so it
  contradicts the reference), `unsupported:<source>` (a plausible claim the context does not
  support: a sentence of another topic group's reference, or a templated claim, `template`),
  `paraphrase` (a fixed phrase table: contractions and synonyms, outside quoted code) and
  `reorder` (a non-identity permutation of the sentences). No edits at all (`[]`) is the reference itself.
- Quality rule (`quality`): facts kept intact − 1.0·contradictions − 0.5·unsupported claims.
  A contradicted fact is no longer kept, so a contradiction costs 2 against the reference, a
  dropped fact 1, an unsupported claim 0.5; `paraphrase` and `reorder` are neutral. The side with
  the higher quality wins; equal quality is `same`. Ties are made on purpose (a share
  `tie_share` of the human-vs-human pairs: reference vs paraphrase/reorder, two different drops
  of as many facts, two different unsupported claims, a truncation vs as many drops), and the
  better side of the other pairs is put first in exactly half of them.
- compare_type: edits of the human-written reference are the "human" side, so two edits make a
  `human_vs_human` pair. With a `model`, each question also gets a `human_vs_model` pair: a
  closed-book answer (no context) from that model, meant to be the embedded SmolLM2-135M-Instruct
  (the run's model, `--llm embedded`), against the full reference, verbatim or paraphrased (an empty
  reply gives no pair). Its label rests on an assumption, not on
  construction: the full reference beats a 135M model's closed-book answer. Those pairs carry
  `meta["assumed"] = True` (the others False) so reports can set them apart; their model side has
  `quality` None, and they are never ties.
- English only: the source text is English and we have no honest way to make the paper's Chinese
  side here.

`meta` of each comparison: `edits_a`, `edits_b` (lists of edit names, `model:<name>` for a model
answer), `quality_a`, `quality_b`, `n_facts`, `assumed`, `source` (the topic name). After
`Comparison.swapped()` only the edit lists follow the swap; recompute a side's quality with
`quality(edits, n_facts)` rather than reading `quality_a`/`quality_b` there.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from iclr26.core.config import ConfigError
from iclr26.core.llm import ChatModel, chat_many
from iclr26.core.validation import check_int, check_interval
from iclr26.lfqa_e._text import blocks, join_sentences, prose_sentences, title_of
from iclr26.lfqa_e.data import Comparison

MIN_FACTS, MAX_FACTS = 4, 8
"""a usable topic has at least MIN_FACTS prose sentences; the reference keeps at most MAX_FACTS"""
CONTEXT_CHARS = 4000
"""the context is cut at the first blank line past this length (never before the reference's text)"""
W_CONTRADICTION, W_UNSUPPORTED = 1.0, 0.5
"""quality = facts kept − W_CONTRADICTION·contradictions − W_UNSUPPORTED·unsupported claims"""
SYSTEM_PROMPT = "Answer the question in one paragraph of four to six sentences."

_GROUPS = {
    "statements": (
        "assert assignment async augassign break class compound continue del else for function "
        "global if import nonlocal pass raise return try while with yield"
    ),
    "expressions": (
        "atom-identifiers atom-literals attribute-references await binary bitwise booleans calls "
        "comparisons conversions dict exprlists in lambda lists operator-summary power shifting "
        "slicings subscriptions unary"
    ),
    "lexical": "floating id-classes identifiers imaginary integers numbers strings",
    "data model": (
        "attribute-access callable-types context-managers customization numeric-types objects "
        "sequence-types specialattrs specialnames types"
    ),
    "built-in types": (
        "formatstrings string-methods truth typesfunctions typesmapping typesmethods typesmodules "
        "typesseq typesseq-mutable"
    ),
    "execution": "debugger dynamic-features exceptions execmodel naming",
}
_GROUP_OF = {name: group for group, names in _GROUPS.items() for name in names.split()}
_KEEP_CASE = {"Python", "Boolean", "Ellipsis", "ABC"}
_TEMPLATES = (
    "Python {version} introduced {subject}, and their design has not changed since.",
    "Most style guides advise against relying on {subject} in library code.",
    "In CPython, the compiler handles {subject} in a separate pass that runs after bytecode optimisation.",
    "PyPy and CPython are known to disagree on some details of {subject}.",
    "Using {subject} costs roughly {times} times as much as a plain function call.",
)

# -- the source topics ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    """One documentation topic turned into a question, a context and a reference of key facts."""

    name: str
    title: str
    group: str
    question: str
    context: str
    facts: tuple[str, ...]

    @property
    def reference(self) -> str:
        """The reference answer: the key facts as one paragraph."""
        return join_sentences(list(self.facts))


def topic_group(name: str) -> str:
    """The coarse group of a documentation topic (statements, expressions, data model, ...)."""
    if name in _GROUP_OF:
        return _GROUP_OF[name]
    if name.startswith(("types", "bltin-")):
        return "built-in types"
    if name.startswith("atom-"):
        return "expressions"
    return "other"


def _subject(title: str) -> str:
    words = [w if w in _KEEP_CASE or '"' in w or w.isupper() else w.lower() for w in title.split()]
    return " ".join(words)


_QUESTIONS = {
    "debugger": 'How is "pdb", the Python debugger, used?',
    "dynamic-features": 'How does name resolution interact with dynamic features such as "exec()" in Python?',
    "objects": "How does Python relate objects, their values and their types?",
    "typesmapping": 'How do mapping types such as "dict" work in Python?',
    "typesseq": 'How do the sequence types "list", "tuple" and "range" work in Python?',
    "context-managers": "How do context managers for the with statement work in Python?",
}
"""questions written by hand where the heading makes an awkward one"""


def question_for(title: str, name: str = "") -> str:
    """A long-form question asking about a topic, from its heading (or `name`'s written question)."""
    if name in _QUESTIONS:
        return _QUESTIONS[name]
    subject = _subject(title)
    if re.fullmatch(r'the "\S+" statement', subject):
        return f"How does {subject} work in Python?"
    m = re.fullmatch(r"(emulat|customiz)ing (.+)", subject)
    if m:
        return f"How can a Python class {m.group(1)}e {m.group(2)}?"
    head = re.split(r" \(| — ", subject)[0].split()[-1]
    if head.endswith("s") and not head.endswith("ss"):
        return f"How do {subject} work in Python?"
    return f"What is {subject} in Python, and how does it work?"


def _context(raw: str, last_block: int) -> str:
    parts, size = [], 0
    for i, block in enumerate(blocks(raw)):
        if i > last_block and size >= CONTEXT_CHARS:
            break
        parts.append(block)
        size += len(block) + 2
    return "\n\n".join(parts)


@cache
def python_topics() -> tuple[Topic, ...]:
    """Every documentation topic with at least MIN_FACTS usable sentences, sorted by name (a topic
    whose text repeats another's is kept once, under the name its heading uses)."""
    from pydoc_data.topics import topics

    by_text: dict[str, list[str]] = {}
    for name in sorted(topics):
        by_text.setdefault(topics[name], []).append(name)
    out = []
    for raw, names in by_text.items():
        title = title_of(raw)
        name = next((n for n in names if n in title.lower()), names[0])
        found = prose_sentences(raw)[:MAX_FACTS]
        facts = tuple(dict.fromkeys(s for _, s in found))  # a repeated sentence is one fact
        if len(facts) < MIN_FACTS or not title:
            continue
        out.append(
            Topic(
                name, title, topic_group(name), question_for(title, name), _context(raw, found[-1][0]), facts
            )
        )
    return tuple(sorted(out, key=lambda t: t.name))


# -- the edits ------------------------------------------------------------------------------------


def _outside_quotes(sentence: str, fn: Callable[[str], str]) -> str:
    """`fn` applied to the parts of `sentence` that are not inside double quotes (quoted code)."""
    parts = sentence.split('"')
    return '"'.join(fn(p) if i % 2 == 0 else p for i, p in enumerate(parts))


def _match_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


_SWAPS = (
    ("true", "false"), ("before", "after"), ("first", "last"), ("mutable", "immutable"),
    ("left", "right"), ("larger", "smaller"), ("greater", "less"), ("higher", "lower"),
    ("positive", "negative"), ("inside", "outside"), ("always", "never"), ("legal", "illegal"),
    ("minimum", "maximum"), ("increase", "decrease"), ("allowed", "forbidden"),
)  # fmt: skip
_NEGATIONS = (
    (r"\bis not\b", "is"), (r"\bare not\b", "are"), (r"\bdoes not\b", "does"), (r"\bdo not\b", "do"),
    (r"\bcannot\b", "can"), (r"\bmust not\b", "must"), (r"\bwill not\b", "will"),
    (r"\bis\b", "is not"), (r"\bare\b", "are not"), (r"\bcan\b", "cannot"), (r"\bmust\b", "must not"),
    (r"\bwill\b", "will not"), (r"\bdoes\b", "does not"),
)  # fmt: skip


def _swap_words(text: str, a: str, b: str) -> str:
    pattern = re.compile(rf"\b({a}|{b})\b", re.IGNORECASE)
    return pattern.sub(lambda m: _match_case(b if m.group(1).lower() == a else a, m.group(1)), text)


def contradict(sentence: str) -> str | None:
    """The sentence altered to say the opposite (None when no rule applies): quoted `True` and
    `False` exchanged, else a keyword and its opposite exchanged (before/after, first/last, ...),
    else the first number raised by one, else the first negation toggled; quoted code is kept
    otherwise."""
    if '"True"' in sentence or '"False"' in sentence:
        return sentence.replace('"True"', "\0").replace('"False"', '"True"').replace("\0", '"False"')
    for a, b in _SWAPS:
        out = _outside_quotes(sentence, lambda t, a=a, b=b: _swap_words(t, a, b))
        if out != sentence:
            return out
    rules: list[tuple[str, Callable[[re.Match], str]]] = [(r"\b\d+\b", lambda m: str(int(m.group()) + 1))]
    rules += [(p, lambda m, r=r: _match_case(r, m.group())) for p, r in _NEGATIONS]
    for pattern, repl in rules:
        done = []

        def once(text: str, pattern: str = pattern, repl=repl, done: list = done) -> str:
            if done:
                return text
            new = re.sub(pattern, repl, text, count=1, flags=re.IGNORECASE)
            if new != text:
                done.append(True)
            return new

        out = _outside_quotes(sentence, once)
        if out != sentence:
            return out
    return None


_PHRASES = {
    "for example": "for instance", "e.g.": "for example", "i.e.": "that is",
    "is equivalent to": "is the same as", "are equivalent to": "are the same as", "in order to": "to",
    "is used to": "serves to", "are used to": "serve to", "in the current implementation":
    "in the present implementation", "however,": "that said,", "otherwise,": "if not,",
    "a number of": "several", "because": "since", "unless": "except when", "useful": "handy",
    "convenient": "handy", "specified": "given", "obtain": "get", "referred to as": "known as",
    "note that": "keep in mind that", "typically": "usually", "normally": "ordinarily",
    "usually": "typically", "immediately": "at once", "instead of": "rather than", "similar to": "like",
    "commonly": "often", "frequently": "often", "requires": "needs", "required": "needed",
    "provides": "offers", "provide": "offer", "thus,": "hence,", "in this case": "here",
    "does not": "doesn't", "do not": "don't", "is not": "isn't", "are not": "aren't",
    "cannot": "can't", "it is": "it's", "there is": "there's", "will not": "won't",
    "each time": "every time", "in particular": "specifically", "additionally": "in addition",
    "allows": "permits", "allow": "permit", "automatically": "without being asked",
    "occur": "appear", "occurs": "appears", "terminates": "ends", "terminated": "ended",
    "nearest": "closest", "enclosing": "surrounding", "determined": "decided", "constructed": "built",
    "consists of": "is made up of", "consist of": "are made up of", "keeps": "retains",
    "extremely": "very", "besides": "apart from", "excluding": "other than",
    "an attempt to": "trying to", "certain": "some", "important": "significant", "entire": "whole",
    "whole": "entire", "receives": "gets", "invoked": "called", "exactly": "precisely",
    "initially": "at first", "begins": "starts", "starts": "begins", "it will": "it'll",
    "they are": "they're", "should not": "shouldn't", "would not": "wouldn't", "has not": "hasn't",
    "have not": "haven't", "was not": "wasn't",
}  # fmt: skip
_PHRASE_RE = re.compile(
    r"(?<![\w.])(" + "|".join(re.escape(p) for p in sorted(_PHRASES, key=len, reverse=True)) + r")(?!\w)",
    re.IGNORECASE,
)


def paraphrase(sentence: str) -> str:
    """The sentence reworded by a fixed table of meaning-preserving phrase swaps (contractions,
    synonyms), one pass, outside quoted code; unchanged when no phrase occurs."""

    def swap(m: re.Match) -> str:
        return _match_case(_PHRASES[m.group(1).lower()], m.group(1))

    return _outside_quotes(sentence, lambda t: _PHRASE_RE.sub(swap, t))


def quality(edits: Sequence[str], n_facts: int) -> float:
    """A response's quality from its edit names: facts kept − W_CONTRADICTION·contradictions −
    W_UNSUPPORTED·unsupported claims (a contradicted fact is not kept)."""
    kept, contradictions, unsupported = n_facts, 0, 0
    for j, edit in enumerate(edits):
        name, _, arg = edit.partition(":")
        if name == "truncate" and j:
            raise ValueError(f"truncate must be the first edit, got {list(edits)}")
        if name == "drop":
            kept -= 1
        elif name == "truncate":
            kept = min(kept, int(arg))
        elif name == "contradict":
            kept, contradictions = kept - 1, contradictions + 1
        elif name == "unsupported":
            unsupported += 1
        elif name not in ("paraphrase", "reorder"):
            raise ValueError(f"no quality rule for edit {edit!r}")
    return kept - W_CONTRADICTION * contradictions - W_UNSUPPORTED * unsupported


@dataclass(frozen=True)
class _Unit:
    kind: str  # fact, contradicted, unsupported
    text: str
    fact: int = -1


def _claims(topic: Topic) -> list[tuple[str, str]]:
    """(source topic, sentence) for every key fact of another group, not found in this context."""
    return [
        (t.name, s)
        for t in python_topics()
        if t.group != topic.group
        for s in t.facts
        if s not in topic.context and s not in topic.facts
    ]


def _templated_claim(topic: Topic, rng: random.Random) -> str:
    subject = _subject(topic.title)
    text = rng.choice(_TEMPLATES).format(
        subject=subject,
        version=rng.choice(["2.2", "2.5", "3.1", "3.4"]),
        times=rng.choice([2, 3, 5]),
    )
    return text


def apply_edits(topic: Topic, edits: Sequence[str], rng: random.Random) -> tuple[str, list[str]]:
    """The response that `edits` make of the topic's reference, and the edit names completed with
    what was chosen (an `unsupported` edit gets its claim's source)."""
    quality(edits, len(topic.facts))  # checks the names and the order
    units = [_Unit("fact", s, i) for i, s in enumerate(topic.facts)]
    named = []
    for edit in edits:
        name, _, arg = edit.partition(":")
        if name == "drop":
            units = [u for u in units if u.fact != int(arg)]
        elif name == "truncate":
            units = units[: int(arg)]
        elif name == "contradict":
            i = int(arg)
            bad = contradict(topic.facts[i])
            assert bad is not None and bad != topic.facts[i]
            units = [_Unit("contradicted", bad, i) if u.fact == i and u.kind == "fact" else u for u in units]
        elif name == "unsupported":
            used = {u.text for u in units}
            if arg == "template" or not arg:
                options = [("template", _templated_claim(topic, rng)) for _ in range(3)]
            else:
                options = [c for c in _claims(topic) if c[0] == arg]
            options = [c for c in options if c[1] not in used]
            source, text = rng.choice(options)
            units.insert(rng.randrange(len(units) + 1), _Unit("unsupported", text))
            edit = f"unsupported:{source}"
        elif name == "paraphrase":
            units = [_Unit(u.kind, paraphrase(u.text), u.fact) for u in units]
        elif name == "reorder":
            order = list(range(len(units)))
            while len(order) > 1 and order == sorted(order):
                rng.shuffle(order)
            units = [units[i] for i in order]
        else:
            raise ValueError(f"unknown edit {edit!r}")
        named.append(edit)
    return join_sentences([u.text for u in units]), named


# -- choosing the pairs ---------------------------------------------------------------------------


def _can_contradict(topic: Topic) -> list[int]:
    return [i for i, s in enumerate(topic.facts) if contradict(s) is not None]


def _unsupported_edit(topic: Topic, rng: random.Random) -> str:
    claims = _claims(topic)
    if claims and rng.random() < 0.5:
        return f"unsupported:{rng.choice(claims)[0]}"
    return "unsupported:template"


def _content_edits(topic: Topic, rng: random.Random) -> list[str]:
    """One random quality-changing edit (or two of them)."""
    n = len(topic.facts)
    facts = list(range(n))
    contra = _can_contradict(topic)
    kinds = ["drop", "truncate", "unsupported", "mixed"] + ["contradict"] * bool(contra)
    kind = rng.choice(kinds)
    if kind == "drop":
        return [f"drop:{i}" for i in sorted(rng.sample(facts, rng.choice([1, 2])))]
    if kind == "truncate":
        return [f"truncate:{rng.randint(max(2, n // 2), n - 1)}"]
    if kind == "contradict":
        return [f"contradict:{rng.choice(contra)}"]
    if kind == "unsupported":
        return [_unsupported_edit(topic, rng)]
    first = rng.choice(["drop", "contradict"] if contra else ["drop"])
    i = rng.choice(contra if first == "contradict" else facts)
    second = rng.choice(["unsupported", "drop"])
    if second == "drop":
        return [f"{first}:{i}", f"drop:{rng.choice([j for j in facts if j != i])}"]
    return [f"{first}:{i}", _unsupported_edit(topic, rng)]


def _form_edits(topic: Topic, rng: random.Random) -> list[str]:
    """Neutral edits: none, paraphrase, reorder or both (paraphrase only where it changes text)."""
    can_paraphrase = any(paraphrase(s) != s for s in topic.facts)
    out = []
    if can_paraphrase and rng.random() < 0.35:
        out.append("paraphrase")
    if rng.random() < 0.35:
        out.append("reorder")
    return out


def _tie(topic: Topic, rng: random.Random) -> tuple[list[str], list[str]]:
    """Two edit lists of equal quality by the rule (and different text)."""
    n, facts = len(topic.facts), list(range(len(topic.facts)))
    can_paraphrase = any(paraphrase(s) != s for s in topic.facts)
    kinds = ["neutral", "drops", "unsupported", "truncate"]
    kind = rng.choice(kinds)
    if kind == "neutral":
        options = [([], ["reorder"]), (["reorder"], ["paraphrase", "reorder"])]
        if can_paraphrase:
            options += [([], ["paraphrase"]), (["reorder"], ["paraphrase"])]
        return rng.choice(options)
    if kind == "drops":
        k = rng.choice([1, 2])
        a = sorted(rng.sample(facts, k))
        b = sorted(rng.sample([i for i in facts if i not in a], k))
        return [f"drop:{i}" for i in a], [f"drop:{i}" for i in b] + _form_edits(topic, rng)
    if kind == "unsupported":
        extra = rng.choice([[], [f"drop:{rng.choice(facts)}"]])
        return [*extra, _unsupported_edit(topic, rng)], [*extra, _unsupported_edit(topic, rng), "reorder"]
    m = rng.randint(max(2, n // 2), n - 1)
    dropped = sorted(rng.sample(facts, n - m))
    return [f"truncate:{m}"], [f"drop:{i}" for i in dropped]


def _pair(topic: Topic, rng: random.Random, tie: bool, seen: set) -> tuple[tuple, tuple]:
    """Two (text, edits) responses: of equal quality when `tie`, else of different quality."""
    n = len(topic.facts)
    for _ in range(200):
        if tie:
            ea, eb = _tie(topic, rng)
        else:
            ea = rng.choice([[], _content_edits(topic, rng)]) + _form_edits(topic, rng)
            eb = _content_edits(topic, rng) + _form_edits(topic, rng)
        if (quality(ea, n) == quality(eb, n)) != tie:
            continue
        ta, na = apply_edits(topic, ea, rng)
        tb, nb = apply_edits(topic, eb, rng)
        key = frozenset((ta, tb))
        if ta != tb and key not in seen:
            seen.add(key)
            return (ta, na), (tb, nb)
    raise RuntimeError(f"could not make a {'tie' if tie else 'pair'} for topic {topic.name!r}")


def _model_answers(model: ChatModel, topics: Sequence[Topic], max_tokens: int, max_concurrency: int):
    requests = [
        {
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": t.question},
            ],
            "max_tokens": max_tokens,
            "temperature": 0.0,
        }
        for t in topics
    ]
    replies = chat_many(model, requests, max_concurrency=max_concurrency)
    return [(r[0].text if r else "").strip() for r in replies]


def build_comparisons(
    n_questions: int = 40,
    *,
    seed: int = 0,
    model: ChatModel | None = None,
    pairs_per_question: int = 4,
    tie_share: float = 0.15,
    model_max_tokens: int = 200,
    max_concurrency: int = 4,
) -> list[Comparison]:
    """Comparisons over `n_questions` Python documentation topics, labelled by construction:
    `pairs_per_question` human-vs-human pairs each (a `tie_share` of them ties), plus one
    human-vs-model pair per question when `model` answers closed-book. Deterministic from `seed`
    (and, with a model, from its replies)."""
    available = python_topics()
    check_int("n_questions", n_questions, 1, len(available))
    check_int("seed", seed)
    check_int("pairs_per_question", pairs_per_question, 1, 10)
    check_interval("tie_share", tie_share, 0.0, 1.0)
    check_int("model_max_tokens", model_max_tokens, 16, 2048)
    check_int("max_concurrency", max_concurrency, 1)
    if model is not None and not callable(getattr(model, "chat", None)):
        raise ConfigError(f"model must be a ChatModel (with .chat) or None, got {type(model).__name__}")

    rng = random.Random(f"lfqa_e.build:{seed}")
    chosen = sorted(rng.sample(range(len(available)), n_questions))
    topics = [available[i] for i in chosen]
    n_pairs = n_questions * pairs_per_question
    ties = set(rng.sample(range(n_pairs), round(tie_share * n_pairs)))

    rows = []  # (topic, k, (text, edits, quality), (text, edits, quality), assumed)
    for q, topic in enumerate(topics):
        trng = random.Random(f"lfqa_e.build:{seed}:{topic.name}")
        seen: set = set()
        n = len(topic.facts)
        for k in range(pairs_per_question):
            (ta, ea), (tb, eb) = _pair(topic, trng, q * pairs_per_question + k in ties, seen)
            rows.append((topic, k, (ta, ea, quality(ea, n)), (tb, eb, quality(eb, n)), False))
    if model is not None:
        answers = _model_answers(model, topics, model_max_tokens, max_concurrency)
        for topic, answer in zip(topics, answers, strict=True):
            if not answer:
                continue  # an empty reply is no answer to compare
            trng = random.Random(f"lfqa_e.build:{seed}:{topic.name}:model")
            edits = trng.choice([[], ["paraphrase"]])
            text, edits = apply_edits(topic, edits, trng)
            human = (text, edits, quality(edits, len(topic.facts)))
            name = getattr(model, "name", "model")
            rows.append((topic, pairs_per_question, human, (answer, [f"model:{name}"], None), True))
        rows.sort(key=lambda r: (chosen.index(available.index(r[0])), r[1]))

    # the better side goes first in half of the pairs that have one (the human-vs-human and the
    # human-vs-model pairs each, so that adding a model leaves the former as they were)
    decided = [i for i, r in enumerate(rows) if r[4] or r[2][2] != r[3][2]]
    first: set[int] = set()
    for group, grng in ((False, rng), (True, random.Random(f"lfqa_e.build:{seed}:model-order"))):
        ids = [i for i in decided if rows[i][4] is group]
        first |= set(grng.sample(ids, len(ids) // 2 + grng.randint(0, len(ids) % 2)))
    out = []
    for i, (topic, k, one, two, assumed) in enumerate(rows):
        better, worse = (one, two) if assumed or one[2] > two[2] else (two, one)
        if i in decided:
            a, b = (better, worse) if i in first else (worse, better)
            label = "response_a" if a is better else "response_b"
        else:
            a, b = (one, two) if rng.random() < 0.5 else (two, one)
            label = "same"
        meta = {
            "edits_a": a[1], "edits_b": b[1], "quality_a": a[2], "quality_b": b[2],
            "n_facts": len(topic.facts), "assumed": assumed, "source": topic.name,
        }  # fmt: skip
        ctype = "human_vs_model" if assumed else "human_vs_human"
        out.append(
            Comparison(
                id=f"py-{topic.name}-{k}",
                question=topic.question,
                reference=topic.reference,
                response_a=a[0],
                response_b=b[0],
                label=label,
                compare_type=ctype,
                context=topic.context,
                language="en",
                topic=topic.group,
                meta=meta,
            )
        )
    return out


__all__ = [
    "Topic",
    "apply_edits",
    "build_comparisons",
    "contradict",
    "paraphrase",
    "python_topics",
    "quality",
    "question_for",
    "topic_group",
]
