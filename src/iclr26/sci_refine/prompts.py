"""Every prompt sci_refine sends, in our own words (Eigen-1, arXiv 2509.21193; none copied from the authors).

They are short and end in a fixed answer format so that a 135M-parameter model (SmolLM2) can follow
them; where a format must hold, the caller also prefills the assistant turn (`*_PREFIX`, passed as
`prefix=` to `ChatModel.chat`). Placeholders are `str.format` fields.

- Monitor (Sec. 3.1): sees the last window of the main model's reasoning and says yes or no to
  "does this need a looked-up fact?". The paper's monitor leans towards yes; so does ours.
- Querier: on yes, writes one keyword search query for that window.
- Injector: writes a short continuation, in the reasoner's voice, that brings the retrieved passages
  into the reasoning; it is prefilled with the end of the reasoning and a lead-in sentence, so its
  output continues the text exactly where the main stream was cut.
- Explicit RAG (the baseline): the main model itself calls a `search` tool in a fenced block.
"""

from __future__ import annotations

MONITOR_SYSTEM = "You check a piece of scientific reasoning for facts that should be looked up."
"""system message of the Monitor call"""

MONITOR_USER = (
    "Reasoning so far:\n"
    '"""\n{window}\n"""\n'
    "Does this reasoning use or need a specific fact (a constant, a measured value, a name, a "
    "definition) that is worth looking up? If you are unsure, say yes.\n"
    "Reply with one word: yes or no."
)
"""user message of the Monitor call; {window}: the last characters of the reasoning"""

MONITOR_PREFIX = "Answer:"
"""assistant prefill of the Monitor call: the reply's first word is then yes or no"""

QUERIER_SYSTEM = "You write search queries for a library of short science notes."
"""system message of the Querier call"""

QUERIER_USER = (
    "Reasoning so far:\n"
    '"""\n{window}\n"""\n'
    "Write one short search query, a few keywords, for the fact this reasoning needs next.\n"
    "Reply with the query only, on one line."
)
"""user message of the Querier call; {window}: the same window the Monitor saw"""

QUERIER_PREFIX = "Query:"
"""assistant prefill of the Querier call: the query follows on the same line"""

INJECTOR_SYSTEM = "You continue a piece of scientific reasoning, adding facts from the notes you are given."
"""system message of the Injector call"""

INJECTOR_USER = (
    'Notes found for "{query}":\n'
    "{passages}\n\n"
    "Continue the reasoning below in the same voice with one or two sentences that state the facts "
    "from the notes that matter here. Only state facts from the notes; do not finish the problem.\n\n"
    "Reasoning:\n"
    '"""\n{window}\n"""'
)
"""user message of the Injector call; {passages}: numbered passage texts"""

INJECTOR_LEAD_IN = "Let me check this against my notes on {query}. They say that"
"""the sentence the injection starts with (our wording); prefilled, so the Injector completes it"""

INJECTOR_RESUME = " With this in hand, I go on."
"""appended after the Injector's sentences so the main model resumes its own reasoning"""

PASSAGE_LINE = "[{n}] {text}"
"""one passage as shown to the Injector and in observations; {n} counts from 1"""

EXPLICIT_SYSTEM = (
    "You solve science questions step by step. You may look facts up in a library of short notes. "
    "To search, write a search block (three backticks and the word search on one line, the keywords "
    "from the question on the next line, then three backticks) and stop; the notes found will be "
    "shown to you. Search only for facts you need. When you know the answer, finish with a line "
    "'Answer: <your answer>'."
)
"""system message of the explicit-RAG baseline: the `search` tool in a fenced block"""

OBSERVATION = 'Search results for "{query}":\n{passages}\n\nContinue your reasoning.'
"""user message carrying a search tool's results back to the main model"""

NO_RESULTS = "(no notes found)"
"""what an observation says when the search returned nothing"""

TOOL_ERROR = (
    "Your search block could not be read: {error}. "
    "Write ```search, then the keywords on the next line, then ```."
)
"""user message answering a malformed search block"""

TOOL_BUDGET_SPENT = "No more searches are allowed. Give your final answer now as 'Answer: <your answer>'."
"""user message answering a search block once the tool-call cap is reached"""

FINAL_NUDGE = "You are out of steps. Give your final answer now as 'Answer: <your answer>'."
"""user message added before the last allowed step"""

# -- multi-agent refinement (Sec. 3.2-3.3): proposers, corrector, HSR, QAIR, selector --------------

SOLVER_SYSTEM = "You solve science questions step by step and finish with a line 'Answer: <your answer>'."
"""system message of every reasoning call of the refinement pipeline (proposer, corrector, HSR)"""

PROPOSER_USER = "Question:\n{query}\n\nSolve it step by step. End with a line 'Answer: <your answer>'."
"""a proposer's task: one independent solution"""

CORRECTOR_USER = (
    "Question:\n{query}\n\n"
    "A student's solution:\n{solution}\n\n"
    "{feedback}"
    "Check the solution step by step. Keep what is right, fix what is wrong, and write the corrected "
    "solution. End with a line 'Answer: <your answer>'."
)
"""the corrector's task on one solution; {feedback}: empty, or a QAIR critique (`CRITIQUE_FEEDBACK`)"""

CRITIQUE_FEEDBACK = "A reviewer's advice on it: {suggestion}\n\n"
"""how a failed solution's QAIR suggestion is passed back to the corrector"""

REFERENCE_BLOCK = "Solution {n}:\n{solution}"
"""one reference solution in the HSR prompt"""

HSR_USER = (
    "Question:\n{query}\n\n"
    "Solution to improve (the anchor):\n{anchor}\n\n"
    "Other solutions, for reference only (they may be wrong too):\n{references}\n\n"
    "First name the anchor's weak points. Then repair only those, using what the other solutions do "
    "better there: complete missing logic, correct a wrong number, replace a method that does not "
    "work, or state the result more clearly. Do not merge in anything that does not fix a weak point. "
    "Write the improved solution and end with a line 'Answer: <your answer>'."
)
"""hierarchical solution refinement: the anchor repaired with the other candidates as references;
the four repair strategies are the paper's (logic completion, numerical correction, method
replacement, expression refinement)"""

EVALUATOR_SYSTEM = "You grade solutions to science questions strictly and reply in JSON only."
"""system message of the QAIR evaluator"""

EVALUATOR_USER = (
    "Question:\n{query}\n\n"
    "Solution:\n{solution}\n\n"
    "Score the solution from 0 (worst) to 5 (best) on: logic (is each step valid?), answer (is the "
    "final answer right?), explanation (is the reasoning complete and clear?). Then give one "
    "suggestion that would improve it. Reply with JSON only, like:\n"
    '{{"logic": 3, "answer": 2, "explanation": 4, "suggestion": "recheck the unit conversion"}}'
)
"""QAIR's evaluator: three 0-5 scores and a suggestion, as JSON"""

EVALUATOR_PREFIX = '{"logic":'
"""assistant prefill of the evaluator when the model cannot be held to a JSON schema"""

SELECTOR_USER = (
    "Question:\n{query}\n\n"
    "{responses}\n\n"
    "Which response answers the question correctly? Check each one, then end with a line "
    "'Choice: Response <number>'."
)
"""the selector's task over the final candidates"""

SELECTOR_PREFIX = "Choice: Response"
"""assistant prefill of the selector call with `refine.select_prefill` (a small model then writes the
number right away)"""
RESPONSE_BLOCK = "Response {n}:\n{solution}"
"""one candidate in the selector prompt"""
