"""Test ordering for `make test` (pytest-xdist, 2 workers): longest-processing-time-first scheduling.

Items are sorted by their measured wall time, longest first (tests/durations.json: pytest node id ->
seconds of setup + call + teardown, measured on a `make test` run), and `make test` hands them out
one at a time (`--maxschedchunk 1`), so that no long item starts last and runs alone at the end.
An item missing from the table (a new test) ranks by the table's entry of its file or, failing
that, as a short item; the order among equals stays pytest's own.

Every run records its own durations in build/test-durations.json (the controller's view, xdist or
not); `python tools/durations.py` copies them into tests/durations.json after a full `make test`."""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TABLE = ROOT / "tests" / "durations.json"
RECORD = ROOT / "build" / "test-durations.json"
_seen: dict[str, float] = {}


def _table() -> dict[str, float]:
    try:
        return json.loads(TABLE.read_text())
    except (OSError, ValueError):
        return {}


def pytest_collection_modifyitems(config, items):
    table = _table()
    per_file: dict[str, float] = {}
    for nodeid, s in table.items():
        f = nodeid.split("::")[0]
        per_file[f] = max(per_file.get(f, 0.0), s)

    def weight(item) -> float:
        if item.nodeid in table:
            return table[item.nodeid]
        return per_file.get(item.nodeid.split("::")[0], 1.0)
    items.sort(key=lambda it: -weight(it))


def pytest_runtest_logreport(report):
    _seen[report.nodeid] = _seen.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput") or not _seen:   # an xdist worker: the controller records
        return
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps({k: round(v, 2) for k, v in sorted(_seen.items())}, indent=0) + "\n")
