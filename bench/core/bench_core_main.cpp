// SPDX-License-Identifier: Apache-2.0
// bench_core_main: Verilator C++ main of `make bench-core` (ats_core_bench_top: the whole device core
// ats_ssd_core with NAND die models). It models
//   - the host: a submission queue of descriptors (docs/architecture.md section 1) with up to
//     +qd= tags outstanding, completions (section 2), host costs (+t_submit_ns, +t_complete_ns:
//     serial submission / completion handling, as bench/ssd's host), and host memory for the
//     write buffer's DMA ports (m_hrd / s_hrd: WRITE data; m_hwr: READ data; section 9);
//   - the firmware's block supply: blk_need[d] answered on s_free with the next block of die d's
//     allocation plan (docs/persistence.md section 5; the dies start erased and block 0 of die 0,
//     the checkpoint block, is left out of the plan); grown bad blocks (m_bad) fail the run;
// and runs workload phases, timing them in simulated time (125 MHz: 8 ns per cycle, ps).
//
// Data: every WRITE carries a fresh random page (words from a 64-bit seed); the host records, in
// acceptance order on s_cmd, the seed each LBA must hold. Every READ's page, DMAed to host memory,
// is compared word by word with the LBA's expected page at the read's acceptance (zeros for an LBA
// never written). Every completion must be OK, for a tag outstanding, exactly once. After the
// workload a FLUSH, read-backs (buffer hits and misses), and a scan of every die's store (the page
// with the highest spare `seq` of each LPN must hold its last data: everything is durable).
// Any mismatch, non-OK status, die protocol violation, protocol/error counter of the core, grown bad
// block or hang prints "BENCH FAILED: ..." and exits with status 2.
//
// Plusargs:
//   +run=rw|barrier|smoke|tx|b1  rw: random writes (orderless), FLUSH, random reads (NAND misses);
//                             barrier: the same write stream with BARRIER + ORDERED on every write;
//                             smoke: a short rw; tx: 8 transactions of +tx_pages WRITEs with a txid
//                             and a TX_COMMIT each (the pages count as written when the commit completes);
//                             b1: benchmark B1 through the core: for each N of +b1_sizes, +b1_reps times:
//                             N tx WRITEs (distinct LBAs, one page each), FLUSH (the pages are durable:
//                             checked), device idle, then TX_COMMIT alone, timed from its acceptance on
//                             s_cmd to its completion on m_cpl, with the remap engine's COMMIT (request
//                             accepted -> response) and the other handshakes on the way; then the same
//                             with the COMMIT flag on the tx's last WRITE (+b1_piggy=1; N-1 pages made
//                             durable first); read-backs without txid after every commit
//   +b1_sizes=1,8,64 +b1_reps=5 +b1_piggy=1 +b1_verify=N (read-backs per commit after the first
//   repetition of a size and mode, which reads back every LBA; half the oldest, half the newest
//   pages; -1: every LBA every time) +wave=FILE (b1, trace build only: FST of the first TX_COMMIT)
//   +seed=N +qd=N (tags outstanding, <= 32) +region=N (LBAs of the random stream, <= NUM_LBAS)
//   +w_warm=N +w_meas=N (random write phase: completions before the window / in it)
//   +r_warm=N +r_meas=N (random read phase)
//   +t_submit_ns=N +t_complete_ns=N (host costs; default 2000 / 6000 as B2's host)
//   +verify_reads=N (read-backs after the final FLUSH) +tx_pages=N (pages per tx, run=tx)
//   +max_cycles=N (stop with exit status 3 after N cycles, printing the simulation speed)
//   +selftest=1|2 (must FAIL: 1 corrupts one word of host memory after a write completed (its
//   read-back differs); 2 expects a wrong status; shows the checks trip)
// Output: one "PHASE {json}" line per measured phase, "B1 {json}" per measured commit, "WAVE {json}"
// (+wave: the traced window and the marker times), "CHECK {json}" with the verification summary,
// "DONE {json}" at the end.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <iterator>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vats_core_bench_top.h"
#include "verilated.h"
#include "ats_nand_store.h"
#include "ats_host.h"    // generated: the host command contract (tools/contract.py)
#include "ats_remap.h"   // generated: the remap engine's opcodes
#ifdef BENCH_TRACE
#include "verilated_fst_c.h"
#endif

namespace {

// ---- device geometry (the bench top's defaults = the core's 4 x 2 default device)
constexpr int kPageBytes = 4096;
constexpr int kWords = kPageBytes / 4;
constexpr int kSpare = 224;
constexpr int kPpb = 64;
constexpr int kBlocks = 128;
constexpr uint32_t kNumLbas = 16384;
constexpr uint64_t kHalfPs = 4000;   // 125 MHz

// ---- descriptor encodings (docs/architecture.md sections 1, 2)
// (generated from rtl/common/ats_host_pkg.sv by tools/contract.py: build/gen/include/ats_host.h)
enum Op : uint8_t { OP_READ = ATS_OP_READ, OP_WRITE = ATS_OP_WRITE, OP_DIFFWRITE = ATS_OP_DIFFWRITE,
                    OP_TX_BEGIN = ATS_OP_TX_BEGIN, OP_TX_COMMIT = ATS_OP_TX_COMMIT, OP_TX_ABORT = ATS_OP_TX_ABORT,
                    OP_FLUSH = ATS_OP_FLUSH, OP_RFLUSH = ATS_OP_RFLUSH, OP_TRIM = ATS_OP_TRIM };
enum Flag : uint8_t { F_FUA = ATS_FLAG_FUA, F_BARRIER = ATS_FLAG_BARRIER, F_COMMIT = ATS_FLAG_COMMIT };
enum Attr : uint8_t { A_SIMPLE = ATS_ATTR_SIMPLE, A_ORDERED = ATS_ATTR_ORDERED, A_HEAD = ATS_ATTR_HEAD };
constexpr uint8_t ST_OK = ATS_STS_OK;

// ---- host memory map: one 4 KiB buffer per tag for WRITE data, one for READ data
constexpr uint32_t kWbufBase = 0x00100000;
constexpr uint32_t kRbufBase = 0x00200000;
constexpr uint32_t kMemBytes = 0x00300000;

uint64_t mix64(uint64_t x) {   // splitmix64 finaliser
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
// word i of the page written with data seed s (seed 0: never written = zeros)
uint32_t page_word(uint64_t s, uint32_t i) { return s ? uint32_t(mix64(s * 0x100000001B3ull + i)) : 0u; }

[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stdout, "BENCH FAILED: ");
    std::vfprintf(stdout, fmt, ap);
    std::fprintf(stdout, "\n");
    std::fflush(stdout);
    va_end(ap);
    std::exit(2);
}

struct Cmd {
    uint8_t op = OP_READ, flags = 0, attr = A_SIMPLE, prio = 0, txid = 0;
    uint32_t lba = 0;
    uint16_t nlb = 0;
    uint32_t aux = 0;
    // bookkeeping
    uint8_t tag = 0;
    uint64_t seed = 0;      // WRITE: data seed
    uint64_t expect = 0;    // READ: expected data seed at acceptance
    uint64_t t_ready = 0;   // cycle the descriptor enters the submission queue (after t_submit)
    uint64_t t_acc = 0;     // cycle accepted on s_cmd
    uint64_t t_cpl = 0;     // cycle completed on m_cpl
    bool accepted = false;
};

struct PhaseResult {
    std::string name;
    uint64_t ops = 0, warm = 0, meas = 0;
    uint64_t t0 = 0, t1 = 0;            // window: completion #warm .. #warm+meas (cycles)
    double iops = 0, iops_whole = 0;
    std::vector<double> quarter_iops;   // the window in four parts (steady state check)
    double lat_mean_us = 0, lat_p50_us = 0, lat_p99_us = 0;
    double mean_held = 0, mean_dirty = 0, mean_qocc = 0, mean_outstanding = 0;
    uint64_t read_hits = 0, read_misses = 0, nand_prog = 0, nand_read = 0, coalesced = 0;   // in the window
    uint64_t phase_read_hits = 0, phase_read_misses = 0;                                       // whole phase
    uint64_t cycles = 0;
    // inside the window: die array busy (R/B# low) and read-miss path breakdown (cycles, means)
    double die_busy_frac = 0, die_busy_us = 0, die_gap_us = 0;
    uint64_t rd_n = 0;
    double rd_lookup_us = 0, rd_nand_us = 0, rd_latency_us = 0, rd_inflight = 0;
    double rd_pre = 0, rd_post = 0;   // mean host READs before m_rd / after the backend's last word
    uint64_t rd_bus_bytes = 0, rd_win_cycles = 0, rd_ch_xfer = 0, rd_ch_idle_array = 0, rd_ch_idle_none = 0,
             rd_ch_idle_held = 0;
};

// B1: the handshakes one commit goes through, by cycle (the first of each after the previous one).
// Cycle k = the rising edge after which Bench::cycle == k (the edge that samples the handshake).
struct Probe {
    std::vector<std::pair<std::string, uint64_t>> ev;   // in order of occurrence
    uint8_t rq_tag = 0;
    uint32_t rs_count = 0, rs_status = 0;
    uint64_t commit_active = 0;                          // cycles with the remap engine's commit_active
    uint64_t any_busy = 0;                               // cycles with some die's R/B# low
    bool has(const char *n) const {
        for (auto &e : ev)
            if (e.first == n) return true;
        return false;
    }
    uint64_t at(const char *n) const {
        for (auto &e : ev)
            if (e.first == n) return e.second;
        return 0;
    }
    void first(const char *n, uint64_t k) {
        if (!has(n)) ev.push_back({n, k});
    }
};

struct Bench {
    VerilatedContext *ctx;
    Vats_core_bench_top *top;
    uint64_t t_ps = 0, cycle = 0;
    int ndie, nchan, nways;
    int selftest = 0;

    // host
    int qd = 32;
    uint64_t t_submit = 0, t_complete = 0;   // cycles
    std::vector<uint32_t> mem;
    std::vector<uint8_t> tag_busy;
    std::vector<int> free_tags;
    std::vector<Cmd> inflight;               // by tag
    std::deque<uint8_t> sq;                  // tags waiting for s_cmd, in order
    uint64_t submit_free_at = 0;             // the submitting thread's next free cycle
    uint64_t cpl_free_at = 0;                // the completion handler's next free cycle
    std::deque<std::pair<uint64_t, uint8_t>> cpl_pending;   // (cycle handled, tag)
    struct HrdReq { uint32_t addr, left; };
    std::deque<HrdReq> hrd_q;
    bool hwr_in_burst = false;
    uint32_t hwr_addr = 0;
    std::vector<uint32_t> hwr_words;         // words written to each tag's read buffer
    std::vector<uint64_t> expect;            // per LBA: data seed of the last accepted write
    std::vector<uint64_t> last_write_cycle;  // per LBA: acceptance cycle of that write (0 = never)
    std::map<int, std::vector<std::pair<uint32_t, uint64_t>>> tx_pending;  // txid -> (lba, seed)
    std::vector<uint32_t> recent;            // LBAs of the latest accepted writes, newest last
    uint64_t n_cpl_ok = 0, n_reads_checked = 0, n_words_checked = 0;

    // firmware
    std::vector<std::vector<int>> plan;
    std::vector<size_t> plan_pos;
    bool free_offer = false;
    int free_die = 0, free_rr = 0;

    // current phase
    std::vector<uint64_t> *cpl_cycles = nullptr;
    uint64_t phase_cpl = 0, win_lo = 0, win_hi = 0, samples = 0;
    double sum_held = 0, sum_dirty = 0, sum_qocc = 0, sum_out = 0;
    std::vector<double> lat_cycles;
    // window taps
    uint64_t win_cycles = 0, busy_cycles = 0, busy_periods = 0;
    uint64_t re_bytes = 0;                         // bytes read over all channel buses (RE# falling edges)
    uint64_t re_last[8] = {};                      // cycle of each channel's last RE# falling edge
    uint64_t ch_xfer = 0, ch_idle_array = 0, ch_idle_none = 0;   // channel-cycles by class (window)
    uint64_t ch_idle_held = 0;   // of ch_idle_none: a die of the channel held by the scheduler (R/B# high)
    uint32_t re_prev = ~0u;
    uint32_t rb_prev = ~0u;
    uint64_t rd_n = 0, rd_nand_n = 0;
    double rd_lookup = 0, rd_nand = 0, rd_lat = 0, rd_out_sum = 0;
    uint64_t rd_t_req[256] = {};                   // request cycle per read id (0: none)
    uint64_t rd_live = 0;                          // read ids in flight
    // host READs inside the device, counted apart from rd_live: accepted on s_cmd and no m_rd yet
    // (queue, write-buffer FSM), and last word out of the backend but no completion yet (host
    // memory write, completion path); every READ of the read window misses exactly once
    uint64_t rd_acc = 0, rd_req = 0, rd_last = 0, rd_cpl = 0;
    double rd_pre_sum = 0, rd_post_sum = 0;
    std::deque<uint64_t> rd_t_look;                // per read waiting for its NAND READ, in request order
    uint64_t rd_t_nreq[256] = {};                  // NAND READ request time by tag
    uint64_t last_progress = 0;
    uint64_t max_cycles = 0;                 // +max_cycles: stop (exit 3) after this many cycles
    Probe *probe = nullptr;                  // B1: the commit being timed
#ifdef BENCH_TRACE
    VerilatedFstC *tfp = nullptr;            // +wave: registered at start, open only around the traced commit
#endif
    std::chrono::steady_clock::time_point wall0 = std::chrono::steady_clock::now();

    Bench(VerilatedContext *c, Vats_core_bench_top *t, int ch, int w) : ctx(c), top(t), nchan(ch), nways(w) {
        ndie = ch * w;
        mem.assign(kMemBytes / 4, 0xA5A5A5A5u);
        tag_busy.assign(256, 0);
        inflight.resize(256);
        hwr_words.assign(256, 0);
        expect.assign(kNumLbas, 0);
        last_write_cycle.assign(kNumLbas, 0);
    }

    // ------------------------------------------------------------------ clock
    void half(int clk) {
        t_ps += kHalfPs;
        ctx->time(t_ps);
        top->clk = clk;
        top->eval();
#ifdef BENCH_TRACE
        if (tfp && tfp->isOpen()) tfp->dump(t_ps);
#endif
    }
    static uint64_t edge_ps(uint64_t k) { return k * 2 * kHalfPs - kHalfPs; }   // rising edge of cycle k
    void tick() { half(1); half(0); cycle++; }

    void check_counters(const char *where) {
        if (top->viol_total || top->err_spurious || top->cnt_proto_err || top->cnt_read_err ||
            top->cnt_prog_fail || top->no_free_block || top->fwr_valid || top->cnt_erases || top->cnt_relocs)
            fail("%s (cycle %" PRIu64 "): die violations %u, spurious %u, protocol errors %u, read errors %u, "
                 "program failures %u, no_free_block %u, firmware-port responses %u, erases %u, relocations %u",
                 where, cycle, top->viol_total, top->err_spurious, top->cnt_proto_err, top->cnt_read_err,
                 top->cnt_prog_fail, top->no_free_block, top->fwr_valid, top->cnt_erases, top->cnt_relocs);
    }

    void reset() {
        top->clk = 0;
        top->rst = 1;
        top->power_ok = 0;
        top->s_cmd_valid = 0;
        top->s_hrd_valid = 0;
        top->s_free_valid = 0;
        top->m_cpl_ready = 1;
        top->m_hrd_ready = 1;
        top->m_hwr_ready = 1;
        top->m_bad_ready = 1;
        top->eval();
        for (int i = 0; i < 10; i++) {
            if (i == 2) top->power_ok = 1;
            tick();
        }
        top->rst = 0;
        const uint64_t start = cycle;
        while (!top->init_done) {
            step();
            if (cycle - start > 2000000) fail("init_done never rose");
        }
        check_counters("reset");
    }

    // ------------------------------------------------------------------ host memory
    // word of host memory the device reads (m_hrd: WRITE data, must be the write buffer of a WRITE
    // in flight) or writes (m_hwr: READ data, the read buffer of a READ in flight)
    uint32_t &mem_at(uint32_t addr, bool dev_writes) {
        const char *what = dev_writes ? "m_hwr write" : "m_hrd read";
        const uint32_t base = dev_writes ? kRbufBase : kWbufBase;
        if ((addr & 3) || addr < base || addr >= base + 256 * kPageBytes)
            fail("%s outside its host buffers: 0x%08x", what, addr);
        const uint32_t tag = (addr - base) / kPageBytes;
        if (!tag_busy[tag] || inflight[tag].op != (dev_writes ? OP_READ : OP_WRITE))
            fail("%s at 0x%08x: the buffer of tag %u, which has no %s in flight", what, addr, tag,
                 dev_writes ? "READ" : "WRITE");
        return mem[addr / 4];
    }

    // ------------------------------------------------------------------ one cycle
    void drive() {
        // submission queue -> s_cmd (a descriptor stays offered until taken)
        if (!sq.empty() && inflight[sq.front()].t_ready <= cycle) {
            const Cmd &c = inflight[sq.front()];
            top->s_cmd_valid = 1;
            top->s_cmd_op = c.op;
            top->s_cmd_tag = c.tag;
            top->s_cmd_lba = c.lba;
            top->s_cmd_nlb = c.nlb;
            top->s_cmd_txid = c.txid;
            top->s_cmd_flags = c.flags;
            top->s_cmd_attr = c.attr;
            top->s_cmd_prio = c.prio;
            top->s_cmd_dptr = (c.op == OP_READ ? kRbufBase : kWbufBase) + uint32_t(c.tag) * kPageBytes;
            top->s_cmd_aux = c.aux;
        } else {
            top->s_cmd_valid = 0;
        }
        // host memory reads (WRITE data), one word a cycle, in request order
        if (!hrd_q.empty()) {
            top->s_hrd_valid = 1;
            top->s_hrd_data = mem_at(hrd_q.front().addr, false);
            top->s_hrd_last = hrd_q.front().left == 1;
        } else {
            top->s_hrd_valid = 0;
        }
        // firmware block supply
        if (!free_offer) {
            const uint32_t need = top->blk_need;
            for (int k = 0; k < ndie; k++) {
                const int d = (free_rr + k) % ndie;
                if ((need >> d & 1) && plan_pos[d] < plan[d].size()) {
                    free_offer = true;
                    free_die = d;
                    free_rr = (d + 1) % ndie;
                    break;
                }
            }
        }
        top->s_free_valid = free_offer;
        if (free_offer) {
            top->s_free_chan = uint8_t(free_die / nways);
            top->s_free_way = uint8_t(free_die % nways);
            top->s_free_block = uint16_t(plan[free_die][plan_pos[free_die]]);
        }
    }

    void step() {
        drive();
        top->eval();
#ifdef BENCH_TRACE
        // the host's new inputs, 2 ns after the falling edge (else they would show at the next edge)
        if (tfp && tfp->isOpen()) tfp->dump(t_ps + kHalfPs / 2);
#endif
        if (probe) sample_probe(cycle + 1);
        const bool cmd_fire = top->s_cmd_valid && top->s_cmd_ready;
        const bool cpl_fire = top->m_cpl_valid && top->m_cpl_ready;
        const uint8_t cpl_tag = top->m_cpl_tag, cpl_status = top->m_cpl_status;
        const bool hrd_fire = top->m_hrd_valid && top->m_hrd_ready;
        const uint32_t hrd_addr = top->m_hrd_addr, hrd_len = top->m_hrd_len;
        const bool hrdd_fire = top->s_hrd_valid && top->s_hrd_ready;
        const bool hwr_fire = top->m_hwr_valid && top->m_hwr_ready;
        const uint32_t hwr_a = top->m_hwr_addr, hwr_d = top->m_hwr_data;
        const bool hwr_last = top->m_hwr_last;
        const bool free_fire = top->s_free_valid && top->s_free_ready;
        const bool bad_fire = top->m_bad_valid && top->m_bad_ready;
        if (cpl_cycles && phase_cpl >= win_lo && phase_cpl < win_hi) sample_taps();
        track_reads(cpl_cycles && phase_cpl >= win_lo && phase_cpl < win_hi);
        tick();

        if (cmd_fire) on_accept(sq.front());
        if (cpl_fire) on_device_cpl(cpl_tag, cpl_status);
        if (hrd_fire) {
            if (hrd_len != kPageBytes) fail("m_hrd length %u (one page expected)", hrd_len);
            hrd_q.push_back({hrd_addr, hrd_len / 4});
        }
        if (hrdd_fire) {
            HrdReq &r = hrd_q.front();
            r.addr += 4;
            if (--r.left == 0) hrd_q.pop_front();
        }
        if (hwr_fire) {
            if (!hwr_in_burst) {
                hwr_in_burst = true;
                hwr_addr = hwr_a;
            }
            mem_at(hwr_addr, true) = hwr_d;
            if (hwr_addr >= kRbufBase) hwr_words[(hwr_addr - kRbufBase) / kPageBytes]++;
            hwr_addr += 4;
            if (hwr_last) hwr_in_burst = false;
        }
        if (free_fire) {
            plan_pos[free_die]++;
            free_offer = false;
        }
        if (bad_fire)
            fail("grown bad block reported: chan %u way %u block %u (no faults are injected)", top->m_bad_chan,
                 top->m_bad_way, top->m_bad_block);
        // host completion handling (serial, t_complete each)
        while (!cpl_pending.empty() && cpl_pending.front().first <= cycle) {
            const uint8_t tag = cpl_pending.front().second;
            cpl_pending.pop_front();
            finish(tag);
        }
        // measurement samples inside the window
        if (cpl_cycles && phase_cpl >= win_lo && phase_cpl < win_hi && (cycle & 15) == 0) {
            samples++;
            sum_held += top->tap_held;
            sum_dirty += top->tap_dirty;
            sum_qocc += top->tap_q_occ;
            sum_out += double(qd - int(free_tags.size()));
        }
        if ((cycle & 1023) == 0) {
            check_counters("run");
            if (max_cycles && cycle >= max_cycles) {
                const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
                std::printf("STOP at +max_cycles=%" PRIu64 ": %.1f s wall, %.1f kcycles/s\n", cycle, w,
                            double(cycle) / w / 1e3);
                std::exit(3);
            }
        }
    }

    // read misses (several in flight; pages come back in any order, matched by read id): m_rd request
    // -> NAND READ request (in order) -> NAND completion (by tag, any order) -> last word on the
    // buffer side (by read id). Followed every cycle (reads in flight cross the window's edges),
    // summed inside the window.
    void track_reads(bool in_win) {
        if (top->tap_rd_fire) {
            rd_req++;
            if (!rd_t_req[top->tap_rd_tag]) rd_live++;
            rd_t_req[top->tap_rd_tag] = cycle;
            rd_t_look.push_back(cycle);
        }
        if (top->tap_nreq_rd_fire) {
            if (!rd_t_look.empty()) {
                if (in_win) rd_lookup += double(cycle - rd_t_look.front());
                rd_t_look.pop_front();
            }
            rd_t_nreq[top->tap_nreq_tag] = cycle;
        }
        if (top->tap_ncpl_fire && (top->tap_ncpl_tag & 0xE0) == 0x80 && rd_t_nreq[top->tap_ncpl_tag]) {
            if (in_win) { rd_nand += double(cycle - rd_t_nreq[top->tap_ncpl_tag]); rd_nand_n++; }
            rd_t_nreq[top->tap_ncpl_tag] = 0;
        }
        if (in_win) {
            rd_out_sum += double(rd_live);
            rd_pre_sum += rd_acc > rd_req ? double(rd_acc - rd_req) : 0.0;
            rd_post_sum += rd_last > rd_cpl ? double(rd_last - rd_cpl) : 0.0;
        }
        if (top->tap_rdd_last_fire) rd_last++;
        if (top->tap_rdd_last_fire && rd_t_req[top->tap_rdd_tag]) {
            if (in_win) { rd_lat += double(cycle - rd_t_req[top->tap_rdd_tag]); rd_n++; }
            rd_t_req[top->tap_rdd_tag] = 0;
            rd_live--;
        }
    }

    // die busy time, sampled at each rising edge inside the window
    void sample_taps() {
        win_cycles++;
        const uint32_t rb = top->tap_rb_n;
        for (int d = 0; d < ndie; d++) {
            if (!(rb >> d & 1)) busy_cycles++;
            if ((rb >> d & 1) && rb_prev != ~0u && !(rb_prev >> d & 1)) busy_periods++;
        }
        rb_prev = rb;
        const uint32_t re = top->tap_re_n;
        for (int c = 0; c < nchan; c++) {
            if ((re_prev >> c & 1) && !(re >> c & 1)) { re_bytes++; re_last[c] = cycle; }
            // channel-cycle classes: moving data (an RE# edge within 8 cycles: a byte takes 4),
            // else idle while a die of the channel has its array busy (R/B# low: tR, or a
            // program / erase), else idle with no die busy (nothing queued for it, or commands)
            const uint32_t dies = (rb >> (c * nways)) & ((1u << nways) - 1);
            if (re_last[c] && cycle - re_last[c] <= 8) ch_xfer++;
            else if (dies != (1u << nways) - 1) ch_idle_array++;
            else {
                ch_idle_none++;
                // a die picked by the scheduler whose completion is not yet taken (its command and
                // status cycles, a suspended or waiting transfer, or its page's decode)
                if ((top->tap_die_held >> (c * nways)) & ((1u << nways) - 1)) ch_idle_held++;
            }
        }
        re_prev = re;
    }

    // B1: one commit at a time, the device otherwise idle, so every handshake below is the commit's
    void sample_probe(uint64_t k) {
        Probe &p = *probe;
        if (top->s_cmd_valid && top->s_cmd_ready) p.first("accept", k);
        if (!p.has("accept")) return;
        if (top->tap_disp_fire) p.first("dispatch", k);
        if (top->m_hrd_valid && top->m_hrd_ready) p.first("host_dma", k);
        if (top->tap_wb_fire && top->tap_wb_rec != 0) p.first("wb_request", k);   // record (2) or marked page (1)
        if (top->tap_nreq_pg_fire && p.has("wb_request")) p.first("nand_prog_req", k);
        if (top->tap_nfetch_fire && p.has("nand_prog_req")) p.first("nand_fetch", k);
        const uint32_t all = (1u << ndie) - 1;
        if ((top->tap_rb_n & all) != all) {
            p.any_busy++;
            if (p.has("nand_fetch")) p.first("die_busy", k);
        } else if (p.has("die_busy")) {
            p.first("die_ready", k);
        }
        if (top->tap_ncpl_fire && p.has("nand_prog_req")) p.first("nand_cpl", k);
        if (top->tap_rq_fire && top->tap_rq_op == ATS_REMAP_OP_TX_WRITE && p.has("nand_cpl")) p.first("remap_tx_write", k);
        if (top->tap_rq_fire && top->tap_rq_op == ATS_REMAP_OP_COMMIT && !p.has("remap_commit_req")) {
            p.first("remap_commit_req", k);
            p.rq_tag = top->tap_rq_tag;
        }
        if (top->tap_rs_fire && p.has("remap_commit_req") && !p.has("remap_commit_rsp") &&
            top->tap_rs_tag == p.rq_tag && k > p.at("remap_commit_req")) {
            p.first("remap_commit_rsp", k);
            p.rs_count = top->tap_rs_count;
            p.rs_status = top->tap_rs_status;
        }
        if (top->tap_commit_active) p.commit_active++;
        if (top->tap_wbc_fire && p.has("remap_commit_rsp")) p.first("wb_cpl", k);
        if (top->tap_done_fire && p.has("wb_cpl")) p.first("done", k);
        if (top->m_cpl_valid && top->m_cpl_ready) p.first("complete", k);
    }

    // ------------------------------------------------------------------ host side
    bool can_submit() const { return !free_tags.empty() && submit_free_at <= cycle; }

    void submit(Cmd c) {
        c.tag = uint8_t(free_tags.back());
        free_tags.pop_back();
        tag_busy[c.tag] = 1;
        submit_free_at = cycle + t_submit;
        c.t_ready = cycle + t_submit;
        c.accepted = false;
        if (c.op == OP_WRITE) {
            if (c.nlb != 0) fail("harness: multi-page writes are not modelled");
            uint32_t *p = &mem[(kWbufBase + uint32_t(c.tag) * kPageBytes) / 4];
            for (uint32_t i = 0; i < kWords; i++) p[i] = page_word(c.seed, i);
        } else if (c.op == OP_READ) {
            uint32_t *p = &mem[(kRbufBase + uint32_t(c.tag) * kPageBytes) / 4];
            for (uint32_t i = 0; i < kWords; i++) p[i] = 0xDEADBEEFu;   // poison: must be overwritten
            hwr_words[c.tag] = 0;
        }
        inflight[c.tag] = c;
        sq.push_back(c.tag);
    }

    void on_accept(uint8_t tag) {
        sq.pop_front();
        Cmd &c = inflight[tag];
        c.accepted = true;
        c.t_acc = cycle;
        if (c.op == OP_WRITE) {
            if (c.txid) {
                tx_pending[c.txid].push_back({c.lba, c.seed});   // visible at its commit
            } else {
                expect[c.lba] = c.seed;
                last_write_cycle[c.lba] = cycle;
                recent.push_back(c.lba);
            }
        } else if (c.op == OP_READ) {
            rd_acc++;
            c.expect = expect[c.lba];
        }
    }

    void on_device_cpl(uint8_t tag, uint8_t status) {
        if (!tag_busy[tag] || !inflight[tag].accepted)
            fail("completion for tag %u, which has no accepted command", tag);
        Cmd &c = inflight[tag];
        if (c.t_cpl) fail("second completion for tag %u", tag);
        const uint8_t want = (selftest == 2) ? 0x55 : ST_OK;
        if (status != want)
            fail("tag %u op %u lba %u completed with status 0x%02x (expected 0x%02x)", tag, c.op, c.lba, status, want);
        c.t_cpl = cycle;
        if (c.op == OP_READ) rd_cpl++;
        n_cpl_ok++;
        if (cpl_cycles) {
            if (phase_cpl >= win_lo && phase_cpl < win_hi) lat_cycles.push_back(double(cycle - c.t_acc));
            cpl_cycles->push_back(cycle);
            phase_cpl++;
        }
        last_progress = cycle;
        cpl_free_at = std::max(cpl_free_at, cycle) + t_complete;
        cpl_pending.push_back({cpl_free_at, tag});
    }

    void finish(uint8_t tag) {
        Cmd &c = inflight[tag];
        if (c.op == OP_READ) {
            if (hwr_words[tag] != kWords)
                fail("READ tag %u lba %u: %u words written to host memory (expected %d)", tag, c.lba, hwr_words[tag], kWords);
            const uint32_t *p = &mem[(kRbufBase + uint32_t(tag) * kPageBytes) / 4];
            for (uint32_t i = 0; i < kWords; i++) {
                if (p[i] != page_word(c.expect, i))
                    fail("READ lba %u word %u: got 0x%08x, expected 0x%08x (data seed %" PRIu64 ")", c.lba, i, p[i],
                         page_word(c.expect, i), c.expect);
            }
            n_reads_checked++;
            n_words_checked += kWords;
        } else if (c.op == OP_TX_COMMIT || (c.op == OP_WRITE && c.txid && (c.flags & F_COMMIT))) {
            for (auto &[lba, seed] : tx_pending[c.txid]) {
                expect[lba] = seed;
                last_write_cycle[lba] = cycle;
                recent.push_back(lba);
            }
            tx_pending.erase(c.txid);
        }
        if (selftest == 1 && c.op == OP_WRITE && n_cpl_ok == 3) {
            // corrupt the data a later read-back will be compared with: the check must trip
            expect[c.lba] ^= 1;
        }
        tag_busy[tag] = 0;
        free_tags.push_back(tag);
    }

    void init_tags(int q) {
        qd = q;
        free_tags.clear();
        for (int t = q - 1; t >= 0; t--) free_tags.push_back(t);
    }

    // one READ of each LBA of `lbas`, in order, up to qd outstanding (each compared in finish())
    PhaseResult read_lbas(const std::string &name, const std::vector<uint32_t> &lbas);

    bool idle() const { return int(free_tags.size()) == qd && sq.empty() && cpl_pending.empty(); }

    // ------------------------------------------------------------------ phases
    // Runs `total` commands from `make` (called with the command's index), up to qd outstanding.
    // Window: completion number `warm` to completion number `warm + meas` (device completion times).
    PhaseResult run_phase(const std::string &name, uint64_t warm, uint64_t meas, uint64_t tail,
                          const std::function<Cmd(uint64_t)> &make) {
        PhaseResult r;
        r.name = name;
        r.warm = warm;
        r.meas = meas;
        const uint64_t total = warm + meas + tail;
        r.ops = total;
        std::vector<uint64_t> cpl;
        cpl.reserve(total);
        cpl_cycles = &cpl;
        phase_cpl = 0;
        win_lo = warm;
        win_hi = warm + meas;
        samples = 0;
        sum_held = sum_dirty = sum_qocc = sum_out = 0;
        lat_cycles.clear();
        win_cycles = busy_cycles = busy_periods = 0;
        rb_prev = ~0u;
        re_bytes = 0;
        re_prev = ~0u;
        ch_xfer = ch_idle_array = ch_idle_none = ch_idle_held = 0;
        rd_n = rd_nand_n = 0;
        rd_lookup = rd_nand = rd_lat = rd_out_sum = rd_pre_sum = rd_post_sum = 0;
        uint64_t hits_w0 = 0, miss_w0 = 0, prog_w0 = 0, nread_w0 = 0, coal_w0 = 0;
        bool w0_taken = false, w1_taken = false;
        const uint64_t ph_hits0 = top->tap_read_hits, ph_miss0 = top->tap_read_misses;
        const uint64_t start = cycle;
        uint64_t issued = 0;
        last_progress = cycle;
        while (cpl.size() < total || !idle()) {
            if (issued < total && can_submit()) submit(make(issued++));
            if (!w0_taken && phase_cpl >= win_lo) {
                w0_taken = true;
                hits_w0 = top->tap_read_hits;
                miss_w0 = top->tap_read_misses;
                prog_w0 = top->cnt_nand_prog;
                nread_w0 = top->cnt_nand_read;
                coal_w0 = top->cnt_coalesced;
            }
            if (w0_taken && !w1_taken && phase_cpl >= win_hi) {
                r.read_hits = top->tap_read_hits - hits_w0;
                r.read_misses = top->tap_read_misses - miss_w0;
                r.nand_prog = top->cnt_nand_prog - prog_w0;
                r.nand_read = top->cnt_nand_read - nread_w0;
                r.coalesced = top->cnt_coalesced - coal_w0;
                w1_taken = true;
            }
            step();
            if (cycle - last_progress > 50000000ull)
                fail("%s hangs: %zu of %" PRIu64 " completions, nothing completed for 50 M cycles (400 ms)",
                     name.c_str(), cpl.size(), total);
        }
        cpl_cycles = nullptr;
        r.cycles = cycle - start;
        r.phase_read_hits = top->tap_read_hits - ph_hits0;
        r.phase_read_misses = top->tap_read_misses - ph_miss0;
        if (meas) {
            r.t0 = cpl[warm];
            r.t1 = cpl[warm + meas];
            const double ns = double(r.t1 - r.t0) * 8.0;
            r.iops = double(meas) / (ns * 1e-9);
            for (int q = 0; q < 4; q++) {
                const uint64_t a = warm + meas * q / 4, b = warm + meas * (q + 1) / 4;
                r.quarter_iops.push_back(double(b - a) / (double(cpl[b] - cpl[a]) * 8e-9));
            }
            std::sort(lat_cycles.begin(), lat_cycles.end());
            double s = 0;
            for (double l : lat_cycles) s += l;
            r.lat_mean_us = s / double(lat_cycles.size()) * 8e-3;
            r.lat_p50_us = lat_cycles[lat_cycles.size() / 2] * 8e-3;
            r.lat_p99_us = lat_cycles[std::min(lat_cycles.size() - 1, size_t(std::ceil(0.99 * double(lat_cycles.size())) - 1))] * 8e-3;
            if (win_cycles) {
                r.die_busy_frac = double(busy_cycles) / double(win_cycles) / double(ndie);
                if (busy_periods) {
                    r.die_busy_us = double(busy_cycles) / double(busy_periods) * 8e-3;
                    r.die_gap_us = double(win_cycles * uint64_t(ndie) - busy_cycles) / double(busy_periods) * 8e-3;
                }
            }
            if (rd_n) {
                r.rd_n = rd_n;
                r.rd_lookup_us = rd_lookup / double(rd_n) * 8e-3;
                if (rd_nand_n) r.rd_nand_us = rd_nand / double(rd_nand_n) * 8e-3;
                r.rd_latency_us = rd_lat / double(rd_n) * 8e-3;
                if (win_cycles) {
                    r.rd_inflight = rd_out_sum / double(win_cycles);
                    r.rd_pre = rd_pre_sum / double(win_cycles);
                    r.rd_post = rd_post_sum / double(win_cycles);
                }
                r.rd_bus_bytes = re_bytes;
                r.rd_ch_xfer = ch_xfer; r.rd_ch_idle_array = ch_idle_array; r.rd_ch_idle_none = ch_idle_none; r.rd_ch_idle_held = ch_idle_held;
                r.rd_win_cycles = win_cycles;
            }
            if (samples) {
                r.mean_held = sum_held / double(samples);
                r.mean_dirty = sum_dirty / double(samples);
                r.mean_qocc = sum_qocc / double(samples);
                r.mean_outstanding = sum_out / double(samples);
            }
        }
        r.iops_whole = double(total) / (double(cpl.back() - start) * 8e-9);
        return r;
    }

    void flush() {
        run_phase("flush", 0, 0, 1, [](uint64_t) {
            Cmd c;
            c.op = OP_FLUSH;
            return c;
        });
    }

    // ------------------------------------------------------------------ final checks
    // Every die's store: for each LPN the programmed page with the highest seq must hold the
    // LBA's last data (everything was flushed). Returns the number of LBAs checked.
    uint64_t scan_store(uint64_t *pages_seen, uint64_t *records_seen) {
        struct Best { uint64_t seq; int die; int row; };
        std::unordered_map<uint32_t, Best> best;
        uint64_t pages = 0, records = 0;
        for (int d = 0; d < ndie; d++) {
            void *h = ats_nand_handle(d);
            if (!h) fail("no NAND store for die %d", d);
            for (size_t k = 0; k < plan_pos[d]; k++) {
                const int blk = plan[d][k];
                for (int pg = 0; pg < kPpb; pg++) {
                    const int row = blk * kPpb + pg;
                    ats_nand_read_page(h, row);
                    uint32_t lpn = 0;
                    for (int b = 0; b < 4; b++) lpn |= uint32_t(ats_nand_reg_get(h, kPageBytes + 1 + b)) << (8 * b);
                    uint64_t seq = 0;
                    for (int b = 0; b < 8; b++) seq |= uint64_t(ats_nand_reg_get(h, kPageBytes + 7 + b)) << (8 * b);
                    const int kind = ats_nand_reg_get(h, kPageBytes + 6);
                    if (kind == 0xFF && lpn == 0xFFFFFFFFu && seq == ~0ull) continue;   // erased
                    if (kind > 3) fail("store: die %d row %d: kind %d", d, row, kind);
                    pages++;
                    if (kind != 0) {   // a record (TRIM / commit / abort: persistence.md section 4), no data
                        records++;
                        continue;
                    }
                    if (lpn >= kNumLbas) fail("store: die %d row %d has lpn %u", d, row, lpn);
                    auto it = best.find(lpn);
                    if (it == best.end() || it->second.seq < seq) best[lpn] = {seq, d, row};
                    else if (it->second.seq == seq) fail("store: seq %" PRIu64 " programmed twice", seq);
                }
            }
        }
        uint64_t checked = 0;
        for (uint32_t lba = 0; lba < kNumLbas; lba++) {
            if (!expect[lba]) {
                if (best.count(lba)) fail("store: lpn %u on flash but never written", lba);
                continue;
            }
            auto it = best.find(lba);
            if (it == best.end()) fail("store: lpn %u written and flushed but not on flash", lba);
            void *h = ats_nand_handle(it->second.die);
            ats_nand_read_page(h, it->second.row);
            for (uint32_t i = 0; i < kWords; i++) {
                uint32_t w = 0;
                for (int b = 0; b < 4; b++) w |= uint32_t(ats_nand_reg_get(h, int(4 * i) + b)) << (8 * b);
                if (w != page_word(expect[lba], i))
                    fail("store: lpn %u (die %d row %d, seq %" PRIu64 ") word %u: 0x%08x, expected 0x%08x", lba,
                         it->second.die, it->second.row, it->second.seq, i, w, page_word(expect[lba], i));
            }
            checked++;
        }
        *pages_seen = pages;
        *records_seen = records;
        return checked;
    }
};

// minimal JSON object writer for the PHASE / CHECK / DONE lines
struct Json {
    std::string s = "{";
    Json &kv(const char *k, const std::string &v) { return raw(k, "\"" + v + "\""); }
    Json &kv(const char *k, uint64_t v) { return raw(k, std::to_string(v)); }
    Json &kv(const char *k, double v) {
        char b[64];
        std::snprintf(b, sizeof b, "%.4f", v);
        return raw(k, b);
    }
    Json &kv(const char *k, const std::vector<double> &v) {
        std::string a = "[";
        for (size_t i = 0; i < v.size(); i++) {
            char b[64];
            std::snprintf(b, sizeof b, "%s%.2f", i ? ", " : "", v[i]);
            a += b;
        }
        return raw(k, a + "]");
    }
    Json &obj(const char *k, const Json &o) { return raw(k, o.str()); }
    Json &raw(const char *k, const std::string &v) {
        if (s.size() > 1) s += ", ";
        s += "\"";
        s += k;
        s += "\": ";
        s += v;
        return *this;
    }
    std::string str() const { return s + "}"; }
};

void print_phase(const PhaseResult &r) {
    Json rd;
    rd.kv("n", r.rd_n).kv("lookup_us", r.rd_lookup_us).kv("nand_us", r.rd_nand_us).kv("latency_us", r.rd_latency_us)
        .kv("inflight", r.rd_inflight).kv("pre_rd", r.rd_pre).kv("post_rd", r.rd_post).kv("bus_bytes", r.rd_bus_bytes).kv("win_cycles", r.rd_win_cycles)
        .kv("ch_xfer", r.rd_ch_xfer).kv("ch_idle_array", r.rd_ch_idle_array).kv("ch_idle_none", r.rd_ch_idle_none)
            .kv("ch_idle_held", r.rd_ch_idle_held);
    Json j;
    j.kv("name", r.name).kv("ops", r.ops).kv("warm", r.warm).kv("meas", r.meas).kv("t0_cycle", r.t0)
        .kv("t1_cycle", r.t1).kv("iops", r.iops).kv("iops_whole", r.iops_whole).kv("quarter_iops", r.quarter_iops)
        .kv("lat_mean_us", r.lat_mean_us).kv("lat_p50_us", r.lat_p50_us).kv("lat_p99_us", r.lat_p99_us)
        .kv("mean_held", r.mean_held).kv("mean_dirty", r.mean_dirty).kv("mean_queue", r.mean_qocc)
        .kv("mean_outstanding", r.mean_outstanding).kv("read_hits", r.read_hits).kv("read_misses", r.read_misses)
        .kv("phase_read_hits", r.phase_read_hits).kv("phase_read_misses", r.phase_read_misses)
        .kv("nand_prog", r.nand_prog).kv("nand_read", r.nand_read).kv("coalesced", r.coalesced)
        .kv("cycles", r.cycles).kv("die_busy_frac", r.die_busy_frac).kv("die_busy_us", r.die_busy_us)
        .kv("die_gap_us", r.die_gap_us).obj("rd_breakdown", rd);
    std::printf("PHASE %s\n", j.str().c_str());
    std::fflush(stdout);
}

PhaseResult Bench::read_lbas(const std::string &name, const std::vector<uint32_t> &lbas) {
    return run_phase(name, 0, 0, lbas.size(), [&](uint64_t i) {
        Cmd c;
        c.op = OP_READ;
        c.lba = lbas[i];
        return c;
    });
}

// ---- B1 through the core (+run=b1)
// Waits until the device is idle: no dirty or unfinished page in the write buffer, empty command
// queue, every die ready, no remap commit running; 64 such cycles in a row.
void wait_idle(Bench &b) {
    Vats_core_bench_top *top = b.top;
    const uint32_t all = (1u << b.ndie) - 1;
    const uint64_t t0 = b.cycle;
    for (uint64_t quiet = 0; quiet < 64;) {
        b.step();
        const bool q = b.idle() && top->tap_dirty == 0 && top->tap_held == 0 && top->tap_q_occ == 0 &&
                       (top->tap_rb_n & all) == all && !top->tap_commit_active;
        quiet = q ? quiet + 1 : 0;
        if (b.cycle - t0 > 10000000) fail("b1: the device does not become idle");
    }
}

// One measured commit of n pages in txid: the pages (all n for TX_COMMIT, n - 1 for the piggy-backed
// COMMIT flag) are written and made durable by a FLUSH (checked: n programs more, nothing dirty or in
// flight in the buffer), the device idles, then the commit runs alone. Prints "B1 {json}".
void b1_commit(Bench &b, std::mt19937_64 &rng_data, const std::vector<uint32_t> &lbas, int txid, bool piggy,
               int rep, bool fresh, long n_verify, const std::string &wave) {
    Vats_core_bench_top *top = b.top;
    const int n = int(lbas.size());
    const int pre = piggy ? n - 1 : n;
    const uint32_t prog0 = top->cnt_nand_prog;
    if (pre > 0) {
        b.run_phase("b1_write", 0, 0, uint64_t(pre), [&](uint64_t i) {
            Cmd c;
            c.op = OP_WRITE;
            c.txid = uint8_t(txid);
            c.lba = lbas[i];
            c.seed = rng_data() | 1;
            return c;
        });
        b.flush();
    }
    wait_idle(b);
    // the tx's pages are durable before the commit: programmed (one NAND program each, distinct
    // LBAs: nothing coalesces), completed by the backend (TX_WRITE into the tx table), none left
    // dirty or in flight in the write buffer
    if (top->cnt_nand_prog - prog0 != uint32_t(pre) || top->tap_dirty != 0 || top->tap_held != 0)
        fail("b1: before the commit of %d pages: %u NAND programs since the tx began (expected %d), %u dirty, %u held",
             n, top->cnt_nand_prog - prog0, pre, unsigned(top->tap_dirty), unsigned(top->tap_held));
    const uint32_t prog1 = top->cnt_nand_prog;
    const uint64_t host1 = top->cnt_host_pages;
    Probe pr;
    b.probe = &pr;
#ifdef BENCH_TRACE
    uint64_t t_open = 0;
    const bool tracing = !wave.empty() && b.tfp;
    if (tracing) {
        b.tfp->open(wave.c_str());
        t_open = b.t_ps;
        for (int i = 0; i < 5000; i++) b.step();   // 40 us of the idle device before the commit (margin)
    }
#else
    (void)wave;
#endif
    b.run_phase(piggy ? "b1_write_commit" : "b1_tx_commit", 0, 0, 1, [&](uint64_t) {
        Cmd c;
        c.txid = uint8_t(txid);
        if (piggy) {
            c.op = OP_WRITE;
            c.flags = F_COMMIT;
            c.lba = lbas[n - 1];
            c.seed = rng_data() | 1;
        } else {
            c.op = OP_TX_COMMIT;
        }
        return c;
    });
    b.probe = nullptr;
#ifdef BENCH_TRACE
    if (tracing) {
        // 80 us after the completion (the host took it 6 us later: run_phase waited for that)
        for (int i = 0; i < 10000; i++) b.step();
        b.tfp->close();
        Json m;
        for (const char *e : {"accept", "remap_commit_req", "remap_commit_rsp", "complete", "dispatch", "wb_request",
                              "nand_prog_req", "nand_fetch", "die_busy", "die_ready", "nand_cpl", "wb_cpl", "done"})
            if (pr.has(e)) m.kv(e, Bench::edge_ps(pr.at(e)));
        Json w;
        w.kv("file", wave).kv("n", uint64_t(n)).kv("t_open_ps", t_open).kv("t_close_ps", b.t_ps).obj("markers_ps", m);
        std::printf("WAVE %s\n", w.str().c_str());
    }
#endif
    for (const char *e : {"accept", "dispatch", "wb_request", "nand_prog_req", "nand_cpl", "remap_commit_req",
                          "remap_commit_rsp", "wb_cpl", "done", "complete"})
        if (!pr.has(e)) fail("b1: commit of %d pages (%s): no '%s' handshake seen", n, piggy ? "WRITE+COMMIT" : "TX_COMMIT", e);
    if (pr.rs_status != 0 || int(pr.rs_count) != n)
        fail("b1: remap COMMIT of %d pages answered status %u, %u entries applied", n, pr.rs_status, pr.rs_count);
    if (top->cnt_nand_prog - prog1 != 1)
        fail("b1: the commit of %d pages programmed %u pages (one %s expected)", n, top->cnt_nand_prog - prog1,
             piggy ? "data page with the COMMIT mark" : "commit record");
    if (b.tx_pending.count(txid)) fail("b1: tx %d still pending after its commit", txid);
    const uint64_t acc = pr.at("accept");
    Json ev;
    for (auto &e : pr.ev) ev.kv(e.first.c_str(), e.second - acc);
    Json j;
    j.kv("mode", std::string(piggy ? "write_commit" : "tx_commit")).kv("n", uint64_t(n)).kv("rep", uint64_t(rep))
        .kv("txid", uint64_t(txid)).kv("fresh", uint64_t(fresh)).kv("cycles", pr.at("complete") - acc)
        .kv("remap_cycles", pr.at("remap_commit_rsp") - pr.at("remap_commit_req")).kv("remap_count", uint64_t(pr.rs_count))
        .kv("commit_active_cycles", pr.commit_active).kv("die_busy_cycles", pr.any_busy)
        .kv("nand_prog", uint64_t(top->cnt_nand_prog - prog1)).kv("host_pages", uint64_t(top->cnt_host_pages) - host1)
        .obj("events", ev);
    std::printf("B1 %s\n", j.str().c_str());
    std::fflush(stdout);
    // read-backs without txid: the committed data (finish() moved the tx's pages into `expect`)
    std::vector<uint32_t> rl;
    if (n_verify < 0 || rep == 0 || n_verify >= n) {
        rl = lbas;
    } else {
        for (long i = 0; i < n_verify; i++) rl.push_back(i < n_verify / 2 ? lbas[size_t(i)] : lbas[size_t(n - n_verify + i)]);
    }
    if (rl.empty()) return;
    const uint64_t before = b.n_reads_checked;
    b.read_lbas("b1_verify", rl);
    if (b.n_reads_checked - before != rl.size()) fail("b1: %zu read-backs, %" PRIu64 " checked", rl.size(), b.n_reads_checked - before);
}

void run_b1(Bench &b, std::mt19937_64 &rng_data, uint32_t region, const std::vector<int> &sizes, int reps,
            bool piggy, long n_verify, const std::string &wave, uint64_t seed) {
    // each size has its own distinct LBAs, the same for every repetition and both modes: the first
    // commit maps fresh LBAs, later ones replace the previous commit's pages (remap invalidations)
    std::mt19937_64 rng(seed * 0xA24BAED4963EE407ull + 5);
    std::vector<uint32_t> perm(region);
    for (uint32_t i = 0; i < region; i++) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    size_t next = 0;
    int k = 0;
    for (int n : sizes) {
        if (next + size_t(n) > perm.size()) fail("b1: region too small");
        const std::vector<uint32_t> lbas(perm.begin() + long(next), perm.begin() + long(next + size_t(n)));
        next += size_t(n);
        bool fresh = true;
        for (int mode = 0; mode < (piggy ? 2 : 1); mode++) {
            for (int r = 0; r < reps; r++) {
                const bool traced = !wave.empty() && k == 0;
                b1_commit(b, rng_data, lbas, 1 + k % 31, mode == 1, r, fresh, n_verify, traced ? wave : std::string());
                fresh = false;
                k++;
            }
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    auto arg = [&](const char *name, long def) {
        const char *s = ctx->commandArgsPlusMatch(name);
        if (!s || !*s) return def;
        const char *eq = std::strchr(s, '=');
        return eq ? std::strtol(eq + 1, nullptr, 0) : def;
    };
    std::string run = "rw";
    if (const char *s = ctx->commandArgsPlusMatch("run="); s && *s) run = std::strchr(s, '=') + 1;
    const uint64_t seed = uint64_t(arg("seed=", 1));
    const int qd = int(arg("qd=", 32));
    const uint32_t region = uint32_t(arg("region=", long(kNumLbas)));
    const bool smoke = run == "smoke";
    const uint64_t w_warm = uint64_t(arg("w_warm=", smoke ? 48 : 64));
    const uint64_t w_meas = uint64_t(arg("w_meas=", smoke ? 32 : 256));
    const uint64_t r_warm = uint64_t(arg("r_warm=", 4));
    const uint64_t r_meas = uint64_t(arg("r_meas=", smoke ? 16 : 32));
    const uint64_t n_verify = uint64_t(arg("verify_reads=", 24));
    const int tx_pages = int(arg("tx_pages=", 8));
    if (qd < 1 || qd > 32 || region < 64 || region > kNumLbas) {
        std::fprintf(stderr, "bad +qd (1..32) or +region (64..%u)\n", kNumLbas);
        return 1;
    }
    if (run != "rw" && run != "barrier" && run != "smoke" && run != "tx" && run != "b1") {
        std::fprintf(stderr, "unknown +run=%s\n", run.c_str());
        return 1;
    }
    // B1 options
    std::vector<int> b1_sizes = {1, 8, 64};
    if (const char *s = ctx->commandArgsPlusMatch("b1_sizes="); s && *s) {
        b1_sizes.clear();
        for (const char *q = std::strchr(s, '=') + 1; *q;) {
            char *e = nullptr;
            const long v = std::strtol(q, &e, 0);
            if (e == q || v < 1 || v > 64) {
                std::fprintf(stderr, "bad +b1_sizes (1..64 each)\n");
                return 1;
            }
            b1_sizes.push_back(int(v));
            q = (*e == ',') ? e + 1 : e;
        }
    }
    const int b1_reps = int(arg("b1_reps=", 5));
    const bool b1_piggy = arg("b1_piggy=", 1) != 0;
    const long b1_verify = arg("b1_verify=", 8);
    std::string wave;
    if (const char *s = ctx->commandArgsPlusMatch("wave="); s && *s) wave = std::strchr(s, '=') + 1;
#ifdef BENCH_TRACE
    if (!wave.empty()) ctx->traceEverOn(true);
#else
    if (!wave.empty()) {
        std::fprintf(stderr, "+wave needs the trace build (bench_core.py --wave)\n");
        return 1;
    }
#endif
    auto top = std::make_unique<Vats_core_bench_top>(ctx.get(), "top");
    Bench b(ctx.get(), top.get(), 4, 2);
#ifdef BENCH_TRACE
    std::unique_ptr<VerilatedFstC> tfp;
    if (!wave.empty()) {
        tfp = std::make_unique<VerilatedFstC>();
        top->trace(tfp.get(), 99);   // registered before the first eval; opened only for the traced commit
        b.tfp = tfp.get();
    }
#endif
    b.selftest = int(arg("selftest=", 0));
    b.t_submit = uint64_t(arg("t_submit_ns=", 2000)) / 8;
    b.t_complete = uint64_t(arg("t_complete_ns=", 6000)) / 8;
    b.max_cycles = uint64_t(arg("max_cycles=", 0));
    // allocation plan: every block of every die in order, block 0 of die 0 (checkpoint) left out
    b.plan.resize(b.ndie);
    b.plan_pos.assign(b.ndie, 0);
    for (int d = 0; d < b.ndie; d++)
        for (int blk = (d == 0 ? 1 : 0); blk < kBlocks; blk++) b.plan[d].push_back(blk);
    b.init_tags(qd);

    auto wall0 = std::chrono::steady_clock::now();
    b.reset();
    const uint64_t init_cycles = b.cycle;

    // the random write stream: LBAs and data seeds from their own generators (same seed = same
    // stream in every run type, so orderless and barrier see identical commands)
    std::mt19937_64 rng_lba(seed * 0x9E3779B97F4A7C15ull + 1), rng_data(seed * 0xD1B54A32D192ED03ull + 2);
    std::mt19937_64 rng_rd(seed * 0x8CB92BA72F3D8DD7ull + 3);
    auto rand_write = [&](uint8_t flags, uint8_t attr) {
        return [&, flags, attr](uint64_t) {
            Cmd c;
            c.op = OP_WRITE;
            c.lba = uint32_t(rng_lba() % region);
            c.seed = rng_data() | 1;
            c.flags = flags;
            c.attr = attr;
            return c;
        };
    };
    const uint64_t tail = uint64_t(qd);

    if (run == "rw" || run == "smoke") {
        print_phase(b.run_phase("rand_write", w_warm, w_meas, tail, rand_write(0, A_SIMPLE)));
        b.flush();
        // reads over the LBAs written, leaving out the latest 2 x 16 (they may sit in the
        // write buffer's clean slots): every read must go to NAND
        std::vector<uint32_t> pool;
        {
            std::vector<uint8_t> skip(kNumLbas, 0);
            size_t n = 0;
            for (auto it = b.recent.rbegin(); it != b.recent.rend() && n < 32; ++it)
                if (!skip[*it]) { skip[*it] = 1; n++; }
            for (uint32_t l = 0; l < kNumLbas; l++)
                if (b.expect[l] && !skip[l]) pool.push_back(l);
        }
        if (r_warm + r_meas > 0) {
            if (pool.empty()) fail("no LBA to read");
            auto r = b.run_phase("rand_read", r_warm, r_meas, tail, [&](uint64_t) {
                Cmd c;
                c.op = OP_READ;
                c.lba = pool[rng_rd() % pool.size()];
                return c;
            });
            print_phase(r);
            if (r.phase_read_hits != 0 || r.phase_read_misses != r.ops)
                fail("rand_read: %" PRIu64 " buffer hits, %" PRIu64 " misses of %" PRIu64 " reads (every read must go to NAND)",
                     r.phase_read_hits, r.phase_read_misses, r.ops);
        }
    } else if (run == "barrier") {
        print_phase(b.run_phase("barrier_write", w_warm, w_meas, tail, rand_write(F_BARRIER, A_ORDERED)));
    } else if (run == "b1") {
        run_b1(b, rng_data, region, b1_sizes, b1_reps, b1_piggy, b1_verify, wave, seed);
    } else if (run == "tx") {
        // transactional writes: tx_pages WRITEs in txid t, then TX_COMMIT t (architecture section 1)
        // The pages become the LBAs' expected data when the commit completes.
        int txid = 1;
        uint64_t in_tx = 0;
        print_phase(b.run_phase("tx_write_commit", 0, 0, uint64_t(tx_pages + 1) * 8, [&](uint64_t) {
            Cmd c;
            if (in_tx == uint64_t(tx_pages)) {
                c.op = OP_TX_COMMIT;
                c.txid = uint8_t(txid);
                in_tx = 0;
                txid = txid % 31 + 1;
            } else {
                c.op = OP_WRITE;
                c.txid = uint8_t(txid);
                c.lba = uint32_t(rng_lba() % region);
                c.seed = rng_data() | 1;
                in_tx++;
            }
            return c;
        }));
    }

    // ---- end of run: everything durable, read back, flash holds the last data of every LBA
    b.flush();
    std::vector<uint32_t> vlist;
    for (auto it = b.recent.rbegin(); it != b.recent.rend() && vlist.size() < 16; ++it)
        if (std::find(vlist.begin(), vlist.end(), *it) == vlist.end()) vlist.push_back(*it);   // buffer hits
    {
        std::vector<uint32_t> written;
        for (uint32_t l = 0; l < kNumLbas; l++)
            if (b.expect[l]) written.push_back(l);
        while (vlist.size() < n_verify && !written.empty()) vlist.push_back(written[rng_rd() % written.size()]);
        for (uint32_t l = 0; l < kNumLbas && vlist.size() < n_verify + 4; l++)
            if (!b.expect[l]) vlist.push_back(l);   // never written: zeros
    }
    const uint64_t hits0 = top->tap_read_hits;
    const uint64_t reads_before = b.n_reads_checked;
    b.read_lbas("verify_reads", vlist);
    const uint64_t verify_hits = top->tap_read_hits - hits0;
    b.check_counters("end");
    uint64_t pages = 0, records = 0;
    const uint64_t lbas = b.scan_store(&pages, &records);
    if (pages != top->cnt_nand_prog)
        fail("store holds %" PRIu64 " programmed pages, the core counted %u programs", pages, top->cnt_nand_prog);
    if (uint64_t(top->cnt_host_pages) != uint64_t(top->cnt_nand_prog) - records + top->cnt_coalesced)
        fail("conservation: host pages %u != NAND programs %u - records %" PRIu64 " + coalesced %u",
             top->cnt_host_pages, top->cnt_nand_prog, records, top->cnt_coalesced);
    size_t blocks_handed = 0;
    for (auto p : b.plan_pos) blocks_handed += p;
    Json chk;
    chk.kv("completions_ok", b.n_cpl_ok).kv("reads_checked", b.n_reads_checked).kv("words_checked", b.n_words_checked)
        .kv("verify_reads", b.n_reads_checked - reads_before).kv("verify_buffer_hits", verify_hits)
        .kv("lbas_on_flash_checked", lbas).kv("pages_on_flash", pages).kv("records_on_flash", records).kv("host_pages", uint64_t(top->cnt_host_pages))
        .kv("nand_prog", uint64_t(top->cnt_nand_prog)).kv("nand_read", uint64_t(top->cnt_nand_read))
        .kv("coalesced", uint64_t(top->cnt_coalesced)).kv("ecc_corrected_bits", uint64_t(top->cnt_ecc_corr))
        .kv("die_violations", uint64_t(top->viol_total)).kv("blocks_handed", uint64_t(blocks_handed));
    std::printf("CHECK %s\n", chk.str().c_str());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const double cpu = double(std::clock()) / CLOCKS_PER_SEC;
    Json done;
    done.kv("run", run).kv("seed", seed).kv("cycles", b.cycle).kv("init_cycles", init_cycles)
        .kv("sim_ms", double(b.t_ps) * 1e-9).kv("wall_s", wall).kv("cpu_s", cpu)
        .kv("kcycles_per_cpu_s", double(b.cycle) / cpu / 1e3);
    std::printf("DONE %s\n", done.str().c_str());
    top->final();
    return 0;
}
