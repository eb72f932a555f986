# SPDX-License-Identifier: Apache-2.0
"""Cycle-exact output trace for refactoring checks (a block split must not change a single cycle).

`trace_outputs(dut, clk, names, tag)` does nothing unless ATS_TRACE names a file: then, at every
rising edge of `clk`, it samples the listed top-level signals (names the top does not have are
skipped) and appends a line `<edge> <values>` to that file whenever any value changed since the
previous edge; each call starts a section `# start <tag> <names>`. Two runs of one seeded test on
two versions of the RTL give the same file exactly when those outputs are the same at every edge:
`cmp` the files."""
from __future__ import annotations

import atexit
import os

from atstb.streams import every_edge


def trace_outputs(dut, clk, names: list[str], tag: str = "") -> None:
    path = os.environ.get("ATS_TRACE")
    if not path:
        return
    hs = [(n, getattr(dut, n)) for n in names if hasattr(dut, n)]
    f = open(path, "a", buffering=1 << 16)
    atexit.register(f.close)
    f.write(f"# start {tag} {' '.join(n for n, _ in hs)}\n")
    st = {"edge": 0, "prev": None}

    def sample() -> None:
        st["edge"] += 1
        v = " ".join(str(h.value) for _, h in hs)
        if v != st["prev"]:
            f.write(f"{st['edge']} {v}\n")
            st["prev"] = v

    every_edge(clk, sample)


# the ports of ats_sata (and of the test tops that show them) a trace compares
SATA_OUTPUTS = ["phy_tx_data", "phy_tx_charisk",
                "m_cmd_valid", "m_cmd_op", "m_cmd_tag", "m_cmd_lba", "m_cmd_nlb", "m_cmd_txid",
                "m_cmd_flags", "m_cmd_attr", "m_cmd_prio", "m_cmd_dptr", "m_cmd_aux",
                "s_cpl_ready", "s_hrd_ready", "m_hrd_valid", "m_hrd_data", "m_hrd_last", "s_hwr_ready",
                "busy", "cnt_rx_drop", "cnt_retry", "cnt_proto",
                "sata_busy", "sata_cnt_rx_drop", "sata_cnt_retry", "sata_cnt_proto",
                "cmd_source_valid", "cmd_source_data", "cmd_source_end", "cmd_source_failed"]
