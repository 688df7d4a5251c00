"""The monitored service of the monitoring tasks (copied into each task's services/ as server.py,
with its mode and onset time written into the first lines; the copy is deleted once it runs).

It does steady background work (a SQLite table, a rotated log, a little CPU) and, from `FAULT_AT`
seconds after start, develops its anomaly. Nothing in its command line, output or files names the
mode, and before the onset every mode's files are the same (names and sizes: the table has `ROWS`
rows in every mode, not only where the anomaly scans it): an agent has to observe the process over
time (memory, files, descriptors, CPU, I/O, its logs).
`ICLR26_FAULT_AT` overrides the onset (the tests that measure the fixtures set it to 1).
"""

import os
import sqlite3
import threading
import time

MODE = "healthy"
FAULT_AT = 10.0
_MiB = 1024 * 1024
TICK_S = 0.1
ROWS = 200_000
"""Rows of the orders table in every mode (the inefficient_sql scan reads them all; the others look
rows up by key), so the database's size says nothing about the mode."""


def _log(path, line):
    """Append to a log, truncated past 64 KiB so that a healthy service's disk use stays flat."""
    if os.path.exists(path) and os.path.getsize(path) > 64 * 1024:
        open(path, "w").close()
    with open(path, "a") as f:
        f.write(time.strftime("%H:%M:%S ") + line + "\n")


def _open_db(path, rows):
    db = sqlite3.connect(path, check_same_thread=False)
    db.execute("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer TEXT, amount REAL)")
    if db.execute("SELECT count(*) FROM orders").fetchone()[0] == 0:
        db.executemany(
            "INSERT INTO orders (customer, amount) VALUES (?, ?)",
            ((f"customer-{i % 5000:05d}", (i * 37 % 1000) / 10.0) for i in range(rows)),
        )
        db.commit()
    return db


def _spin(stop):
    x = 0
    while not stop.is_set():
        x = (x * 1103515245 + 12345) % 2147483648


def main():
    fault_at = float(os.environ.get("ICLR26_FAULT_AT", FAULT_AT))
    for sub in ("log", "cache", "spool"):
        os.makedirs(os.path.join("var", sub), exist_ok=True)
    log = os.path.join("var", "log", "app.log")
    queries = os.path.join("var", "log", "queries.log")
    db = _open_db(os.path.join("var", "app.db"), ROWS)
    with open(os.path.join("var", "app.pid"), "w") as f:
        f.write(str(os.getpid()))
    started, tick, hoard, handles, stop = time.monotonic(), 0, [], [], threading.Event()
    spinner = None
    while True:
        tick += 1
        faulty = time.monotonic() - started >= fault_at
        if tick % 10 == 0:  # steady work: one indexed lookup and one log line a second
            row = db.execute("SELECT amount FROM orders WHERE id = ?", (tick % 20_000 + 1,)).fetchone()
            _log(log, f"served order {tick % 20_000 + 1} amount={row[0] if row else 0}")
        if faulty and MODE == "memory_leak" and len(hoard) < 400:
            hoard.append(bytearray(b"r" * _MiB))  # 10 MiB/s, never released
        elif faulty and MODE == "disk_leak" and tick < 10 * 300:
            with open(os.path.join("var", "cache", f"chunk-{tick:06d}.bin"), "wb") as f:
                f.write(os.urandom(_MiB))  # 10 MiB/s of files nobody deletes
        elif faulty and MODE == "handle_exhaustion":
            try:
                for _ in range(5):
                    handles.append(open(log))  # noqa: SIM115  (the leak: opened per request, never closed)
            except OSError as e:
                _log(log, f"error: {e}")
        elif faulty and MODE == "cpu_spike" and spinner is None:
            spinner = threading.Thread(target=_spin, args=(stop,), daemon=True)
            spinner.start()
        elif faulty and MODE == "io_bottleneck":
            path = os.path.join("var", "spool", "buffer.dat")
            with open(path, "wb") as f:  # rewrite and sync the same 4 MiB: heavy I/O, flat disk use
                f.write(os.urandom(4 * _MiB))
                f.flush()
                os.fsync(f.fileno())
            with open(path, "rb") as f:
                f.read()
        elif faulty and MODE == "inefficient_sql":
            t0 = time.perf_counter()
            customer = f"customer-{tick % 5000:05d}"
            db.execute("SELECT sum(amount) FROM orders WHERE customer = ?", (customer,)).fetchone()
            ms = 1e3 * (time.perf_counter() - t0)
            _log(queries, f"{ms:.1f} ms SELECT sum(amount) FROM orders WHERE customer = '{customer}'")
            continue  # back to back: the scans are the load
        time.sleep(TICK_S)


if __name__ == "__main__":
    main()
