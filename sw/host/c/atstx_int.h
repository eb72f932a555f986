/* SPDX-License-Identifier: Apache-2.0
 * libatstx internals: the SQE/CQE codec (atstx_sqe.c), the transport interface and the handles
 * (atstx.c). Included by the library's files and its unit test, not by applications. */
#ifndef ATSTX_INT_H
#define ATSTX_INT_H

#include "atstx.h"

#define ATS_MAX_TX   63u            /* CDW13 TXID is 6 bits */
#define ATS_PAGE     4096u          /* NVMe memory page (CAP.MPSMIN = CC.MPS = 0) */
#define ATS_MAX_XFER (64u * 1024u)  /* the library's own limit on one command (one PRP list page) */

/* NVMe opcodes (host-interface.md §1.5, §1.6) */
enum {
    OPC_FLUSH = 0x00, OPC_WRITE = 0x01, OPC_READ = 0x02, OPC_DSM = 0x09,
    OPC_TX_WRITE = 0x81, OPC_TX_READ = 0x82, OPC_TX_BEGIN = 0x84, OPC_TX_COMMIT = 0x88,
    OPC_RANGE_FLUSH = 0x89, OPC_TX_ABORT = 0x8C, OPC_SWRITE = 0x8D, OPC_SREAD = 0x8E,
    ADM_CREATE_SQ = 0x01, ADM_CREATE_CQ = 0x05, ADM_IDENTIFY = 0x06, ADM_SET_FEATURES = 0x09,
    ADM_GET_FEATURES = 0x0A,
};

/* CDW13 vendor fields (§1.5) */
#define ATS_CDW13_COMMIT  (1u << 8)
#define ATS_CDW13_BARRIER (1u << 9)

/* A 64-byte submission queue entry as 16 dwords (host order; ats_sqe_bytes gives the
 * little-endian bytes). The API fills opcode, NSID and CDW10…15; the transport the CID and PRPs. */
struct ats_sqe {
    uint32_t dw[16];
};

/* A completion queue entry, decoded */
struct ats_cqe {
    uint32_t dw0;                   /* command specific (the core's result) */
    uint16_t sqhd, sqid, cid;
    uint8_t phase;
    int status;                     /* (SCT << 8) | SC */
    uint8_t dnr;
};

/* data direction of a command (the opcode's low two bits for NVM commands) */
enum ats_dir { ATS_DIR_NONE = 0, ATS_DIR_TO_DEV = 1, ATS_DIR_TO_HOST = 2 };

/* ---- codec (atstx_sqe.c): pure functions */
uint32_t ats_cdw13(uint32_t txid, int commit, int barrier, uint32_t attr);
/* NVM command: NSID 1, SLBA, NLB (1-based here, 0-based in CDW12), FUA, CDW13 */
void ats_sqe_rw(struct ats_sqe *s, uint8_t opc, uint64_t lba, uint32_t nlb, int fua, uint32_t cdw13);
/* any other command: opcode, NSID, CDW10, CDW11, CDW13; the rest 0 */
void ats_sqe_cmd(struct ats_sqe *s, uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw13);
void ats_sqe_set_cid(struct ats_sqe *s, uint16_t cid);
void ats_sqe_set_prp(struct ats_sqe *s, uint64_t prp1, uint64_t prp2);
void ats_sqe_bytes(const struct ats_sqe *s, uint8_t out[64]);
void ats_cqe_parse(const uint8_t in[16], struct ats_cqe *c);
int ats_cqe_status(uint32_t dw3);                 /* the status field of DW3 -> (SCT << 8) | SC */
/* Range Flush list: 8 bytes an entry; DSM list: 16 bytes a range. Return the bytes or -EINVAL. */
int ats_range_list(uint8_t *out, const struct ats_range *r, unsigned n);
int ats_dsm_list(uint8_t *out, const struct ats_range *r, unsigned n);
/* SWRITE (§1.11): the status the device gives the range list (0 when it passes), in the device's
 * check order, from the limits in `info` (static_ranges, static_pages, num_lbas); *nlb = the LBAs */
int ats_swrite_check(const struct ats_info *info, const struct ats_range *r, unsigned n, uint32_t *nlb);
/* PRPs of a buffer at host address `addr` (dword aligned, any offset in its page) of `len` bytes
 * (1 … ATS_MAX_XFER): sets *prp1 / *prp2; when it spans more than two pages, *prp2 = `list` and
 * the list entries go to `entries` (room for ATS_MAX_XFER / ATS_PAGE + 1). Returns the number of
 * list entries (0 without a list), -EINVAL for a bad address or length. */
int ats_prps(uint64_t addr, uint32_t len, uint64_t list, uint64_t *prp1, uint64_t *prp2, uint64_t *entries);
uint32_t ats_get32(const uint8_t *p);
void ats_put32(uint8_t *p, uint32_t v);
uint64_t ats_get64(const uint8_t *p);
void ats_put64(uint8_t *p, uint64_t v);

/* ---- transports */
struct ats_ops {
    /* Runs one command (admin != 0: the admin queue) with `len` bytes of data at `data` moving in
     * `dir`; returns its status (atstx.h convention) and *dw0 = CQE DW0. The SQE's CID and PRPs
     * are the transport's. */
    int (*exec)(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                uint32_t *dw0);
    int (*close)(ats_dev *dev);      /* shutdown and release the transport (not the handle) */
    int (*arm_cut)(ats_dev *dev, uint32_t kind, uint64_t value);   /* NULL: -ENOTSUP */
    int (*cycle)(ats_dev *dev, uint64_t *cycle);                   /* NULL: -ENOTSUP */
    /* Places `len` bytes (a command's second buffer: SWRITE's range list, inside one 4 KiB page) in
     * host memory until the next command; *addr = its bus address. NULL: -ENOTSUP. */
    int (*put_list)(ats_dev *dev, const void *list, uint32_t len, uint64_t *addr);
};

struct ats_tx {
    ats_dev *dev;
    uint32_t txid;
    uint32_t npages;                /* distinct LBAs written */
    uint64_t *pages;                /* those LBAs (room for tx_entries) */
    int ended;                      /* the device ended it: the status of that write, else 0 */
};

struct ats_dev {
    const struct ats_ops *ops;
    void *priv;                     /* the transport's state */
    struct ats_info info;
    ats_tx *tx[ATS_MAX_TX + 1];     /* open transactions by txid */
};

/* atstx.c */
ats_dev *ats_dev_alloc(const struct ats_ops *ops, void *priv);
void ats_dev_free(ats_dev *dev);
/* fills dev->info from Identify Controller / Namespace data (4096 bytes each) */
int ats_dev_identify(ats_dev *dev, const uint8_t *ctrl, const uint8_t *ns);
/* one command on the device's I/O queue */
int ats_exec_io(ats_dev *dev, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir, uint32_t *dw0);
#endif
