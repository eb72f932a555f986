// SPDX-License-Identifier: Apache-2.0
// bench_nand_main: Verilator C++ main of benchmark B7 (ats_nand_bench_top). Traffic generator and
// measurement on the scheduler's request/completion streams; time is simulated (100 MHz clk, ps).
//
// Plusargs: +chan=C (1..8) +ways=W (1..4) +ops=seq_program,seq_read,rand_program,rand_read
//           +warm=N (warm-up pages per die) +meas=N (measured pages per die) +min_meas=N
//           +qdepth=N (requests outstanding per active die, default 2) +seed=N +quiet
//           +die_clk_div=N (die clock = clk / N, default 10: R/B# seen within 100 ns)
//           +selftest=1|2 (must FAIL: 1 reads a page never programmed, 2 programs a block's pages
//           out of order; shows that wrong data and die violations are caught)
// For each op: issues warm + meas + Q requests (Q = qdepth x dies outstanding), measures between
// completion number `warm` and completion number `warm + meas` (completion order), then drains.
// Reads only address pages this run programmed (an unmeasured program phase runs first if needed).
// Prints one "RESULT ..." line per op; exits non-zero if a die reports a protocol violation, a read
// byte differs from what was programmed, a completion is not OK, or a request never completes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vats_nand_bench_top.h"
#include "verilated.h"
#include "ats_nand_store.h"

namespace {

constexpr int kMaxChan = 8;
constexpr int kMaxWays = 4;
constexpr int kPpb = 64;          // pages per block (PPB_LOG2 = 6 in the top)
constexpr int kPageUser = 4096;   // user bytes per page
constexpr uint64_t kHalfPs = 5000;  // 100 MHz

struct Req {
    int op;  // 0 read, 1 program
    int chan, way, page;  // page = linear page index within the die
};

struct Bench {
    VerilatedContext *ctx;
    Vats_nand_bench_top *top;
    uint64_t t_ps = 0;
    uint64_t cycle = 0;
    int nchan, nways;
    std::mt19937_64 rng;
    int nf[kMaxChan][kMaxWays] = {};   // next free (= programmed) pages per die
    int rp[kMaxChan][kMaxWays] = {};   // sequential read pointer per die
    bool quiet = false;
    uint64_t die_div = 1;   // die clock: one rising edge every die_div cycles (R/B# resolution)
    int selftest = 0;       // 1: first read of an op hits an unprogrammed page; 2: out-of-order program

    Bench(VerilatedContext *c, Vats_nand_bench_top *t, int ch, int w, uint64_t seed)
        : ctx(c), top(t), nchan(ch), nways(w), rng(seed) {}

    void half(int clk) {
        t_ps += kHalfPs;
        ctx->time(t_ps);
        top->clk = clk;
        top->die_clk = clk && (die_div == 1 || cycle % die_div == 0);
        top->eval();
    }
    void tick() {  // one full cycle; caller samples handshakes before it
        half(1);
        half(0);
        cycle++;
    }
    int dies() const { return nchan * nways; }

    void check(const char *where) {
        if (top->viol_total || top->err_data || top->err_status || top->err_proto || top->err_spurious) {
            std::fprintf(stderr,
                         "BENCH FAILED (%s): die violations %u, wrong read bytes %u, bad statuses %u, "
                         "adapter mismatches %u, spurious completions %u\n",
                         where, top->viol_total, top->err_data, top->err_status, top->err_proto,
                         top->err_spurious);
            std::exit(2);
        }
    }

    void reset() {
        top->clk = 0;
        top->rst = 1;
        top->power_ok = 0;
        top->s_nreq_valid = 0;
        top->m_ncpl_ready = 1;
        top->die_clk_en = ~0u;   // every die gets its RESET
        top->eval();
        for (int i = 0; i < 10; i++) {
            if (i == 2) top->power_ok = 1;
            tick();
        }
        top->rst = 0;
        uint64_t start = cycle;
        while (!top->init_done) {
            tick();
            if (cycle - start > 1000000) {
                std::fprintf(stderr, "BENCH FAILED: channels did not finish RESET\n");
                std::exit(2);
            }
        }
        check("reset");
        uint32_t en = 0;   // from now on only the dies the traffic uses get clock edges
        for (int c = 0; c < nchan; c++)
            for (int w = 0; w < nways; w++) en |= 1u << (c * kMaxWays + w);
        top->die_clk_en = en;
    }

    Req make(const std::string &op, uint64_t i) {
        Req r{};
        if (op == "seq_program" || op == "seq_read") {
            r.chan = int(i % nchan);
            r.way = int((i / nchan) % nways);
        } else {
            uint64_t d = rng() % uint64_t(dies());
            r.chan = int(d / nways);
            r.way = int(d % nways);
        }
        int &free = nf[r.chan][r.way];
        if (op == "seq_program" || op == "rand_program") {
            r.op = 1;
            r.page = free++;
            if (selftest == 2 && i == 0) r.page = free--;   // skips a page; the die's next goes below it
        } else if (selftest == 1 && i == 0) {
            r.op = 0;
            r.page = free;                                  // never programmed: reads FFh
        } else if (op == "seq_read") {
            r.op = 0;
            r.page = rp[r.chan][r.way]++ % free;
        } else {
            r.op = 0;
            r.page = int(rng() % uint64_t(free));
        }
        return r;
    }

    struct Result {
        double mbps;
        uint64_t pages, t0_ps, t1_ps, cycles;
    };

    // issue `total` requests of `op`, keeping up to `q` outstanding; returns completion times
    Result phase(const std::string &op, uint64_t warm, uint64_t meas, uint64_t q) {
        const uint64_t total = warm + meas + q;
        std::vector<int> free_tags;
        for (int t = 255; t >= 0; t--) free_tags.push_back(t);
        std::vector<uint64_t> cpl_ps;
        cpl_ps.reserve(total);
        std::vector<bool> busy_tag(256, false);
        uint64_t issued = 0, outstanding = 0, start_cycle = cycle;
        bool have = false;
        Req cur{};
        int cur_tag = 0;
        while (cpl_ps.size() < total) {
            // next request on the port
            if (!have && issued < total && outstanding < q && !free_tags.empty()) {
                cur = make(op, issued);
                cur_tag = free_tags.back();
                free_tags.pop_back();
                have = true;
                top->s_nreq_valid = 1;
                top->s_nreq_tag = uint8_t(cur_tag);
                top->s_nreq_op = uint8_t(cur.op);
                top->s_nreq_chan = uint8_t(cur.chan);
                top->s_nreq_way = uint8_t(cur.way);
                top->s_nreq_block = uint16_t(cur.page / kPpb);
                top->s_nreq_page = uint8_t(cur.page % kPpb);
                top->eval();
            }
            const bool req_fire = top->s_nreq_valid && top->s_nreq_ready;
            const bool cpl_fire = top->m_ncpl_valid && top->m_ncpl_ready;
            const int ctag = top->m_ncpl_tag;
            const int cst = top->m_ncpl_status;
            tick();
            if (req_fire) {
                busy_tag[cur_tag] = true;
                issued++;
                outstanding++;
                have = false;
                top->s_nreq_valid = 0;
            }
            if (cpl_fire) {
                if (!busy_tag[ctag] || cst != 0) {
                    std::fprintf(stderr, "BENCH FAILED: completion tag %d status %d (outstanding %d)\n", ctag,
                                 cst, int(busy_tag[ctag]));
                    std::exit(2);
                }
                busy_tag[ctag] = false;
                free_tags.push_back(ctag);
                outstanding--;
                cpl_ps.push_back(t_ps - kHalfPs);  // the rising edge of the handshake
            }
            if (cycle - start_cycle > 4000000000ull / 10) {
                std::fprintf(stderr, "BENCH FAILED: %s hangs (%zu of %llu completions)\n", op.c_str(),
                             cpl_ps.size(), (unsigned long long)total);
                std::exit(2);
            }
            if ((cycle & 0xFFFF) == 0) check(op.c_str());
        }
        check(op.c_str());
        Result r{};
        r.pages = meas;
        r.t0_ps = cpl_ps[warm];
        r.t1_ps = cpl_ps[warm + meas];
        r.mbps = double(meas) * kPageUser / (double(r.t1_ps - r.t0_ps) * 1e-12) / 1e6;
        r.cycles = cycle - start_cycle;
        return r;
    }
};

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
    const int nchan = int(arg("chan=", 1));
    const int nways = int(arg("ways=", 1));
    const long warm_pd = arg("warm=", 2);
    const long meas_pd = arg("meas=", 8);
    const long min_meas = arg("min_meas=", 16);
    const long qdepth = arg("qdepth=", 2);
    const uint64_t seed = uint64_t(arg("seed=", 1));
    const long die_div = arg("die_clk_div=", 10);
    std::string ops = "seq_program,seq_read,rand_program,rand_read";
    if (const char *s = ctx->commandArgsPlusMatch("ops="); s && *s) ops = std::strchr(s, '=') + 1;
    const bool quiet = *ctx->commandArgsPlusMatch("quiet") != 0;
    if (nchan < 1 || nchan > kMaxChan || nways < 1 || nways > kMaxWays || qdepth < 1) {
        std::fprintf(stderr, "bad +chan/+ways/+qdepth\n");
        return 1;
    }
    auto top = std::make_unique<Vats_nand_bench_top>(ctx.get(), "top");
    top->seed = uint32_t(seed * 0x9E3779B9u);
    Bench b(ctx.get(), top.get(), nchan, nways, seed);
    b.quiet = quiet;
    b.die_div = uint64_t(die_div < 1 ? 1 : die_div);
    b.selftest = int(arg("selftest=", 0));
    auto wall0 = std::chrono::steady_clock::now();
    b.reset();

    const uint64_t d = uint64_t(b.dies());
    const uint64_t warm = uint64_t(warm_pd) * d;
    const uint64_t meas = std::max<uint64_t>(uint64_t(meas_pd) * d, uint64_t(min_meas));
    const uint64_t q = std::min<uint64_t>(uint64_t(qdepth) * d, 200);
    size_t pos = 0;
    while (pos <= ops.size()) {
        size_t comma = ops.find(',', pos);
        std::string op = ops.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = (comma == std::string::npos) ? ops.size() + 1 : comma + 1;
        if (op.empty()) continue;
        if (op != "seq_program" && op != "seq_read" && op != "rand_program" && op != "rand_read") {
            std::fprintf(stderr, "unknown op %s\n", op.c_str());
            return 1;
        }
        if (op == "seq_read" || op == "rand_read") {
            bool need = false;
            for (int c = 0; c < nchan; c++)
                for (int w = 0; w < nways; w++) need |= (b.nf[c][w] == 0);
            if (need) b.phase("seq_program", 0, 4 * d, 0 + q);  // unmeasured fill
        }
        auto r = b.phase(op, warm, meas, q);
        if (*ctx->commandArgsPlusMatch("dump")) {
            void *h = ats_nand_handle(0);
            for (int pg = 0; pg < 3; pg++) {
                ats_nand_read_page(h, pg);
                std::printf("DUMP page %d:", pg);
                for (int k = 0; k < 8; k++) std::printf(" %02x", ats_nand_reg_get(h, k));
                std::printf(" ... %02x %02x\n", ats_nand_reg_get(h, 4318), ats_nand_reg_get(h, 4319));
            }
        }
        std::printf("RESULT chan=%d ways=%d op=%s pages=%llu t0_ps=%llu t1_ps=%llu mbps=%.4f cycles=%llu\n",
                    nchan, nways, op.c_str(), (unsigned long long)r.pages, (unsigned long long)r.t0_ps,
                    (unsigned long long)r.t1_ps, r.mbps, (unsigned long long)r.cycles);
        std::fflush(stdout);
    }
    b.check("end");
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::printf("DONE chan=%d ways=%d sim_us=%.1f cycles=%llu wall_s=%.2f kcycles_per_s=%.1f\n", nchan, nways,
                double(b.t_ps) * 1e-6, (unsigned long long)b.cycle, wall, double(b.cycle) / wall / 1e3);
    top->final();
    return 0;
}
