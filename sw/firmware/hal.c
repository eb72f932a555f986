// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: hardware access (hal.h).
#include "hal.h"

#include <stdarg.h>

// a 64-bit status is two CSR words; LiteX's accessor reads the high word, then the low one. A
// carry between the two reads would tear the value: read until the high word is the same before
// and after (the low word may keep moving: a counter).
static uint64_t read64_stable(uint64_t (*rd)(void)) {
    uint64_t a = rd(), b = rd();
    while ((a >> 32) != (b >> 32)) {
        a = b;
        b = rd();
    }
    return a;
}

uint64_t hal_cycles(void) { return read64_stable(ats_cycles_read); }
uint64_t hal_next_seq(void) { return read64_stable(ats_next_seq_read); }
uint64_t hal_cpl_seq(void) { return read64_stable(ats_cpl_seq_read); }

// CTRL.no_space is kept as it is (hal_no_space sets it)
void hal_ctrl(uint32_t host_en, uint32_t wb_hold) {
    const uint32_t ns = ats_ctrl_read() & (1u << CSR_ATS_CTRL_NO_SPACE_OFFSET);
    ats_ctrl_write((host_en << CSR_ATS_CTRL_HOST_EN_OFFSET) | (wb_hold << CSR_ATS_CTRL_WB_HOLD_OFFSET) | ns);
}

void hal_no_space(uint32_t on) {
    const uint32_t v = ats_ctrl_read() & ~(1u << CSR_ATS_CTRL_NO_SPACE_OFFSET);
    ats_ctrl_write(v | ((on & 1u) << CSR_ATS_CTRL_NO_SPACE_OFFSET));
}

uint32_t hal_ctrl_host_en(void) { return (ats_ctrl_read() >> CSR_ATS_CTRL_HOST_EN_OFFSET) & 1u; }

uint32_t hal_wait(uint32_t mask, uint64_t deadline) {
    if (mask & WK(DEADLINE)) ats_wait_deadline_write(deadline);
    ats_wait_mask_write(mask);
    return *(volatile uint32_t *)ATSWAIT_BASE;     // acknowledged at the wake
}

// called while the firmware waits for its own command: a RELOC or NPROG may wait for a free block
// that only the firmware can hand out (hal_set_wait_hook)
static uint32_t (*wait_hook)(void);
static int in_hook;

void hal_set_wait_hook(uint32_t (*fn)(void)) { wait_hook = fn; }

// hal_fw_lookups: runs the hook (not re-entered); returns the wake sources at which it wants to run again
static uint32_t run_hook(void) {
    if (!wait_hook || in_hook) return 0;
    in_hook = 1;
    hal_wait_clr_act();
    const uint32_t want = wait_hook();
    in_hook = 0;
    return want;
}

// the CPU sleeps in the wait unit until the operation ends or, with the hook, until the hook may
// have work (the sources it asks for; an event during the hook is kept by the sticky ACT)
static void fw_wait(void) {
    while (ST_BIT(FW_BUSY)) {
        uint32_t mask = WK(FW_IDLE);
        if (wait_hook && !in_hook) {
            in_hook = 1;
            hal_wait_clr_act();
            mask |= wait_hook();
            in_hook = 0;
        }
        hal_wait(mask, 0);
    }
}

static void fw_go(uint32_t op, uint32_t rop, uint32_t kind, fw_rsp_t *r) {
    ats_fw_cmd_write((op << CSR_ATS_FW_CMD_OP_OFFSET) | (rop << CSR_ATS_FW_CMD_ROP_OFFSET) |
                     (kind << CSR_ATS_FW_CMD_KIND_OFFSET));
    fw_wait();
    const uint32_t v = ats_fw_rsp_read();
    r->status = (v >> CSR_ATS_FW_RSP_STATUS_OFFSET) & 0xFFu;
    r->mapped = (v >> CSR_ATS_FW_RSP_MAPPED_OFFSET) & 1u;
    r->beats = (v >> CSR_ATS_FW_RSP_BEATS_OFFSET) & 0xFFFFu;
    r->ppn = ats_fw_rsp_ppn_read();
    r->data = 0;
}

static inline void fw_addr(uint32_t die, uint32_t block, uint32_t page) {
    ats_fw_addr_write((page << CSR_ATS_FW_ADDR_PAGE_OFFSET) | (block << CSR_ATS_FW_ADDR_BLOCK_OFFSET) |
                      ((die % ATS_WAYS) << CSR_ATS_FW_ADDR_WAY_OFFSET) |
                      ((die / ATS_WAYS) << CSR_ATS_FW_ADDR_CHAN_OFFSET));
}

int hal_fw_nread(uint32_t die, uint32_t block, uint32_t page, fw_rsp_t *r) {
    fw_wait();
    fw_addr(die, block, page);
    fw_go(FW_NREAD, 0, 0, r);
    return ATS_OK;
}

int hal_fw_nerase(uint32_t die, uint32_t block, fw_rsp_t *r) {
    fw_wait();
    fw_addr(die, block, 0);
    fw_go(FW_NERASE, 0, 0, r);
    return ATS_OK;
}

int hal_fw_nprog(uint32_t die, uint32_t block, uint32_t page, uint32_t lpn, uint64_t seq, uint32_t kind, fw_rsp_t *r) {
    fw_wait();
    fw_addr(die, block, page);
    ats_fw_lpn_write(lpn);
    ats_fw_seq_write(seq);
    ats_fw_epoch_write(0);
    fw_go(FW_NPROG, 0, kind, r);   // txid 0, flags 0
    return ATS_OK;
}

int hal_fw_remap(uint32_t rop, uint32_t lpn, uint32_t ppn, fw_rsp_t *r) {
    fw_wait();
    ats_fw_lpn_write(lpn);
    ats_fw_ppn_write(ppn);
    fw_go(FW_REMAP, rop, 0, r);
    return ATS_OK;
}

// a run of LOOKUPs (the checkpoint's mapping, README "Checkpoints"): a LOOKUP is answered within tens
// of cycles, so the CPU polls the port instead of sleeping in the wait unit, and runs the hook once
// and then only when a source it asked for is pending (WAIT_PENDING), not once a command as
// fw_wait does: the hook's inputs change only with those sources. Same answers as hal_fw_remap.
uint32_t hal_fw_lookups(uint32_t lpn0, uint32_t n, uint32_t *lpns, uint32_t *ppns) {
    fw_wait();
    uint32_t want = run_hook(), k = 0;
    ats_fw_ppn_write(0);
    for (uint32_t lpn = lpn0; lpn < lpn0 + n; lpn++) {
        ats_fw_lpn_write(lpn);
        ats_fw_cmd_write((FW_REMAP << CSR_ATS_FW_CMD_OP_OFFSET) | (R_LOOKUP << CSR_ATS_FW_CMD_ROP_OFFSET));
        while (ST_BIT(FW_BUSY))
            if (ats_wait_pending_read() & want) want = run_hook();
        const uint32_t v = ats_fw_rsp_read();
        // mapped and status OK (hal_fw_remap's fields)
        if ((v & ((0xFFu << CSR_ATS_FW_RSP_STATUS_OFFSET) | (1u << CSR_ATS_FW_RSP_MAPPED_OFFSET))) ==
            (1u << CSR_ATS_FW_RSP_MAPPED_OFFSET)) {
            lpns[k] = lpn;
            ppns[k] = ats_fw_rsp_ppn_read();
            k++;
        }
    }
    return k;
}

int hal_fw_reloc(uint32_t lpn, uint32_t ppn, fw_rsp_t *r) {
    fw_wait();
    ats_fw_lpn_write(lpn);
    ats_fw_ppn_write(ppn);
    fw_go(FW_RELOC, 0, 0, r);
    return ATS_OK;
}

int hal_fw_seqset(uint64_t seq, fw_rsp_t *r) {
    fw_wait();
    ats_fw_seq_write(seq);
    fw_go(FW_SEQSET, 0, 0, r);
    return ATS_OK;
}

int hal_fw_sload(uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t epoch, uint64_t seq, fw_rsp_t *r) {
    fw_wait();
    ats_fw_lpn_write(lpn);
    ats_fw_ppn_write(ppn);
    ats_fw_epoch_write(epoch);
    ats_fw_seq_write(seq);
    fw_go(FW_SLOAD, rop, 0, r);
    r->data = ats_fw_rsp_data_read();
    return ATS_OK;
}

int hal_fw_sread(uint32_t rop, uint32_t lpn, uint32_t epoch, fw_rsp_t *r) {
    fw_wait();
    ats_fw_lpn_write(lpn);
    ats_fw_epoch_write(epoch);
    fw_go(FW_SLOAD, rop, 0, r);
    r->data = ats_fw_rsp_data_read();
    return ATS_OK;
}

int hal_fw_merge(uint32_t lpn, fw_rsp_t *r) {
    fw_wait();
    ats_fw_lpn_write(lpn);
    fw_go(FW_MERGE, 0, 0, r);
    r->data = ats_fw_rsp_data_read();
    return ATS_OK;
}

void hal_spare(spare_t *s) {
    volatile uint32_t *b = hal_buf();
    const uint32_t pw = ATS_PAGE_BYTES / 4;
    s->lpn = b[pw];
    s->seq = (uint64_t)b[pw + 1] | ((uint64_t)b[pw + 2] << 32);
    s->epoch = b[pw + 3];
    const uint32_t w = b[pw + 4];
    s->txid = (uint8_t)(w & 0xFF);
    s->kind = (uint8_t)((w >> 8) & 0xFF);
    s->flags = (uint8_t)((w >> 16) & 0xFF);
}

// ---- UART
void hal_putc(char c) {
    while (uart_txfull_read()) {
    }
    uart_rxtx_write((uint8_t)c);
}

int hal_getc(void) {
    if (uart_rxempty_read()) return -1;
    int c = (int)(uart_rxtx_read() & 0xFF);
    uart_ev_pending_write(1u << 1);   // rx event acknowledged
    return c;
}

void hal_puts(const char *s) {
    while (*s) {
        if (*s == '\n') hal_putc('\r');
        hal_putc(*s++);
    }
}

static void put_u64(uint64_t v, unsigned base, int width, char pad) {
    char buf[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    while (n < width) buf[n++] = pad;
    while (n) hal_putc(buf[--n]);
}

// printf subset: %d %u %x %s %c %%, with l / ll length, a width and 0 padding
void hal_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            if (*p == '\n') hal_putc('\r');
            hal_putc(*p);
            continue;
        }
        p++;
        char pad = ' ';
        int width = 0, lng = 0;
        if (*p == '0') { pad = '0'; p++; }
        while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
        while (*p == 'l') { lng++; p++; }
        switch (*p) {
        case 'd': {
            int64_t v = lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int);
            if (v < 0) { hal_putc('-'); v = -v; }
            put_u64((uint64_t)v, 10, width, pad);
            break;
        }
        case 'u':
        case 'x': {
            uint64_t v = lng >= 2 ? va_arg(ap, unsigned long long) : lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            put_u64(v, *p == 'x' ? 16 : 10, width, pad);
            break;
        }
        case 's': hal_puts(va_arg(ap, const char *)); break;
        case 'c': hal_putc((char)va_arg(ap, int)); break;
        default: hal_putc(*p); break;
        }
    }
    va_end(ap);
}
