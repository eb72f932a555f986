"""Workloads of the SSD benchmarks, as host threads (cocotb coroutines) on `host.Host`.

B2 `order(bench, cfg)`: 4 KiB random writes in one of four modes (Barrier-enabled IO stack, ACM ToS
2018, section 6.1 / Fig. 11):
- orderless: plain writes (SIMPLE, no flags), up to `qd` outstanding (one submitting thread with an
  async queue, like fio libaio iodepth=qd).
- barrier: every write BARRIER + ORDERED, dispatched back to back (same submitting thread and qd as
  orderless: the host does not wait; the device keeps the order).
- wait_on_transfer: queue depth 1; the next write is issued after the previous one completed
  (for ats_wbuf a WRITE completes when its data is in the buffer, i.e. after the DMA transfer).
- transfer_and_flush: write, wait, FLUSH, wait; then the next write.
IOPS from simulated time over a steady-state window (after `warmup` writes completed, until the
last completion); mean queue depth = time average of the command queue occupancy (ats_cmdq
`occupancy`: entries queued or in service) over the same window; also the host's outstanding
commands (accepted, completion not yet seen).

B3 `rflush(bench, cfg)`: RFLUSH, FAST'18 section 5 micro-benchmark, scaled down: one syncing writer
(own file) and 12 bulk writers (4 files, 3 writers each), all 4 KiB random writes, one write
outstanding per thread (direct synchronous I/O). After every `period_pages` pages the syncing
writer syncs: FLUSH, RFLUSH of its file's LBA range, or nothing (NOFLUSH: the device ignores syncs,
so the host only pays the request round trip).
"""
from __future__ import annotations

import cocotb
from cocotb.triggers import Event, RisingEdge

from atstb.wbuf_model import decode_page
from host import BARRIER, FLUSH, OK, ORDERED, RFLUSH, SIMPLE, WRITE, Cmd, OccupancySampler, percentile

ORDER_MODES = ["orderless", "barrier", "wait_on_transfer", "transfer_and_flush"]
SYNC_MODES = ["flush", "rflush", "noflush"]


def _check(c: Cmd, what: str):
    assert c.status == OK, f"{what}: tag {c.tag} op {c.op} lba {c.lba} status {c.status:#x}"


async def order(b, cfg: dict) -> dict:
    host = b.host
    mode = cfg["mode"]
    n = int(cfg["n_ops"])
    warm = int(cfg.get("warmup", 0))
    qd = int(cfg.get("qd", 32))
    lba_space = int(cfg.get("lba_space", b.num_lbas))
    rng = b.rng
    if mode not in ORDER_MODES:
        raise ValueError(f"mode {mode}")
    done_cycles: list[int] = []
    lat: list[int] = []
    occ = OccupancySampler(b.dut, every=16)
    t_start = host.cycle
    marks = {}

    def completed(c: Cmd):
        _check(c, mode)
        done_cycles.append(c.t_done)
        lat.append(c.t_done - c.t_submit)
        if len(done_cycles) == warm:
            marks["t0"] = host.cycle
            occ.start()

    if warm == 0:
        marks["t0"] = host.cycle
        occ.start()
    if mode in ("orderless", "barrier"):
        flags, attr = (BARRIER, ORDERED) if mode == "barrier" else (0, SIMPLE)
        inflight = [0]
        slot = Event()

        async def reap(c: Cmd):
            await host.wait(c)
            completed(c)
            inflight[0] -= 1
            slot.set()

        for _ in range(n):
            while inflight[0] >= qd:
                slot.clear()
                await slot.wait()
            c = Cmd(WRITE, lba=rng.randrange(lba_space), flags=flags, attr=attr)
            await host.issue(c)
            inflight[0] += 1
            cocotb.start_soon(reap(c))
        while inflight[0]:
            slot.clear()
            await slot.wait()
    else:
        for _ in range(n):
            c = await host.submit(Cmd(WRITE, lba=rng.randrange(lba_space)))
            if mode == "transfer_and_flush":
                f = await host.submit(Cmd(FLUSH))
                _check(f, "FLUSH")
                c.t_done = f.t_done          # the ordered write is done when its flush returns
            completed(c)
    occ.stop()
    t0, t1 = marks["t0"], max(done_cycles)
    secs = (t1 - t0) * b.clk_ns * 1e-9
    iops = (n - warm) / secs
    all_secs = (t1 - t_start) * b.clk_ns * 1e-9
    return {"workload": "order", "mode": mode, "n_ops": n, "warmup": warm, "qd": qd,
            "iops": iops, "iops_whole_run": n / all_secs, "sim_us": (t1 - t_start) * b.clk_ns / 1000,
            "window_us": secs * 1e6, "mean_qd": occ.mean, "max_qd": occ.max,
            "mean_outstanding": host.mean_outstanding(t0, t1),
            "lat_mean_us": host.us(sum(lat) / len(lat)), "lat_p99_us": host.us(percentile(lat, 99)),
            "counters": b.counters()}


def check_durable(b, must: dict[int, int], what: str) -> None:
    """After a sync returned: each LBA in `must` is durable in the media with that version or newer."""
    bad = 0
    for lba, ver in must.items():
        words = b.media.mapping.get(lba)
        got = decode_page(words) if words else None
        if got is None or got[0] != lba or got[1] < ver:
            bad += 1
            if bad <= 3:
                b.host.errors.append(f"{what}: LBA {lba} durable {got} after the sync, needs version >= {ver}")
    assert not bad, f"{what}: {bad} LBAs not durable after the sync returned: {b.host.errors[-3:]}"


async def rflush(b, cfg: dict) -> dict:
    host = b.host
    mode = cfg["mode"]
    if mode not in SYNC_MODES:
        raise ValueError(f"mode {mode}")
    rng = b.rng
    period = int(cfg["period_pages"])
    n_sync = int(cfg["n_sync_writes"])
    sync_pages = int(cfg.get("sync_file_pages", 64))
    bulk_pages = int(cfg.get("bulk_file_pages", 64))
    n_bulk = int(cfg.get("bulk_writers", 12))
    n_files = int(cfg.get("bulk_files", 4))
    warm = int(cfg.get("warmup_pages", 2 * b.num_slots))
    assert sync_pages + n_files * bulk_pages <= b.num_lbas, "files do not fit the device"
    bulk_base = [sync_pages + k * bulk_pages for k in range(n_files)]
    stop = [False]
    done_ver: dict[int, int] = {}      # lba -> newest version whose WRITE completed (host saw it)
    dur_checked = [0]
    bulk_done: list[int] = []          # completion cycle of every bulk write
    bulk_live = [0]
    warm_ev = Event()

    async def bulk_writer(i: int):
        base = bulk_base[i * n_files // n_bulk]
        bulk_live[0] += 1
        while not stop[0]:
            c = await host.submit(Cmd(WRITE, lba=base + rng.randrange(bulk_pages)))
            _check(c, f"bulk writer {i}")
            done_ver[c.lba] = max(done_ver.get(c.lba, 0), c.version)
            bulk_done.append(c.t_done)
            if len(bulk_done) >= warm:
                warm_ev.set()
        bulk_live[0] -= 1

    for i in range(n_bulk):
        cocotb.start_soon(bulk_writer(i))
    if warm:
        await warm_ev.wait()
    b.dut._log.info(f"warm-up done at cycle {host.cycle}: {len(bulk_done)} bulk writes, "
                    f"dirty {int(b.dut.dirty_pages.value)}")
    t0 = host.cycle
    nand0 = b.media.stats.bytes_programmed
    c0 = b.counters()
    n_bulk0 = len(bulk_done)
    op_lat: list[int] = []       # syncing writer: write latency, + the sync it triggers
    wr_lat: list[int] = []
    sync_lat: list[int] = []
    # at every sync's completion: (cycle - t0, syncing-writer writes, host pages, coalesced, NAND bytes)
    marks: list[tuple[int, int, int, int, int]] = []
    # run length: n_sync syncing-writer writes, or fewer when the window passes max_window_us
    # (simulated time; at least min_syncs syncs): FLUSH at short periods is slow to simulate
    max_cyc = int(float(cfg.get("max_window_us", 0)) * 1000 / b.clk_ns)
    min_syncs = int(cfg.get("min_syncs", 0))
    for i in range(n_sync):
        if max_cyc and host.cycle - t0 > max_cyc and len(sync_lat) >= min_syncs and (i % period) == 0:
            break
        c = await host.submit(Cmd(WRITE, lba=rng.randrange(sync_pages)))
        _check(c, "syncing writer")
        done_ver[c.lba] = max(done_ver.get(c.lba, 0), c.version)
        lat = c.t_done - c.t_submit
        wr_lat.append(lat)
        if (i + 1) % period == 0:
            t = host.cycle
            if mode == "flush":         # INV-DUR: every write completed before it
                must = dict(done_ver)
                _check(await host.submit(Cmd(FLUSH)), "FLUSH")
            elif mode == "rflush":      # INV-DUR: the completed writes in its range
                must = {k: v for k, v in done_ver.items() if k < sync_pages}
                _check(await host.submit(Cmd(RFLUSH, ranges=[(0, sync_pages - 1)])), "RFLUSH")
            else:   # the device ignores the sync: only the host round trip
                must = {}
                await host.host_delay(host.cfg.t_submit_us + host.cfg.t_complete_us)
            sync_lat.append(host.cycle - t)
            ck = b.counters()
            marks.append((host.cycle - t0, i + 1, ck["host_pages"] - c0["host_pages"],
                          ck["coalesced"] - c0["coalesced"], b.media.stats.bytes_programmed - nand0))
            b.dut._log.info(f"{mode} period {period}: write {i + 1}/{n_sync}, sync {host.us(host.cycle - t):.0f} us, "
                            f"dirty {int(b.dut.dirty_pages.value)}, bulk writes {len(bulk_done)}")
            check_durable(b, must, mode)
            dur_checked[0] += len(must)
            lat += host.cycle - t
        op_lat.append(lat)
    n_sync = len(op_lat)
    t1 = host.cycle
    nand1 = b.media.stats.bytes_programmed
    c1 = b.counters()
    n_bulk1 = sum(1 for t in bulk_done if t0 <= t <= t1)
    stop[0] = True
    while bulk_live[0]:
        await RisingEdge(b.dut.clk)
    secs = (t1 - t0) * b.clk_ns * 1e-9
    host_pages = c1["host_pages"] - c0["host_pages"]
    nand = nand1 - nand0
    # second half of the window, from mark n // 2 to the last of n marks: the last (n - 1) // 2 syncs
    # (3 of 8, 3 of 7, 4 of 9; the FLUSH and RFLUSH tails span different times). The warm buffer's
    # drain by the first FLUSHes is behind it. Eventual NAND per host byte = 1 - coalesced / host pages: every
    # host page is programmed once unless a later write coalesces it, whatever the buffer holds at
    # the window's ends (the window's NAND bytes also count pages that were dirty before it)
    tail = {}
    if len(marks) >= 3:
        m0, m1 = marks[len(marks) // 2], marks[-1]
        dh = m1[2] - m0[2]
        tail = {"tail_syncs": len(marks) - 1 - len(marks) // 2, "tail_window_us": host.us(m1[0] - m0[0]),
                "tail_sync_iops": (m1[1] - m0[1]) / ((m1[0] - m0[0]) * b.clk_ns * 1e-9),
                "tail_nand_per_host": (m1[4] - m0[4]) / (dh * b.page_bytes) if dh else 0.0,
                "tail_eventual_nand_per_host": 1 - (m1[3] - m0[3]) / dh if dh else 0.0}
    return {**tail, "workload": "rflush", "mode": mode, "period_pages": period,
            "period_kib": period * b.page_bytes // 1024, "n_sync_writes": n_sync,
            "window_us": secs * 1e6, "sync_iops": n_sync / secs,
            "sync_p99_us": host.us(percentile(op_lat, 99)), "sync_p999_us": host.us(percentile(op_lat, 99.9)),
            "sync_mean_us": host.us(sum(op_lat) / len(op_lat)),
            "write_p99_us": host.us(percentile(wr_lat, 99)),
            "fsync_mean_us": host.us(sum(sync_lat) / len(sync_lat)) if sync_lat else 0.0,
            "fsync_p99_us": host.us(percentile(sync_lat, 99)) if sync_lat else 0.0,
            "n_syncs": len(sync_lat),
            "bulk_iops": n_bulk1 / secs, "bulk_mib_s": n_bulk1 * b.page_bytes / secs / 2**20,
            "nand_bytes": nand, "host_bytes": host_pages * b.page_bytes,
            "nand_per_host": nand / (host_pages * b.page_bytes) if host_pages else 0.0,
            "coalesced": c1["coalesced"] - c0["coalesced"], "host_pages": host_pages,
            "eventual_nand_per_host": 1 - (c1["coalesced"] - c0["coalesced"]) / host_pages if host_pages else 0.0,
            "fsync_us": [host.us(x) for x in sync_lat],
            "sync_marks": [[host.us(m[0]), m[1], m[2], m[3], m[4]] for m in marks],
            "durability_checked": dur_checked[0],
            "layout": {"sync_file": [0, sync_pages], "bulk_files": [[x, bulk_pages] for x in bulk_base],
                       "bulk_writers": n_bulk, "warmup_pages": warm}}
