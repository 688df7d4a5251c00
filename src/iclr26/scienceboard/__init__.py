"""ScienceBoard (ICLR 2026): computer-using agents on real scientific desktop apps under Xvfb, with
ScienceBoard's task schema, state probes and verifiers (`iclr26 run scienceboard`).

- `predicates`: the task files' getter and predicate lambdas, run by a whitelisting interpreter
  instead of `eval`;
- `task`: the task schema, the loader for the authors' files (by path) and their mapping onto our
  apps, with the reason for each task that cannot run here;
- `probes`: app state without the authors' modified builds (KAlgebra's Variables panel over AT-SPI,
  PyMOL's XML-RPC, GRASS through `grass --exec`, Stellarium's RemoteControl API, pdflatex);
- `checks`: the task's checks (file, include, compile, db, info, var, val, select, stop/ANS);
- `gui_actions`: the agent's pyautogui blocks parsed into xdotool events (nothing is executed);
- `desktop`: Xvfb, a D-Bus session, the AT-SPI bus and openbox; apps with clean profiles; the
  linearised accessibility tree (read by `atspi_dump.py` under the system Python's pyatspi);
- `env`: one task as an `iclr26.agents` environment (fresh folders, set-up, the five observation
  modes, actions, checks); GRASS's shell runs in the agent sandbox;
- `control`: the OSWorld-style control endpoints on 127.0.0.1;
- `suite`: the 39 built-here tasks over five domains, with reference solutions;
- `prompting`, `config`, `system`: the model agent's prompt, the run's config and the run.
"""

from iclr26.core.system import system_attributes

__getattr__ = system_attributes(__name__)
