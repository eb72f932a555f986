/* SPDX-License-Identifier: Apache-2.0
 * atstx_unit: libatstx without a device. Every API call runs on a recording transport; its SQE is
 * compared byte for byte with the 64 bytes worked out by hand from docs/host-interface.md §1.5
 * (CDW0 opcode, CDW1 NSID, CDW10/11 SLBA, CDW12 NLB 0-based + FUA bit 30, CDW13 TXID 5:0,
 * COMMIT 8, BARRIER 9; little endian; CID and PRPs are the transport's, 0 here), and so are the
 * Range Flush / DSM lists. Also: CQE decoding, PRPs at page boundaries, Identify parsing,
 * transaction bookkeeping (txids, page limit, statuses that end a transaction), argument checks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atstx_int.h"

static int fails, checks;
#define EQ(a, b) do { unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b); checks++; \
    if (_a != _b) { fprintf(stderr, "%s:%d: %s = 0x%llx, want 0x%llx\n", __FILE__, __LINE__, #a, _a, _b); fails++; } } while (0)

/* ---- a transport that records the last command and answers with queued statuses */
struct mock {
    int n;                          /* commands executed */
    int admin;
    struct ats_sqe sqe;
    uint8_t data[ATS_MAX_XFER];
    uint32_t len;
    enum ats_dir dir;
    int status[8];                  /* answers of the next commands (then 0) */
    int nstatus;
    uint32_t dw0;                   /* DW0 of every answer */
};

static int mock_exec(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                     uint32_t *dw0)
{
    struct mock *m = dev->priv;
    m->n++;
    m->admin = admin;
    m->sqe = *sqe;
    m->len = len;
    m->dir = dir;
    if (dir == ATS_DIR_TO_DEV)
        memcpy(m->data, data, len);
    else if (dir == ATS_DIR_TO_HOST)
        memset(data, 0x5A, len);
    *dw0 = m->dw0;
    if (m->nstatus) {
        int st = m->status[0];
        memmove(m->status, m->status + 1, sizeof m->status - sizeof m->status[0]);
        m->nstatus--;
        return st;
    }
    return 0;
}

static int mock_close(ats_dev *dev)
{
    (void)dev;
    return 0;
}

static uint8_t mock_list[4096];
static uint32_t mock_list_len;

static int mock_put_list(ats_dev *dev, const void *list, uint32_t len, uint64_t *addr)
{
    (void)dev;
    memcpy(mock_list, list, len);
    mock_list_len = len;
    *addr = 0x123415F00ull;
    return 0;
}

static const struct ats_ops mock_ops = {mock_exec, mock_close, NULL, NULL, mock_put_list};
static const struct ats_ops mock_ops_nolist = {mock_exec, mock_close, NULL, NULL, NULL};

/* compares bytes with hex digits (spaces ignored) */
static void bytes_eq(const uint8_t *got, size_t n, const char *hex, int line)
{
    uint8_t want[256];
    size_t k = 0;
    for (const char *p = hex; *p; p++) {
        if (*p == ' ')
            continue;
        unsigned v;
        sscanf(p, "%2x", &v);
        want[k++] = (uint8_t)v;
        p++;
    }
    checks++;
    if (k != n || memcmp(got, want, n)) {
        fprintf(stderr, "%s:%d: bytes differ\n  got ", __FILE__, line);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "%02x%s", got[i], i % 4 == 3 ? " " : "");
        fprintf(stderr, "\n  want %s\n", hex);
        fails++;
    }
}

static void sqe_eq(const struct mock *m, const char *hex, int line)
{
    uint8_t b[64];
    ats_sqe_bytes(&m->sqe, b);
    bytes_eq(b, 64, hex, line);
}
#define SQE(hex) sqe_eq(m, hex, __LINE__)
#define DATA(hex) bytes_eq(m->data, m->len, hex, __LINE__)

static void test_commands(void)
{
    struct mock *m = calloc(1, sizeof *m);
    ats_dev *dev = ats_dev_alloc(&mock_ops, m);
    dev->info = (struct ats_info){512, 768, 3, 4, 65536, 1, 0, 0, 0};
    static uint8_t buf[ATS_MAX_XFER + 512];
    memset(buf, 0x11, sizeof buf);

    /* Read 8 LBAs at 0x1_2345_6789: SLBA in CDW10/11, NLB 7 */
    EQ(ats_read(dev, 0x123456789ull, 8, buf), 0);
    SQE("02000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 89674523 01000000 07000000 00000000 00000000 00000000");
    EQ(m->dir, ATS_DIR_TO_HOST); EQ(m->len, 4096); EQ(m->admin, 0); EQ(buf[0], 0x5A);
    /* Write with FUA: CDW12 bit 30 */
    EQ(ats_write(dev, 7, 1, buf, ATS_FUA), 0);
    SQE("01000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 07000000 00000000 00000040 00000000 00000000 00000000");
    EQ(m->dir, ATS_DIR_TO_DEV); EQ(m->len, 512);
    /* plain Write of 128 LBAs (MDTS): NLB 127 */
    EQ(ats_write(dev, 0x300, 128, buf, 0), 0);
    SQE("01000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00030000 00000000 7f000000 00000000 00000000 00000000");
    EQ(m->len, 65536);
    /* barrier write: TX Write, TXID 0, BARRIER (CDW13 bit 9), here with FUA */
    EQ(ats_write(dev, 9, 2, buf, ATS_BARRIER | ATS_FUA), 0);
    SQE("81000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 09000000 00000000 01000040 00020000 00000000 00000000");
    /* Flush */
    EQ(ats_flush(dev), 0);
    SQE("00000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000");
    EQ(m->dir, ATS_DIR_NONE); EQ(m->len, 0);
    /* Range Flush, 2 ranges: NR = 1 in CDW10; entries {LBA[31:0]}, {NLB-1 << 16 | LBA[47:32]} */
    struct ats_range rf[2] = {{0xABCD00001234ull, 16}, {5, 65536}};
    EQ(ats_rflush(dev, rf, 2), 0);
    SQE("89000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 01000000 00000000 00000000 00000000 00000000 00000000");
    DATA("34120000 cdab0f00 05000000 0000ffff");
    EQ(m->dir, ATS_DIR_TO_DEV);
    /* Dataset Management, AD (CDW11 bit 2), one range: attributes 0, length 3, SLBA 0x1_0000_0002 */
    struct ats_range tr = {0x100000002ull, 3};
    EQ(ats_trim(dev, &tr, 1), 0);
    SQE("09000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 04000000 00000000 00000000 00000000 00000000");
    DATA("00000000 03000000 02000000 01000000");

    /* transactions: TX Begin of the lowest free txid (1) */
    ats_tx *t1, *t2, *t3, *t4 = NULL;
    EQ(ats_tx_begin(dev, &t1), 0);
    EQ(ats_tx_id(t1), 1);
    SQE("84000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 00000000 00000000 01000000 00000000 00000000");
    EQ(ats_tx_write(t1, 0x20, 1, buf), 0);
    SQE("81000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 20000000 00000000 00000000 01000000 00000000 00000000");
    EQ(ats_tx_read(t1, 0x20, 2, buf), 0);
    SQE("82000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 20000000 00000000 01000000 01000000 00000000 00000000");
    EQ(m->dir, ATS_DIR_TO_HOST);
    uint32_t entries = 99;
    EQ(ats_tx_commit(t1, &entries), 0);
    SQE("88000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 00000000 00000000 01000000 00000000 00000000");
    EQ(entries, 1);

    /* txids 1, 2, 3 (num_tx 3), then TABLE_FULL without a command */
    EQ(ats_tx_begin(dev, &t1), 0); EQ(ats_tx_begin(dev, &t2), 0); EQ(ats_tx_begin(dev, &t3), 0);
    EQ(ats_tx_id(t2), 2); EQ(ats_tx_id(t3), 3);
    int n0 = m->n;
    EQ(ats_tx_begin(dev, &t4), ATS_SC_TABLE_FULL);
    EQ(m->n, n0); EQ(t4 == NULL, 1);
    /* commit write: TX Write with COMMIT (CDW13 bit 8) and the txid; the handle is freed */
    EQ(ats_tx_commit_write(t2, 0x40, 1, buf), 0);
    SQE("81000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 40000000 00000000 00000000 02010000 00000000 00000000");
    /* abort; the device's TX_EMPTY (nothing written) is 0 here */
    m->status[m->nstatus++] = ATS_SC_TX_EMPTY;
    EQ(ats_tx_abort(t3), 0);
    SQE("8c000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 00000000 00000000 03000000 00000000 00000000");
    EQ(ats_tx_begin(dev, &t2), 0); EQ(ats_tx_id(t2), 2);     /* freed txids are taken again */
    EQ(ats_tx_begin(dev, &t3), 0); EQ(ats_tx_id(t3), 3);

    /* page limit (tx_entries 4): distinct LBAs counted, rewrites free; refused before sending */
    EQ(ats_tx_write(t1, 100, 4, buf), 0);
    EQ(ats_tx_write(t1, 101, 2, buf), 0);
    n0 = m->n;
    EQ(ats_tx_write(t1, 104, 1, buf), -E2BIG);
    EQ(ats_tx_commit_write(t1, 99, 2, buf), -E2BIG);
    EQ(m->n, n0);
    EQ(ats_tx_commit_write(t1, 103, 1, buf), 0);             /* still open after the refusals */
    /* a commit the device ends with TX_FULL: the status, the handle freed */
    EQ(ats_tx_write(t2, 5, 1, buf), 0);
    m->status[m->nstatus++] = ATS_SC_TX_FULL;
    EQ(ats_tx_commit(t2, &entries), ATS_SC_TX_FULL);
    EQ(entries, 0);
    EQ(ats_tx_begin(dev, &t2), 0); EQ(ats_tx_id(t2), 1);
    /* a TX Write answered INDEX_FULL: the library aborts the tx in the device, then only that status */
    m->status[m->nstatus++] = ATS_SC_INDEX_FULL;
    EQ(ats_tx_write(t3, 6, 1, buf), ATS_SC_INDEX_FULL);
    SQE("8c000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 00000000 00000000 03000000 00000000 00000000");
    n0 = m->n;
    EQ(ats_tx_write(t3, 7, 1, buf), ATS_SC_INDEX_FULL);
    EQ(ats_tx_commit(t3, NULL), ATS_SC_INDEX_FULL);
    EQ(m->n, n0);
    /* device statuses pass through */
    m->status[m->nstatus++] = ATS_SC_LBA_RANGE;
    EQ(ats_write(dev, 767, 2, buf, 0), ATS_SC_LBA_RANGE);
    m->status[m->nstatus++] = ATS_SC_LBA_RANGE;
    EQ(ats_tx_write(t2, 767, 2, buf), ATS_SC_LBA_RANGE);      /* a failed write adds no pages */
    EQ(ats_tx_write(t2, 200, 4, buf), 0);

    /* atomic write (unit 32 LBAs, boundary 32): a plain Write (opcode 0x01), FUA kept, NLB 0-based */
    dev->info.atomic_blocks = 32;
    dev->info.atomic_boundary = 32;
    EQ(ats_atomic_write(dev, 0x40, 32, buf, 0), 0);           /* the whole unit 64..95 */
    SQE("01000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 40000000 00000000 1f000000 00000000 00000000 00000000");
    EQ(m->dir, ATS_DIR_TO_DEV); EQ(m->len, 16384);
    EQ(ats_atomic_write(dev, 0x5E, 2, buf, ATS_FUA), 0);      /* 94, 95: ends at the boundary */
    SQE("01000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 5e000000 00000000 01000040 00000000 00000000 00000000");
    m->status[m->nstatus++] = ATS_SC_INDEX_FULL;              /* the device's answer passes through */
    EQ(ats_atomic_write(dev, 0, 2, buf, 0), ATS_SC_INDEX_FULL);
    n0 = m->n;
    EQ(ats_atomic_write(dev, 0x5F, 2, buf, 0), ATS_E_NOT_ATOMIC);   /* 95, 96: crosses 96 */
    EQ(ats_atomic_write(dev, 0x40, 33, buf, 0), ATS_E_NOT_ATOMIC);  /* longer than the unit */
    EQ(ats_atomic_write(dev, 0x40, 129, buf, 0), -EINVAL);          /* longer than MDTS */
    EQ(ats_atomic_write(dev, 0x40, 0, buf, 0), -EINVAL);
    EQ(ats_atomic_write(dev, 0x40, 2, buf, ATS_BARRIER), -EINVAL);
    EQ(ats_atomic_write(dev, 0x40, 2, NULL, 0), -EINVAL);
    dev->info.atomic_blocks = 1;                              /* a device without atomic writes */
    dev->info.atomic_boundary = 0;
    EQ(ats_atomic_write(dev, 0x40, 2, buf, 0), ATS_E_NOT_ATOMIC);
    EQ(m->n, n0);
    EQ(ats_atomic_write(dev, 0x41, 1, buf, 0), 0);            /* one LBA is atomic by itself */
    EQ(m->n, n0 + 1);

    /* SWRITE (§1.11): opcode 0x8D, NR 1-based in CDW10, NLB = all LBAs - 1, CDW14/15 = the list's
     * address, the list in DSM's format (attributes 0, length 1-based, SLBA), data = the ranges' blocks */
    n0 = m->n;
    struct ats_range sr[3] = {{0x2FF, 2}, {0x10, 1}, {0x100000005ull, 3}};
    EQ(ats_static_tx(dev, sr, 2, buf), -ENOTSUP);             /* the device has no SWRITE */
    dev->info.static_ranges = 8;
    dev->info.static_pages = 32;
    dev->info.num_lbas = 1ull << 33;
    EQ(m->n, n0);
    for (int i = 0; i < 6 * 512; i++)
        buf[i] = (uint8_t)(i * 7 + 1);
    EQ(ats_static_tx(dev, sr, 3, buf), 0);
    SQE("8d000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 03000000 00000000 05000000 00000000 005f4123 01000000");
    EQ(m->dir, ATS_DIR_TO_DEV); EQ(m->len, 6 * 512); EQ(m->data[0], 1); EQ(m->data[6 * 512 - 1], (uint8_t)(6 * 512 * 7 - 6));
    bytes_eq(mock_list, mock_list_len, "00000000 02000000 ff020000 00000000 00000000 01000000 10000000 00000000"
                                       "00000000 03000000 05000000 01000000", __LINE__);
    memset(buf, 0x11, sizeof buf);
    n0 = m->n;
    struct ats_range many[9], big[2] = {{0, 31}, {100, 2}}, empty[2] = {{0, 1}, {5, 0}};
    struct ats_range past[2] = {{0, 1}, {(1ull << 33) - 1, 2}}, ovl[3] = {{10, 4}, {20, 1}, {13, 2}};
    for (int i = 0; i < 9; i++)
        many[i] = (struct ats_range){(uint64_t)i * 2, 1};
    EQ(ats_static_tx(dev, sr, 0, buf), ATS_SC_SW_NONE);
    EQ(ats_static_tx(dev, many, 9, buf), ATS_SC_SW_MANY);
    EQ(ats_static_tx(dev, big, 2, buf), ATS_SC_SW_PAGES);
    EQ(ats_static_tx(dev, empty, 2, buf), ATS_SC_SW_EMPTY);
    EQ(ats_static_tx(dev, past, 2, buf), ATS_SC_LBA_RANGE);
    EQ(ats_static_tx(dev, ovl, 3, buf), ATS_SC_SW_OVERLAP);
    EQ(ats_static_tx(dev, ovl, 2, NULL), -EINVAL);
    EQ(ats_static_tx(dev, NULL, 2, buf), -EINVAL);
    EQ(m->n, n0);
    m->status[m->nstatus++] = ATS_SC_INDEX_FULL;              /* a device status passes through */
    EQ(ats_static_tx(dev, ovl, 2, buf), ATS_SC_INDEX_FULL);
    dev->ops = &mock_ops_nolist;                              /* a transport without a second buffer */
    EQ(ats_static_tx(dev, ovl, 2, buf), -ENOTSUP);
    dev->ops = &mock_ops;
    dev->info.num_lbas = 768;

    /* device settings (host-interface.md §1.6): admin Get Features 0x0A / Set Features 0x09, NSID 0,
     * CDW10 = FID (Save, SEL 0), CDW11 = the value of a Set; the value from DW0 */
    uint32_t v = 1;
    m->dw0 = 2000;
    EQ(ats_get_seal_time(dev, &v), 0);
    SQE("0a000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 c0000000 00000000 00000000 00000000 00000000 00000000");
    EQ(m->admin, 1); EQ(m->len, 0); EQ(m->dir, ATS_DIR_NONE); EQ(v, 2000);
    m->dw0 = 40000;
    EQ(ats_set_seal_time(dev, 40000, &v), 0);
    SQE("09000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 c0000000 409c0000 00000000 00000000 00000000 00000000");
    EQ(m->admin, 1); EQ(m->len, 0); EQ(v, 40000);
    EQ(ats_set_feature(dev, 0xFF, 0xFFFFFFFFu, NULL), 0);         /* *now may be NULL */
    SQE("09000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 ff000000 ffffffff 00000000 00000000 00000000 00000000");
    EQ(ats_get_feature(dev, 0xC1, &v), 0);
    SQE("0a000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 c1000000 00000000 00000000 00000000 00000000 00000000");
    EQ(v, 40000);
    m->status[m->nstatus++] = ATS_SC_INVALID_FIELD;              /* the device's answer passes, value 0 */
    m->status[m->nstatus++] = ATS_SC_INVALID_FIELD;
    EQ(ats_set_seal_time(dev, 65536, &v), ATS_SC_INVALID_FIELD); EQ(v, 0);
    v = 1;
    EQ(ats_get_seal_time(dev, &v), ATS_SC_INVALID_FIELD); EQ(v, 0);
    m->dw0 = 0;
    n0 = m->n;
    v = 1;
    EQ(ats_get_feature(dev, 0xBF, &v), -EINVAL); EQ(v, 0);     /* not a device setting: nothing sent */
    EQ(ats_get_feature(dev, 0x1C0, &v), -EINVAL);
    EQ(ats_set_feature(dev, 0x07, 1, &v), -EINVAL);             /* Number of Queues: the driver's, not ours */
    EQ(ats_set_feature(dev, 0x100, 1, NULL), -EINVAL);
    EQ(ats_get_feature(dev, 0xC0, NULL), -EINVAL);
    EQ(ats_get_seal_time(NULL, &v), -EINVAL);
    EQ(ats_set_seal_time(NULL, 5, &v), -EINVAL);
    EQ(m->n, n0);

    /* argument checks: nothing sent */
    n0 = m->n;
    EQ(ats_read(dev, 0, 0, buf), -EINVAL);
    EQ(ats_read(dev, 0, 129, buf), -EINVAL);                  /* 129 * 512 > MDTS */
    EQ(ats_write(dev, 0, 1, NULL, 0), -EINVAL);
    EQ(ats_write(dev, 0, 1, buf, 4), -EINVAL);
    EQ(ats_rflush(dev, rf, 0), -EINVAL);
    struct ats_range r9[9] = {{0, 1}};
    EQ(ats_rflush(dev, r9, 9), -EINVAL);
    EQ(ats_trim(dev, r9, 9), -EINVAL);
    struct ats_range bad = {1ull << 48, 1}, zero = {0, 0};
    EQ(ats_rflush(dev, &bad, 1), -EINVAL);
    EQ(ats_rflush(dev, &zero, 1), -EINVAL);
    EQ(ats_tx_begin(NULL, &t4), -EINVAL);
    EQ(ats_sim_cycle(dev, &(uint64_t){0}), -ENOTSUP);
    EQ(ats_sim_arm_cut(dev, ATS_CUT_AT_CYCLE, 5), -ENOTSUP);
    EQ(m->n, n0);
    /* close aborts what is still open (t2: txid 1) */
    n0 = m->n;
    EQ(ats_close(dev), 0);
    EQ(m->n, n0 + 1);
    SQE("8c000000 01000000 00000000 00000000 00000000 00000000 00000000 00000000"
        "00000000 00000000 00000000 00000000 00000000 01000000 00000000 00000000");
    free(m);
}

static void test_codec(void)
{
    /* CDW13 fields; CID and PRPs placed by the transport */
    EQ(ats_cdw13(63, 0, 0, 1), 0x1003F); EQ(ats_cdw13(0, 1, 1, 2), 0x20300);
    struct ats_sqe s;
    ats_sqe_cmd(&s, OPC_TX_ABORT, 1, 0, 0, 7);
    ats_sqe_set_cid(&s, 0xBEEF);
    ats_sqe_set_prp(&s, 0x123456000ull, 0x7000);
    uint8_t b[64];
    ats_sqe_bytes(&s, b);
    bytes_eq(b, 64, "8c00efbe 01000000 00000000 00000000 00000000 00000000 00604523 01000000"
                    "00700000 00000000 00000000 00000000 00000000 07000000 00000000 00000000", __LINE__);

    /* CQE: DW0 result, DW2 SQHD 15:0 / SQID 31:16, DW3 CID 15:0, P 16, SC 24:17, SCT 27:25, DNR 31 */
    struct ats_cqe c;
    const uint8_t lba[16] = {0x04, 0x00, 0x00, 0xce, 0, 0, 0, 0, 0x05, 0x00, 0x01, 0x00, 0x34, 0x12, 0x01, 0x81};
    ats_cqe_parse(lba, &c);
    EQ(c.dw0, 0xCE000004); EQ(c.sqhd, 5); EQ(c.sqid, 1); EQ(c.cid, 0x1234); EQ(c.phase, 1);
    EQ(c.status, ATS_SC_LBA_RANGE); EQ(c.dnr, 1);
    const uint8_t txfull[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x1f, 0x00, 0x01, 0x00, 0xff, 0xff, 0x08, 0x8e};
    ats_cqe_parse(txfull, &c);
    EQ(c.status, ATS_SC_TX_FULL); EQ(c.phase, 0); EQ(c.cid, 0xFFFF); EQ(c.sqhd, 31);
    const uint8_t ok[16] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x07, 0x00, 0x01, 0x00};
    ats_cqe_parse(ok, &c);
    EQ(c.status, 0); EQ(c.phase, 1); EQ(c.dnr, 0); EQ(c.dw0, 1);
    EQ(ats_cqe_status(2u << 25 | 0x81u << 17), ATS_SC_READ_ERROR);
    EQ(ats_cqe_status(7u << 25 | 0x02u << 17 | 1u << 30), ATS_SC_BAD_TXID);   /* M bit ignored */
    EQ(ats_cqe_status(1u << 25 | 0x0Cu << 17 | 3u << 28), 0x010C);             /* CRD ignored */

    /* PRPs (4 KiB pages): one page, two (PRP2 = the second page), more (PRP2 = a list) */
    uint64_t p1, p2, e[17];
    EQ(ats_prps(0x20000, 4, 0x14000, &p1, &p2, e), 0); EQ(p1, 0x20000); EQ(p2, 0);
    EQ(ats_prps(0x20000, 4096, 0x14000, &p1, &p2, e), 0); EQ(p2, 0);
    EQ(ats_prps(0x20000, 4097, 0x14000, &p1, &p2, e), 0); EQ(p2, 0x21000);
    EQ(ats_prps(0x20000, 8192, 0x14000, &p1, &p2, e), 0); EQ(p2, 0x21000);
    EQ(ats_prps(0x20000, 8193, 0x14000, &p1, &p2, e), 2); EQ(p2, 0x14000); EQ(e[0], 0x21000); EQ(e[1], 0x22000);
    EQ(ats_prps(0x20000, 65536, 0x14000, &p1, &p2, e), 15); EQ(e[14], 0x2F000);
    EQ(ats_prps(0x20FFC, 4, 0x14000, &p1, &p2, e), 0); EQ(p1, 0x20FFC); EQ(p2, 0);
    EQ(ats_prps(0x20FFC, 8, 0x14000, &p1, &p2, e), 0); EQ(p2, 0x21000);
    EQ(ats_prps(0x20FFC, 4100, 0x14000, &p1, &p2, e), 0); EQ(p2, 0x21000);
    EQ(ats_prps(0x20FFC, 4101, 0x14000, &p1, &p2, e), 2); EQ(e[1], 0x22000);
    EQ(ats_prps(0x20200, 65536, 0x14000, &p1, &p2, e), 16); EQ(p1, 0x20200); EQ(e[0], 0x21000); EQ(e[15], 0x30000);
    EQ(ats_prps(0x20200, 65536, 0x14F80, &p1, &p2, e), 16); EQ(p2, 0x14F80);   /* fills its list page */
    EQ(ats_prps(0x20200, 65536, 0x14F88, &p1, &p2, e), -EINVAL);               /* would need chaining */
    EQ(ats_prps(0x20002, 8, 0x14000, &p1, &p2, e), -EINVAL);
    EQ(ats_prps(0x20000, 0, 0x14000, &p1, &p2, e), -EINVAL);
    EQ(ats_prps(0x20000, 65537, 0x14000, &p1, &p2, e), -EINVAL);
    EQ(ats_prps(0x20000, 12288, 0x14004, &p1, &p2, e), -EINVAL);               /* list not 8-byte aligned */

    /* Identify: MDTS byte 77, vendor words at 3072 (magic, 9 num_tx, 10 tx_entries), NSZE, LBADS */
    static uint8_t ctrl[4096], ns[4096];
    ctrl[77] = 4;
    ats_put32(ctrl + 3072, 0x41545344u);
    ats_put32(ctrl + 3072 + 36, 8);
    ats_put32(ctrl + 3072 + 40, 32);
    ats_put64(ns, 768);
    ns[26] = 1;                                        /* FLBAS: format 1 */
    ats_put32(ns + 132, 9u << 16);                     /* LBAF1: LBADS 9 (512 bytes) */
    ats_dev *d = ats_dev_alloc(&mock_ops, NULL);
    EQ(ats_dev_identify(d, ctrl, ns), 0);
    EQ(d->info.lba_bytes, 512); EQ(d->info.num_lbas, 768); EQ(d->info.num_tx, 8); EQ(d->info.tx_entries, 32);
    EQ(d->info.max_transfer, 65536);
    ctrl[77] = 2;
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.max_transfer, 16384);
    ctrl[77] = 0;                                      /* no limit: the library's 64 KiB */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.max_transfer, 65536);
    ats_put32(ctrl + 3072 + 36, 100);
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.num_tx, 63);   /* 6-bit TXID */
    /* atomic-write fields: none without NSFEAT bit 1; NAWUPF / NABSPF + 1; NABO != 0 turns them off;
     * a unit beyond MDTS is cut to MDTS (one command) */
    EQ(d->info.atomic_blocks, 1); EQ(d->info.atomic_boundary, 0);
    EQ(d->info.static_ranges, 0); EQ(d->info.static_pages, 0);
    ctrl[3136] = 8; ctrl[3137] = 2; ctrl[3138] = 0x20;       /* SWRITE: 8 ranges, STX 2, 32 pages */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.static_ranges, 8); EQ(d->info.static_pages, 32);
    ctrl[3138] = 0; ctrl[3139] = 1;                          /* 256 pages > MDTS (128 of 512 B) */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.static_pages, 128);
    ctrl[3136] = 0;                                          /* STX = 0: no SWRITE */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.static_ranges, 0); EQ(d->info.static_pages, 0);
    ns[24] = 0x06;                                     /* NSFEAT: NSABP, DAE */
    ns[36] = 31; ns[44] = 31;                          /* NAWUPF, NABSPF: 32 LBAs */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.atomic_blocks, 32); EQ(d->info.atomic_boundary, 32);
    ns[44] = 0;                                        /* no boundary */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.atomic_blocks, 32); EQ(d->info.atomic_boundary, 0);
    ns[44] = 63; ns[43] = 1;                           /* NABO = 256 */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.atomic_blocks, 1); EQ(d->info.atomic_boundary, 0);
    ns[43] = 0; ns[24] = 0x04;                         /* NSABP clear: the namespace fields do not apply */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.atomic_blocks, 1);
    ns[24] = 0x02; ns[36] = 0xFF; ns[37] = 0x01;       /* NAWUPF 511: 512 LBAs > MDTS (128 of 512 B) */
    EQ(ats_dev_identify(d, ctrl, ns), 0); EQ(d->info.atomic_blocks, 128); EQ(d->info.atomic_boundary, 64);
    ats_put32(ctrl + 3072, 0);
    EQ(ats_dev_identify(d, ctrl, ns), -ENODEV);
    ats_dev_free(d);

    /* every named status has its own name */
    const int named[] = {ATS_OK, ATS_E_POWER_CUT, ATS_SC_INVALID_OPCODE, ATS_SC_INVALID_FIELD, ATS_SC_DATA_XFER,
                         ATS_SC_INTERNAL, ATS_SC_INVALID_NS, ATS_SC_CMD_SEQ, ATS_SC_PRP_OFFSET, ATS_SC_LBA_RANGE,
                         ATS_SC_WRITE_FAULT, ATS_SC_READ_ERROR, ATS_SC_BAD_TXID, ATS_SC_TX_FULL, ATS_SC_INDEX_FULL,
                         ATS_SC_TX_EMPTY, ATS_SC_TABLE_FULL, -EINVAL, -E2BIG, -ETIMEDOUT, -EPROTO, -EIO,
                         ATS_E_NOT_ATOMIC, ATS_SC_SW_NONE, ATS_SC_SW_MANY, ATS_SC_SW_PAGES, ATS_SC_SW_EMPTY,
                         ATS_SC_SW_LENGTH, ATS_SC_SW_OVERLAP};
    const size_t nn = sizeof named / sizeof named[0];
    for (size_t i = 0; i < nn; i++)
        for (size_t j = i + 1; j < nn; j++)
            EQ(strcmp(ats_strerror(named[i]), ats_strerror(named[j])) != 0, 1);
    EQ(strstr(ats_strerror(0x0702), "BAD_TXID") != NULL, 1);
    EQ(strstr(ats_strerror(0x0799), "vendor") != NULL, 1);
}

int main(void)
{
    test_codec();
    test_commands();
    if (fails) {
        fprintf(stderr, "atstx_unit: %d of %d checks failed\n", fails, checks);
        return 1;
    }
    printf("atstx_unit: all %d checks passed\n", checks);
    return 0;
}
