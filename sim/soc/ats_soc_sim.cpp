// SPDX-License-Identifier: Apache-2.0
// ats_soc_sim: the full-system simulation harness. Clocks ats_soc_sim_top (the LiteX SoC with the
// device core and the NAND die models), plays host memory and the host port, carries the UART, and
// cuts power. A host program drives it through the host-port protocol of docs/host-port.md over a
// Unix stream socket (+port=<path>: listen there, one client) or an inherited socket (+fd=<n>). The
// simulation advances only inside RUN requests, so a run is a deterministic function of the message
// sequence (and of the images and seeds).
//
// Plusargs: +port=<path> | +fd=<n>; +firmware=<rom.init> (read by the ROM); +ats_nand_image<d>=<file>
// (die images, saved at power-off, loaded at power-on); +hostmem_mb=<n> (default 16);
// +uart_log=<file>; +uart_echo (UART to stderr); +trace=<file.fst> +trace_from=<cycle>
// +trace_to=<cycle> (a trace window; the TRACE message opens others). Env ATS_NAND_FAULTS: die faults.
//
// Built with ATS_NVME (sim/soc/build.py --nvme) the top is ats_soc_nvme_sim_top: the NVMe front end
// sits before the host port and this harness is its PCIe root port (docs/host-port.md "NVMe build"):
// MMIO_WRITE / MMIO_READ become CQ requests to BAR0, CC completions answer MMIO_READ, the device's
// RQ memory reads and writes are served from host memory (RC completions, one per read request;
// a write outside host memory is refused: rq_wr_ur with its last beat), MSIs are acknowledged at
// once and reported. Its command counts (INFO accepted / completed, CUT_ARM kinds 2 and 3) are the
// front end's I/O commands accepted and I/O CQEs written.
#ifdef ATS_NVME
#include "Vats_soc_nvme_sim_top.h"
using Top = Vats_soc_nvme_sim_top;
#define ATS_ROOT Vats_soc_nvme_sim_top___024root
#else
#include "Vats_soc_sim_top.h"
using Top = Vats_soc_sim_top;
#define ATS_ROOT Vats_soc_sim_top___024root
#endif
// The model's own evaluation (what Top::eval() runs after its once-only initialisation, without the
// per-call clean-up of deferred deletions and of other threads' messages, both empty in this
// single-threaded model): see Sim::eval().
#define ATS_CAT2(a, b) a##b
#define ATS_CAT(a, b) ATS_CAT2(a, b)
void ATS_CAT(ATS_ROOT, ___eval)(ATS_ROOT *vlSelf);
#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif
#ifdef ATS_SIM_SKIP
// cycle skipping (sim/soc/README.md "Cycle skipping"): the free-running registers the harness
// advances over a skip are members of the model's classes (all of them, through the symbol table)
#ifdef ATS_NVME
#include "Vats_soc_nvme_sim_top__Syms.h"
#else
#include "Vats_soc_sim_top__Syms.h"
#endif
#include "ats_nand_store.h"
#endif

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

// message types (docs/host-port.md)
enum : uint8_t {
    M_SUBMIT = 0x01, M_MEM_WRITE = 0x02, M_MEM_READ = 0x03, M_RUN = 0x04, M_UART_IN = 0x05,
    M_CUT_ARM = 0x06, M_CUT_NOW = 0x07, M_PWR_FAIL = 0x08, M_TRACE = 0x09, M_INFO = 0x0A, M_QUIT = 0x0B,
    M_MMIO_WRITE = 0x0C, M_MMIO_READ = 0x0D,
    M_HELLO = 0x80, M_CPL = 0x81, M_UART = 0x82, M_MEM_DATA = 0x83, M_STOPPED = 0x84, M_INFO_R = 0x85,
    M_MMIO_DATA = 0x86, M_MSI = 0x87, M_ERROR = 0x8F,
};
// RUN stop conditions and STOPPED reasons
enum : uint32_t {
    U_CPL = 1u << 0,      // a completion was sent
    U_IDLE = 1u << 1,     // every submitted command has completed
    U_LINE = 1u << 2,     // the UART sent a newline
    U_HOST_EN = 1u << 3,  // the device accepts host commands (firmware ready)
    U_MMIO = 1u << 4,     // (NVMe build) an MMIO read was answered
    U_MSI = 1u << 5,      // (NVMe build) an MSI was sent
    R_MAX = 1u << 8,      // max_cycles reached
    R_CUT = 1u << 9,      // power was cut (an armed cut fired, or CUT_NOW)
};
enum : uint32_t { CUT_NONE = 0, CUT_CYCLE = 1, CUT_ACCEPT = 2, CUT_CPL = 3 };

constexpr uint64_t kHalfPs = 5000;   // 100 MHz

#ifdef ATS_SIM_SKIP
// The gates' reports (rtl/common/ats_sim_cgate.sv under ATS_SIM_SKIP): how many gates give their
// block the coming rising edge; cycles skipped so far (the gates count them as edges off)
int g_gates_open = 0;
int g_gates = 0;
uint64_t g_skipped = 0;
int g_open_id[32];            // open gates per +cgate_off ID (the figures of +skip_stats)
#endif

[[noreturn]] void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "[ats_soc_sim] FATAL: ");
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    va_end(ap);
    std::exit(2);
}

struct Cmd {
    uint8_t op, tag, txid, flags, attr, prio;
    uint16_t nlb;
    uint64_t lba;
    uint32_t dptr, aux;
};

struct Sim {
    VerilatedContext *ctx;
    Top *top;
    int fd = -1;
    uint64_t t_ps = 0, cycle = 0;
    std::vector<uint32_t> mem;             // host memory, words
    std::deque<Cmd> sq;                    // submitted, not yet accepted
    uint64_t submitted = 0, accepted = 0, completed = 0;
    struct Hrd { uint32_t addr, left; };
    std::deque<Hrd> hrd_q;
    bool hwr_burst = false;
    uint32_t hwr_addr = 0;
    uint64_t mem_errors = 0;
    std::deque<uint8_t> uart_in;
    std::string uart_line;
    FILE *uart_log = nullptr;
    bool uart_echo = false;
    bool eval_always = false;   // +eval_always: evaluate after drive() in every cycle (the reference)
    uint32_t cut_kind = CUT_NONE;
    uint64_t cut_value = 0;
    bool cut_done = false;
    uint64_t cut_cycle = 0;
    std::vector<uint8_t> out;              // pending output bytes
    double wall_run = 0;                   // seconds spent inside RUN
#ifdef ATS_NVME
    // PCIe root port
    struct CqReq { bool write; uint32_t off, value; uint8_t tag; };
    std::deque<CqReq> cq_q;                // MMIO requests not yet taken by the front end
    std::deque<CqReq> mmio_rd;             // MMIO reads waiting for their completion
    struct RdJob { uint64_t addr; uint32_t ndw; uint8_t tag; bool bad; };
    std::deque<RdJob> rc_q;                // memory reads of the device, answered in order
    uint32_t rc_sent = 0;                  // dwords of rc_q.front() sent
    bool rq_in_tlp = false;                // later beats of an RQ TLP follow
    uint32_t rq_type = 0;                  // its request type (0 MemRd, 1 MemWr)
    uint64_t rq_addr = 0;
    uint32_t rq_left = 0;
    bool rq_bad = false;
    bool msi_ack = false;                  // cfg_interrupt_msi_sent on the next cycle
    uint8_t mmio_tag = 0;
    uint64_t mmio_reads = 0, mmio_writes = 0, dma_rd_dw = 0, dma_wr_dw = 0, msis = 0;
#endif
#if VM_TRACE
    std::unique_ptr<VerilatedFstC> tfp;
    uint64_t trace_from = ~0ull, trace_to = ~0ull;
    std::string trace_path;
#endif

    // ---- socket I/O
    void send_msg(uint8_t type, const void *p, size_t n) {
        uint32_t len = uint32_t(n + 1);
        const uint8_t *b = reinterpret_cast<const uint8_t *>(&len);
        out.insert(out.end(), b, b + 4);
        out.push_back(type);
        const uint8_t *q = reinterpret_cast<const uint8_t *>(p);
        out.insert(out.end(), q, q + n);
    }
    void flush() {
        size_t off = 0;
        while (off < out.size()) {
            ssize_t w = ::write(fd, out.data() + off, out.size() - off);
            if (w <= 0) die("host port write failed");
            off += size_t(w);
        }
        out.clear();
    }
    bool read_exact(void *p, size_t n) {
        uint8_t *b = reinterpret_cast<uint8_t *>(p);
        while (n) {
            ssize_t r = ::read(fd, b, n);
            if (r <= 0) return false;
            b += r;
            n -= size_t(r);
        }
        return true;
    }
    void error(const char *fmt, ...) {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        std::fprintf(stderr, "[ats_soc_sim] error: %s\n", buf);
        send_msg(M_ERROR, buf, std::strlen(buf));
    }

    // ---- clock
    // in_chg: an input of the model was written since its last eval. step() evaluates the model
    // after drive() only then: an eval with the same inputs and no clock edge changes nothing, so
    // skipping it is exact, and in most cycles (no new beat from the host) it saves one of three.
    bool in_chg = true;
    template <typename F, typename V> void set_in(F &f, V v) {
        if (f != F(v)) { f = F(v); in_chg = true; }
    }
    // eval(): the model's evaluation without Top::eval()'s per-call clean-up (a mutex and a
    // deletion list each call: about 2 % of the simulator's time, issue 35); the first call and
    // every evaluation outside the clock loop go through Top::eval()
    bool evaled = false;
    void eval() {
#if VM_TRACE
        top->eval();         // (a traced model also marks activity for the trace)
#else
        if (evaled) ATS_CAT(ATS_ROOT, ___eval)(top->rootp);
        else top->eval();
        evaled = true;
#endif
    }
    void half(int clk) {
        t_ps += kHalfPs;
        ctx->time(t_ps);
        top->clk = clk;
        eval();
        in_chg = false;
#if VM_TRACE
        if (tfp) tfp->dump(t_ps);
#endif
    }
    void tick() {
        half(1);
        half(0);
        cycle++;
#ifdef ATS_SETTLE_CHECK
        settle_check();
#endif
#if VM_TRACE
        if (!trace_path.empty()) {
            if (cycle == trace_from && !tfp) open_trace(trace_path);
            if (cycle == trace_to && tfp) close_trace();
        }
#endif
    }
#if VM_TRACE
    void open_trace(const std::string &path) {
        if (tfp) return;
        tfp = std::make_unique<VerilatedFstC>();
        top->trace(tfp.get(), 99);
        tfp->open(path.c_str());
        std::fprintf(stderr, "[ats_soc_sim] FST trace on at cycle %" PRIu64 ": %s\n", cycle, path.c_str());
    }
    void close_trace() {
        if (!tfp) return;
        tfp->close();
        tfp.reset();
        std::fprintf(stderr, "[ats_soc_sim] FST trace off at cycle %" PRIu64 "\n", cycle);
    }
#endif

    uint32_t &word(uint32_t addr) {
        static uint32_t sink;
        if ((addr & 3) || addr / 4 >= mem.size()) {
            if (mem_errors++ < 10) error("device access to host memory address 0x%08x (outside or unaligned)", addr);
            sink = 0;
            return sink;
        }
        return mem[addr / 4];
    }

    // ---- inputs for the next edge
    void drive() {
#ifdef ATS_NVME
        drive_pcie();
#else
        set_in(top->host_cmd_valid, !sq.empty() && !cut_done);
        if (!sq.empty()) {
            const Cmd &c = sq.front();
            set_in(top->host_cmd_op, c.op);
            set_in(top->host_cmd_tag, c.tag);
            set_in(top->host_cmd_lba, c.lba);
            set_in(top->host_cmd_nlb, c.nlb);
            set_in(top->host_cmd_txid, c.txid);
            set_in(top->host_cmd_flags, c.flags);
            set_in(top->host_cmd_attr, c.attr);
            set_in(top->host_cmd_prio, c.prio);
            set_in(top->host_cmd_dptr, c.dptr);
            set_in(top->host_cmd_aux, c.aux);
        }
        set_in(top->host_hrdd_valid, !hrd_q.empty());
        if (!hrd_q.empty()) {
            set_in(top->host_hrdd_data, word(hrd_q.front().addr));
            set_in(top->host_hrdd_last, hrd_q.front().left == 1);
        }
#endif
        set_in(top->uart_rx_valid, !uart_in.empty());
        if (!uart_in.empty()) set_in(top->uart_rx_data, uart_in.front());
    }

    // one clock cycle; returns the stop reasons it raised
    uint32_t step() {
        drive();
        if (in_chg || eval_always) eval();
        in_chg = false;
#ifdef ATS_NVME
        const bool tx_fire = top->uart_tx_valid && top->uart_tx_ready;
        const uint8_t tx_byte = top->uart_tx_data;
        const bool rx_fire = top->uart_rx_valid && top->uart_rx_ready;
        uint32_t why = pcie_step();
#else
        const bool cmd_fire = top->host_cmd_valid && top->host_cmd_ready;
        const bool cpl_fire = top->host_cpl_valid && top->host_cpl_ready;
        const uint8_t cpl_tag = top->host_cpl_tag, cpl_status = top->host_cpl_status;
        const uint32_t cpl_result = top->host_cpl_result;
        const bool hrd_fire = top->host_hrd_valid && top->host_hrd_ready;
        const uint32_t hrd_addr = top->host_hrd_addr, hrd_len = top->host_hrd_len;
        const bool hrdd_fire = top->host_hrdd_valid && top->host_hrdd_ready;
        const bool hwr_fire = top->host_hwr_valid && top->host_hwr_ready;
        const uint32_t hwr_a = top->host_hwr_addr, hwr_d = top->host_hwr_data;
        const bool hwr_last = top->host_hwr_last;
        const bool tx_fire = top->uart_tx_valid && top->uart_tx_ready;
        const uint8_t tx_byte = top->uart_tx_data;
        const bool rx_fire = top->uart_rx_valid && top->uart_rx_ready;
        tick();
        uint32_t why = 0;
        if (cmd_fire) {
            sq.pop_front();
            accepted++;
            if (cut_kind == CUT_ACCEPT && accepted == cut_value) why |= power_cut();
        }
        if (cpl_fire) {
            completed++;
            struct __attribute__((packed)) { uint8_t tag, status; uint16_t pad; uint32_t result; uint64_t cyc; } m =
                {cpl_tag, cpl_status, 0, cpl_result, cycle};
            send_msg(M_CPL, &m, sizeof m);
            why |= U_CPL;
            if (cut_kind == CUT_CPL && completed == cut_value) why |= power_cut();
        }
        if (hrd_fire) {
            if (hrd_len == 0 || (hrd_len & 3)) error("m_hrd length %u", hrd_len);
            else hrd_q.push_back({hrd_addr, hrd_len / 4u});
        }
        if (hrdd_fire) {
            hrd_q.front().addr += 4;
            if (--hrd_q.front().left == 0) hrd_q.pop_front();
        }
        if (hwr_fire) {
            if (!hwr_burst) { hwr_burst = true; hwr_addr = hwr_a; }
            word(hwr_addr) = hwr_d;
            hwr_addr += 4;
            if (hwr_last) hwr_burst = false;
        }
#endif
        if (tx_fire) {
            send_msg(M_UART, &tx_byte, 1);
            if (uart_log) std::fputc(tx_byte, uart_log);
            if (uart_echo) std::fputc(tx_byte, stderr);
            if (tx_byte == '\n') why |= U_LINE;
        }
        if (rx_fire) uart_in.pop_front();
        if (cut_kind == CUT_CYCLE && cycle >= cut_value && !cut_done) why |= power_cut();
        return why;
    }


#ifdef ATS_NVME
    // ---- PCIe root port (UltraScale+ user interface, 256 bits; the formats ats_nvme_bar / _rq use)
    bool host_ok(uint64_t addr, uint32_t ndw) const {
        return !(addr & 3) && addr + uint64_t(ndw) * 4 <= uint64_t(mem.size()) * 4;
    }
    // the TLP of the RQ beat on offer is a memory write outside host memory (the beat's own
    // descriptor when it starts a TLP, else the TLP in progress)
    bool rq_write_bad() const {
        if (rq_in_tlp) return rq_type == 1 && rq_bad;
        const uint32_t d0 = top->m_axis_rq_tdata[0], d1 = top->m_axis_rq_tdata[1], d2 = top->m_axis_rq_tdata[2];
        return ((d2 >> 11) & 0xF) == 1 && !host_ok(uint64_t(d1) << 32 | (d0 & ~3u), d2 & 0x7FF);
    }
    // The root port's constant inputs (ready, configuration, no MSI failure) are tied in the NVMe top
    // (ats_soc_nvme_sim_top.sv: its Simulation cost note); set once here, as they always were.
    void drive_pcie_const() {
        top->m_axis_cc_tready = 1;
        top->m_axis_rq_tready = 1;
        top->cfg_max_payload = 1;          // 256 bytes
        top->cfg_max_read_req = 2;         // 512 bytes
        top->cfg_function_status = 0x4;    // bus master enable
        top->cfg_interrupt_msi_enable = 1;
        top->cfg_interrupt_msi_mmenable = 5;   // 32 vectors
        top->cfg_interrupt_msi_fail = 0;
    }
    // Each input is written once a cycle with its final value (set_in: in_chg only for a real change;
    // a field cleared and then set again in the same cycle cost an evaluation of the model each cycle
    // a request or a read completion was on offer).
    bool pcie_quiet = false;    // CQ and RC inputs written with their idle values, both queues empty since
    void drive_pcie() {
        set_in(top->cfg_interrupt_msi_sent, msi_ack);
        // the RQ beat on offer (RQ is always ready): the last beat of a write TLP outside host memory
        // is refused (the front end's rq_wr_ur: this root port's report of the dropped posted write)
        set_in(top->rq_wr_ur, top->m_axis_rq_tvalid && top->m_axis_rq_tlast && rq_write_bad());
        // nothing on offer and every CQ / RC input already at its idle value: nothing to write
        // (only this function writes them)
        if (cq_q.empty() && rc_q.empty()) {
            if (pcie_quiet) return;
        } else {
            pcie_quiet = false;
        }
        // CQ: the oldest MMIO request, one beat
        set_in(top->s_axis_cq_tvalid, !cq_q.empty() && !cut_done);
        uint32_t d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        uint32_t u0 = 0, keep = 0;
        bool last = false;
        if (!cq_q.empty()) {
            const CqReq &r = cq_q.front();
            d[0] = r.off & 0x3FFC;                      // BAR0 at 0: address = offset
            d[2] = (r.write ? 1u : 0u) << 11 | 1u;      // MemWr / MemRd, 1 dword
            d[3] = 14u << 19 | r.tag;                   // BAR id 0, aperture 2^14, tag
            d[4] = r.value;
            keep = r.write ? 0x1F : 0x0F;
            last = true;
            u0 = 0xF;                                   // first BE 1111, last BE 0000
            set_in(top->s_axis_cq_tkeep, keep);         // (tkeep and tlast keep their last values when idle)
            set_in(top->s_axis_cq_tlast, last);
        }
        for (int i = 0; i < 8; i++) set_in(top->s_axis_cq_tdata[i], d[i]);
        set_in(top->s_axis_cq_tuser[0], u0);
        set_in(top->s_axis_cq_tuser[1], 0);
        set_in(top->s_axis_cq_tuser[2], 0);
        // RC: the next beat of the oldest read's completion
        set_in(top->s_axis_rc_tvalid, !rc_q.empty() && !cut_done);
        for (int i = 0; i < 8; i++) d[i] = 0;
        keep = 0;
        last = false;
        if (!rc_q.empty()) {
            const RdJob &j = rc_q.front();
            int lane = 0;
            if (rc_sent == 0) {
                const uint32_t bc = j.bad ? 0 : j.ndw * 4;
                d[0] = 1u << 30 | (bc & 0x1FFF) << 16 | uint32_t(j.addr & 0xFFF);
                d[1] = (j.bad ? 1u : 0u) << 11 | (j.bad ? 0 : (j.ndw & 0x7FF));
                d[2] = j.tag;
                lane = 3;
            }
            uint32_t n = j.bad ? 0 : std::min<uint32_t>(8 - lane, j.ndw - rc_sent);
            keep = (1u << lane) - 1;
            for (uint32_t k = 0; k < n; k++) {
                d[lane + k] = mem[(j.addr / 4) + rc_sent + k];
                keep |= 1u << (lane + k);
            }
            last = j.bad || rc_sent + n == j.ndw;
        }
        for (int i = 0; i < 8; i++) set_in(top->s_axis_rc_tdata[i], d[i]);
        set_in(top->s_axis_rc_tkeep, keep);
        set_in(top->s_axis_rc_tlast, last);
        pcie_quiet = cq_q.empty() && rc_q.empty();
    }
    // samples the PCIe handshakes of this cycle, clocks, and applies them; returns stop reasons
    uint32_t pcie_step() {
        const bool cq_fire = top->s_axis_cq_tvalid && top->s_axis_cq_tready;
        const bool cc_fire = top->m_axis_cc_tvalid && top->m_axis_cc_tready;
        const bool rq_fire = top->m_axis_rq_tvalid && top->m_axis_rq_tready;
        const bool rc_fire = top->s_axis_rc_tvalid && top->s_axis_rc_tready;
        uint32_t cc[8], rq[8];
        for (int i = 0; i < 8; i++) { cc[i] = top->m_axis_cc_tdata[i]; rq[i] = top->m_axis_rq_tdata[i]; }
        const uint32_t rq_keep = top->m_axis_rq_tkeep;
        const bool rq_last = top->m_axis_rq_tlast;
        const uint32_t msi = top->cfg_interrupt_msi_int;
        const bool was_ack = msi_ack;
        const bool io_cmd = top->nvme_io_cmd, io_cqe = top->nvme_io_cqe;
        tick();
        uint32_t why = 0;
        msi_ack = false;
        if (msi && !was_ack) {
            uint32_t v = 0;
            while (!(msi >> v & 1)) v++;
            struct __attribute__((packed)) { uint32_t vec; uint64_t cyc; } m = {v, cycle};
            send_msg(M_MSI, &m, sizeof m);
            msi_ack = true;
            msis++;
            why |= U_MSI;
        }
        if (cq_fire) {
            if (!cq_q.front().write) mmio_rd.push_back(cq_q.front());
            cq_q.pop_front();
        }
        if (cc_fire) {
            if (mmio_rd.empty()) {
                error("a completion on CC with no MMIO read outstanding");
            } else {
                const CqReq r = mmio_rd.front();
                mmio_rd.pop_front();
                const uint32_t st = (cc[1] >> 11) & 7;
                if ((cc[2] & 0xFF) != r.tag) error("CC completion tag %u for MMIO read tag %u", cc[2] & 0xFF, r.tag);
                struct __attribute__((packed)) { uint32_t off, value, status; } m = {r.off, st ? 0xFFFFFFFFu : cc[3], st};
                send_msg(M_MMIO_DATA, &m, sizeof m);
                why |= U_MMIO;
            }
        }
        if (rq_fire) {
            // one TLP from its first beat to tlast; every departure from the requester's rules
            // (docs/host-port.md "NVMe build") is an ERROR message, never a silent drop
            int lane = 0;
            if (!rq_in_tlp) {
                const uint64_t addr = uint64_t(rq[1]) << 32 | (rq[0] & ~3u);
                const uint32_t ndw = rq[2] & 0x7FF;
                const uint8_t tag = rq[3] & 0xFF;
                rq_type = (rq[2] >> 11) & 0xF;
                rq_in_tlp = true;
                const uint32_t lim = rq_type == 0 ? 512 : 256;          // MRRS, MPS (drive_pcie)
                if (ndw == 0 || ndw * 4 > lim || ((addr & 0xFFF) + ndw * 4) > 0x1000)
                    error("RQ %s of %u dwords at 0x%" PRIx64 ": empty, above %u bytes or crossing 4 KiB",
                          rq_type == 0 ? "read" : "write", ndw, addr, lim);
                if (rq_type == 0) {
                    const bool bad = !host_ok(addr, ndw);
                    if (bad && mem_errors++ < 10) error("device read of host memory 0x%" PRIx64 "+%u dwords (outside)", addr, ndw);
                    rc_q.push_back({addr, ndw, tag, bad});
                    dma_rd_dw += ndw;
                    if (!rq_last) error("RQ read request longer than one beat");
                } else if (rq_type == 1) {
                    rq_addr = addr;
                    rq_left = ndw;
                    rq_bad = !host_ok(addr, ndw);
                    if (rq_bad && mem_errors++ < 10) error("device write of host memory 0x%" PRIx64 "+%u dwords (outside)", addr, ndw);
                    lane = 4;
                } else {
                    error("RQ request type %u not served (the device sends memory reads and writes only)", rq_type);
                }
            }
            if (rq_type == 1) {
                for (; lane < 8; lane++) {
                    const bool k = rq_keep >> lane & 1;
                    if (rq_left && !k) { error("RQ write: a tkeep gap in lane %d with %u dwords to come", lane, rq_left); break; }
                    if (!rq_left && k) { error("RQ write: more data than its dword count"); break; }
                    if (!k) break;
                    if (!rq_bad) mem[rq_addr / 4] = rq[lane];
                    rq_addr += 4;
                    rq_left--;
                    dma_wr_dw++;
                }
            }
            if (rq_last) {
                if (rq_type == 1 && rq_left) error("RQ write ended %u dwords short of its dword count", rq_left);
                rq_in_tlp = false;
                rq_left = 0;
            }
        }
        if (rc_fire) {
            RdJob &j = rc_q.front();
            const uint32_t n = j.bad ? j.ndw : std::min<uint32_t>(rc_sent == 0 ? 5 : 8, j.ndw - rc_sent);
            rc_sent += n;
            if (rc_sent >= j.ndw) { rc_q.pop_front(); rc_sent = 0; }
        }
        // the command counts (after this cycle's transfers: host memory holds them at a cut)
        if (io_cmd) {
            accepted++;
            if (cut_kind == CUT_ACCEPT && accepted == cut_value) why |= power_cut();
        }
        if (io_cqe) {
            completed++;
            if (cut_kind == CUT_CPL && completed == cut_value) why |= power_cut();
        }
        return why;
    }
#endif

#ifdef ATS_SIM_SKIP
    // ---- cycle skipping (sim/soc/README.md "Cycle skipping")
    // While the CPU sleeps in a stalled read of the wait unit (its clock gated), every block's clock
    // gate is closed and the harness has nothing to give, the edges until the next event change
    // nothing in the model but free-running counters: the SoC's CYCLES, LiteX's uptime counter and
    // bus timeout, the wait unit's stall count, the NAND scheduler's slot counter (and the NVMe queue
    // manager's round-robin phase). The next event is the wait's deadline or cap, the end of a die's
    // array operation, the end of the RUN or an armed cut. skip() jumps over those edges but the last
    // (which runs as usual and so recomputes whatever depends on the counters: they cross no
    // threshold on the way) by advancing the counters, the cycle count and the time.
    bool skip_on = true;              // +skip_off: never skip (the reference run of the same binary)
    uint64_t skips = 0;               // jumps made
#ifdef ATS_NVME
    auto *soc() { return top->rootp->ats_soc_nvme_sim_top->u_sys->u_soc; }
#else
    auto *soc() { return top->rootp->ats_soc_sim_top->u_soc; }
#endif
    static constexpr uint32_t kWaitCap = (1u << 19) - 1;      // ats_wait's CAP_W = 19 (soc/ats_litex.py)
    static constexpr uint32_t kBusTimeout = 1000000;          // LiteX's bus timeout (its counter's reload)
    static constexpr uint64_t kDieMargin = 12;                 // edges stepped before a die's array end
    // +skip_stats: why each cycle was not skipped (the first reason), printed at exit
    bool skip_stats = false;
    uint64_t why_not[48] = {};
    enum { W_CPU = 32, W_GATES, W_HOST, W_UART, W_INCHG, W_WAIT, W_TIMER, W_BUS, W_NEAR, W_BUDGET, W_OFF, W_N };
    const char *why_name(int k) {
        static const char *n[] = {"CPU awake", "gates open (several)", "harness input / host outputs", "UART",
                                  "input changed", "wait unit (no stall / wake / ack)", "LiteX timer on",
                                  "bus timeout", "event within 3 cycles", "RUN budget", "off / cut"};
        static char b[32];
        if (k >= W_CPU) return n[k - W_CPU];
        std::snprintf(b, sizeof b, "gate ID %d open", k);
        return b;
    }
    uint64_t skip(uint64_t budget) {
        int why = -1;
        uint64_t n = skip_try(budget, why);
        if (skip_stats && !n) {
            if (why == W_GATES) {
                // the CPU's own gate (ID 20) first, else the set of open gates (by ID)
                if (g_open_id[20]) {
                    why = W_CPU;
                } else {
                    uint32_t set = 0;
                    for (int i = 0; i < 32; i++) if (g_open_id[i]) set |= 1u << i;
                    gate_sets[set]++;
                }
            }
            why_not[why]++;
        }
        return n;
    }
    std::map<uint32_t, uint64_t> gate_sets;
    void skip_report() {
        if (!skip_stats) return;
        uint64_t all = 0;
        for (uint64_t v : why_not) all += v;
        std::fprintf(stderr, "[ats_soc_sim] cycles not skipped: %" PRIu64 "\n", all);
        for (int k = 0; k < W_N; k++)
            if (why_not[k]) std::fprintf(stderr, "[ats_soc_sim]   %-40s %12" PRIu64 " (%.1f %%)\n", why_name(k), why_not[k],
                                         100.0 * why_not[k] / all);
        for (auto &kv : gate_sets) {
            std::string ids;
            for (int i = 0; i < 32; i++) if (kv.first >> i & 1) ids += " " + std::to_string(i);
            std::fprintf(stderr, "[ats_soc_sim]     gates open (IDs%s) %12" PRIu64 " (%.1f %%)\n", ids.c_str(), kv.second,
                         100.0 * kv.second / all);
        }
    }
    // budget: cycles the RUN may still skip; returns the cycles skipped (0: none; why: the reason)
    uint64_t skip_try(uint64_t budget, int &why) {
        why = W_OFF;
        if (!skip_on || g_gates == 0 || cut_done) return 0;
        why = W_GATES;
        if (g_gates_open != 0) return 0;
        why = W_BUDGET;
        if (budget < 2) return 0;
        why = W_HOST;
        // nothing from the harness for the coming edge, nothing on the outputs it takes
#ifdef ATS_NVME
        if (!cq_q.empty() || !rc_q.empty() || msi_ack || rq_in_tlp) return 0;
        if (top->m_axis_cc_tvalid || top->m_axis_rq_tvalid || top->cfg_interrupt_msi_int) return 0;
#else
        if (!sq.empty() || !hrd_q.empty() || hwr_burst) return 0;
        if (top->host_cpl_valid || top->host_hrd_valid || top->host_hwr_valid) return 0;
#endif
        why = W_UART;
        if (!uart_in.empty() || top->uart_tx_valid) return 0;
        drive();
        why = W_INCHG;
        if (in_chg) return 0;
        auto *m = soc();
        // the CPU in a stalled wait read, no wake source up; LiteX's timer stopped (the firmware
        // never starts it); the bus timeout counting down that read
        why = W_WAIT;
        if (!m->__PVT__ats_wait__DOT__rd || m->__PVT__ats_wait__DOT__wake || m->__PVT__ats_wait__DOT__ack_q) return 0;
        why = W_TIMER;
        if (m->__PVT__soc_timer_en_storage) return 0;
        const uint32_t bus_to = m->__PVT__count;
        why = W_BUS;
        if (bus_to >= kBusTimeout) return 0;
        // q: the quiet edges (edge 0 = the coming one): CYCLES at the edge below the deadline, the
        // stall count below the cap, no die's operation ending at its falling edge
        const uint64_t cyc = m->__PVT__soc_cyc;
        const uint32_t cnt = m->__PVT__ats_wait__DOT__cnt_q;
        uint64_t q = cnt < kWaitCap ? kWaitCap - cnt : 0;
        if (m->__PVT__soc_wait_mask_storage >> 16 & 1) {
            const uint64_t dl = m->__PVT__soc_wait_deadline_storage;
            q = std::min<uint64_t>(q, dl > cyc ? dl - cyc : 0);
        }
        const double be = ats_nand_next_busy_end();            // ns (< 0: no die busy)
        if (be >= 0) {
            // edge k falls at t_ps + (k + 1) * 10,000 ps; the die ends at the first with time >= be
            // (less kDieMargin edges: the page controllers' gates open PG_END_NS = 80 ns before the
            // end, rtl/nand/ats_nand_subsys.sv; their decision is taken at stepped falling edges)
            const uint64_t be_ps = uint64_t(std::llround(be * 1000.0));
            const uint64_t e = be_ps > t_ps ? (be_ps - t_ps + 2 * kHalfPs - 1) / (2 * kHalfPs) - 1 : 0;
            q = std::min<uint64_t>(q, e > kDieMargin ? e - kDieMargin : 0);
        }
        if (cut_kind == CUT_CYCLE) q = std::min<uint64_t>(q, cut_value > cycle ? cut_value - cycle : 0);
        q = std::min<uint64_t>(q, bus_to - 1);
        why = W_NEAR;
        if (q < 3) return 0;
        const uint64_t n = std::min<uint64_t>(q - 1, budget);
        m->__PVT__soc_cyc += n;
        m->__PVT__soc_uptime_cycles += n;
        m->__PVT__count = bus_to - uint32_t(n);
        m->__PVT__ats_wait__DOT__cnt_q = cnt + uint32_t(n);
        {   // the NAND scheduler's slot counter (ats_nand_sched.sv: 0 .. PERIOD - 1 on the free clock)
            auto &v = m->__PVT__ats_ssd_core__DOT__u_nand__DOT__u_sched__DOT__slot_q;
            if (v >= ATS_SKIP_SCHED_PERIOD) die("skip: scheduler slot %u, period %d", unsigned(v), ATS_SKIP_SCHED_PERIOD);
            v = uint8_t((v + n) % ATS_SKIP_SCHED_PERIOD);
            m->__Vdly__ats_ssd_core__DOT__u_nand__DOT__u_sched__DOT__slot_q = v;
        }
#ifdef ATS_NVME
        {   // the queue manager's round-robin phase (ats_nvme_qm.sv: edges mod NQ + 1, on the free clock)
            auto *t = top->rootp->ats_soc_nvme_sim_top;
            auto &v = t->__PVT__u_nvme__DOT__u_qm__DOT__rr_ph_q;
            if (v >= ATS_SKIP_NVME_RR) die("skip: queue manager phase %u, period %d", unsigned(v), ATS_SKIP_NVME_RR);
            v = uint8_t((v + n) % ATS_SKIP_NVME_RR);
            t->__Vdly__u_nvme__DOT__u_qm__DOT__rr_ph_q = v;
        }
#endif
#ifdef ATS_SETTLE_CHECK
        for (bool &a : sm_armed) a = false;      // (the edge after a jump is not the one after the fire)
#endif
        cycle += n;
        t_ps += n * 2 * kHalfPs;
        ctx->time(t_ps);
        g_skipped += n;
        skips++;
        return n;
    }
#endif

#ifdef ATS_SETTLE_CHECK
    // ---- the page gates' settle check (build.py --define ATS_SETTLE_CHECK; sim/soc/README.md "Cycle
    // skipping"): the gates keep their HOLD; after every falling edge at which a page controller's gate
    // would have closed by its settle (pg_sfire_q), its whole Verilated state (every member of the
    // SoC's class under its u_page, ats_settle_members.h) is saved, and after the next edge, which
    // the settle would have left out, compared: a member that changed is a register the settle missed
    struct SmVar { const char *name; uint8_t *p; size_t n; };
    std::vector<SmVar> sm_vars[ATS_SETTLE_NCH];
    std::vector<uint8_t> sm_snap[ATS_SETTLE_NCH];
    bool sm_armed[ATS_SETTLE_NCH] = {};
    uint64_t sm_fires = 0, sm_checked = 0, sm_bad = 0;
    std::map<std::string, uint64_t> sm_diff;
    void settle_init() {
        auto *m = soc();
#define ATS_SM(c, v) sm_vars[c].push_back({#v, reinterpret_cast<uint8_t *>(&m->v), sizeof(m->v)});
#define ATS_SF(c, v)
#include "ats_settle_members.h"
#undef ATS_SM
#undef ATS_SF
    }
    bool settle_fire(int c) {
        auto *m = soc();
#define ATS_SM(c, v)
#define ATS_SF(cc, v) if (c == cc) return m->v;
#include "ats_settle_members.h"
#undef ATS_SM
#undef ATS_SF
        return false;
    }
    void settle_snap(int c, std::vector<uint8_t> &b) {
        b.clear();
        for (const SmVar &v : sm_vars[c]) b.insert(b.end(), v.p, v.p + v.n);
    }
    void settle_check() {
        if (sm_vars[0].empty()) settle_init();
        std::vector<uint8_t> now;
        for (int c = 0; c < ATS_SETTLE_NCH; c++) {
            if (sm_armed[c]) {
                settle_snap(c, now);
                sm_checked++;
                if (now != sm_snap[c]) {
                    sm_bad++;
                    size_t o = 0;
                    for (const SmVar &v : sm_vars[c]) {
                        if (std::memcmp(now.data() + o, sm_snap[c].data() + o, v.n)) sm_diff[v.name]++;
                        o += v.n;
                    }
                }
            }
            sm_armed[c] = settle_fire(c);
            if (sm_armed[c]) {
                sm_fires++;
                settle_snap(c, sm_snap[c]);
            }
        }
    }
    void settle_report() {
        std::fprintf(stderr, "[ats_soc_sim] settle check: %" PRIu64 " edges after a settle checked, %" PRIu64
                     " with a change\n", sm_checked, sm_bad);
        for (auto &kv : sm_diff) std::fprintf(stderr, "[ats_soc_sim]   changed %12" PRIu64 "  %s\n", kv.second, kv.first.c_str());
    }
#endif

    uint32_t power_cut() {
        if (cut_done) return 0;
        // the supply falls: the dies tear what they are doing and save their images (ats_nand_die);
        // the controller loses its state with them: nothing after this edge reaches flash
        // the controller sees the power fail with the clock low (an evaluation before the edge, as
        // drive() gives every input): a gate's latch takes it (rtl/common/ats_sim_cgate.sv)
        top->host_pwr_fail = 1;
        top->eval();
        top->power_ok = 0;
        tick();
        tick();
        cut_done = true;
        cut_cycle = cycle;
        cut_kind = CUT_NONE;
        std::fprintf(stderr, "[ats_soc_sim] power cut at cycle %" PRIu64 "\n", cycle);
        return R_CUT;
    }

    void run(uint64_t max_cycles, uint32_t until) {
#ifdef ATS_NVME
        if (until & (U_CPL | U_IDLE)) {
            error("RUN: conditions 0 and 1 (completion, idle) are of the host-port build (NVMe: the host reads its CQs)");
            until &= ~(U_CPL | U_IDLE);
        }
#endif
        auto t0 = std::chrono::steady_clock::now();
        uint32_t why = 0;
        if (cut_done) {
            why = R_CUT;
        } else {
            if ((until & U_IDLE) && completed == submitted) why |= U_IDLE;
            if ((until & U_HOST_EN) && top->host_cmd_ready) why |= U_HOST_EN;
        }
        for (uint64_t n = 0; !why && n < max_cycles; n++) {
#ifdef ATS_SIM_SKIP
            n += skip(max_cycles - n - 1);      // (the RUN's last cycle is always stepped)
#endif
            uint32_t w = step();
            if (out.size() > (1u << 16)) flush();
            if ((until & U_IDLE) && completed == submitted) w |= U_IDLE;
            if ((until & U_HOST_EN) && top->host_cmd_ready) w |= U_HOST_EN;
            why = w & (until | R_CUT);
        }
        if (!why) why = R_MAX;
        wall_run += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        struct __attribute__((packed)) { uint64_t cyc; uint32_t reason; } m = {cycle, why};
        send_msg(M_STOPPED, &m, sizeof m);
    }

    std::string nvme_json() {
#ifdef ATS_NVME
        char b[256];
        std::snprintf(b, sizeof b,
                      ", \"nvme\": true, \"mmio_reads\": %" PRIu64 ", \"mmio_writes\": %" PRIu64
                      ", \"dma_rd_dw\": %" PRIu64 ", \"dma_wr_dw\": %" PRIu64 ", \"msis\": %" PRIu64
                      ", \"nvme_rdy\": %d",
                      mmio_reads, mmio_writes, dma_rd_dw, dma_wr_dw, msis, int(top->nvme_rdy));
        return b;
#else
        return ", \"nvme\": false";
#endif
    }

    std::string info_json() {
        char buf[1024];
        std::snprintf(buf, sizeof buf,
                      "{\"cycle\": %" PRIu64 ", \"clk_mhz\": 100, \"submitted\": %" PRIu64 ", \"accepted\": %" PRIu64
                      ", \"completed\": %" PRIu64 ", \"cut\": %s, \"cut_cycle\": %" PRIu64
                      ", \"viol_total\": %u, \"mem_errors\": %" PRIu64 ", \"wall_run_s\": %.3f, \"sim_mhz\": %.4f"
                      ", \"host_mem_bytes\": %zu, \"skipped\": %" PRIu64 ", \"skips\": %" PRIu64 ", \"trace\": %s%s}",
                      cycle, submitted, accepted, completed, cut_done ? "true" : "false", cut_cycle,
                      top->viol_total, mem_errors, wall_run, wall_run > 0 ? cycle / wall_run / 1e6 : 0.0,
                      mem.size() * 4,
#ifdef ATS_SIM_SKIP
                      g_skipped, skips,
#else
                      uint64_t(0), uint64_t(0),
#endif
#if VM_TRACE
                      "true",
#else
                      "false",
#endif
                      nvme_json().c_str());
        return buf;
    }

    // ---- one host message; false: quit
    bool handle() {
        uint32_t len;
        if (!read_exact(&len, 4)) return false;
        if (len < 1 || len > (64u << 20)) die("bad message length %u", len);
        std::vector<uint8_t> b(len);
        if (!read_exact(b.data(), len)) return false;
        const uint8_t type = b[0];
        const uint8_t *p = b.data() + 1;
        in_chg = true;                                   // the message may change an input
        const size_t n = len - 1;
        auto u32 = [&](size_t o) { uint32_t v; std::memcpy(&v, p + o, 4); return v; };
        auto u64 = [&](size_t o) { uint64_t v; std::memcpy(&v, p + o, 8); return v; };
        switch (type) {
        case M_SUBMIT: {
#ifdef ATS_NVME
            error("SUBMIT: this is the NVMe build (commands go through the NVMe queues: MMIO_WRITE / MMIO_READ)");
            break;
#endif
            if (n != 24) { error("SUBMIT of %zu bytes (24 expected)", n); break; }
            Cmd c;
            c.op = p[0]; c.tag = p[1]; c.txid = p[2]; c.flags = p[3]; c.attr = p[4]; c.prio = p[5];
            std::memcpy(&c.nlb, p + 6, 2);
            c.lba = u64(8);
            c.dptr = u32(16);
            c.aux = u32(20);
            sq.push_back(c);
            submitted++;
            break;
        }
        case M_MEM_WRITE: {
            if (n < 4 || ((n - 4) & 3)) { error("MEM_WRITE of %zu bytes", n); break; }
            uint32_t a = u32(0);
            for (size_t i = 4; i < n; i += 4) { std::memcpy(&word(a), p + i, 4); a += 4; }
            break;
        }
        case M_MEM_READ: {
            if (n != 8) { error("MEM_READ of %zu bytes", n); break; }
            uint32_t a = u32(0), l = u32(4);
            std::vector<uint8_t> r(4 + ((l + 3) & ~3u));
            std::memcpy(r.data(), &a, 4);
            for (uint32_t i = 0; i < l; i += 4) std::memcpy(r.data() + 4 + i, &word(a + i), 4);
            send_msg(M_MEM_DATA, r.data(), r.size());
            break;
        }
        case M_RUN:
            if (n != 12) { error("RUN of %zu bytes", n); break; }
            run(u64(0), u32(8));
            break;
        case M_UART_IN:
            uart_in.insert(uart_in.end(), p, p + n);
            break;
        case M_CUT_ARM:
            if (n != 12) { error("CUT_ARM of %zu bytes", n); break; }
            if (u32(0) > CUT_CPL) { error("CUT_ARM kind %u (0..3)", u32(0)); break; }
            cut_kind = u32(0);
            cut_value = u64(4);
            break;
        case M_CUT_NOW:
            power_cut();
            break;
        case M_PWR_FAIL:
            top->host_pwr_fail = n > 0 && p[0];
            break;
        case M_TRACE:
#if VM_TRACE
            if (n >= 1 && p[0]) open_trace(std::string(reinterpret_cast<const char *>(p + 1), n - 1));
            else close_trace();
#else
            error("this build has no FST tracing (build with trace)");
#endif
            break;
        case M_INFO: {
            std::string s = info_json();
            send_msg(M_INFO_R, s.data(), s.size());
            break;
        }
        case M_QUIT:
            flush();
            return false;
#ifdef ATS_NVME
        case M_MMIO_WRITE:
            if (n != 8 || (u32(0) & 3) || u32(0) >= 0x4000) { error("MMIO_WRITE of %zu bytes / bad offset", n); break; }
            cq_q.push_back({true, u32(0), u32(4), mmio_tag++});
            mmio_writes++;
            break;
        case M_MMIO_READ:
            if (n != 4 || (u32(0) & 3) || u32(0) >= 0x4000) { error("MMIO_READ of %zu bytes / bad offset", n); break; }
            cq_q.push_back({false, u32(0), 0, mmio_tag++});
            mmio_reads++;
            break;
#endif
        default:
            error("unknown message type 0x%02x", type);
        }
        flush();
        return true;
    }
};

int listen_once(const std::string &path) {
    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) die("socket: %s", std::strerror(errno));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof a.sun_path) die("socket path too long: %s", path.c_str());
    std::strcpy(a.sun_path, path.c_str());
    ::unlink(path.c_str());
    if (::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) die("bind %s: %s", path.c_str(), std::strerror(errno));
    if (::listen(s, 1) < 0) die("listen: %s", std::strerror(errno));
    std::fprintf(stderr, "[ats_soc_sim] host port listening on %s\n", path.c_str());
    int c = ::accept(s, nullptr, nullptr);
    if (c < 0) die("accept: %s", std::strerror(errno));
    ::close(s);
    ::unlink(path.c_str());
    return c;
}

}  // namespace

#ifdef ATS_SIM_SKIP
// DPI-C of rtl/common/ats_sim_cgate.sv: +1 when a gate's clock starts running (and once at time 0
// for each gate: they start open), -1 when it stops
extern "C" void ats_sim_gate_open(int id, int delta) {
    g_gates_open += delta;
    g_open_id[id & 31] += delta;
    if (g_gates_open > g_gates) g_gates = g_gates_open;     // (the gates: all open at time 0)
}
extern "C" long long ats_sim_skipped() { return (long long)g_skipped; }
#endif

int main(int argc, char **argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    auto plus = [&](const char *name) -> std::string {
        const char *s = ctx->commandArgsPlusMatch(name);
        if (!s || !*s) return "";
        const char *eq = std::strchr(s, '=');
        return eq ? std::string(eq + 1) : std::string("1");
    };
#if VM_TRACE
    ctx->traceEverOn(true);
#endif
    auto top = std::make_unique<Top>(ctx.get());
    Sim sim;
    sim.ctx = ctx.get();
    sim.top = top.get();
    std::string mb = plus("hostmem_mb=");
    sim.mem.assign(size_t(mb.empty() ? 16 : std::atoi(mb.c_str())) << 18, 0);
    std::string ul = plus("uart_log=");
    if (!ul.empty() && !(sim.uart_log = std::fopen(ul.c_str(), "w"))) die("cannot write %s", ul.c_str());
    sim.uart_echo = !plus("uart_echo").empty();
    sim.eval_always = !plus("eval_always").empty();
#ifdef ATS_SIM_SKIP
    sim.skip_on = plus("skip_off").empty() && !VM_TRACE;     // (a traced run records every edge)
    sim.skip_stats = !plus("skip_stats").empty();
#endif
#if VM_TRACE
    sim.trace_path = plus("trace=");
    if (!sim.trace_path.empty()) {
        std::string f = plus("trace_from="), t = plus("trace_to=");
        sim.trace_from = f.empty() ? 0 : std::strtoull(f.c_str(), nullptr, 0);
        sim.trace_to = t.empty() ? ~0ull : std::strtoull(t.c_str(), nullptr, 0);
    }
#endif
    std::string port = plus("port="), fds = plus("fd=");
    if (!fds.empty()) sim.fd = std::atoi(fds.c_str());
    else if (!port.empty()) sim.fd = listen_once(port);
    else die("give +port=<socket path> or +fd=<n> (docs/host-port.md)");

    // power-on: supply up, reset held for 10 cycles (the dies load their images at power-on)
    top->rst = 1;
    top->power_ok = 0;
    top->host_pwr_fail = 0;
#ifndef ATS_NVME
    top->host_cpl_ready = 1;
    top->host_hrd_ready = 1;
    top->host_hwr_ready = 1;
#endif
    top->uart_tx_ready = 1;
#ifdef ATS_NVME
    sim.drive_pcie_const();
#endif
    top->clk = 0;
    top->eval();
    for (int i = 0; i < 10; i++) {
        if (i == 2) top->power_ok = 1;
        sim.tick();
    }
    top->rst = 0;
#if VM_TRACE
    if (!sim.trace_path.empty() && sim.trace_from <= sim.cycle) sim.open_trace(sim.trace_path);
#endif
    {
        std::string h = "{\"proto\": 1, " + sim.info_json().substr(1);
        sim.send_msg(M_HELLO, h.data(), h.size());
        sim.flush();
    }
    while (sim.handle()) {
    }
    if (!sim.cut_done) {                       // QUIT / EOF: power off (images saved)
        top->power_ok = 0;
        sim.tick();
        sim.tick();
    }
#if VM_TRACE
    sim.close_trace();
#endif
    top->final();
    if (sim.uart_log) std::fclose(sim.uart_log);
    std::fprintf(stderr, "[ats_soc_sim] %" PRIu64 " cycles, %.2f s in RUN: %.3f MHz simulated (clock 100 MHz)%s\n",
                 sim.cycle, sim.wall_run, sim.wall_run > 0 ? sim.cycle / sim.wall_run / 1e6 : 0.0,
                 sim.cut_done ? ", power cut" : "");
#ifdef ATS_SIM_SKIP
    std::fprintf(stderr, "[ats_soc_sim] cycle skipping%s: %" PRIu64 " cycles skipped (%.1f %%) in %" PRIu64 " jumps\n",
                 sim.skip_on ? "" : " off (+skip_off)", g_skipped, sim.cycle ? 100.0 * g_skipped / sim.cycle : 0.0, sim.skips);
    sim.skip_report();
#endif
#ifdef ATS_SETTLE_CHECK
    sim.settle_report();
#endif
    return top->viol_total ? 3 : 0;
}
