# SPDX-License-Identifier: Apache-2.0
"""The nbdkit plugin's device thread (sw/host/atomssd/nbd_plugin.py) when the simulator dies while a
request's command is being submitted: the request must fail (nbdkit answers EIO), not wait for ever.
A request lost there once left an NBD flush unanswered, so the kernel's flush through nbdfuse and
the attach test's lazy unmount after its power cut (tests/attach) hung."""
from __future__ import annotations

import queue
import sys
import threading
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.modules.setdefault("nbdkit", types.SimpleNamespace(debug=lambda *a: None, THREAD_MODEL_PARALLEL=3))
from atomssd import nbd_plugin  # noqa: E402


class _DeadOnSubmit(nbd_plugin.Device):
    """A Device whose simulator is gone: the first submission breaks the pipe (no simulator is run)."""

    def __init__(self):                              # noqa: D107 - only the fields the thread uses
        self.q = queue.SimpleQueue()
        self.dead = None
        self.inflight = 4
        self.submits = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _submit(self, op):
        self.submits += 1
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("ops", [[("flush",)], [("read", 0, 1)], [("flush",), ("read", 8, 2)]])
def test_request_fails_when_the_device_dies_in_submission(ops):
    dev = _DeadOnSubmit()
    res: dict = {}

    def call():
        try:
            dev.do(ops)
            res["ok"] = True
        except RuntimeError as e:
            res["err"] = str(e)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(timeout=10)
    assert not t.is_alive(), "the request waits for ever after the device died"
    assert "device is gone" in res.get("err", ""), res
    assert dev.submits == 1
    # every later request fails at once, too
    with pytest.raises(RuntimeError, match="device is gone"):
        dev.do([("flush",)])
