"""LLM judges of long-form answers, as LFQA-E meta-evaluates them (arXiv 2410.01945: the LLM-based
evaluators, prompted with the question, the reference and two responses).

Three families, all through `iclr26.core.llm` (one `chat_many` batch per call, temperature 0, a
refused request read as an empty reply):

- `pairwise`: shown the question, the reference (unless `use_reference=False`) and two responses,
  the judge answers with a verdict line only;
- `reasoning`: the same, but it writes a brief step-by-step analysis before the verdict line (the
  paper's own prompt asks for an analysis, then a conclusion on the last line);
- `rubric`: Prometheus-style pointwise grading: each response gets feedback and a 1-5 score against
  a written rubric (faithfulness to the reference, coverage of its key points, no unsupported
  claims); the pair's preference compares the two scores.

Position bias (the paper's robustness analysis swaps the two responses): a pairwise judge is asked in
both orders, `response_a` first and then `response_b` first, and the second verdict is mapped back to
the original orientation. The final preference is the verdict both orders agree on; when they
disagree it is `same`, since a judge whose answer follows the order has no stable preference (the
usual convention, e.g. MT-Bench's "inconsistent → tie"); when one order gives no verdict the other
decides; when neither does, the preference is None (a parse failure).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from iclr26.core.config import ConfigError
from iclr26.core.llm import ChatModel, RefusalsAsEmpty, chat_many
from iclr26.core.llm.base import Completion, Message
from iclr26.core.validation import check_in, check_int
from iclr26.lfqa_e.data import LABELS, LANGUAGES, Comparison

KINDS = ("pairwise", "reasoning", "rubric")
DEFAULT_MAX_TOKENS = {"pairwise": 32, "reasoning": 384, "rubric": 384}
"""completion budget per kind: a verdict line; an analysis then the verdict; feedback then a score"""
POSITIONS = ("response_1", "response_2", "equal")
"""what a pairwise verdict names: the response shown first, the one shown second, or a tie"""
SCORE_RANGE = (1, 5)

# a verdict, by position, in the pair's original orientation: forward shows response_a first
_FORWARD = {"response_1": "response_a", "response_2": "response_b", "equal": "same"}
_BACKWARD = {"response_1": "response_b", "response_2": "response_a", "equal": "same"}


@dataclass(frozen=True)
class JudgeConfig:
    """How an LLM judge is prompted and asked."""

    kind: str = "reasoning"
    """pairwise (verdict only), reasoning (analysis, then verdict) or rubric (1-5 score per response)"""
    use_reference: bool = True
    """show the reference answer (False: a reference-free judge)"""
    use_context: bool = False
    """also show the comparison's `context` passage when it has one (the paper's prompt does not)"""
    max_tokens: int | None = None
    """completion budget per request; None: the kind's default (32 pairwise, 384 reasoning/rubric)"""
    both_orders: bool = True
    """ask each pair twice, the responses swapped, to measure and cancel position bias"""
    max_concurrency: int = 4
    """requests in flight at once"""

    def __post_init__(self) -> None:
        check_in("JudgeConfig.kind", self.kind, KINDS)
        for name in ("use_reference", "use_context", "both_orders"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"JudgeConfig.{name} must be True or False, got {getattr(self, name)!r}")
        check_int("JudgeConfig.max_tokens", self.max_tokens, 1, optional=True)
        check_int("JudgeConfig.max_concurrency", self.max_concurrency, 1)

    @property
    def budget(self) -> int:
        """The completion budget per request."""
        return self.max_tokens if self.max_tokens is not None else DEFAULT_MAX_TOKENS[self.kind]


@dataclass(frozen=True)
class PairVerdict:
    """A pairwise judge's answer on one comparison, in both orders."""

    preference: str | None
    """the final label (response_a, response_b or same), or None when no order gave a verdict"""
    forward: str | None
    """the verdict with response_a shown first, as a label"""
    backward: str | None
    """the verdict with response_b shown first, mapped back to the original labels (None if not asked)"""
    positions: tuple[str | None, ...]
    """each order's verdict as shown: response_1, response_2, equal or None (forward first)"""
    replies: tuple[str, ...]
    """the judge's replies, forward first"""
    refused: int = 0
    """requests the server refused (read as empty replies)"""

    @property
    def consistent(self) -> bool | None:
        """Whether both orders gave the same label; None when either gave none."""
        if self.forward is None or self.backward is None:
            return None
        return self.forward == self.backward


@dataclass(frozen=True)
class RubricVerdict:
    """A rubric judge's scores for both responses of one comparison."""

    score_a: int | None
    score_b: int | None
    preference: str | None
    """the higher-scored response's label, same on equal scores, None when either score is missing"""
    replies: tuple[str, str]
    """the judge's feedback on response_a, then on response_b"""
    refused: int = 0


Verdict = PairVerdict | RubricVerdict


# ---------------------------------------------------------------------------------------------
# Prompts (our wording; the paper's are in the authors' codes/api_models_eval.py)

_EN_PAIR_TASK = {
    True: (
        "Judge which response answers the question better, taking the reference answer as the "
        "standard: the better response agrees with the reference, covers more of its key points, and "
        "adds fewer claims the reference does not support. Length and style do not matter."
    ),
    False: (
        "Judge which response answers the question better: the better response is accurate, covers "
        "more of what the question asks, and makes fewer unsupported claims. Length and style do not "
        "matter."
    ),
}
_EN_VERDICTS = "\n".join(
    (
        "Verdict: Response 1 is better",
        "Verdict: Response 2 is better",
        "Verdict: the two responses are equally good",
    )
)
_EN_STYLE = {
    "pairwise": "Reply with the verdict line only, nothing else.",
    "reasoning": (
        "Think it through step by step: compare each response with the {standard}, noting omissions, "
        "errors and unsupported claims. Keep the analysis brief, then write the verdict line as your last "
        "line."
    ),
}
_ZH_PAIR_TASK = {
    True: (
        "请以参考答案为标准，判断哪个回答更好地回答了问题：更好的回答与参考答案一致，覆盖更多要点，"
        "并且较少包含参考答案无法支持的说法。不考虑篇幅和文风。"
    ),
    False: (
        "请判断哪个回答更好地回答了问题：更好的回答内容准确，覆盖问题所问的更多方面，并且较少包含"
        "没有依据的说法。不考虑篇幅和文风。"
    ),
}
_ZH_VERDICTS = "结论：回答一更好\n结论：回答二更好\n结论：两个回答相同"
_ZH_STYLE = {
    "pairwise": "只输出结论这一行，不要写其他内容。",
    "reasoning": (
        "请逐步思考：把每个回答与{standard}逐条对照，指出遗漏、错误和没有依据的说法。"
        "分析要简短，最后一行写出结论。"
    ),
}

_EN_RUBRIC = {
    True: (
        "5: agrees with the reference throughout, covers all of its key points, and makes no claim the "
        "reference does not support.\n"
        "4: agrees with the reference and covers most key points; at most a minor omission or one small "
        "unsupported detail.\n"
        "3: broadly consistent with the reference, but misses several key points or adds some "
        "unsupported claims.\n"
        "2: covers few of the reference's key points, or contradicts it on an important point.\n"
        "1: contradicts the reference, misses its main point, or is mostly unsupported or off-topic."
    ),
    False: (
        "5: correct throughout, answers every part of the question, and makes no unsupported or doubtful "
        "claim.\n"
        "4: correct and answers most of the question; at most a minor gap or one doubtful detail.\n"
        "3: partly correct; leaves important parts unanswered or makes several doubtful claims.\n"
        "2: answers little of the question, or is wrong on an important point.\n"
        "1: wrong, off-topic, or mostly unsupported."
    ),
}
_ZH_RUBRIC = {
    True: (
        "5分：与参考答案完全一致，覆盖其全部要点，没有参考答案无法支持的说法。\n"
        "4分：与参考答案一致，覆盖大部分要点；最多有一处小遗漏或一个小的无依据细节。\n"
        "3分：与参考答案大体一致，但遗漏若干要点，或有一些无依据的说法。\n"
        "2分：只覆盖参考答案的少数要点，或在重要之处与其矛盾。\n"
        "1分：与参考答案矛盾、偏离其主旨，或大多没有依据、答非所问。"
    ),
    False: (
        "5分：内容完全正确，回答了问题的每个方面，没有无依据或可疑的说法。\n"
        "4分：内容正确，回答了问题的大部分；最多有一处小缺漏或一个可疑细节。\n"
        "3分：部分正确；遗漏重要方面，或有若干可疑说法。\n"
        "2分：只回答了问题的一小部分，或在重要之处有错误。\n"
        "1分：错误、答非所问，或大多没有依据。"
    ),
}


def _sections(parts: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f"## {title}\n{body.strip()}" for title, body in parts)


def _shared_parts(c: Comparison, cfg: JudgeConfig) -> list[tuple[str, str]]:
    zh = c.language == "zh"
    parts = [("问题" if zh else "Question", c.question)]
    if cfg.use_context and c.context.strip():
        parts.append(("背景材料" if zh else "Context", c.context))
    if cfg.use_reference:
        parts.append(("参考答案" if zh else "Reference answer", c.reference))
    return parts


def pair_prompt(c: Comparison, cfg: JudgeConfig, *, swapped: bool = False) -> str:
    """The pairwise or reasoning judge's prompt for `c` (`swapped`: response_b shown as Response 1)."""
    if cfg.kind == "rubric":
        raise ConfigError("pair_prompt needs JudgeConfig.kind 'pairwise' or 'reasoning'; use rubric_prompt")
    first, second = (c.response_b, c.response_a) if swapped else (c.response_a, c.response_b)
    if c.language == "zh":
        head = "下面是一个问题和两个长篇回答，请评判哪个回答更好。"
        parts = [*_shared_parts(c, cfg), ("回答一", first), ("回答二", second)]
        standard = "参考答案" if cfg.use_reference else "问题的要求"
        style = _ZH_STYLE[cfg.kind].format(standard=standard)
        tail = f"{_ZH_PAIR_TASK[cfg.use_reference]}\n{style}\n结论行必须是以下三行之一：\n{_ZH_VERDICTS}"
    else:
        head = "Below are a question and two long-form responses to it. Decide which response is better."
        parts = [*_shared_parts(c, cfg), ("Response 1", first), ("Response 2", second)]
        standard = "reference answer" if cfg.use_reference else "question"
        style = _EN_STYLE[cfg.kind].format(standard=standard)
        tail = (
            f"{_EN_PAIR_TASK[cfg.use_reference]}\n{style}\n"
            f"The verdict line must be exactly one of these three:\n{_EN_VERDICTS}"
        )
    return f"{head}\n\n{_sections(parts)}\n\n{tail}"


def rubric_prompt(c: Comparison, response: str, cfg: JudgeConfig) -> str:
    """The rubric judge's prompt: grade one `response` to `c`'s question from 1 to 5."""
    if c.language == "zh":
        head = "请按评分标准给下面这个长篇回答打分（1到5分）。"
        parts = [
            *_shared_parts(c, cfg),
            ("待评分的回答", response),
            ("评分标准", _ZH_RUBRIC[cfg.use_reference]),
        ]
        tail = "请严格依据评分标准写一段简短的评语，最后一行写“评分：N”，N 为 1 到 5 之间的整数。"
    else:
        head = "Grade the long-form answer below from 1 to 5 against the rubric."
        parts = [
            *_shared_parts(c, cfg),
            ("Answer to grade", response),
            ("Rubric", _EN_RUBRIC[cfg.use_reference]),
        ]
        tail = (
            "Write brief feedback that judges the answer strictly by the rubric, then end with a line "
            '"Score: N", where N is an integer from 1 to 5.'
        )
    return f"{head}\n\n{_sections(parts)}\n\n{tail}"


def _messages(prompt: str) -> list[Message]:
    return [{"role": "user", "content": prompt}]


# ---------------------------------------------------------------------------------------------
# Parsing

_BRACKETS = re.compile(r"[*_#`【】\[\]「」『』〔〕〖〗“”\"]")
_SPACE = re.compile(r"\s+")


def _normalise(reply: str) -> str:
    """Lower case, full-width forms folded (NFKC), markdown and brackets dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKC", reply).lower().replace("’", "'")
    return _SPACE.sub(" ", _BRACKETS.sub(" ", text)).strip()


# English. A reference to one response: "response 1", "answer two", "response #2", "the first one".
_EN_REF = (
    r"(?:(?:response|answer|assistant|candidate)\s*(?:#|no\.?|number)?\s*(?:1|2|one|two)\b"
    r"|(?:the\s+)?(?:first|second)(?:\s+(?:response|answer|one))?\b)"
)
_EN_ADV = (
    r"(?:(?:clearly|slightly|much|far|significantly|somewhat|marginally|definitely|overall|noticeably|"
    r"considerably|substantially|obviously|generally|still|thus|therefore|also|a\s+bit|a\s+little|"
    r"the)\s+)*"
)
_EN_BETTER = r"(?:better|superior|stronger|preferable|preferred|the\s+winner|more\s+faithful|closer\s+to)"
_EN_CUE = (
    r"\b(?:final\s+verdict|verdict|final\s+answer|answer|conclusion|decision|final\s+judge?ment|"
    r"judge?ment|choice|winner|result|preference|better\s+(?:response|answer|one)|"
    r"preferred\s+(?:response|answer))\s*(?:is|:|-|=)\s*"
)
_EN_EQUAL = (
    r"(?:(?:roughly|about|essentially|basically|more\s+or\s+less)\s+)?"
    r"(?:equally\s+(?:good|strong|bad|poor|valid|matched|acceptable|helpful|close)"
    r"|of\s+(?:equal|similar|the\s+same|comparable)\s+quality"
    r"|(?:equal|the\s+same|tied|on\s+par|comparable|equivalent|indistinguishable|a\s+tie)"
    r"(?:\s+in\s+(?:overall\s+)?quality)?(?=\s*(?:$|[.!,;:)]|and\b|but\b|so\b)))"
)
_NOT_AFTER_EN = r"(?<!than )(?<!over )"
# Chinese. "回答一", "答案2", "第二个回答".
_ZH_REF = (
    r"(?:(?:回答|答案|回复)\s*(?:一|二|1|2)(?!\d)|第\s*(?:一|二|1|2)\s*(?:个|份|条|篇)?\s*(?:回答|答案|回复))"
)
_ZH_MORE = r"(?:更为|更加|更|较为|较|比较|相对|明显|稍微|略微|略|稍|要)+\s*(?:的)?\s*"
_ZH_GOOD = r"(?:优秀|好|佳|优|出色|贴近|接近|符合)"
_ZH_SAME = r"(?:相同|相当|一样好?|不相上下|差不多|持平|同样(?:优秀|好))"
_NOT_AFTER_ZH = r"(?<!比)(?<!比 )(?<!不如)(?<!优于)"
_END = r"(?=\s*(?:$|[.!,;。！，；]))"

# (pattern, meaning): "pick" names the response in group `ref`; "other" names the one it is not;
# "equal" is a tie. Among every match in a reply the one that starts last wins.
_EN: list[tuple[str, str]] = [
    (
        rf"{_NOT_AFTER_EN}(?P<ref>{_EN_REF})\s*(?:\([^)]*\)\s*)?"
        rf"(?:is|was|would\s+be|seems|appears|looks)\s+{_EN_ADV}{_EN_BETTER}",
        "pick",
    ),
    (
        rf"{_NOT_AFTER_EN}(?P<ref>{_EN_REF})\s+(?:wins|performs\s+better|does\s+better"
        r"|does\s+a\s+better\s+job"
        r"|should\s+be\s+preferred|is\s+my\s+(?:choice|pick)|edges\s+out|outperforms)",
        "pick",
    ),
    (rf"{_EN_CUE}(?P<ref>{_EN_REF})", "pick"),
    (rf"{_EN_CUE}(?P<ref>1|2){_END}", "pick"),
    (
        r"\b(?:i(?:'d|'ll|\s+would|\s+will)?\s+(?:prefer|choose|pick|select|favou?r|go\s+with)"
        rf"|prefer|choose|select)\s+(?P<ref>{_EN_REF})",
        "pick",
    ),
    (rf"(?P<ref>{_EN_REF})\s*>\s*{_EN_REF}", "pick"),
    (rf"{_EN_REF}\s*<\s*(?P<ref>{_EN_REF})", "pick"),
    (rf"{_NOT_AFTER_EN}(?P<ref>{_EN_REF})\s+(?:is|was)\s+{_EN_ADV}(?:worse|inferior|weaker)", "other"),
    (rf"\b(?:are|is|seem|appear|look)\s+{_EN_EQUAL}", "equal"),
    (r"\b(?:it'?s|it\s+is)\s+a\s+(?:tie|draw)\b|\btie\b", "equal"),
    (rf"\bneither\s+(?:response\s+|answer\s+|one\s+)?is\s+{_EN_ADV}better\b", "equal"),
    (r"\bno\s+(?:clear\s+)?(?:winner|preference)\b", "equal"),
    (rf"{_EN_CUE}(?:equal|both|same|tie|neither|draw)\b", "equal"),
    (rf"{_EN_REF}\s*=\s*{_EN_REF}", "equal"),
]
_ZH: list[tuple[str, str]] = [
    (
        rf"{_NOT_AFTER_ZH}(?P<ref>{_ZH_REF})\s*(?:的(?:内容|质量|表现))?\s*"
        rf"(?:比\s*{_ZH_REF}\s*)?{_ZH_MORE}{_ZH_GOOD}",
        "pick",
    ),
    (
        rf"{_NOT_AFTER_ZH}(?P<ref>{_ZH_REF})\s*(?:要)?\s*(?:胜出|更胜一筹|占优|获胜|优于|好于|强于|胜过)",
        "pick",
    ),
    (
        r"(?:因此|所以|综上所述|综上|总之|结论|最终结论|最终判断|判断结果|结果|我选择|选择|"
        rf"更优秀的是|更好的是|更优的是|胜出的是|我认为)\s*[:,是为]*\s*(?P<ref>{_ZH_REF}){_END}",
        "pick",
    ),
    (rf"{_NOT_AFTER_ZH}(?P<ref>{_ZH_REF})\s*(?:不如|逊于|差于|劣于)", "other"),
    (rf"{_NOT_AFTER_ZH}(?P<ref>{_ZH_REF})\s*(?:比\s*{_ZH_REF}\s*)?(?:更|较)(?:差|弱|逊色)", "other"),
    (
        rf"(?:两个|两份|两篇|两)\s*(?:回答|答案|回复)\s*(?:的质量|质量)?\s*(?:基本|大致|几乎)?\s*{_ZH_SAME}",
        "equal",
    ),
    (rf"(?:两者|二者)\s*(?:的质量|质量)?\s*(?:基本|大致|几乎)?\s*{_ZH_SAME}", "equal"),
    (rf"{_ZH_REF}\s*(?:和|与|跟)\s*{_ZH_REF}\s*(?:的质量|质量)?\s*(?:基本|大致|几乎)?\s*{_ZH_SAME}", "equal"),
    (
        r"不相上下|难分(?:高下|伯仲|优劣|胜负)|旗鼓相当|平局|打平|半斤八两|没有(?:明显的?)?(?:优劣|高下)之分",
        "equal",
    ),
]
_PATTERNS = {
    lang: [(re.compile(p), meaning) for p, meaning in pats] for lang, pats in (("en", _EN), ("zh", _ZH))
}
_BARE = re.compile(
    r"^\W*(?:(?:verdict|final\s+verdict|answer|结论|答案)\s*:?\s*)?"
    rf"(?:(?P<ref>{_EN_REF}|{_ZH_REF}|1|2)|(?P<eq>equal|tie|same|both|相同|平局))\W*$"
)
_TWO = re.compile(r"2|two|second|二")


def _which(ref: str) -> str:
    """response_1 or response_2 for a matched reference ("response two", "第二个回答", ...)."""
    return "response_2" if _TWO.search(ref) else "response_1"


def _last_verdict(text: str, language: str) -> str | None:
    best: tuple[int, int, str] | None = None
    for pattern, meaning in _PATTERNS[language]:
        for m in pattern.finditer(text):
            if meaning == "equal":
                verdict = "equal"
            else:
                verdict = _which(m.group("ref"))
                if meaning == "other":
                    verdict = "response_1" if verdict == "response_2" else "response_2"
            key = (m.start(), m.end(), verdict)
            if best is None or key[:2] > best[:2]:
                best = key
    return None if best is None else best[2]


def parse_verdict(reply: str, language: str = "en") -> str | None:
    """The position a pairwise judge's reply prefers: response_1, response_2 or equal; None if none.

    The last explicit verdict statement wins ("Response 2 is better", "Verdict: equal", "因此，回答一
    更优秀", "两个回答不相上下"); markdown, brackets and full-width forms are ignored. A reply that is
    only a response's name ("Response 1.", "2", "回答二") counts too. The `language` vocabulary is
    tried first, then the other one (a judge may answer in either).
    """
    check_in("language", language, LANGUAGES)
    text = _normalise(reply or "")
    if not text:
        return None
    for lang in (language, *(lg for lg in LANGUAGES if lg != language)):
        verdict = _last_verdict(text, lang)
        if verdict is not None:
            return verdict
    m = _BARE.match(text)
    if m is None:
        return None
    return "equal" if m.group("eq") else _which(m.group("ref"))


_SCORE = re.compile(
    r"(?:final\s+score|overall\s+score|score|rating|result|grade|最终评分|最终得分|评分|得分|分数|打分)"
    r"\s*(?:is|of|:|=|-|为|是)?\s*(?P<n>\d+(?:\.\d+)?)(?:\s*(?:/|out\s+of)\s*(?P<of>\d+))?"
)
_BARE_SCORE = re.compile(r"^\W*(?P<n>\d+)\W*$")
_NUMBER = re.compile(r"(?<![\d.])(?P<n>\d+(?:\.\d+)?)(?!\.?\d)")


def parse_score(reply: str) -> int | None:
    """The 1-5 score in a rubric judge's reply: the last "Score: N" ("[RESULT] N", "评分：N", "4/5"),
    else the reply's only number; None when there is none, or when it is out of range, fractional or
    on another scale ("8/10")."""
    text = _normalise(reply or "")
    found = list(_SCORE.finditer(text)) or [m for m in [_BARE_SCORE.match(text)] if m]
    if not found:  # no cue: a reply whose one number is the score ("The answer is 5.")
        numbers = list(_NUMBER.finditer(text))
        found = numbers if len(numbers) == 1 else []
    if not found:
        return None
    m = found[-1]
    scale = m.groupdict().get("of")
    if scale is not None and int(scale) != SCORE_RANGE[1]:
        return None
    n = m.group("n")
    if not n.isdigit():
        return None
    value = int(n)
    return value if SCORE_RANGE[0] <= value <= SCORE_RANGE[1] else None


# ---------------------------------------------------------------------------------------------
# Judging


def final_preference(forward: str | None, backward: str | None) -> str | None:
    """The pair's label from its two order-mapped verdicts: agreed → that label; disagreed → same
    (an order-dependent judge has no stable preference); one missing → the other; both → None."""
    if forward is None:
        return backward
    if backward is None or forward == backward:
        return forward
    return "same"


def _check_comparisons(comparisons: Sequence[Comparison]) -> None:
    for i, c in enumerate(comparisons):
        if not isinstance(c, Comparison):
            raise ConfigError(f"comparisons[{i}] must be a Comparison, got {type(c).__name__}")
        if c.language not in LANGUAGES:
            raise ConfigError(
                f"comparisons[{i}].language must be one of {', '.join(LANGUAGES)}, got {c.language!r}"
            )


def _send(model: ChatModel, requests: list[dict], cfg: JudgeConfig) -> list[Completion]:
    """One greedy completion per request, in one bounded batch; a refused request is an empty
    completion with finish_reason "error"."""
    guard = model if isinstance(model, RefusalsAsEmpty) else RefusalsAsEmpty(model)
    answers = chat_many(guard, requests, max_concurrency=cfg.max_concurrency)  # type: ignore[arg-type]
    return [a[0] if a else Completion("", finish_reason="error") for a in answers]


def _ask(model: ChatModel, prompts: Sequence[str], cfg: JudgeConfig) -> tuple[list[str], list[bool]]:
    """Greedy replies to `prompts` in one bounded batch; whether each request was refused."""
    requests = [{"messages": _messages(p), "max_tokens": cfg.budget, "temperature": 0.0} for p in prompts]
    got = _send(model, requests, cfg)
    return [a.text for a in got], [a.finish_reason == "error" for a in got]


def _pair_verdict(positions: tuple[str | None, ...], replies: tuple[str, ...], refused: int) -> PairVerdict:
    """The verdict of one comparison from its per-order positions (forward first, then swapped)."""
    forward = _FORWARD.get(positions[0]) if positions[0] else None
    backward = _BACKWARD.get(positions[1]) if len(positions) == 2 and positions[1] else None
    return PairVerdict(final_preference(forward, backward), forward, backward, positions, replies, refused)


def judge_pairs(
    model: ChatModel, comparisons: Sequence[Comparison], cfg: JudgeConfig | None = None
) -> list[PairVerdict]:
    """A pairwise or reasoning judge's verdicts on `comparisons`, each asked in both orders unless
    `cfg.both_orders` is False (default config: the reasoning judge). Each verdict counts its refusals."""
    cfg = cfg or JudgeConfig()
    if cfg.kind == "rubric":
        raise ConfigError("judge_pairs needs JudgeConfig.kind 'pairwise' or 'reasoning'; use judge_rubric")
    _check_comparisons(comparisons)
    orders = (False, True) if cfg.both_orders else (False,)
    prompts = [pair_prompt(c, cfg, swapped=s) for c in comparisons for s in orders]
    replies, refused = _ask(model, prompts, cfg)
    k = len(orders)
    out = []
    for i, c in enumerate(comparisons):
        rs = tuple(replies[i * k : (i + 1) * k])
        positions = tuple(parse_verdict(r, c.language) for r in rs)
        out.append(_pair_verdict(positions, rs, sum(refused[i * k : (i + 1) * k])))
    return out


# the verdict line's start, continued by the judge; the next token names the response
_VERDICT_PREFIX = {"en": "Verdict: Response", "zh": "结论：回答"}
_POSITION_TOKENS = {
    "en": {"1": "response_1", "2": "response_2"},
    "zh": {"一": "response_1", "二": "response_2"},
}


def verdict_from_logprobs(completion: Completion, language: str, margin: float) -> str | None:
    """response_1 / response_2 by the higher log-prob of the token that names it after the verdict
    prefix, equal when they differ by at most `margin`, None when neither is among the alternatives."""
    if not completion.logprobs:
        return None
    first = completion.logprobs[0]
    best = {"response_1": -math.inf, "response_2": -math.inf}
    for token, lp in ((first.token, first.logprob), *first.top):
        pos = _POSITION_TOKENS[language].get(token.strip())
        if pos is not None:
            best[pos] = max(best[pos], lp)
    one, two = best["response_1"], best["response_2"]
    if one == two == -math.inf:
        return None
    if abs(one - two) <= margin:
        return "equal"
    return "response_1" if one > two else "response_2"


def judge_logprob(
    model: ChatModel,
    comparisons: Sequence[Comparison],
    cfg: JudgeConfig | None = None,
    *,
    margin: float = 0.1,
    top: int = 20,
) -> list[PairVerdict]:
    """The direct judge read from its verdict token's log-probs (in the manner of G-Eval's
    probability-weighted scores): the reply is continued from "Verdict: Response", and the more
    probable of "1" and "2" is its verdict, equal within `margin` nats. It separates a model that
    cannot write the verdict line from one that has no preference."""
    cfg = cfg or JudgeConfig(kind="pairwise")
    if cfg.kind != "pairwise":
        raise ConfigError(f"judge_logprob needs JudgeConfig.kind 'pairwise', got {cfg.kind!r}")
    _check_comparisons(comparisons)
    orders = (False, True) if cfg.both_orders else (False,)
    requests = [
        {"messages": _messages(pair_prompt(c, cfg, swapped=o)), "max_tokens": 1, "temperature": 0.0,
         "logprobs": True, "top_logprobs": top, "prefix": _VERDICT_PREFIX[c.language]}
        for c in comparisons
        for o in orders
    ]  # fmt: skip
    answers = _send(model, requests, cfg)
    k = len(orders)
    out = []
    for i, c in enumerate(comparisons):
        got = answers[i * k : (i + 1) * k]
        positions = tuple(verdict_from_logprobs(a, c.language, margin) for a in got)
        texts = tuple(f"{_VERDICT_PREFIX[c.language]}{a.text}" for a in got)
        out.append(_pair_verdict(positions, texts, sum(a.finish_reason == "error" for a in got)))
    return out


def preference_from_scores(score_a: int | None, score_b: int | None) -> str | None:
    """response_a / response_b for the higher score, same on a tie, None when either is missing."""
    if score_a is None or score_b is None:
        return None
    return "response_a" if score_a > score_b else "response_b" if score_b > score_a else "same"


def judge_rubric(
    model: ChatModel, comparisons: Sequence[Comparison], cfg: JudgeConfig | None = None
) -> list[RubricVerdict]:
    """A rubric judge's 1-5 scores for both responses of each comparison, and the preference they imply."""
    cfg = cfg or JudgeConfig(kind="rubric")
    if cfg.kind != "rubric":
        raise ConfigError(f"judge_rubric needs JudgeConfig.kind 'rubric', got {cfg.kind!r}; use judge_pairs")
    _check_comparisons(comparisons)
    prompts = [rubric_prompt(c, r, cfg) for c in comparisons for r in (c.response_a, c.response_b)]
    replies, refused = _ask(model, prompts, cfg)
    out = []
    for i in range(len(comparisons)):
        ra, rb = replies[2 * i], replies[2 * i + 1]
        sa, sb = parse_score(ra), parse_score(rb)
        out.append(
            RubricVerdict(
                sa, sb, preference_from_scores(sa, sb), (ra, rb), refused[2 * i] + refused[2 * i + 1]
            )
        )
    return out


def judge(
    model: ChatModel, comparisons: Sequence[Comparison], cfg: JudgeConfig | None = None
) -> list[Verdict]:
    """`judge_rubric` or `judge_pairs`, as `cfg.kind` says (default: the reasoning judge)."""
    cfg = cfg or JudgeConfig()
    out: list[Verdict] = []
    out.extend(
        judge_rubric(model, comparisons, cfg)
        if cfg.kind == "rubric"
        else judge_pairs(model, comparisons, cfg)
    )
    return out


# ---------------------------------------------------------------------------------------------
# Scores of a judge against the human labels


def accuracy(predictions: Sequence[str | None], comparisons: Sequence[Comparison]) -> float:
    """Share of comparisons whose predicted label is the human one (no prediction counts as wrong)."""
    if len(predictions) != len(comparisons):
        raise ValueError(f"predictions has {len(predictions)} items but comparisons has {len(comparisons)}")
    for i, p in enumerate(predictions):
        if p is not None and p not in LABELS:
            raise ValueError(f"predictions[{i}] must be one of {', '.join(LABELS)} or None, got {p!r}")
    return sum(p == c.label for p, c in zip(predictions, comparisons, strict=True)) / max(len(comparisons), 1)


def consistency_rate(verdicts: Sequence[PairVerdict]) -> float | None:
    """Share of pairs, among those with a verdict in both orders, whose two verdicts agree."""
    both = [v.consistent for v in verdicts if v.consistent is not None]
    return sum(both) / len(both) if both else None


def first_position_share(verdicts: Sequence[PairVerdict]) -> float | None:
    """Share of decisive verdicts (all orders; ties left out) that name the response shown first:
    position bias, 0.5 for a judge that the order does not sway."""
    decisive = [p for v in verdicts for p in v.positions if p in ("response_1", "response_2")]
    return sum(p == "response_1" for p in decisive) / len(decisive) if decisive else None


def failure_rate(verdicts: Sequence[Verdict]) -> float:
    """Share of the judge's replies that gave no verdict (or no score), refusals included."""
    if not verdicts:
        return 0.0
    parsed: list[bool] = []
    for v in verdicts:
        if isinstance(v, PairVerdict):
            parsed.extend(p is not None for p in v.positions)
        else:
            parsed.extend((v.score_a is not None, v.score_b is not None))
    return 1 - sum(parsed) / len(parsed)


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 2)


def position_bias_summary(verdicts: Sequence[Verdict], comparisons: Sequence[Comparison]) -> dict:
    """Accuracy (final, forward-only, backward-only), position consistency, the share of verdicts for
    the first-shown response, and the failure rates, all in %; plus counts."""
    if len(verdicts) != len(comparisons):
        raise ValueError(f"verdicts has {len(verdicts)} items but comparisons has {len(comparisons)}")
    pairs = [v for v in verdicts if isinstance(v, PairVerdict)]
    is_pairwise = len(pairs) == len(verdicts) and bool(verdicts)
    asked_back = is_pairwise and all(len(v.positions) == 2 for v in pairs)
    out: dict = {
        "n": len(verdicts),
        "accuracy_pct": _pct(accuracy([v.preference for v in verdicts], comparisons)),
        "forward_accuracy_pct": _pct(accuracy([v.forward for v in pairs], comparisons))
        if is_pairwise
        else None,
        "backward_accuracy_pct": _pct(accuracy([v.backward for v in pairs], comparisons))
        if asked_back
        else None,
        "consistency_pct": _pct(consistency_rate(pairs)) if asked_back else None,
        "first_position_pct": _pct(first_position_share(pairs)) if is_pairwise else None,
        "same_pct": _pct(sum(v.preference == "same" for v in verdicts) / max(len(verdicts), 1)),
        "failure_pct": _pct(failure_rate(verdicts)),
        "pair_failure_pct": _pct(sum(v.preference is None for v in verdicts) / max(len(verdicts), 1)),
        "refused": sum(v.refused for v in verdicts),
    }
    return out


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "KINDS",
    "POSITIONS",
    "JudgeConfig",
    "PairVerdict",
    "RubricVerdict",
    "Verdict",
    "accuracy",
    "consistency_rate",
    "failure_rate",
    "final_preference",
    "first_position_share",
    "judge",
    "judge_logprob",
    "judge_pairs",
    "judge_rubric",
    "pair_prompt",
    "parse_score",
    "parse_verdict",
    "position_bias_summary",
    "preference_from_scores",
    "rubric_prompt",
    "verdict_from_logprobs",
]
