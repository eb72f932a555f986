# SPDX-License-Identifier: Apache-2.0
"""Build libatstx and its programs (sw/host/c) once for the host tests: pytest-xdist workers take
build/host/c/.build.lock in turn. Skips the calling test when no C compiler is installed."""
from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "build" / "host" / "c"


def build_libatstx() -> Path:
    """Run sw/host/c's make under the lock; return the output directory."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler (cc/gcc): libatstx cannot be built")
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / ".build.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-j1", "-C", str(ROOT / "sw/host/c")], check=True)
    return OUT
