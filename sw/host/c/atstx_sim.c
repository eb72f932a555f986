/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the simulated device as an NVMe controller. The library is the host's NVMe driver on
 * the host port of the full-system simulation (NVMe build, docs/host-port.md): BAR0 registers are
 * MMIO messages, the queues, PRP lists and data buffers live in the simulator's host memory, and
 * waiting for a completion runs the simulation until an MSI (or a poll interval) and reads the CQ.
 * One command at a time on the admin queue or the one I/O queue pair.
 *
 * Host memory (4 KiB pages; the first 64 KiB are left alone):
 *   0x10000 admin SQ   0x11000 admin CQ   0x12000 I/O SQ 1   0x13000 I/O CQ 1   0x14000 PRP list
 *   0x15000 a command's second buffer (SWRITE's range list), at an offset that moves on as well
 *   0x20000 … 0x31FFF  the data buffer: a command's data starts at a dword offset inside its first
 *                      page that moves on with every command (as user buffers do under a real
 *                      driver), so PRP1 offsets, PRP2 and PRP lists all get used.
 * Cycle budgets (100 MHz clock): boot or recovery 200 M, a command 50 M, an MMIO read 1 M,
 * shutdown 50 M; past a budget the call returns -ETIMEDOUT and the handle is failed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "atstx_hostport.h"
#include "atstx_int.h"

/* NVMe controller registers (NVMe 1.4 §3.1; host-interface.md §1.2), doorbell stride 0 */
enum { REG_CAP = 0x00, REG_CC = 0x14, REG_CSTS = 0x1C, REG_AQA = 0x24, REG_ASQ = 0x28, REG_ACQ = 0x30 };
#define SQ_TDBL(q) (0x1000u + 8u * (q))
#define CQ_HDBL(q) (0x1004u + 8u * (q))
#define CC_EN          (1u << 0)
#define CC_SHN_NORMAL  (1u << 14)
#define CC_SHN_MASK    (3u << 14)
#define CC_IOSQES_64   (6u << 16)
#define CC_IOCQES_16   (4u << 20)
#define CSTS_RDY       (1u << 0)
#define CSTS_CFS       (1u << 1)
#define CSTS_SHST_MASK (3u << 2)
#define CSTS_SHST_DONE (2u << 2)

#define HM_ASQ  0x10000u
#define HM_ACQ  0x11000u
#define HM_IOSQ 0x12000u
#define HM_IOCQ 0x13000u
#define HM_LIST 0x14000u
#define HM_LIST2 0x15000u
#define HM_DATA 0x20000u
#define DATA_OFF_STEP 0x2A4u        /* the data offset's step (dword aligned, wraps in the page) */

#define IOQ      1u                 /* the I/O queue pair's id */
#define IOQ_IV   1u                 /* its MSI vector (the admin CQ's is 0) */
#define QSIZE    32u                /* entries of every queue (fewer when CAP.MQES says so) */
#define BUDGET_BOOT  200000000ull
#define BUDGET_CMD   50000000ull
#define BUDGET_MMIO  1000000ull
#define BUDGET_SHUT  50000000ull
#define WAIT_CHUNK   20000ull       /* cycles of one RUN while waiting for a completion */

struct queue {
    uint32_t sq, cq, size, tail, head, phase, qid;
    uint16_t cid;
};

struct sim {
    struct ats_hp hp;
    struct queue q[2];              /* admin, I/O */
    uint32_t data_off, list_off;
    int failed;                     /* after a timeout or protocol error: no more commands */
};

static struct sim *S(ats_dev *d)
{
    return (struct sim *)d->priv;
}

/* a transport failure fails the handle (a power cut has its own state) */
static int failed(struct sim *s, int st)
{
    if (st && st != ATS_E_POWER_CUT)
        s->failed = 1;
    return st;
}

static int wait_csts(struct sim *s, uint32_t mask, uint32_t want, uint64_t budget)
{
    uint64_t start = s->hp.cycle;
    for (;;) {
        uint32_t v;
        int st = ats_hp_mmio_read(&s->hp, REG_CSTS, &v, BUDGET_MMIO);
        if (st)
            return st;
        if (v == 0xFFFFFFFFu || (v & CSTS_CFS))
            return -EIO;                               /* an error completion, or controller fatal */
        if ((v & mask) == want)
            return 0;
        if (s->hp.cycle - start >= budget)
            return -ETIMEDOUT;
        if ((st = ats_hp_run(&s->hp, 2000, 0, NULL)))
            return st;
    }
}

static int put_data(struct sim *s, uint32_t addr, const void *data, uint32_t len, enum ats_dir dir,
                    uint64_t *prp1, uint64_t *prp2)
{
    uint64_t ents[ATS_MAX_XFER / ATS_PAGE + 1];
    int n = ats_prps(addr, len, HM_LIST, prp1, prp2, ents);
    if (n < 0)
        return n;
    int st = 0;
    if (n) {
        uint8_t list[8 * (ATS_MAX_XFER / ATS_PAGE + 1)];
        for (int i = 0; i < n; i++)
            ats_put64(list + 8 * i, ents[i]);
        st = ats_hp_mem_write(&s->hp, HM_LIST, list, 8u * (uint32_t)n);
    }
    if (!st && dir == ATS_DIR_TO_DEV)
        st = ats_hp_mem_write(&s->hp, addr, data, len);
    else if (!st)
        st = ats_hp_mem_fill(&s->hp, addr, 0xA5, len);    /* poison: data the device did not write shows */
    return st;
}

static int sim_exec_q(struct sim *s, struct queue *q, struct ats_sqe *sqe, void *data, uint32_t len,
                      enum ats_dir dir, uint32_t *dw0)
{
    if (s->hp.cut)
        return ATS_E_POWER_CUT;
    if (s->failed)
        return -EIO;
    if (len > ATS_MAX_XFER || (len && !data) || (len && dir == ATS_DIR_NONE))
        return -EINVAL;
    int st;
    uint32_t addr = 0;
    uint64_t prp1 = 0, prp2 = 0;
    if (len) {
        s->data_off = (s->data_off + DATA_OFF_STEP) & (ATS_PAGE - 4u);
        addr = HM_DATA + s->data_off;
        if ((st = put_data(s, addr, data, len, dir, &prp1, &prp2)))
            return failed(s, st);
    }
    if (len)
        ats_sqe_set_prp(sqe, prp1, prp2);          /* (without data: the caller's, e.g. a queue base) */
    uint16_t cid = q->cid;
    q->cid = (uint16_t)((q->cid + 1u) % 0xFFFFu);       /* CID 0xFFFF is Abort's special value */
    ats_sqe_set_cid(sqe, cid);
    uint8_t b[64];
    ats_sqe_bytes(sqe, b);
    if ((st = ats_hp_mem_write(&s->hp, q->sq + 64u * q->tail, b, 64)))
        return failed(s, st);
    q->tail = (q->tail + 1u) % q->size;
    if ((st = ats_hp_mmio_write(&s->hp, SQ_TDBL(q->qid), q->tail)))
        return failed(s, st);
    uint32_t errors = s->hp.errors;
    uint64_t start = s->hp.cycle;
    struct ats_cqe c;
    for (;;) {
        if ((st = ats_hp_run(&s->hp, WAIT_CHUNK, ATS_HP_U_MSI, NULL)))
            return failed(s, st);
        uint8_t e[16];
        if ((st = ats_hp_mem_read(&s->hp, q->cq + 16u * q->head, e, 16)))
            return failed(s, st);
        ats_cqe_parse(e, &c);
        if (c.phase == q->phase)
            break;
        if (s->hp.errors != errors)
            return failed(s, -EPROTO);
        if (s->hp.cycle - start >= BUDGET_CMD)
            return failed(s, -ETIMEDOUT);
    }
    q->head = (q->head + 1u) % q->size;
    if (q->head == 0)
        q->phase ^= 1u;
    if ((st = ats_hp_mmio_write(&s->hp, CQ_HDBL(q->qid), q->head)))
        return failed(s, st);
    /* one command in flight: the entry must be ours, and the SQ head right after our fetch */
    if (c.cid != cid || c.sqid != q->qid || c.sqhd != q->tail || s->hp.errors != errors)
        return failed(s, -EPROTO);
    if (dw0)
        *dw0 = c.dw0;
    if (c.status == 0 && dir == ATS_DIR_TO_HOST && (st = ats_hp_mem_read(&s->hp, addr, data, len)))
        return failed(s, st);
    return c.status;
}

static int sim_exec(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                    uint32_t *dw0)
{
    struct sim *s = S(dev);
    return sim_exec_q(s, &s->q[admin ? 0 : 1], sqe, data, len, dir, dw0);
}

static int sim_close(ats_dev *dev)
{
    struct sim *s = S(dev);
    int st = s->hp.cut ? ATS_E_POWER_CUT : s->failed ? -EIO : 0;
    if (!st) {
        uint32_t cc;
        st = ats_hp_mmio_read(&s->hp, REG_CC, &cc, BUDGET_MMIO);
        if (!st)
            st = ats_hp_mmio_write(&s->hp, REG_CC, (cc & ~CC_SHN_MASK) | CC_SHN_NORMAL);
        if (!st)
            st = wait_csts(s, CSTS_SHST_MASK, CSTS_SHST_DONE, BUDGET_SHUT);
    }
    ats_hp_close(&s->hp);
    free(s);
    return st;
}

static int sim_arm_cut(ats_dev *dev, uint32_t kind, uint64_t value)
{
    struct sim *s = S(dev);
    return s->hp.cut ? ATS_E_POWER_CUT : ats_hp_arm_cut(&s->hp, kind, value);
}

static int sim_cycle(ats_dev *dev, uint64_t *cycle)
{
    *cycle = S(dev)->hp.cycle;
    return 0;
}

static int sim_put_list(ats_dev *dev, const void *list, uint32_t len, uint64_t *addr)
{
    struct sim *s = S(dev);
    if (s->hp.cut)
        return ATS_E_POWER_CUT;
    if (s->failed)
        return -EIO;
    if (len < 1 || len > ATS_PAGE)
        return -EINVAL;
    s->list_off = (s->list_off + 0x1F4u) & (ATS_PAGE - 4u);
    if (s->list_off + len > ATS_PAGE)
        s->list_off = 0;
    *addr = HM_LIST2 + s->list_off;
    return failed(s, ats_hp_mem_write(&s->hp, (uint32_t)*addr, list, len));
}

static const struct ats_ops sim_ops = {sim_exec, sim_close, sim_arm_cut, sim_cycle, sim_put_list};

static int admin(struct sim *s, struct ats_sqe *q, void *data, uint32_t len)
{
    return sim_exec_q(s, &s->q[0], q, data, len, data ? ATS_DIR_TO_HOST : ATS_DIR_NONE, NULL);
}

static int bring_up(ats_dev *dev)
{
    struct sim *s = S(dev);
    uint32_t why = 0, cap_lo, cap_hi, cc;
    int st = ats_hp_run(&s->hp, BUDGET_BOOT, ATS_HP_U_HOST_EN, &why);   /* firmware boot or recovery */
    if (st)
        return st;
    if (!(why & ATS_HP_U_HOST_EN))
        return -ETIMEDOUT;
    if ((st = ats_hp_mmio_read(&s->hp, REG_CAP, &cap_lo, BUDGET_MMIO)) ||
        (st = ats_hp_mmio_read(&s->hp, REG_CAP + 4, &cap_hi, BUDGET_MMIO)) ||
        (st = ats_hp_mmio_read(&s->hp, REG_CC, &cc, BUDGET_MMIO)))
        return st;
    /* CAP: MQES 15:0 (0-based), CSS bit 37 (NVM command set), MPSMIN 51:48 (must allow 4 KiB) */
    if (!(cap_hi >> 5 & 1u) || (cap_hi >> 16 & 0xFu) != 0 || (cap_lo & 0xFFFFu) < 1)
        return -ENODEV;
    uint32_t qsize = (cap_lo & 0xFFFFu) + 1u < QSIZE ? (cap_lo & 0xFFFFu) + 1u : QSIZE;
    if (cc & CC_EN) {                                  /* a controller left enabled: reset it */
        if ((st = ats_hp_mmio_write(&s->hp, REG_CC, 0)) || (st = wait_csts(s, CSTS_RDY, 0, BUDGET_CMD)))
            return st;
    }
    s->q[0] = (struct queue){HM_ASQ, HM_ACQ, qsize, 0, 0, 1, 0, 0};
    s->q[1] = (struct queue){HM_IOSQ, HM_IOCQ, qsize, 0, 0, 1, IOQ, 0};
    if ((st = ats_hp_mem_fill(&s->hp, HM_ASQ, 0, HM_LIST2 + ATS_PAGE - HM_ASQ)))
        return st;
    if ((st = ats_hp_mmio_write(&s->hp, REG_AQA, (qsize - 1u) << 16 | (qsize - 1u))) ||
        (st = ats_hp_mmio_write(&s->hp, REG_ASQ, HM_ASQ)) || (st = ats_hp_mmio_write(&s->hp, REG_ASQ + 4, 0)) ||
        (st = ats_hp_mmio_write(&s->hp, REG_ACQ, HM_ACQ)) || (st = ats_hp_mmio_write(&s->hp, REG_ACQ + 4, 0)) ||
        (st = ats_hp_mmio_write(&s->hp, REG_CC, CC_EN | CC_IOSQES_64 | CC_IOCQES_16)) ||
        (st = wait_csts(s, CSTS_RDY, CSTS_RDY, BUDGET_CMD)))
        return st;
    uint8_t *ctrl = malloc(4096), *ns = malloc(4096);
    struct ats_sqe q;
    if (!ctrl || !ns) {
        st = -ENOMEM;
        goto out;
    }
    ats_sqe_cmd(&q, ADM_IDENTIFY, 0, 1, 0, 0);         /* CNS 1: controller */
    if ((st = admin(s, &q, ctrl, 4096)))
        goto out;
    ats_sqe_cmd(&q, ADM_IDENTIFY, 1, 0, 0, 0);         /* CNS 0: namespace 1 */
    if ((st = admin(s, &q, ns, 4096)) || (st = ats_dev_identify(dev, ctrl, ns)))
        goto out;
    ats_sqe_cmd(&q, ADM_SET_FEATURES, 0, 0x07, 0, 0);  /* Number of Queues: 1 SQ, 1 CQ (0-based) */
    if ((st = admin(s, &q, NULL, 0)))
        goto out;
    /* Create I/O CQ: CDW10 QSIZE 31:16 (0-based) | QID; CDW11 IV 31:16, IEN bit 1, PC bit 0 */
    ats_sqe_cmd(&q, ADM_CREATE_CQ, 0, (qsize - 1u) << 16 | IOQ, IOQ_IV << 16 | 3u, 0);
    ats_sqe_set_prp(&q, HM_IOCQ, 0);
    if ((st = admin(s, &q, NULL, 0)))
        goto out;
    /* Create I/O SQ: CDW11 CQID 31:16, QPRIO 2:1 (0), PC bit 0 */
    ats_sqe_cmd(&q, ADM_CREATE_SQ, 0, (qsize - 1u) << 16 | IOQ, IOQ << 16 | 1u, 0);
    ats_sqe_set_prp(&q, HM_IOSQ, 0);
    st = admin(s, &q, NULL, 0);
out:
    free(ctrl);
    free(ns);
    return st;
}

int ats_open_sim(const char *path, ats_dev **out)
{
    if (!path || !out)
        return -EINVAL;
    struct sim *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    int st = ats_hp_connect(&s->hp, path, 30000);
    if (!st && !s->hp.nvme)
        st = -ENOTSUP;                                 /* the build without the NVMe front end */
    ats_dev *dev = st ? NULL : ats_dev_alloc(&sim_ops, s);
    if (!st && !dev)
        st = -ENOMEM;
    if (!st)
        st = bring_up(dev);
    if (st) {
        ats_hp_close(&s->hp);
        free(s);
        ats_dev_free(dev);
        return st;
    }
    *out = dev;
    return 0;
}
