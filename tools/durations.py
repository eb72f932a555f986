"""Refresh tests/durations.json (the ordering table of conftest.py) from the last run's record.

    python tools/durations.py [--from build/test-durations.json] [--min 0.5]

Run it after a full `make test`: it replaces the table with the record's items (those of at least
`--min` seconds; shorter ones rank as short anyway) and prints the longest items and the sum."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="src", type=Path, default=ROOT / "build" / "test-durations.json")
    ap.add_argument("--min", type=float, default=0.5)
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    rec = json.loads(a.src.read_text())
    table = {k: v for k, v in sorted(rec.items()) if v >= a.min}
    (ROOT / "tests" / "durations.json").write_text(json.dumps(table, indent=0) + "\n")
    for k, v in sorted(rec.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"{v:8.1f} s  {k}")
    print(f"{len(rec)} items, {sum(rec.values()):.0f} s in all (the sum over both workers); "
          f"{len(table)} kept in tests/durations.json")


if __name__ == "__main__":
    main()
