"""ScienceBoard (ICLR 2026): computer-using agents on real scientific desktop apps under Xvfb, with
ScienceBoard's task schema, state probes and verifiers (issue 29; in progress).

- `predicates`: the task files' getter and predicate lambdas, run by a whitelisting interpreter
  instead of `eval`.
"""

from iclr26.core.system import system_attributes

__getattr__ = system_attributes(__name__)
