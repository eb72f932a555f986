// SPDX-License-Identifier: Apache-2.0
// harness_main: minimal plain-Verilator C++ harness for ats_nand_die (no cocotb). It drives the
// pins with ONFI mode-0 timing from C++, time in ps (timescale 1ns/1ps), and runs a smoke
// sequence: RESET, READ ID, ERASE, PROGRAM, READ back, power cut during a PROGRAM, RESET, READ
// back, then saves the image. With +misuse it first latches one unsupported command after the
// RESET: the die (default VIOL_ERROR = stop) ends the run there (Verilator exits 1); with
// ATS_NAND_VIOL=count the run goes on and the harness exits 1 on viol_count.
// Exit status: 0 only if every check passed, no violation was counted and nothing stopped the run.
// Build and run: make -f sim/nand/harness.mk (see README.md).
#include <cstdio>
#include <cstring>
#include <memory>

#include "Vats_nand_die.h"
#include "ats_nand_store.h"
#include "verilated.h"

namespace {

struct Host {
    VerilatedContext *ctx;
    Vats_nand_die *d;
    uint64_t t = 0;  // ps

    void step(uint64_t ps) {  // advance time, with a 100 MHz clk for the die's timers
        uint64_t end = t + ps;
        while (t < end) {
            uint64_t next = (t / 5000 + 1) * 5000;
            t = next < end ? next : end;
            ctx->time(t);
            if (t % 5000 == 0) d->clk = (t / 5000) & 1;
            d->eval();
        }
    }
    void set() { d->eval(); }
    void latch(int cle, int ale, uint8_t b) {  // tWP/tCLS/tDS <= 60 ns, tWH/tCLH/tDH <= 60 ns
        d->cle = cle;
        d->ale = ale;
        d->dq_i = b;
        d->we_n = 0;
        set();
        step(60000);
        d->we_n = 1;
        set();
        step(60000);
    }
    uint8_t read() {  // tRP, tREH
        d->re_n = 0;
        set();
        step(60000);
        uint8_t v = d->dq_o;
        d->re_n = 1;
        set();
        step(60000);
        return v;
    }
    void select() { d->ce_n = 0; set(); step(100000); }          // tCS
    void deselect() { step(250000); d->ce_n = 1; set(); step(100000); }  // tRHW / tCH margin
    void wait_ready() {  // tWB, R/B#, tRR
        step(250000);
        while (!d->rb_n) step(10000);
        step(50000);
    }
    void addr5(int row, int col) {
        latch(0, 1, col & 0xFF);
        latch(0, 1, (col >> 8) & 0xFF);
        latch(0, 1, row & 0xFF);
        latch(0, 1, (row >> 8) & 0xFF);
        latch(0, 1, (row >> 16) & 0xFF);
    }
    uint8_t status() {
        select();
        latch(1, 0, 0x70);
        step(150000);  // tWHR
        uint8_t s = read();
        deselect();
        return s;
    }
    void reset() { select(); latch(1, 0, 0xFF); wait_ready(); deselect(); }
    uint8_t erase(int block, int ppb) {
        int row = block * ppb;
        select();
        latch(1, 0, 0x60);
        latch(0, 1, row & 0xFF);
        latch(0, 1, (row >> 8) & 0xFF);
        latch(0, 1, (row >> 16) & 0xFF);
        latch(1, 0, 0xD0);
        wait_ready();
        deselect();
        return status();
    }
    void program_start(int row, const uint8_t *data, int n) {
        select();
        latch(1, 0, 0x80);
        addr5(row, 0);
        step(250000);  // tADL
        for (int i = 0; i < n; i++) latch(0, 0, data[i]);
        latch(1, 0, 0x10);
    }
    void read_page(int row, uint8_t *out, int n) {
        select();
        latch(1, 0, 0x00);
        addr5(row, 0);
        latch(1, 0, 0x30);
        wait_ready();
        for (int i = 0; i < n; i++) out[i] = read();
        deselect();
    }
};

}  // namespace

int main(int argc, char **argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    auto dut = std::make_unique<Vats_nand_die>(ctx.get());
    Host h{ctx.get(), dut.get()};
    const int ppb = 8;  // matches -GPAGES_PER_BLOCK in harness.mk
    int errors = 0;

    dut->ce_n = 1; dut->we_n = 1; dut->re_n = 1; dut->cle = 0; dut->ale = 0; dut->wp_n = 1;
    dut->dq_i = 0; dut->power_ok = 0; dut->clk = 0;
    h.set();
    h.step(100000);
    dut->power_ok = 1;
    h.set();
    h.step(100000);
    h.reset();

    bool misuse = false;
    for (int i = 1; i < argc; i++)
        if (std::strcmp(argv[i], "+misuse") == 0) misuse = true;
    if (misuse) {  // one protocol violation: an unsupported command
        h.select();
        h.latch(1, 0, 0x42);
        h.deselect();
        std::printf("misuse: unsupported command 42h latched\n");
    }

    h.select();
    h.latch(1, 0, 0x90);
    h.latch(0, 1, 0x00);
    h.step(150000);
    uint8_t id0 = h.read(), id1 = h.read();
    h.deselect();
    std::printf("READ ID: %02x %02x, status %02x\n", id0, id1, h.status());

    uint8_t pat[64], got[64];
    for (int i = 0; i < 64; i++) pat[i] = uint8_t(i * 37 + 5);
    std::printf("ERASE block 1: status %02x\n", h.erase(1, ppb));
    h.program_start(1 * ppb + 0, pat, 64);
    h.wait_ready();
    h.deselect();
    std::printf("PROGRAM row %d: status %02x\n", ppb, h.status());
    h.read_page(ppb, got, 64);
    if (std::memcmp(pat, got, 64) != 0) { std::printf("FAIL: read back differs\n"); errors++; }

    // power cut in the middle of the next program: page 1 is torn, page 0 survives
    h.program_start(1 * ppb + 1, pat, 64);
    h.step(500000);
    dut->ce_n = 1; dut->power_ok = 0;
    h.set();
    h.step(1000000);
    dut->power_ok = 1;
    h.set();
    h.step(100000);
    h.reset();
    h.read_page(ppb, got, 64);
    if (std::memcmp(pat, got, 64) != 0) { std::printf("FAIL: completed page lost at the power cut\n"); errors++; }
    h.read_page(ppb + 1, got, 64);
    int diff = 0;
    for (int i = 0; i < 64; i++) diff += __builtin_popcount(unsigned(pat[i] ^ got[i]));
    std::printf("torn page: %d of 512 bits differ from the data meant\n", diff);
    if (diff < 64) { std::printf("FAIL: torn page too close to its data\n"); errors++; }

    void *store = ats_nand_handle(0);
    std::printf("pages stored: %d\n", ats_nand_pages_stored(store));
    const char *img = "ats_nand_harness.img";
    for (int i = 1; i < argc; i++)
        if (std::strncmp(argv[i], "+save=", 6) == 0) img = argv[i] + 6;
    if (ats_nand_save(store, img) != 0) { std::printf("FAIL: cannot save %s\n", img); errors++; }
    else std::printf("image saved to %s\n", img);

    uint32_t viol = dut->viol_count;
    std::printf("viol_count = %u\n", viol);
    if (viol != 0) errors++;
    if (ctx->gotFinish() || ctx->gotError()) {  // the die ($error + $stop) or another $error/$finish
        std::printf("FAIL: the simulation was stopped (see the %%Error lines above)\n");
        errors++;
    }
    dut->final();
    std::printf("%s\n", errors ? "HARNESS FAILED" : "HARNESS PASSED");
    return errors ? 1 : 0;
}
