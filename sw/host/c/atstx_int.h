/* SPDX-License-Identifier: Apache-2.0
 * libatstx internals: the SQE, the transport operations and the device handle. */
#ifndef ATSTX_INT_H
#define ATSTX_INT_H

#include "atstx.h"

#define ATS_MAX_TX 64           /* txids a handle tracks (the device's NUM_TX is at most 63) */
#define ATS_PAGE 4096u          /* NVMe memory page (CC.MPS = 0) */

/* NVMe opcodes (host-interface.md §1.5, §1.6) */
enum {
    OPC_FLUSH = 0x00, OPC_WRITE = 0x01, OPC_READ = 0x02, OPC_DSM = 0x09,
    OPC_TX_WRITE = 0x81, OPC_TX_READ = 0x82, OPC_TX_BEGIN = 0x84, OPC_TX_COMMIT = 0x88,
    OPC_RANGE_FLUSH = 0x89, OPC_TX_ABORT = 0x8C,
    ADM_CREATE_SQ = 0x01, ADM_CREATE_CQ = 0x05, ADM_IDENTIFY = 0x06, ADM_SET_FEATURES = 0x09,
};

/* a 64-byte submission queue entry as 16 little-endian dwords; PRPs (dwords 6-9) and the CID are
 * the transport's */
struct ats_sqe {
    uint32_t dw[16];
};

enum ats_dir { ATS_NONE = 0, ATS_TO_DEV = 1, ATS_TO_HOST = 2 };

struct ats_ops {
    /* runs one command (admin: queue 0) with `len` bytes of data in `dir`; *dw0 = CQE DW0 */
    int (*exec)(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                uint32_t *dw0);
    int (*close)(ats_dev *dev);
    int (*arm_cut)(ats_dev *dev, uint32_t kind, uint64_t value);
    int (*cycle)(ats_dev *dev, uint64_t *cycle);
};

struct ats_tx {
    ats_dev *dev;
    uint32_t txid;
    uint32_t npages;            /* distinct pages written */
    uint64_t *pages;            /* their LBAs (tx_entries of room) */
    int dead;                   /* the device ended it (TX_FULL / INDEX_FULL at a write) */
};

struct ats_dev {
    const struct ats_ops *ops;
    struct ats_info info;
    uint8_t txid_used[ATS_MAX_TX + 1];
    void *priv;                 /* the transport's state */
};

/* SQE builders (atstx_sqe.c): pure functions, unit-tested against host-interface.md §1.5 */
void ats_sqe_rw(struct ats_sqe *s, uint8_t opc, uint64_t lba, uint32_t nlb, int fua, uint32_t cdw13);
void ats_sqe_simple(struct ats_sqe *s, uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11,
                    uint32_t cdw13);
uint32_t ats_cdw13(uint32_t txid, int commit, int barrier, uint32_t attr);
int ats_range_list(uint8_t *out, const struct ats_range *r, unsigned n);    /* Range Flush entries, 8 B each */
int ats_dsm_list(uint8_t *out, const struct ats_range *r, unsigned n);      /* DSM ranges, 16 B each */
/* PRP entries for a page-aligned buffer at `addr` of `len` bytes with its list at `list`:
 * returns the number of list entries written to `entries` (len > 2 pages), sets prp1/prp2 */
unsigned ats_prps(uint64_t addr, uint32_t len, uint64_t list, uint64_t *prp1, uint64_t *prp2, uint64_t *entries);
/* the CQE status field -> (SCT << 8) | SC */
int ats_cqe_status(uint32_t dw3);

/* atstx.c: the common handle setup after a transport is up (Identify, queues done) */
int ats_dev_init_from_identify(ats_dev *dev, const uint8_t *ctrl, const uint8_t *ns);
#endif
