// SPDX-License-Identifier: Apache-2.0
// The board's DDR3 initialisation, run by the firmware's start-up code (sw/firmware/crt0.S calls
// ats_board_init) before it copies .data and clears .bss, both of which are in the DDR3 (main RAM).
// LiteX's liblitedram sdram_init() (the LiteX BIOS's: DFII software control, the PHY reset, the
// generated init_sequence() of sdram_phy.h, read levelling of the ECP5 DDR3 PHY, hardware control)
// does the work; soc/boards/build.py compiles it next to this file against the board SoC's generated
// headers, with SDRAM_TEST_DISABLE (LiteX's memtest would pull in libbase), and moves every
// zero-initialised variable of these objects into the section .sram_bss (SRAM, below the stack;
// sw/firmware/linker.ld), which this file clears itself: nothing here touches the DDR3 before
// sdram_init() returns. A small pattern test of the DDR3 follows, and a failure stops the firmware
// with a message on the console (never a silent hang on the first main-RAM access).
#include <stdarg.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <system.h>

int sdram_init(void);
void ats_board_init(void);
int printf(const char *fmt, ...);

extern uint32_t _fsram_bss[], _esram_bss[];

static void bputc(char c) {
    if (c == '\n') bputc('\r');
    while (uart_txfull_read()) {
    }
    uart_rxtx_write((uint8_t)c);
}

static void bputs(const char *s) {
    while (*s) bputc(*s++);
}

// the printf of liblitedram's messages: %d %u %x %s %c %%, with l, a width and 0 padding
int printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            bputc(*p);
            continue;
        }
        p++;
        char pad = ' ';
        int width = 0;
        if (*p == '0') { pad = '0'; p++; }
        while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
        while (*p == 'l') p++;
        char buf[12];
        int n = 0;
        uint32_t v;
        int neg = 0;
        switch (*p) {
        case 'd': {
            int32_t s = va_arg(ap, int32_t);
            neg = s < 0;
            v = neg ? (uint32_t)-s : (uint32_t)s;
            do { buf[n++] = (char)('0' + v % 10); v /= 10; } while (v);
            break;
        }
        case 'u':
            v = va_arg(ap, uint32_t);
            do { buf[n++] = (char)('0' + v % 10); v /= 10; } while (v);
            break;
        case 'x':
        case 'X':
            v = va_arg(ap, uint32_t);
            do { buf[n++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
            break;
        case 's': bputs(va_arg(ap, const char *)); continue;
        case 'c': bputc((char)va_arg(ap, int)); continue;
        case '\0': p--; continue;
        default: bputc(*p); continue;
        }
        if (neg) width--;
        if (neg && pad == '0') bputc('-');
        for (int i = n; i < width; i++) bputc(pad);
        if (neg && pad != '0') bputc('-');
        while (n) bputc(buf[--n]);
    }
    va_end(ap);
    return 0;
}

// a few words across the CPU's 16 MiB of main RAM, written and read back past the data cache
static int dram_check(void) {
    volatile uint32_t *ram = (volatile uint32_t *)MAIN_RAM_BASE;
    const uint32_t words = (16u << 20) / 4, step = words / 64 + 1;
    for (uint32_t i = 0; i < words; i += step) ram[i] = 0x5a5a0000u ^ (i * 2654435761u);
    flush_cpu_dcache();
    for (uint32_t i = 0; i < words; i += step) {
        if (ram[i] != (0x5a5a0000u ^ (i * 2654435761u))) {
            printf("DDR3: word %d reads %08x\n", (int)i, (unsigned)ram[i]);
            return 0;
        }
    }
    return 1;
}

void ats_board_init(void) {
    for (uint32_t *p = _fsram_bss; p < _esram_bss; p++) *p = 0;
    if (!sdram_init() || !dram_check()) {
        bputs("DDR3 initialisation failed: firmware stopped\n");
        for (;;) {
        }
    }
    bputs("DDR3 ready\n");
}
