/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the API of atstx.h on a transport (atstx_sim.c, atstx_linux.c, atstx_udp.c): argument
 * checks, the SQE of every call, transaction handles and txid ownership, status names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "atstx_int.h"

/* ------------------------------------------------------------------------------------ handles */
ats_dev *ats_dev_alloc(const struct ats_ops *ops, void *priv)
{
    ats_dev *dev = calloc(1, sizeof *dev);
    if (dev) {
        dev->ops = ops;
        dev->priv = priv;
    }
    return dev;
}

static void tx_free(ats_tx *tx)
{
    tx->dev->tx[tx->txid] = NULL;
    free(tx->pages);
    free(tx);
}

void ats_dev_free(ats_dev *dev)
{
    if (!dev)
        return;
    for (uint32_t id = 1; id <= ATS_MAX_TX; id++)
        if (dev->tx[id])
            tx_free(dev->tx[id]);
    free(dev);
}

/* Identify Controller: MDTS (byte 77, a power of two of the 4 KiB minimum page; 0 = no limit),
 * the firmware's IDENTIFY words in bytes 3072…3135 (docs/architecture.md §1.1: word 0 magic
 * 0x41545344, 6 page_bytes, 8 num_lbas, 9 num_tx, 10 tx_entries). Identify Namespace: NSZE
 * (bytes 0-7), FLBAS (byte 26, format index in 3:0), LBA format i at 128 + 4 i (LBADS 23:16). */
int ats_dev_identify(ats_dev *dev, const uint8_t *ctrl, const uint8_t *ns)
{
    const uint8_t *v = ctrl + 3072;
    if (ats_get32(v) != 0x41545344u)
        return -ENODEV;
    uint32_t mdts = ctrl[77];
    uint64_t mt = mdts ? (uint64_t)ATS_PAGE << (mdts > 20 ? 20 : mdts) : ATS_MAX_XFER;
    struct ats_info in = {0};
    in.max_transfer = mt > ATS_MAX_XFER ? ATS_MAX_XFER : (uint32_t)mt;
    in.num_tx = ats_get32(v + 4 * 9);
    in.tx_entries = ats_get32(v + 4 * 10);
    in.num_lbas = ats_get64(ns);
    /* atomic writes (host-interface.md §1.10): NSFEAT (byte 24) bit 1 NSABP, NAWUPF (36-37),
     * NABO (42-43), NABSPF (44-45); without NSABP, or with NABO != 0 (Linux's rule), none */
    uint32_t nawupf = (uint32_t)ns[36] | (uint32_t)ns[37] << 8, nabspf = (uint32_t)ns[44] | (uint32_t)ns[45] << 8;
    int nsabp = (ns[24] & 2u) && nawupf && !(ns[42] | ns[43]);
    in.atomic_blocks = nsabp ? nawupf + 1 : 1;
    in.atomic_boundary = nsabp && nabspf ? nabspf + 1 : 0;
    /* SWRITE limits (host-interface.md §1.11): byte 3136 ranges, 3138-3139 pages; 0: no SWRITE */
    in.static_ranges = ctrl[3136];
    in.static_pages = (uint32_t)ctrl[3138] | (uint32_t)ctrl[3139] << 8;
    if (!in.static_ranges || !in.static_pages)
        in.static_ranges = in.static_pages = 0;
    uint32_t lbads = ats_get32(ns + 128 + 4 * (ns[26] & 0xFu)) >> 16 & 0xFFu;
    if (lbads < 9 || lbads > 16)
        return -EPROTO;
    in.lba_bytes = 1u << lbads;
    if (in.num_tx > ATS_MAX_TX)
        in.num_tx = ATS_MAX_TX;
    if (in.num_tx < 1 || in.tx_entries < 1 || in.num_lbas < 1 || in.max_transfer < in.lba_bytes)
        return -EPROTO;
    if ((uint64_t)in.atomic_blocks * in.lba_bytes > in.max_transfer)
        in.atomic_blocks = in.max_transfer / in.lba_bytes;      /* one command is the unit */
    if ((uint64_t)in.static_pages * in.lba_bytes > in.max_transfer)
        in.static_pages = in.max_transfer / in.lba_bytes;
    dev->info = in;
    return 0;
}

int ats_info(const ats_dev *dev, struct ats_info *info)
{
    if (!dev || !info)
        return -EINVAL;
    *info = dev->info;
    return 0;
}

int ats_close(ats_dev *dev)
{
    if (!dev)
        return -EINVAL;
    for (uint32_t id = 1; id <= ATS_MAX_TX; id++) {
        if (dev->tx[id]) {
            ats_tx_abort(dev->tx[id]);                 /* frees it; a dead device: fails quickly */
        }
    }
    int st = dev->ops->close(dev);
    ats_dev_free(dev);
    return st;
}

/* ------------------------------------------------------------------------ open by address */
int ats_open(const char *addr, ats_dev **out)
{
    if (!addr || !out)
        return -EINVAL;
    if (!strncmp(addr, "udp:", 4))
        return ats_open_udp_addr(addr + 4, out);
    if (!strncmp(addr, "nvme:", 5))
        return ats_open_nvme(addr + 5, out);
    if (!strncmp(addr, "/dev/", 5))
        return ats_open_nvme(addr, out);
    if (!strncmp(addr, "sim:", 4))
        return ats_open_sim(addr + 4, out);
    return addr[0] ? ats_open_sim(addr, out) : -EINVAL;
}

/* ------------------------------------------------------------------------------ status names */
const char *ats_strerror(int st)
{
    switch (st) {
    case ATS_OK: return "success";
    case ATS_E_POWER_CUT: return "the simulated power was cut (restart the simulator on its images)";
    case ATS_E_NOT_ATOMIC: return "not an atomic write: longer than the atomic unit or across its boundary (nothing sent)";
    case ATS_SC_INVALID_OPCODE: return "NVMe Invalid Command Opcode";
    case ATS_SC_INVALID_FIELD: return "NVMe Invalid Field in Command";
    case ATS_SC_DATA_XFER: return "NVMe Data Transfer Error";
    case ATS_SC_INTERNAL: return "NVMe Internal Error";
    case ATS_SC_INVALID_NS: return "NVMe Invalid Namespace or Format";
    case ATS_SC_CMD_SEQ: return "NVMe Command Sequence Error";
    case ATS_SC_PRP_OFFSET: return "NVMe PRP Offset Invalid";
    case ATS_SC_LBA_RANGE: return "NVMe LBA Out of Range";
    case ATS_SC_CAP_EXCEEDED: return "NVMe Capacity Exceeded (no space: the device cannot write any more)";
    case ATS_SC_WRITE_FAULT: return "NVMe Write Fault";
    case ATS_SC_READ_ERROR: return "NVMe Unrecovered Read Error";
    case ATS_SC_BAD_TXID: return "atomssd BAD_TXID: txid out of range or missing";
    case ATS_SC_TX_FULL: return "atomssd TX_FULL: the transaction is full (aborted when a commit says so)";
    case ATS_SC_INDEX_FULL: return "atomssd INDEX_FULL: remap index bucket full (aborted when a commit says so)";
    case ATS_SC_TX_EMPTY: return "atomssd TX_EMPTY: the transaction has no writes";
    case ATS_SC_TABLE_FULL: return "atomssd TABLE_FULL: no free transaction id";
    case ATS_SC_SW_NONE: return "atomssd SWRITE: no range";
    case ATS_SC_SW_MANY: return "atomssd SWRITE: too many ranges";
    case ATS_SC_SW_PAGES: return "atomssd SWRITE: too many LBAs";
    case ATS_SC_SW_EMPTY: return "atomssd SWRITE: a range of 0 LBAs";
    case ATS_SC_SW_LENGTH: return "atomssd SWRITE: the ranges' lengths do not add up to the transfer";
    case ATS_SC_SW_OVERLAP: return "atomssd SWRITE: overlapping ranges";
    case 0x0100: return "NVMe Completion Queue Invalid";
    case 0x0101: return "NVMe Invalid Queue Identifier";
    case 0x0102: return "NVMe Invalid Queue Size";
    case 0x0109: return "NVMe Invalid Log Page";
    case 0x010C: return "NVMe Invalid Queue Deletion";
    case ATS_E_LINK_ERR(3): return "UDP link ERROR BAD_LEN: the device refused a packet's length (command not run)";
    case ATS_E_LINK_ERR(4): return "UDP link ERROR BAD_SLOT: no such slot in the device (command not run; check nslot)";
    case ATS_E_LINK_ERR(5): return "UDP link ERROR BAD_FIELD: the device refused a SUBMIT field (command not run; check slot_bytes)";
    case -EHOSTUNREACH: return "the device's host name does not resolve, or no route to it";
    case -EINVAL: return "invalid argument (nothing sent)";
    case -E2BIG: return "the transaction would hold more than tx_entries LBAs (nothing sent, still open)";
    case -ENAMETOOLONG: return "socket path too long";
    case -ETIMEDOUT: return "no completion within the budget (simulator cycles, or the UDP link's retries): the handle is failed";
    case -EPROTO: return "protocol error: unexpected completion or message (the handle is failed)";
    case -EIO: return "the handle failed earlier, or the controller reported a fatal status";
    case -ENODEV: return "not an atomssd device (no vendor IDENTIFY words)";
    case -ENOTSUP: return "not supported by this device";
    case -ENOMEM: return "out of memory";
    case -EPIPE: return "the simulator closed the connection";
    case -ECONNREFUSED: return "no simulator listening on the socket";
    case -ENOENT: return "no such socket or device";
    case -EACCES: return "permission denied (NVMe passthrough needs CAP_SYS_ADMIN)";
    case -ENOTTY: return "not an NVMe namespace device";
    default: break;
    }
    if (st <= ATS_E_LINK_ERR(1) && st >= ATS_E_LINK_ERR(0xFF))
        return "UDP link ERROR from the device (command not run)";
    if (st < 0)
        return "host error (negative errno)";
    if ((st >> 8) == 7)
        return "atomssd vendor status (unnamed)";
    return "NVMe status (unnamed)";
}

/* ------------------------------------------------------------------------------------ plain I/O */
int ats_exec_io(ats_dev *dev, struct ats_sqe *s, void *data, uint32_t len, enum ats_dir dir, uint32_t *dw0)
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
    return ats_exec_io(dev, &s, buf, nlb * dev->info.lba_bytes, ATS_DIR_TO_HOST, NULL);
}

int ats_write(ats_dev *dev, uint64_t lba, uint32_t nlb, const void *buf, unsigned flags)
{
    int st = check_xfer(dev, nlb, buf);
    if (st)
        return st;
    if (flags & ~(ATS_FUA | ATS_BARRIER))
        return -EINVAL;
    struct ats_sqe s;
    if (flags & ATS_BARRIER)        /* a barrier write is TX Write with TXID 0 + BARRIER (§1.5) */
        ats_sqe_rw(&s, OPC_TX_WRITE, lba, nlb, flags & ATS_FUA, ats_cdw13(0, 0, 1, 0));
    else
        ats_sqe_rw(&s, OPC_WRITE, lba, nlb, flags & ATS_FUA, 0);
    return ats_exec_io(dev, &s, (void *)buf, nlb * dev->info.lba_bytes, ATS_DIR_TO_DEV, NULL);
}

int ats_atomic_write(ats_dev *dev, uint64_t lba, uint32_t nlb, const void *buf, unsigned flags)
{
    int st = check_xfer(dev, nlb, buf);
    if (st)
        return st;
    if (flags & ~ATS_FUA)
        return -EINVAL;
    uint32_t bd = dev->info.atomic_boundary;
    if (nlb > dev->info.atomic_blocks || (bd && lba / bd != (lba + nlb - 1) / bd))
        return ATS_E_NOT_ATOMIC;
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_WRITE, lba, nlb, flags & ATS_FUA, 0);
    return ats_exec_io(dev, &s, (void *)buf, nlb * dev->info.lba_bytes, ATS_DIR_TO_DEV, NULL);
}

int ats_static_tx(ats_dev *dev, const struct ats_range *r, unsigned n, const void *buf)
{
    if (!dev || !buf || (n && !r))
        return -EINVAL;
    if (!dev->info.static_ranges)
        return -ENOTSUP;
    uint32_t nlb;
    int st = ats_swrite_check(&dev->info, r, n, &nlb);
    if (st)
        return st;
    if (!dev->ops->put_list)
        return -ENOTSUP;
    uint8_t list[16 * 255];
    int len = n <= 8 ? ats_dsm_list(list, r, n) : -EINVAL;    /* DSM's 16-byte ranges (§1.11) */
    if (len < 0)
        return -EINVAL;
    uint64_t laddr;
    if ((st = dev->ops->put_list(dev, list, (uint32_t)len, &laddr)))
        return st;
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_SWRITE, 0, nlb, 0, 0);                 /* SLBA 0, NLB = the LBAs - 1 */
    s.dw[10] = n;                                             /* NR, 1-based */
    s.dw[14] = (uint32_t)laddr;
    s.dw[15] = (uint32_t)(laddr >> 32);
    return ats_exec_io(dev, &s, (void *)buf, nlb * dev->info.lba_bytes, ATS_DIR_TO_DEV, NULL);
}

int ats_flush(ats_dev *dev)
{
    if (!dev)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_cmd(&s, OPC_FLUSH, 1, 0, 0, 0);
    return ats_exec_io(dev, &s, NULL, 0, ATS_DIR_NONE, NULL);
}

int ats_rflush(ats_dev *dev, const struct ats_range *r, unsigned n)
{
    uint8_t list[8 * 8];
    int len = ats_range_list(list, r, n);
    if (!dev || len < 0)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_cmd(&s, OPC_RANGE_FLUSH, 1, n - 1, 0, 0);         /* NR = CDW10[7:0], 0-based */
    return ats_exec_io(dev, &s, list, (uint32_t)len, ATS_DIR_TO_DEV, NULL);
}

int ats_trim(ats_dev *dev, const struct ats_range *r, unsigned n)
{
    uint8_t list[16 * 8];
    int len = ats_dsm_list(list, r, n);
    if (!dev || len < 0)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_cmd(&s, OPC_DSM, 1, n - 1, 1u << 2, 0);           /* NR 0-based, CDW11.AD */
    return ats_exec_io(dev, &s, list, (uint32_t)len, ATS_DIR_TO_DEV, NULL);
}

/* ----------------------------------------------------------------------------- transactions */
static int tx_cmd(ats_tx *tx, uint8_t opc, uint32_t *dw0)
{
    struct ats_sqe s;
    ats_sqe_cmd(&s, opc, 1, 0, 0, ats_cdw13(tx->txid, 0, 0, 0));
    return ats_exec_io(tx->dev, &s, NULL, 0, ATS_DIR_NONE, dw0);
}

int ats_tx_begin(ats_dev *dev, ats_tx **out)
{
    if (!dev || !out)
        return -EINVAL;
    uint32_t id = 1;
    while (id <= dev->info.num_tx && dev->tx[id])
        id++;
    if (id > dev->info.num_tx)
        return ATS_SC_TABLE_FULL;
    ats_tx *tx = calloc(1, sizeof *tx);
    uint64_t *pages = calloc(dev->info.tx_entries, sizeof *pages);
    if (!tx || !pages) {
        free(tx);
        free(pages);
        return -ENOMEM;
    }
    tx->dev = dev;
    tx->txid = id;
    tx->pages = pages;
    dev->tx[id] = tx;
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

static int tx_has(const ats_tx *tx, uint64_t lba)
{
    for (uint32_t k = 0; k < tx->npages; k++)
        if (tx->pages[k] == lba)
            return 1;
    return 0;
}

/* the LBAs of [lba, lba + nlb) the transaction has not written yet */
static uint32_t tx_new_pages(const ats_tx *tx, uint64_t lba, uint32_t nlb)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < nlb; i++)
        n += !tx_has(tx, lba + i);
    return n;
}

static void tx_add_pages(ats_tx *tx, uint64_t lba, uint32_t nlb)
{
    for (uint32_t i = 0; i < nlb; i++)
        if (!tx_has(tx, lba + i))
            tx->pages[tx->npages++] = lba + i;
}

/* checks done before sending a TX Write: 0, -EINVAL, or -E2BIG past tx_entries LBAs */
static int tx_write_check(const ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf)
{
    int st = check_xfer(tx->dev, nlb, buf);
    if (st)
        return st;
    if (tx->npages + tx_new_pages(tx, lba, nlb) > tx->dev->info.tx_entries)
        return -E2BIG;
    return 0;
}

static int tx_write_send(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf, int commit, uint32_t *dw0)
{
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_TX_WRITE, lba, nlb, 0, ats_cdw13(tx->txid, commit, 0, 0));
    int st = ats_exec_io(tx->dev, &s, (void *)buf, nlb * tx->dev->info.lba_bytes, ATS_DIR_TO_DEV, dw0);
    if (st == 0)
        tx_add_pages(tx, lba, nlb);
    return st;
}

static int ends_tx(int st)
{
    return st == ATS_SC_TX_FULL || st == ATS_SC_INDEX_FULL;
}

int ats_tx_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf)
{
    if (!tx)
        return -EINVAL;
    if (tx->ended)
        return tx->ended;
    int st = tx_write_check(tx, lba, nlb, buf);
    if (st)
        return st;
    st = tx_write_send(tx, lba, nlb, buf, 0, NULL);
    if (ends_tx(st)) {              /* the device ended the transaction: clear the txid there */
        tx_cmd(tx, OPC_TX_ABORT, NULL);
        tx->ended = st;
    }
    return st;
}

int ats_tx_read(ats_tx *tx, uint64_t lba, uint32_t nlb, void *buf)
{
    if (!tx)
        return -EINVAL;
    if (tx->ended)
        return tx->ended;
    int st = check_xfer(tx->dev, nlb, buf);
    if (st)
        return st;
    struct ats_sqe s;
    ats_sqe_rw(&s, OPC_TX_READ, lba, nlb, 0, ats_cdw13(tx->txid, 0, 0, 0));
    return ats_exec_io(tx->dev, &s, buf, nlb * tx->dev->info.lba_bytes, ATS_DIR_TO_HOST, NULL);
}

int ats_tx_commit(ats_tx *tx, uint32_t *entries)
{
    if (entries)
        *entries = 0;
    if (!tx)
        return -EINVAL;
    int st = tx->ended ? tx->ended : tx_cmd(tx, OPC_TX_COMMIT, NULL);
    if (st == 0 && entries)
        *entries = tx->npages;
    tx_free(tx);
    return st;
}

int ats_tx_commit_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf)
{
    if (!tx)
        return -EINVAL;
    int st = tx->ended;
    if (!st) {
        if ((st = tx_write_check(tx, lba, nlb, buf)))
            return st;              /* refused before sending: still open */
        st = tx_write_send(tx, lba, nlb, buf, 1, NULL);
    }
    tx_free(tx);
    return st;
}

int ats_tx_abort(ats_tx *tx)
{
    if (!tx)
        return -EINVAL;
    int st = tx->ended ? 0 : tx_cmd(tx, OPC_TX_ABORT, NULL);
    if (st == ATS_SC_TX_EMPTY)
        st = 0;
    tx_free(tx);
    return st;
}

/* -------------------------------------------------------------------------- device settings */
/* Set / Get Features of a device setting (host-interface.md §1.6): CDW10 = the FID (Set: Save,
 * bit 31, 0: the settings are volatile; Get: SEL, bits 10:8, 0: the current value), CDW11 = the
 * value of a Set (0 for a Get), NSID 0; the transport's admin command, DW0 = the value after it */
static int feature(ats_dev *dev, uint32_t fid, int set, uint32_t value, uint32_t *out)
{
    if (out)
        *out = 0;
    if (!dev || fid < ATS_FID_DEV_FIRST || fid > ATS_FID_DEV_LAST)
        return -EINVAL;
    struct ats_sqe s;
    ats_sqe_cmd(&s, set ? ADM_SET_FEATURES : ADM_GET_FEATURES, 0, fid, set ? value : 0, 0);
    uint32_t d0 = 0;
    int st = dev->ops->exec(dev, 1, &s, NULL, 0, ATS_DIR_NONE, &d0);
    if (st == 0 && out)
        *out = d0;
    return st;
}

int ats_get_feature(ats_dev *dev, uint32_t fid, uint32_t *value)
{
    if (!value)
        return -EINVAL;
    return feature(dev, fid, 0, 0, value);
}

int ats_set_feature(ats_dev *dev, uint32_t fid, uint32_t value, uint32_t *now)
{
    return feature(dev, fid, 1, value, now);
}

int ats_get_seal_time(ats_dev *dev, uint32_t *cycles)
{
    return ats_get_feature(dev, ATS_FEAT_SEAL_TIME, cycles);
}

int ats_set_seal_time(ats_dev *dev, uint32_t cycles, uint32_t *now)
{
    return ats_set_feature(dev, ATS_FEAT_SEAL_TIME, cycles, now);
}

/* ------------------------------------------------------------------------------- simulation */
int ats_sim_arm_cut(ats_dev *dev, uint32_t kind, uint64_t value)
{
    if (!dev || kind > ATS_CUT_AT_CPL)
        return -EINVAL;
    return dev->ops->arm_cut ? dev->ops->arm_cut(dev, kind, value) : -ENOTSUP;
}

int ats_sim_cycle(ats_dev *dev, uint64_t *cycle)
{
    if (!dev || !cycle)
        return -EINVAL;
    return dev->ops->cycle ? dev->ops->cycle(dev, cycle) : -ENOTSUP;
}
