import pytest

from iclr26.agents import Action, ActionParser, ParseError
from iclr26.agents.actions import fenced_blocks, parse_code_block, parse_control, parse_json_action
from iclr26.core.errors import UserError

SCHEMA = {
    "type": "object",
    "properties": {"tool": {"enum": ["click", "type"]}, "x": {"type": "integer", "minimum": 0}},
    "required": ["tool"],
    "additionalProperties": False,
}


def test_code_block_first_matching_language():
    text = "I will look.\n```python\nprint(1)\n```\nthen\n```bash\nls -la\necho hi\n```\n```bash\nrm x\n```"
    a = parse_code_block(text)
    assert a == Action("code", "ls -la\necho hi", "bash")
    assert parse_code_block(text, ("python",)).content == "print(1)"
    assert parse_code_block("```\npwd\n```").content == "pwd"  # an unlabelled block counts as shell
    assert parse_code_block(text, None).language == "python"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("just prose, no code", "no fenced code block"),
        ("```python\nprint(1)\n```", "found code blocks in python"),
        ("```bash\n\n```", "empty"),
    ],
)
def test_code_block_errors(text, match):
    with pytest.raises(ParseError, match=match):
        parse_code_block(text)


def test_json_against_a_schema():
    assert parse_json_action('Sure: {"tool": "click", "x": 3} done', SCHEMA).content == {
        "tool": "click",
        "x": 3,
    }
    fenced = 'Here:\n```json\n{"tool": "type"}\n```'
    assert parse_json_action(fenced, SCHEMA).content == {"tool": "type"}
    # braces inside strings do not confuse the span finder
    assert parse_json_action('{"tool": "type", "note": "a } b {"}', None).content["note"] == "a } b {"
    with pytest.raises(ParseError, match="at x: -1 is less than the minimum"):
        parse_json_action('{"tool": "click", "x": -1}', SCHEMA)
    with pytest.raises(ParseError, match=r"at tool: 'drag' is not one of"):
        parse_json_action('{"tool": "drag"}', SCHEMA)
    with pytest.raises(ParseError, match="invalid JSON"):
        parse_json_action('{"tool": click}', SCHEMA)
    with pytest.raises(ParseError, match="no JSON object"):
        parse_json_action("nothing here", SCHEMA)


def test_control_words():
    assert parse_control("All set.\nDONE") == Action("done")
    assert parse_control("**FAIL**") == Action("fail")
    assert parse_control("I think...\nANSWER: 10.31") == Action("answer", "10.31")
    assert parse_control("ANS 1+-i") == Action("answer", "1+-i")  # ScienceBoard's form
    assert parse_control("WAIT") == Action("wait")
    assert parse_control("DONE with the first part, now the rest") is None
    assert parse_control("nothing to see") is None
    assert parse_control("DONE\n...on reflection:\nANSWER: 4").content == "4"  # the last one wins
    with pytest.raises(ParseError, match="ANSWER needs the answer"):
        parse_control("ANSWER:")


def test_parser_order_and_messages():
    p = ActionParser(controls=("DONE", "FAIL"))
    assert p.parse("```bash\nls\n```").kind == "code"
    assert p.parse("```bash\nls\n```\nDONE").kind == "done"  # a reply that says DONE is done
    with pytest.raises(
        ParseError, match=r"no fenced code block.*Reply with a ```bash code block, or one of DONE"
    ):
        p.parse("let me think")
    with pytest.raises(ParseError, match="reply is empty"):
        p.parse("   ")
    # ANSWER is not accepted here: an ANSWER line is not taken as an action
    with pytest.raises(ParseError):
        p.parse("ANSWER: 3")
    j = ActionParser(accept_code=False, accept_json=True, json_schema=SCHEMA, controls=("DONE",))
    assert j.parse('{"tool": "click", "x": 1}').content["x"] == 1
    assert "a JSON object matching the schema" in j.formats()


def test_parser_config_errors():
    with pytest.raises(UserError, match="unknown"):
        ActionParser(controls=("STOP",))
    with pytest.raises(UserError, match="accept_json=True"):
        ActionParser(json_schema=SCHEMA)
    with pytest.raises(UserError, match="accepts nothing"):
        ActionParser(accept_code=False, controls=())


def test_fenced_blocks_match_the_fence_grammar_on_random_replies():
    import random
    import re

    grammar = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)  # the fence, as a regex
    rng = random.Random(0)
    pieces = ["```", "`", "\n", " ", "\t", "bash", "json", "x", "{}", "-", "é"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert fenced_blocks(text) == [(m.group(1), m.group(2)) for m in grammar.finditer(text)], text


def test_fenced_blocks_take_linear_time_on_a_reply_of_backticks():
    import time

    start = time.perf_counter()
    assert fenced_blocks("`" * 2_000_000) == [] and fenced_blocks("```a" * 500_000) == []
    assert time.perf_counter() - start < 10  # a regex retried at each backtick takes hours here
