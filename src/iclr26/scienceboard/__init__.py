"""ScienceBoard (ICLR 2026): computer-using agents on real scientific desktop apps under Xvfb, with
ScienceBoard's task schema, state probes and verifiers (issue 29; in progress).

- `predicates`: the task files' getter and predicate lambdas, run by a whitelisting interpreter
  instead of `eval`;
- `task`: the task schema, the loader for the authors' files (by path) and their mapping onto our
  apps, with the reason for each task that cannot run here.
"""

from iclr26.core.system import system_attributes

__getattr__ = system_attributes(__name__)
