/* SPDX-License-Identifier: Apache-2.0
 * libatstx internals: a client of the full-system simulation's host port (docs/host-port.md):
 * framing, RUN, host memory, BAR0 MMIO of the NVMe build, power cuts. Lockstep: the simulation
 * advances only inside ats_hp_run. */
#ifndef ATSTX_HOSTPORT_H
#define ATSTX_HOSTPORT_H

#include <stdint.h>

/* RUN conditions / STOPPED reasons */
#define ATS_HP_U_CPL     (1u << 0)
#define ATS_HP_U_IDLE    (1u << 1)
#define ATS_HP_U_LINE    (1u << 2)
#define ATS_HP_U_HOST_EN (1u << 3)  /* the firmware accepts host commands (boot / recovery done) */
#define ATS_HP_U_MMIO    (1u << 4)  /* an MMIO read was answered */
#define ATS_HP_U_MSI     (1u << 5)  /* an MSI was sent */
#define ATS_HP_R_MAX     (1u << 8)
#define ATS_HP_R_CUT     (1u << 9)

struct ats_hp {
    int fd;
    uint64_t cycle;                 /* where the simulation stands (the last STOPPED) */
    int cut;                        /* power was cut: only closing is left */
    uint32_t errors;                /* ERROR messages received (a malformed request or DMA) */
    uint32_t msis;                  /* MSI messages received */
    int mmio_have;                  /* an MMIO_DATA arrived since the last read was sent */
    uint32_t mmio_off, mmio_val, mmio_status;
    int nvme;                       /* HELLO says "nvme": true */
    uint8_t *rx;                    /* the payload of the last message */
    uint32_t rx_len, rx_cap;
};

/* connect (retrying for `wait_ms` while the simulator starts) and read HELLO */
int ats_hp_connect(struct ats_hp *hp, const char *path, unsigned wait_ms);
/* QUIT (the simulator powers off, saving its die images), wait for it to close, release */
void ats_hp_close(struct ats_hp *hp);
/* simulate up to `cycles` or one of `until`; *why = the STOPPED reasons; ATS_E_POWER_CUT on a cut */
int ats_hp_run(struct ats_hp *hp, uint64_t cycles, uint32_t until, uint32_t *why);
int ats_hp_mem_write(struct ats_hp *hp, uint32_t addr, const void *data, uint32_t len);
int ats_hp_mem_fill(struct ats_hp *hp, uint32_t addr, uint8_t byte, uint32_t len);
int ats_hp_mem_read(struct ats_hp *hp, uint32_t addr, void *out, uint32_t len);
int ats_hp_mmio_write(struct ats_hp *hp, uint32_t off, uint32_t value);
/* runs until answered (at most `budget` cycles: -ETIMEDOUT); 0xFFFFFFFF for an error completion */
int ats_hp_mmio_read(struct ats_hp *hp, uint32_t off, uint32_t *value, uint64_t budget);
int ats_hp_arm_cut(struct ats_hp *hp, uint32_t kind, uint64_t value);
#endif
