"""Print the accessibility tree of every application on the AT-SPI bus as JSON lines.

Run with the system Python, which has Debian's `python3-pyatspi` (the project's virtual environment
does not): `/usr/bin/python3 atspi_dump.py --max-depth 50 --max-nodes 5000`. Each line is one node:
its depth, role, name, text, description, states and, when it has one, its screen box. This file
imports nothing from iclr26, so it runs on its own.
"""

import argparse
import json
import sys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-depth", type=int, default=50)
    ap.add_argument("--max-nodes", type=int, default=5000)
    args = ap.parse_args()
    import pyatspi

    desktop = pyatspi.Registry.getDesktop(0)
    count = 0

    def text_of(node):
        try:
            t = node.queryText()
            return t.getText(0, min(t.characterCount, 500))
        except Exception:  # no Text interface
            return ""

    def box_of(node):
        try:
            e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            return [e.x, e.y, e.width, e.height]
        except Exception:  # no Component interface
            return None

    def walk(node, depth, app):
        nonlocal count
        if depth > args.max_depth or count >= args.max_nodes:
            return
        try:
            states = node.getState()
            names = [pyatspi.stateToString(s) for s in states.getStates()]
            row = {
                "app": app,
                "depth": depth,
                "role": node.getRoleName(),
                "name": node.name or "",
                "description": node.description or "",
                "text": text_of(node),
                "states": names,
                "box": box_of(node),
            }
        except Exception:  # a node that went away while we walked
            return
        count += 1
        sys.stdout.write(json.dumps(row) + "\n")
        for i in range(node.childCount):
            try:
                child = node.getChildAtIndex(i)
            except Exception:
                continue
            if child is not None:
                walk(child, depth + 1, app)

    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None:
            walk(app, 0, app.name or "")


if __name__ == "__main__":
    main()
