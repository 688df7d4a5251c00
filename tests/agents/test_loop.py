"""The step loop, budgets, episodes and the oracle/null suite check, on real sandboxed shell tasks
(and the real SmolLM2 as an LLM agent)."""

import json
import time

import pytest

from iclr26.agents import (
    NULL,
    ORACLE,
    AgentReply,
    Budget,
    LLMAgent,
    ModelCall,
    NullAgent,
    Observation,
    OracleAgent,
    StepOutcome,
    check_suite,
    read_episodes,
    render_html,
    run_episode,
    run_suite,
    suite_rows,
    write_episodes,
)
from iclr26.agents.actions import ActionParser, InvalidAction
from iclr26.agents.shell import SHELL_PARSER, ShellEnvironment, ShellTask
from iclr26.core.errors import UserError
from iclr26.core.ledger import read_cells

TASKS = {
    t.task_id: t
    for t in [
        ShellTask(
            "make-file",
            "Create hello.txt containing the word hello.",
            "grep -qx hello hello.txt",
            "echo hello > hello.txt",
        ),
        ShellTask(
            "sum-column",
            "Write the sum of the numbers in data.csv's second column to total.txt.",
            'test "$(cat total.txt)" = 60',
            "awk -F, '{s += $2} END {print s}' data.csv > total.txt",
            files={"data.csv": "a,10\nb,20\nc,30\n"},
        ),
        ShellTask(
            "fix-script",
            "run.sh fails; fix it so that `bash run.sh` prints ok.",
            'test "$(bash run.sh)" = ok',
            "printf 'echo ok\\n' > run.sh",
            files={"run.sh": "ech ok\n"},
        ),
    ]
}


class Scripted:
    """A scripted test agent (not a model): replies from a fixed list, then repeats the last."""

    def __init__(self, replies, tokens=0, delay=0.0):
        self.name, self.replies, self.tokens, self.delay = "scripted test agent", list(replies), tokens, delay

    def reset(self, task_id, instruction):
        self.seen = []

    def act(self, observation):
        self.seen.append(observation.text)
        time.sleep(self.delay)
        text = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return AgentReply(text, ModelCall(self.tokens, self.tokens, self.delay))


class Counter:
    """A tiny in-memory environment: `inc` actions count up; solved at 3."""

    def __init__(self, invalid_at=None):
        self.n, self.closed, self.invalid_at = 0, False, invalid_at

    def reset(self):
        return "count to 3 with ```bash\ninc\n```"

    def step(self, action):
        if action.content == "boom":
            raise InvalidAction("cannot boom here")
        self.n += 1
        return StepOutcome(f"n={self.n}", done=self.n >= 5, info={"n": self.n})

    def evaluate(self, answer):
        return self.n == 3

    def close(self):
        self.closed = True


INC = "```bash\ninc\n```"


@pytest.mark.parametrize(
    ("budget", "agent", "reason"),
    [
        (Budget(max_steps=2), Scripted([INC]), "max_steps"),
        (Budget(max_tokens=50), Scripted([INC], tokens=20), "max_tokens"),
        (Budget(max_wall_s=0.3), Scripted([INC], delay=0.12), "max_wall_time"),
        (Budget(), Scripted([INC]), "env_done"),
        (Budget(), Scripted([INC, INC, INC, "DONE"]), "done"),
        (Budget(), Scripted(["FAIL"]), "fail"),
        (Budget(), Scripted(["ANSWER: 42"]), "answer"),
    ],
)
def test_each_stop_reason(budget, agent, reason):
    env = Counter()
    ep = run_episode("count", env, agent, SHELL_PARSER if reason != "answer" else ActionParser(), budget)
    assert ep.stop_reason == reason and env.closed
    if reason == "max_steps":
        assert len(ep.steps) == 2
    if reason == "max_tokens":
        assert len(ep.steps) == 2 and env.n == 1  # the reply that crossed the budget was not run
    if reason == "max_wall_time":
        assert 2 <= len(ep.steps) <= 3
    if reason == "done":
        assert ep.success and ep.score == 1.0
    if reason == "answer":
        assert ep.answer == "42"


class Stopped(Counter):
    """A Counter that records how the episode ended (the optional `stopped` hook)."""

    def stopped(self, reason):
        self.reason = reason

    def evaluate(self, answer):
        return self.reason == "fail"  # a task whose right ending is FAIL


@pytest.mark.parametrize(("replies", "success"), [(["FAIL"], True), (["DONE"], False), ([INC], False)])
def test_an_environment_can_score_how_the_episode_ended(replies, success):
    env = Stopped()
    ep = run_episode("infeasible", env, Scripted(replies), SHELL_PARSER, Budget(max_steps=2))
    assert env.reason == ep.stop_reason and ep.success is success


def test_parse_failures_and_invalid_actions_become_observations():
    agent = Scripted(["let me think about it", "```bash\nboom\n```", INC, INC, INC, "DONE"])
    ep = run_episode("count", Counter(), agent, SHELL_PARSER)
    assert ep.success and ep.stop_reason == "done" and len(ep.steps) == 6
    assert "could not be read as an action: no fenced code block" in agent.seen[1]
    assert ep.steps[0].parse_error and ep.steps[0].action is None
    assert "could not be carried out: cannot boom here" in agent.seen[2]
    assert ep.steps[1].info == {"invalid_action": "cannot boom here"}


def test_budget_validation():
    with pytest.raises(UserError, match="max_steps"):
        Budget(max_steps=0)
    with pytest.raises(UserError, match="max_wall_s"):
        Budget(max_wall_s=-1)


@pytest.mark.debian("bubblewrap")
def test_oracle_passes_every_shell_task_and_null_none(tmp_path):
    make = lambda t: ShellEnvironment(TASKS[t])  # noqa: E731
    oracle = run_suite(
        list(TASKS), make, OracleAgent({t: TASKS[t].oracle_replies() for t in TASKS}), SHELL_PARSER
    )
    null = run_suite(list(TASKS), make, NullAgent(), SHELL_PARSER)
    check = check_suite(oracle, null)
    assert check.valid and check.describe().startswith("valid: the oracle passes 3/3")
    rows = suite_rows({ORACLE: oracle, NULL: null})
    assert rows[0][:4] == [ORACLE, 3, 3, 1.0] and rows[1][:4] == [NULL, 0, 3, 0.0]
    assert all(e.steps[0].info["exit_code"] == 0 for e in oracle)


@pytest.mark.debian("bubblewrap")
def test_a_broken_task_makes_the_suite_invalid():
    trivial = ShellTask("trivial", "Do anything.", "true", "true")
    impossible = ShellTask("impossible", "Make 1 equal 2.", "test 1 = 2", "echo no")
    tasks = {t.task_id: t for t in (trivial, impossible)}
    make = lambda t: ShellEnvironment(tasks[t])  # noqa: E731
    oracle = run_suite(
        list(tasks), make, OracleAgent({t: tasks[t].oracle_replies() for t in tasks}), SHELL_PARSER
    )
    null = run_suite(list(tasks), make, NullAgent(), SHELL_PARSER)
    check = check_suite(oracle, null)
    assert not check.valid
    assert (
        check.describe() == "INVALID task suite: the oracle fails impossible; the null agent passes trivial"
    )
    with pytest.raises(UserError, match="INVALID"):
        check.raise_if_invalid()


@pytest.mark.debian("bubblewrap")
def test_suite_resumes_from_the_study_ledger_and_writes_the_viewers_file(tmp_path):
    path = tmp_path / "episodes.jsonl"
    make = lambda t: ShellEnvironment(TASKS[t])  # noqa: E731
    oracle = OracleAgent({t: TASKS[t].oracle_replies() for t in TASKS})
    first = run_suite(["make-file"], make, oracle, SHELL_PARSER, episodes_file=path)
    cells = read_cells(tmp_path / "cells.jsonl")
    assert list(cells) == [(ORACLE, "make-file")] and cells[(ORACLE, "make-file")].metrics["success"] == 1
    path.unlink()  # the viewer's file is not the ledger: the resume comes from cells.jsonl
    calls = []
    counting = lambda t: calls.append(t) or make(t)  # noqa: E731
    again = run_suite(list(TASKS), counting, oracle, SHELL_PARSER, episodes_file=path)
    assert calls == ["sum-column", "fix-script"] and again[0].wall_s == first[0].wall_s
    assert [e.task_id for e in read_episodes(path)] == list(TASKS)  # every episode, in the viewer's format
    assert [
        e.task_id for e in run_suite(list(TASKS), counting, oracle, SHELL_PARSER, episodes_file=path)
    ] == list(TASKS)
    assert len(calls) == 2 and len(read_episodes(path)) == 3  # nothing rerun, nothing written twice
    null = run_suite(["make-file"], make, NullAgent(), SHELL_PARSER, episodes_file=path)  # another arm
    assert not null[0].success and len(read_cells(tmp_path / "cells.jsonl")) == 4


def test_episodes_round_trip_and_a_torn_last_line(tmp_path):
    ep = run_episode("count", Counter(), Scripted(["oops", INC, INC, INC, "DONE"], tokens=3), SHELL_PARSER)
    path = write_episodes(tmp_path / "e.jsonl", [ep, ep])
    with path.open("a") as f:
        f.write('{"task_id": "half')  # a crash mid-write
    back = read_episodes(path)
    assert len(back) == 2 and back[0].to_json() == ep.to_json()
    assert (
        back[0].prompt_tokens == 15
        and json.loads(path.read_text().splitlines()[0])["completion_tokens"] == 15
    )


def test_html_viewer_shows_every_step_escaped():
    ep = run_episode("count", Counter(), Scripted(["<script>alert(1)</script>", INC, "DONE"]), SHELL_PARSER)
    page = render_html([ep], "demo <run>")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<details") == 3 and "parse error" in page and "demo &lt;run&gt;" in page


@pytest.mark.llm
@pytest.mark.debian("bubblewrap")
def test_llm_agent_on_a_shell_task_records_real_model_calls(smollm2):
    agent = LLMAgent(smollm2, "You operate a Linux shell to solve tasks.", SHELL_PARSER, max_tokens=48)
    ep = run_episode(
        "make-file", ShellEnvironment(TASKS["make-file"]), agent, SHELL_PARSER, Budget(max_steps=3)
    )
    assert 1 <= len(ep.steps) <= 3 and ep.stop_reason in ("max_steps", "done", "fail")
    assert all(s.model_call.prompt_tokens > 20 and s.model_call.completion_tokens > 0 for s in ep.steps)
    # the conversation grows: each step's prompt holds the earlier turns
    prompts = [s.model_call.prompt_tokens for s in ep.steps]
    assert prompts == sorted(prompts)
    assert "```bash" in agent.system_prompt and agent.messages(Observation("x"))[0]["role"] == "system"


@pytest.mark.llm
@pytest.mark.debian("bubblewrap")
def test_a_prefilled_fence_keeps_smollm2_in_the_action_format(smollm2):
    agent = LLMAgent(
        smollm2,
        "You operate a Linux shell.",
        SHELL_PARSER,
        max_tokens=32,
        reply_prefix="```bash\n",
        stop=("```",),
    )
    agent.reset("make-file", "")
    reply = agent.act(Observation("Create a file named hello.txt."))
    assert reply.text.startswith("```bash\n") and reply.text.endswith("```") and reply.text.count("```") == 2
    assert SHELL_PARSER.parse(reply.text).kind == "code"
    assert reply.call.completion_tokens > 0
