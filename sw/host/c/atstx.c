/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the API (atstx.h) on a transport (atstx_sim.c, atstx_linux.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atstx_int.h"

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ats_dev_init_from_identify(ats_dev *dev, const uint8_t *ctrl, const uint8_t *ns)
{
    /* Identify Controller: MDTS (byte 77, units of the 4 KiB minimum page), the firmware's
     * IDENTIFY words in bytes 3072…3135 (architecture.md §1.1: word 0 magic, 9 num_tx,
     * 10 tx_entries); Identify Namespace: NSZE (bytes 0-7), FLBAS (26), LBAF (128 + 4 i) */
    const uint8_t *v = ctrl + 3072;
    if (le32(v) != 0x41545344u)
        return -ENODEV;                               /* not an atomssd device */
    uint8_t mdts = ctrl[77];
    dev->info.max_transfer = mdts ? ATS_PAGE << mdts : 1u << 20;
    if (dev->info.max_transfer > 64u * 1024u)
        dev->info.max_transfer = 64u * 1024u;         /* one PRP list page is enough */
    dev->info.num_tx = le32(v + 4 * 9);
    dev->info.tx_entries = le32(v + 4 * 10);
    if (dev->info.num_tx > ATS_MAX_TX)
        dev->info.num_tx = ATS_MAX_TX;
    dev->info.num_lbas = (uint64_t)le32(ns) | (uint64_t)le32(ns + 4) << 32;
    uint32_t lbaf = le32(ns + 128 + 4 * (ns[26] & 0xF));
    dev->info.lba_bytes = 1u << (lbaf >> 16 & 0xFF);
    return 0;
}

int ats_info(const ats_dev *dev, struct ats_info *info)
{
    if (!dev || !info)
        return -EINVAL;
    *info = dev->info;
    return 0;
}

const char *ats_strerror(int st)
{
    static __thread char buf[64];
    switch (st) {
    case 0: return "success";
    case ATS_E_POWER_CUT: return "the simulated power was cut";
    case ATS_SC_INVALID_OPCODE: return "Invalid Command Opcode";
    case ATS_SC_INVALID_FIELD: return "Invalid Field in Command";
    case ATS_SC_DATA_XFER: return "Data Transfer Error";
    case ATS_SC_INTERNAL: return "Internal Error";
    case ATS_SC_LBA_RANGE: return "LBA Out of Range";
    case ATS_SC_WRITE_FAULT: return "Write Fault";
    case ATS_SC_READ_ERROR: return "Unrecovered Read Error";
    case ATS_SC_BAD_TXID: return "BAD_TXID (vendor)";
    case ATS_SC_TX_FULL: return "TX_FULL (vendor)";
    case ATS_SC_INDEX_FULL: return "INDEX_FULL (vendor)";
    case ATS_SC_TX_EMPTY: return "TX_EMPTY (vendor)";
    case ATS_SC_TABLE_FULL: return "TABLE_FULL (vendor)";
    default: break;
    }
    if (st < 0)
        snprintf(buf, sizeof buf, "host error: %s", strerror(-st));
    else
        snprintf(buf, sizeof buf, "NVMe status SCT %d SC 0x%02x", st >> 8, st & 0xFF);
    return buf;
}

int ats_close(ats_dev *dev)
{
    if (!dev)
        return -EINVAL;
    int st = dev->ops->close(dev);
    free(dev);
    return st;
}

static int io(ats_dev *dev, struct ats_sqe *s, void *data, uint32_t len, enum ats_dir dir, uint32_t *dw0)
{
    uint32_t d0 = 0;
    int st = dev->ops->exec(dev, 0, s, data, len, dir, &d0);
    if (dw0)
        *dw0 = d0;
    return st;
}

static int check_xfer(const ats_dev *dev, uint32_t nlb, const void *buf)
{
    if (!dev || !buf || nlb < 1 || (uint64_t)nlb * dev->info.lba_bytes > dev->info.max_transfer)
        return -EINVAL;
    return 0;
}

int ats_read(ats_dev *dev, uint64_t lba, uint32_t nlb, void *buf)
{
    int st = check_xfer(dev, nlb, buf);
    if (st)
        return st;
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_READ, lba, nlb, 0, 0);
    return io(dev, &s, buf, nlb * dev->info.lba_bytes, ATS_TO_HOST, NULL);
}

int ats_write(ats_dev *dev, uint64_t lba, uint32_t nlb, const void *buf, unsigned flags)
{
    int st = check_xfer(dev, nlb, buf);
    if (st)
        return st;
    struct ats_sqe s;
    if (flags & ATS_BARRIER)
        ats_sqe_rw(&s, OPC_TX_WRITE, lba, nlb, flags & ATS_FUA, ats_cdw13(0, 0, 1, 0));
    else
        ats_sqe_rw(&s, OPC_WRITE, lba, nlb, flags & ATS_FUA, 0);
    return io(dev, &s, (void *)buf, nlb * dev->info.lba_bytes, ATS_TO_DEV, NULL);
}

int ats_flush(ats_dev *dev)
{
    if (!dev)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_simple(&s, OPC_FLUSH, 1, 0, 0, 0);
    return io(dev, &s, NULL, 0, ATS_NONE, NULL);
}

int ats_rflush(ats_dev *dev, const struct ats_range *r, unsigned n)
{
    uint8_t list[64];
    int len = ats_range_list(list, r, n);
    if (!dev || len < 0)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_simple(&s, OPC_RANGE_FLUSH, 1, n - 1, 0, 0);
    return io(dev, &s, list, (uint32_t)len, ATS_TO_DEV, NULL);
}

int ats_trim(ats_dev *dev, const struct ats_range *r, unsigned n)
{
    uint8_t list[128];
    int len = ats_dsm_list(list, r, n);
    if (!dev || len < 0)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_simple(&s, OPC_DSM, 1, n - 1, 1u << 2, 0);        /* AD: deallocate */
    return io(dev, &s, list, (uint32_t)len, ATS_TO_DEV, NULL);
}

/* ---------------------------------------------------------------------------- transactions */
static void tx_free(ats_tx *tx)
{
    tx->dev->txid_used[tx->txid] = 0;
    free(tx->pages);
    free(tx);
}

static int tx_cmd(ats_tx *tx, uint8_t opc, uint32_t *dw0)
{
    struct ats_sqe s;
    ats_sqe_simple(&s, opc, 1, 0, 0, ats_cdw13(tx->txid, 0, 0, 0));
    return io(tx->dev, &s, NULL, 0, ATS_NONE, dw0);
}

int ats_tx_begin(ats_dev *dev, ats_tx **out)
{
    if (!dev || !out)
        return -EINVAL;
    uint32_t id = 1;
    while (id <= dev->info.num_tx && dev->txid_used[id])
        id++;
    if (id > dev->info.num_tx)
        return -ENOSPC;
    ats_tx *tx = calloc(1, sizeof *tx);
    uint64_t *pages = calloc(dev->info.tx_entries ? dev->info.tx_entries : 1, sizeof *pages);
    if (!tx || !pages) {
        free(tx);
        free(pages);
        return -ENOMEM;
    }
    tx->dev = dev;
    tx->txid = id;
    tx->pages = pages;
    dev->txid_used[id] = 1;
    int st = tx_cmd(tx, OPC_TX_BEGIN, NULL);
    if (st) {
        tx_free(tx);
        return st;
    }
    *out = tx;
    return 0;
}

uint32_t ats_tx_id(const ats_tx *tx)
{
    return tx ? tx->txid : 0;
}

/* pages [lba, lba + nlb) not yet in the transaction; 0 when they fit, else ATS_SC_TX_FULL */
static int tx_room(ats_tx *tx, uint64_t lba, uint32_t nlb, int add)
{
    uint32_t n = tx->npages;
    for (uint32_t i = 0; i < nlb; i++) {
        uint32_t k = 0;
        while (k < n && tx->pages[k] != lba + i)
            k++;
        if (k < n)
            continue;
        if (n >= tx->dev->info.tx_entries)
            return ATS_SC_TX_FULL;
        if (add)
            tx->pages[n] = lba + i;
        n++;
    }
    if (add)
        tx->npages = n;
    return 0;
}

static int tx_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf, int commit)
{
    if (!tx)
        return -EINVAL;
    if (tx->dead)
        return ATS_SC_BAD_TXID;
    int st = check_xfer(tx->dev, nlb, buf);
    if (st)
        return st;
    if ((st = tx_room(tx, lba, nlb, 0)))
        return st;                                     /* refused before sending: nothing changed */
    tx_room(tx, lba, nlb, 1);
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_TX_WRITE, lba, nlb, 0, ats_cdw13(tx->txid, commit, 0, 0));
    st = io(tx->dev, &s, (void *)buf, nlb * tx->dev->info.lba_bytes, ATS_TO_DEV, NULL);
    if (!commit && (st == ATS_SC_TX_FULL || st == ATS_SC_INDEX_FULL)) {
        tx_cmd(tx, OPC_TX_ABORT, NULL);                /* the device ended it: clear its status */
        tx->dead = 1;
    }
    return st;
}

int ats_tx_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf)
{
    return tx_write(tx, lba, nlb, buf, 0);
}

int ats_tx_commit_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf)
{
    if (tx && tx->dead) {
        tx_free(tx);
        return ATS_SC_BAD_TXID;
    }
    int st = tx_write(tx, lba, nlb, buf, 1);
    if (st == ATS_SC_TX_FULL && tx && tx_room(tx, lba, nlb, 0))
        return st;                                     /* refused locally: still open */
    if (tx && st != -EINVAL)
        tx_free(tx);
    return st;
}

int ats_tx_read(ats_tx *tx, uint64_t lba, uint32_t nlb, void *buf)
{
    if (!tx)
        return -EINVAL;
    int st = check_xfer(tx->dev, nlb, buf);
    if (st)
        return st;
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_TX_READ, lba, nlb, 0, ats_cdw13(tx->txid, 0, 0, 0));
    return io(tx->dev, &s, buf, nlb * tx->dev->info.lba_bytes, ATS_TO_HOST, NULL);
}

int ats_tx_commit(ats_tx *tx, uint32_t *result)
{
    if (!tx)
        return -EINVAL;
    uint32_t dw0 = 0;
    int st = tx->dead ? ATS_SC_BAD_TXID : tx_cmd(tx, OPC_TX_COMMIT, &dw0);
    if (result)
        *result = st ? 0 : dw0;
    tx_free(tx);
    return st;
}

int ats_tx_abort(ats_tx *tx)
{
    if (!tx)
        return -EINVAL;
    int st = tx->dead ? 0 : tx_cmd(tx, OPC_TX_ABORT, NULL);
    if (st == ATS_SC_TX_EMPTY)
        st = 0;                                        /* nothing was written: nothing to discard */
    tx_free(tx);
    return st;
}

/* ---------------------------------------------------------------------------- simulation */
int ats_sim_arm_cut(ats_dev *dev, uint32_t kind, uint64_t value)
{
    if (!dev)
        return -EINVAL;
    return dev->ops->arm_cut ? dev->ops->arm_cut(dev, kind, value) : -ENOTSUP;
}

int ats_sim_cycle(ats_dev *dev, uint64_t *cycle)
{
    if (!dev || !cycle)
        return -EINVAL;
    return dev->ops->cycle ? dev->ops->cycle(dev, cycle) : -ENOTSUP;
}
