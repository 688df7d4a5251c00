"""The seven prompt styles and the chat layout: one user/assistant pair per exemplar, then the
query, with the style's system message (the paper's Sec. 3.2; the wording here is ours).

- modus_ponens: bare exemplars, no instruction;
- description: what generates the strings and what decides the label;
- automaton: the description plus the generating automaton's definition;
- word_salad: random words where the description would be (its form, none of its content);
- cot: the description, and exemplar answers that reason step by step before the label;
- salad_of_thought: the reasoning's skeleton with its words replaced by random ones;
- apo: a description optimised through the model (`apo.optimise_prompt`).

The exemplars are the first k training items; `shuffle=True` really reorders them (a permutation
drawn per cell from the seed). The authors' builders shuffle a copy and then read the unshuffled
list, so their "shuffled" prompts equal the unshuffled ones (see README).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache

from iclr26.core.llm import Message
from iclr26.core.validation import check_in, check_int
from iclr26.icl_analysis.tasks import Item, Task
from iclr26.icl_analysis.traces import trace

STYLES = ("modus_ponens", "description", "automaton", "word_salad", "cot", "salad_of_thought", "apo")
SHOTS = (0, 2, 5, 10, 20, 50, 100)
REASONING = ("cot", "salad_of_thought")
# The paper's exceptions: bare exemplars need at least one; the reasoning styles skip 2 shots.
NO_SHOTS = {"modus_ponens": (0,), "cot": (2,), "salad_of_thought": (2,)}

# What generates each task's strings (our wording), then its automaton's definition.
PROCESS = {
    "parity": "Each string is made of 0s and 1s and starts with 0.",
    "pattern_matching": "Each string is made of the letters a, b and c.",
    "reversal": (
        "Each string is two sequences of the tokens gfx, chtte, %, ltintprk and ¯\\_(ツ)_/¯ around a #."
    ),
    "stack": ("Each item has three lines: a string of bits, a list of stack operations, and a final string."),
    "vending_machine": (
        "Each item lists coins put into a vending machine (+5, +10) and purchases "
        "(coffee costs 15, biscuit 20, soda 25), then a number."
    ),
    "vending_machine_sum": (
        "Each item lists coins put into a vending machine (+5, +10) and "
        "purchases (coffee costs 15, biscuit 20, soda 25)."
    ),
    "hamiltonian": (
        "Each item is a directed graph, given as each vertex with the vertices it points to, and a path."
    ),
    "maze_solve": ("Each item is a maze (# walls, S start, E exit, + the drawn path) and a list of moves."),
    "maze_complete": (
        "Each item is a maze (# walls, S start, E exit, + the drawn path) whose path"
        " has a gap around ?, and candidate moves for the gap."
    ),
}
AUTOMATON = {
    "parity": (
        "A two-state machine counts zeros modulo 2: writing 0 switches between 'odd' and "
        "'even', writing 1 keeps the state; it starts in 'odd' after the first 0."
    ),
    "pattern_matching": (
        "A seven-state machine tracks how much of abcabb has just been read (0 to"
        " 6 letters); each letter moves it to the longest prefix of abcabb that "
        "ends the text so far, and state 6 is final."
    ),
    "reversal": (
        "A machine reads the tokens before # onto a stack, then pops one token for each "
        "token after #; it accepts when every popped token matches and the stack ends "
        "empty."
    ),
    "stack": (
        "A stack starts as the first line (rightmost bit on top); 'push,B' puts bit B on "
        "top, 'pop' removes the top bit and does nothing on an empty stack; the machine "
        "accepts when the stack ends as the last line ('empty' when no bits are left)."
    ),
    "vending_machine": (
        "A machine keeps a balance from 0: a coin adds its value, a purchase "
        "subtracts its price and is refused when the price exceeds the balance; it"
        " accepts when nothing is refused and the final number equals the balance."
    ),
    "vending_machine_sum": (
        "A machine keeps a balance from 0: a coin adds its value, a purchase subtracts its price."
    ),
    "hamiltonian": (
        "A checker walks the path from vertex 0, accepting when each step follows an "
        "edge, no vertex repeats, every vertex is visited and the last vertex has an "
        "edge back to 0."
    ),
    "maze_solve": (
        "A walker starts at S and applies the moves (up, down, left, right); it accepts"
        " when every move lands on the drawn path (+) without revisiting a cell and the"
        " last move reaches E."
    ),
    "maze_complete": (
        "A walker starts at the last drawn cell before the gap and applies the "
        "moves; it accepts when they cross only open cells, pass ?, and end next to "
        "the drawn path after the gap."
    ),
}


def answer_format(task: Task) -> str:
    return "the number" if not task.binary else "the label (1 or 0)"


def description(task: Task, style: str, shots: int) -> str:
    """The system message of the description-based styles."""
    lines = [PROCESS[task.name], f"Rule: {task.description}."]
    if style == "automaton":
        lines.append(f"How the label is decided: {AUTOMATON[task.name]}")
    if style == "cot":
        lines.append(f"Reason step by step, then finish with 'So the answer is' and {answer_format(task)}.")
    else:
        lines.append(f"Reply with {answer_format(task)} only.")
    if shots:
        lines.append("Examples follow.")
    return "\n".join(lines)


@cache
def salad_words() -> tuple[str, ...]:
    """The word list the salads draw from: Faker's English lorem vocabulary (an installed package)."""
    from faker.providers.lorem.en_US import Provider

    return tuple(w for w in Provider.word_list if w.isalpha())


def word_salad(rng: random.Random) -> str:
    """15 to 40 random words: the shape of a description with none of its content."""
    words = salad_words()
    return " ".join(rng.sample(words, rng.randint(15, 40)))


def salad_of_thought(text: str, rng: random.Random, keep: Sequence[str] = ()) -> str:
    """A reasoning trace with every plain word replaced by a random one; numbers, symbols, the task's
    own tokens (`keep`) and the closing 'So the answer is L' stay."""
    body, sep, tail = text.rpartition("So the answer is")
    if not sep:
        body, tail = text, ""
    words = salad_words()
    out = []
    for tok in body.split(" "):
        core = tok.strip(".,:;()")
        if core.isalpha() and core.lower() not in keep and len(core) > 1:
            tok = tok.replace(core, rng.choice(words))
        out.append(tok)
    return " ".join(out) + (sep + tail if sep else "")


def exemplars(train: Sequence[Item], shots: int, *, shuffle: bool = False, seed: int = 0) -> list[Item]:
    """The first `shots` training items, reordered by a seeded permutation when `shuffle`."""
    check_int("shots", shots, 0)
    if shots > len(train):
        raise ValueError(f"shots={shots} is more than the {len(train)} training items")
    chosen = list(train[:shots])
    if shuffle:
        random.Random(seed).shuffle(chosen)
    return chosen


def build_messages(
    task: Task,
    style: str,
    shots: Sequence[Item],
    query: Item,
    *,
    rng: random.Random,
    system: str | None = None,
) -> list[Message]:
    """The chat for one query: the style's system message (none for modus ponens), one user/assistant
    pair per exemplar, then the query. `system` is the optimised prompt of style `apo`."""
    check_in("style", style, STYLES)
    if style == "modus_ponens" and not shots:
        raise ValueError("modus_ponens needs at least one exemplar (it has no instruction)")
    if style == "apo":
        if not system:
            raise ValueError("style 'apo' needs the optimised prompt (system=...)")
        head = system
    elif style in ("word_salad", "salad_of_thought"):
        head = word_salad(rng)
    elif style == "modus_ponens":
        head = ""
    else:
        head = description(task, style, len(shots))
    messages: list[Message] = [{"role": "system", "content": head}] if head else []
    for ex in shots:
        answer = str(ex.label)
        if style == "cot":
            answer = trace(task, ex)
        elif style == "salad_of_thought":
            answer = salad_of_thought(trace(task, ex), rng, keep=KEEP.get(task.name, ()))
        messages.append({"role": "user", "content": ex.shown})
        messages.append({"role": "assistant", "content": answer})
    messages.append({"role": "user", "content": query.shown})
    return messages


# task words a salad keeps (they are data, not connectives)
KEEP = {
    "stack": ("push", "pop", "empty"),
    "vending_machine": ("coffee", "biscuit", "soda"),
    "vending_machine_sum": ("coffee", "biscuit", "soda"),
    "maze_solve": ("up", "down", "left", "right"),
    "maze_complete": ("up", "down", "left", "right"),
    "reversal": ("gfx", "chtte", "ltintprk"),
}


def shot_counts(style: str, shots: Sequence[int] = SHOTS) -> list[int]:
    """The shot counts a style runs at (the paper's exceptions removed)."""
    check_in("style", style, STYLES)
    return [k for k in shots if k not in NO_SHOTS.get(style, ())]


def max_tokens(style: str) -> int:
    """The paper's generation budget: 3 tokens for a label, 1024 for reasoning styles."""
    return 1024 if style in REASONING else 3
