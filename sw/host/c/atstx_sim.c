/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the full-system simulation's host port (docs/host-port.md, NVMe build) as an NVMe
 * device. The library is the host's NVMe driver: controller enable, Identify, one I/O queue pair,
 * PRPs, polled completions (phase tags), all in the simulator's host memory; the simulation
 * advances only inside RUN requests (lockstep). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "atstx_int.h"

/* host-port messages and RUN conditions (docs/host-port.md) */
enum {
    M_MEM_WRITE = 0x02, M_MEM_READ = 0x03, M_RUN = 0x04, M_CUT_ARM = 0x06, M_QUIT = 0x0B,
    M_MMIO_WRITE = 0x0C, M_MMIO_READ = 0x0D,
    M_HELLO = 0x80, M_MEM_DATA = 0x83, M_STOPPED = 0x84, M_MMIO_DATA = 0x86, M_ERROR = 0x8F,
};
#define U_HOST_EN (1u << 3)
#define U_MMIO    (1u << 4)
#define R_CUT     (1u << 9)

/* NVMe registers (NVMe 1.4 §3.1, host-interface.md §1.2) */
enum { REG_CAP = 0x00, REG_CC = 0x14, REG_CSTS = 0x1C, REG_AQA = 0x24, REG_ASQ = 0x28, REG_ACQ = 0x30 };

#define QSIZE 32u                  /* entries of each queue (admin and I/O) */
#define IOQ 1u
#define POLL_CYCLES 500u
#define CMD_TIMEOUT 400000000ull   /* cycles: 4 s simulated */
#define BOOT_CYCLES 2000000000ull

/* host memory layout, from 64 KiB up (4 KiB pages) */
#define HM_ASQ   0x10000u
#define HM_ACQ   0x11000u
#define HM_IOSQ  0x12000u
#define HM_IOCQ  0x13000u
#define HM_LIST  0x14000u
#define HM_DATA  0x20000u          /* 64 KiB of data */

struct queue {
    uint32_t sq, cq, tail, head, phase;
    uint16_t cid;
};

struct sim {
    int fd;
    uint64_t cycle;
    int cut;
    struct queue q[2];              /* admin, I/O */
    uint8_t *rx;                    /* the last message's payload */
    uint32_t rx_len, rx_cap;
    uint32_t mmio_val;
    int mmio_have;
};

static struct sim *S(ats_dev *d) { return (struct sim *)d->priv; }

static int xwrite(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int xread(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        ssize_t k = read(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EPIPE;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int send_msg(struct sim *s, uint8_t type, const void *payload, uint32_t len)
{
    uint8_t h[5];
    uint32_t n = len + 1;
    memcpy(h, &n, 4);                                  /* little endian (x86, RISC-V hosts) */
    h[4] = type;
    int st = xwrite(s->fd, h, 5);
    return st ? st : (len ? xwrite(s->fd, payload, len) : 0);
}

/* the next message; its payload in s->rx */
static int recv_msg(struct sim *s, uint8_t *type)
{
    uint32_t n;
    int st = xread(s->fd, &n, 4);
    if (st)
        return st;
    if (n < 1 || n > (64u << 20))
        return -EPROTO;
    if (n - 1 > s->rx_cap) {
        uint8_t *b = realloc(s->rx, n);
        if (!b)
            return -ENOMEM;
        s->rx = b;
        s->rx_cap = n;
    }
    if ((st = xread(s->fd, type, 1)) || (st = xread(s->fd, s->rx, n - 1)))
        return st;
    s->rx_len = n - 1;
    return 0;
}

/* waits for a message of `want`, noting MMIO answers on the way (others: CPL, UART, MSI: ignored) */
static int wait_msg(struct sim *s, uint8_t want)
{
    for (;;) {
        uint8_t t;
        int st = recv_msg(s, &t);
        if (st)
            return st;
        if (t == M_MMIO_DATA && s->rx_len >= 12) {
            uint32_t status;
            memcpy(&s->mmio_val, s->rx + 4, 4);
            memcpy(&status, s->rx + 8, 4);
            if (status)
                s->mmio_val = 0xFFFFFFFFu;
            s->mmio_have = 1;
        }
        if (t == want)
            return 0;
    }
}

static int run(struct sim *s, uint64_t cycles, uint32_t until, uint32_t *why)
{
    uint8_t p[12];
    memcpy(p, &cycles, 8);
    memcpy(p + 8, &until, 4);
    int st = send_msg(s, M_RUN, p, 12);
    if (st || (st = wait_msg(s, M_STOPPED)))
        return st;
    uint32_t w;
    memcpy(&s->cycle, s->rx, 8);
    memcpy(&w, s->rx + 8, 4);
    if (w & R_CUT)
        s->cut = 1;
    if (why)
        *why = w;
    return s->cut ? ATS_E_POWER_CUT : 0;
}

static int mem_write(struct sim *s, uint32_t addr, const void *data, uint32_t len)
{
    uint8_t *p = malloc(4 + ((len + 3) & ~3u));
    if (!p)
        return -ENOMEM;
    memcpy(p, &addr, 4);
    memcpy(p + 4, data, len);
    memset(p + 4 + len, 0, ((len + 3) & ~3u) - len);
    int st = send_msg(s, M_MEM_WRITE, p, 4 + ((len + 3) & ~3u));
    free(p);
    return st;
}

static int mem_read(struct sim *s, uint32_t addr, void *out, uint32_t len)
{
    uint32_t p[2] = {addr, len};
    int st = send_msg(s, M_MEM_READ, p, 8);
    if (st || (st = wait_msg(s, M_MEM_DATA)))
        return st;
    if (s->rx_len < 4 + len)
        return -EPROTO;
    memcpy(out, s->rx + 4, len);
    return 0;
}

static int mmio_w(struct sim *s, uint32_t off, uint32_t v)
{
    uint32_t p[2] = {off, v};
    return send_msg(s, M_MMIO_WRITE, p, 8);
}

static int mmio_r(struct sim *s, uint32_t off, uint32_t *v)
{
    s->mmio_have = 0;
    int st = send_msg(s, M_MMIO_READ, &off, 4);
    for (int i = 0; !st && !s->mmio_have && i < 100; i++)
        st = run(s, 1000000, U_MMIO, NULL);
    if (st)
        return st;
    if (!s->mmio_have)
        return -ETIMEDOUT;
    *v = s->mmio_val;
    return 0;
}

static int wait_csts(struct sim *s, uint32_t mask, uint32_t want)
{
    for (int i = 0; i < 20000; i++) {
        uint32_t v;
        int st = mmio_r(s, REG_CSTS, &v);
        if (st)
            return st;
        if (v != 0xFFFFFFFFu && (v & 2u))
            return -EIO;                               /* CSTS.CFS: controller fatal */
        if ((v & mask) == want)
            return 0;
        if ((st = run(s, 2000, 0, NULL)))
            return st;
    }
    return -ETIMEDOUT;
}

/* one command on queue `qi` (0 admin, 1 I/O): PRPs for `len` bytes at HM_DATA, submit, poll */
static int sim_exec(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                    uint32_t *dw0)
{
    struct sim *s = S(dev);
    if (s->cut)
        return ATS_E_POWER_CUT;
    if (len > 64u * 1024u)
        return -EINVAL;
    struct queue *q = &s->q[admin ? 0 : 1];
    uint32_t qid = admin ? 0 : IOQ;
    int st;
    if (len) {
        uint64_t prp1, prp2, ents[16];
        unsigned n = ats_prps(HM_DATA, len, HM_LIST, &prp1, &prp2, ents);
        if (n && (st = mem_write(s, HM_LIST, ents, 8 * n)))
            return st;
        if (dir == ATS_TO_DEV && (st = mem_write(s, HM_DATA, data, len)))
            return st;
        sqe->dw[6] = (uint32_t)prp1;
        sqe->dw[7] = (uint32_t)(prp1 >> 32);
        sqe->dw[8] = (uint32_t)prp2;
        sqe->dw[9] = (uint32_t)(prp2 >> 32);
    }
    uint16_t cid = q->cid++;
    sqe->dw[0] = (sqe->dw[0] & 0xFFFFu) | (uint32_t)cid << 16;
    if ((st = mem_write(s, q->sq + 64 * q->tail, sqe->dw, 64)))
        return st;
    q->tail = (q->tail + 1) % QSIZE;
    if ((st = mmio_w(s, 0x1000 + 8 * qid, q->tail)))
        return st;
    uint64_t waited = 0;
    for (;;) {
        uint32_t cqe[4];
        if ((st = mem_read(s, q->cq + 16 * q->head, cqe, 16)))
            return st;
        if ((cqe[3] >> 16 & 1u) == q->phase) {
            q->head = (q->head + 1) % QSIZE;
            if (q->head == 0)
                q->phase ^= 1u;
            if ((st = mmio_w(s, 0x1004 + 8 * qid, q->head)))
                return st;
            if ((uint16_t)cqe[3] != cid || (cqe[2] >> 16) != qid)   /* DW3: CID, DW2: SQID */
                return -EPROTO;                        /* one command at a time: it must be ours */
            int sc = ats_cqe_status(cqe[3]);
            if (dw0)
                *dw0 = cqe[0];
            if (!sc && dir == ATS_TO_HOST && len && (st = mem_read(s, HM_DATA, data, len)))
                return st;
            return sc;
        }
        if (waited >= CMD_TIMEOUT)
            return -ETIMEDOUT;
        if ((st = run(s, POLL_CYCLES, 0, NULL)))
            return st;
        waited += POLL_CYCLES;
    }
}

static int sim_close(ats_dev *dev)
{
    struct sim *s = S(dev);
    int st = 0;
    if (!s->cut) {
        uint32_t cc;
        st = mmio_r(s, REG_CC, &cc);
        if (!st && (st = mmio_w(s, REG_CC, (cc & ~(3u << 14)) | 1u << 14)) == 0)
            st = wait_csts(s, 3u << 2, 2u << 2);       /* SHST = 2: shutdown complete */
        int q = send_msg(s, M_QUIT, NULL, 0);
        if (!st)
            st = q;
        uint8_t t;
        while (recv_msg(s, &t) == 0)                   /* until the simulator closes the socket */
            ;
    }
    close(s->fd);
    free(s->rx);
    free(s);
    return st;
}

static int sim_arm_cut(ats_dev *dev, uint32_t kind, uint64_t value)
{
    uint8_t p[12];
    memcpy(p, &kind, 4);
    memcpy(p + 4, &value, 8);
    return send_msg(S(dev), M_CUT_ARM, p, 12);
}

static int sim_cycle(ats_dev *dev, uint64_t *cycle)
{
    *cycle = S(dev)->cycle;
    return 0;
}

static const struct ats_ops sim_ops = {sim_exec, sim_close, sim_arm_cut, sim_cycle};

static int admin_cmd(ats_dev *dev, struct ats_sqe *s, void *data, uint32_t len)
{
    return sim_exec(dev, 1, s, data, len, data ? ATS_TO_HOST : ATS_NONE, NULL);
}

static int bring_up(ats_dev *dev)
{
    struct sim *s = S(dev);
    uint32_t why = 0, v;
    int st = run(s, BOOT_CYCLES, U_HOST_EN, &why);     /* the firmware's boot or recovery */
    if (st)
        return st;
    if (!(why & U_HOST_EN))
        return -ETIMEDOUT;
    if ((st = mmio_r(s, REG_CC, &v)) || (st = mmio_w(s, REG_CC, 0)) || (st = wait_csts(s, 1, 0)))
        return st;
    s->q[0] = (struct queue){HM_ASQ, HM_ACQ, 0, 0, 1, 0};
    s->q[1] = (struct queue){HM_IOSQ, HM_IOCQ, 0, 0, 1, 0};
    uint8_t zero[4096] = {0};
    for (uint32_t a = HM_ASQ; a <= HM_IOCQ; a += 4096)
        if ((st = mem_write(s, a, zero, 4096)))
            return st;
    if ((st = mmio_w(s, REG_AQA, (QSIZE - 1) << 16 | (QSIZE - 1))) || (st = mmio_w(s, REG_ASQ, HM_ASQ)) ||
        (st = mmio_w(s, REG_ASQ + 4, 0)) || (st = mmio_w(s, REG_ACQ, HM_ACQ)) || (st = mmio_w(s, REG_ACQ + 4, 0)) ||
        (st = mmio_w(s, REG_CC, 1u | 6u << 16 | 4u << 20)) || (st = wait_csts(s, 1, 1)))
        return st;
    static uint8_t ctrl[4096], ns[4096];
    struct ats_sqe q;
    ats_sqe_simple(&q, ADM_IDENTIFY, 0, 1, 0, 0);      /* CNS 1: controller */
    if ((st = admin_cmd(dev, &q, ctrl, 4096)))
        return st;
    ats_sqe_simple(&q, ADM_IDENTIFY, 1, 0, 0, 0);      /* CNS 0: namespace 1 */
    if ((st = admin_cmd(dev, &q, ns, 4096)))
        return st;
    if ((st = ats_dev_init_from_identify(dev, ctrl, ns)))
        return st;
    ats_sqe_simple(&q, ADM_SET_FEATURES, 0, 0x07, 0, 0); /* Number of Queues: 1 SQ, 1 CQ */
    if ((st = admin_cmd(dev, &q, NULL, 0)))
        return st;
    ats_sqe_simple(&q, ADM_CREATE_CQ, 0, (QSIZE - 1) << 16 | IOQ, 1u, 0);    /* PC, no interrupts */
    q.dw[6] = HM_IOCQ;
    if ((st = admin_cmd(dev, &q, NULL, 0)))
        return st;
    ats_sqe_simple(&q, ADM_CREATE_SQ, 0, (QSIZE - 1) << 16 | IOQ, IOQ << 16 | 1u, 0);
    q.dw[6] = HM_IOSQ;
    return admin_cmd(dev, &q, NULL, 0);
}

int ats_open_sim(const char *path, ats_dev **out)
{
    if (!path || !out || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return -EINVAL;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    int st = -ECONNREFUSED;
    for (int i = 0; i < 600; i++) {                    /* the simulator may still be starting */
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            st = 0;
            break;
        }
        usleep(100000);
    }
    ats_dev *dev = calloc(1, sizeof *dev);
    struct sim *s = calloc(1, sizeof *s);
    if (st || !dev || !s) {
        close(fd);
        free(dev);
        free(s);
        return st ? st : -ENOMEM;
    }
    s->fd = fd;
    dev->priv = s;
    dev->ops = &sim_ops;
    if ((st = wait_msg(s, M_HELLO)) || (st = bring_up(dev))) {
        close(fd);
        free(s->rx);
        free(s);
        free(dev);
        return st;
    }
    *out = dev;
    return 0;
}
