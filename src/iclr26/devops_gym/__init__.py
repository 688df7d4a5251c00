"""DevOps-Gym (ICLR 2026, arXiv 2601.20882): a Terminal-Bench-compatible harness, a built-here Java
and Go task suite over build, monitoring, issue resolving, test generation and end-to-end, and
agents (a mini-SWE-agent-style shell agent over `core.llm`, oracle, null and a constant-label floor).

- `task`: Terminal-Bench v1 task folders (`task.yaml`, `run-tests.sh`, `solution.sh`, `tests/`);
- `parser`: pytest's summary -> per-test status;
- `runner`: the local runner (a sandbox and a tmux terminal per task; tests copied in afterwards);
- `docker`: the Docker runner for the public tasks, where an engine exists;
- `toolchains`: offline Maven and Go inside the sandbox;
- `suite`: the built-here tasks; `agent`: the agents (and the constant-label floor); `evaluate`: one
  agent on one task, and the table; `system`: the run as a `core.study.Study`.
"""

from iclr26.core.system import system_attributes

__getattr__ = system_attributes(__name__)
