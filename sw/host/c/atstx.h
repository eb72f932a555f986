/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the transactional host API of atomssd in C, over the NVMe vendor commands of
 * docs/host-interface.md §1.5 (TX Write 0x81, TX Read 0x82, TX Begin 0x84, TX Commit 0x88,
 * TX Abort 0x8C, Range Flush 0x89) and the standard Read, Write (FUA), Flush and Dataset
 * Management.
 *
 * Two ways to reach a device:
 *   ats_open_sim()  the full-system simulation's host port (docs/host-port.md, NVMe build): the
 *                   library is the host's NVMe driver (admin queue, one I/O queue pair, PRPs,
 *                   polled completions) over the simulator's Unix socket;
 *   ats_open_nvme() a Linux NVMe namespace (/dev/nvmeXnY or /dev/ngXnY) through the kernel's
 *                   passthrough ioctls (an FPGA board behind a real NVMe driver; needs
 *                   CAP_SYS_ADMIN).
 * Both build the same SQEs (atstx_sqe.c). Commands run one at a time (queue depth 1).
 *
 * Return convention of every function that returns int:
 *   0                     success
 *   > 0                   the device's NVMe status, (SCT << 8) | SC (docs/host-interface.md §1.8),
 *                         e.g. 0x0080 LBA Out of Range, 0x0702 BAD_TXID, 0x0704 TX_FULL
 *   < 0                   a host-side failure: -errno (I/O on the socket or device, -ETIMEDOUT for
 *                         a command without completion, -EINVAL for a bad argument, -ENOSPC when
 *                         every txid of this handle is in use) or ATS_E_POWER_CUT (the simulated
 *                         power was cut: the device is gone until it is restarted)
 * ats_strerror() names any of them.
 */
#ifndef ATSTX_H
#define ATSTX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATS_E_POWER_CUT (-10000)

/* NVMe statuses the API returns by name (host-interface.md §1.8): (SCT << 8) | SC */
#define ATS_SC_INVALID_OPCODE 0x0001
#define ATS_SC_INVALID_FIELD  0x0002
#define ATS_SC_DATA_XFER      0x0004
#define ATS_SC_INTERNAL       0x0006
#define ATS_SC_LBA_RANGE      0x0080
#define ATS_SC_WRITE_FAULT    0x0280
#define ATS_SC_READ_ERROR     0x0281
#define ATS_SC_BAD_TXID       0x0702
#define ATS_SC_TX_FULL        0x0704
#define ATS_SC_INDEX_FULL     0x0705
#define ATS_SC_TX_EMPTY       0x0706
#define ATS_SC_TABLE_FULL     0x0708

/* write flags */
#define ATS_FUA     (1u << 0)   /* durable when the call returns */
#define ATS_BARRIER (1u << 1)   /* closes the epoch (TX Write with TXID 0 + BARRIER) */

typedef struct ats_dev ats_dev;
typedef struct ats_tx ats_tx;

struct ats_info {
    uint32_t lba_bytes;     /* LBA size = the device page */
    uint64_t num_lbas;      /* namespace size */
    uint32_t num_tx;        /* txids 1 … num_tx (IDENTIFY word 9) */
    uint32_t tx_entries;    /* pages a transaction holds (IDENTIFY word 10) */
    uint32_t max_transfer;  /* bytes per command (MDTS) */
};

struct ats_range {
    uint64_t lba;
    uint32_t nlb;           /* blocks, 1 … 65536 */
};

/* ---- devices */
int  ats_open_sim(const char *socket_path, ats_dev **out);
int  ats_open_nvme(const char *path, ats_dev **out);
/* clean shutdown (CC.SHN normal, wait for SHST complete), then close (the simulator powers off and
 * saves its NAND images); after a power cut it only closes */
int  ats_close(ats_dev *dev);
int  ats_info(const ats_dev *dev, struct ats_info *info);
const char *ats_strerror(int status);

/* ---- plain I/O: nlb blocks of lba_bytes each; at most max_transfer bytes a call */
int ats_read(ats_dev *dev, uint64_t lba, uint32_t nlb, void *buf);
int ats_write(ats_dev *dev, uint64_t lba, uint32_t nlb, const void *buf, unsigned flags);
int ats_flush(ats_dev *dev);
int ats_rflush(ats_dev *dev, const struct ats_range *ranges, unsigned n);   /* 1 … 8 ranges */
int ats_trim(ats_dev *dev, const struct ats_range *ranges, unsigned n);     /* 1 … 8 ranges */

/* ---- transactions
 * ats_tx_begin takes the lowest free txid of this handle (-ENOSPC when none) and opens it with
 * TX Begin. Writes are invisible to plain reads until the commit returns; ats_tx_read sees them.
 * ats_tx_commit / ats_tx_commit_write / ats_tx_abort end the transaction and free the handle
 * whatever they return (a TX_FULL or INDEX_FULL commit means the device aborted it). A write that
 * fails with TX_FULL / INDEX_FULL ends it too: the library sends TX Abort, and the handle only
 * accepts ats_tx_abort (which then returns 0) afterwards. A write that would take the transaction
 * past tx_entries distinct pages is refused before it is sent (ATS_SC_TX_FULL, nothing changes). */
int ats_tx_begin(ats_dev *dev, ats_tx **tx);
uint32_t ats_tx_id(const ats_tx *tx);
int ats_tx_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf);
int ats_tx_read(ats_tx *tx, uint64_t lba, uint32_t nlb, void *buf);
int ats_tx_commit(ats_tx *tx, uint32_t *result);                  /* TX Commit (a commit record); *result = DW0 (0) */
int ats_tx_commit_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf);  /* last write carries COMMIT */
int ats_tx_abort(ats_tx *tx);

/* ---- simulation only (other devices: -ENOTSUP) */
int ats_sim_arm_cut(ats_dev *dev, uint32_t kind, uint64_t value);  /* kind 1: at cycle `value` (absolute) */
int ats_sim_cycle(ats_dev *dev, uint64_t *cycle);

#ifdef __cplusplus
}
#endif
#endif
