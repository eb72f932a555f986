/* SPDX-License-Identifier: Apache-2.0
 * libatstx: a board over the UDP host link (docs/host-port.md "UDP host link"): the device's
 * ats_udp_host behind LiteEth, reached by IPv4 address. POSIX sockets only.
 *
 * The library's NVMe SQEs (atstx.c) become §1 descriptors as the NVMe front end makes them
 * (docs/host-interface.md §1.5: Write / TX Write → WRITE with FUA, TXID, COMMIT, BARRIER, ATTR;
 * Read / TX Read → READ; Dataset Management with AD → one TRIM per range; Range Flush → RFLUSH with
 * its list as the slot's write data (aux_buf); TX Begin / Commit / Abort; Flush; admin Set / Get
 * Features of the device's settings, FIDs 0xC0 … 0xFF → FEATURE, §1.6), and the core's §2 status
 * becomes the NVMe status of §1.8. One command at a time (the handle's queue depth 1): it
 * takes the next slot round robin and the next sequence number, sends SUBMIT then its DATA chunks,
 * and is finished when its CPL and every RDATA chunk have arrived. The host rules of the protocol:
 *   - a timeout (no CPL and data yet) sends the same SUBMIT again with mask = the RDATA chunks still
 *     missing; the wait starts at timeout_ms and doubles per retry up to max_timeout_ms; after
 *     max_retries retries the call returns -ETIMEDOUT and the handle is failed (-EIO after that);
 *   - STATE loading: the DATA chunks the device lacks are sent again; STATE running: wait;
 *   - packets of other slots or sequence numbers (earlier commands, duplicates), of another source,
 *     malformed ones and chunks already received are ignored; ERROR STALE of one's own late DATA too;
 *   - ERROR STALE of the SUBMIT (a host restarted with numbers older than the slot's): it was not
 *     accepted, so it is sent again with a sequence number 2^31 further on (once: a command
 *     numbered before that jump only takes the next number), with its chunks;
 *   - ERROR BUSY: the slot's earlier command still runs (another host): the timeout retries;
 *   - any other ERROR fails the call with ATS_E_LINK_ERR(code) (nothing of it reached the core).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "atstx_int.h"

enum { T_SUBMIT = 0x01, T_DATA = 0x02, T_CPL = 0x81, T_RDATA = 0x82, T_STATE = 0x83, T_ERROR = 0x8F };
enum { E_BUSY = 6, E_STALE = 7, S_LOADING = 1, S_RUNNING = 2 };
#define VER      1u
#define CHUNK    1024u
#define ADM_BYTES 512u              /* IDENTIFY / GET_LOG answer */
#define MAX_SLOT_BYTES (32u * CHUNK) /* mask and chunk bitmaps are 32 bits */
#define IDENT_MAGIC 0x41545344u

struct udp {
    int fd;
    struct sockaddr_in dev;         /* the device's address and port */
    struct ats_udp_opts o;
    uint32_t seq;                   /* the last sequence number used */
    uint32_t epoch;                 /* 2^31 jumps so far */
    uint32_t next_slot;
    int failed;                     /* after a timeout: no more commands */
    struct ats_udp_stats st;
    uint8_t pkt[8 + CHUNK + 64];
};

static struct udp *U(ats_dev *d)
{
    return (struct udp *)d->priv;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static uint32_t nchunks(uint32_t n)
{
    return (n + CHUNK - 1u) / CHUNK;
}

static uint32_t all_bits(uint32_t n)
{
    return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1u;
}

static int send_pkt(struct udp *u, const uint8_t *p, size_t n)
{
    u->st.sent++;
    for (;;) {
        ssize_t k = sendto(u->fd, p, n, 0, (const struct sockaddr *)&u->dev, sizeof u->dev);
        if (k >= 0)
            return 0;
        if (errno == EINTR)
            continue;
        /* a full socket buffer or an ICMP error of an earlier packet is a lost packet: the
         * timeout sends it again */
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == ECONNREFUSED ||
            errno == EHOSTUNREACH || errno == ENETUNREACH)
            return 0;
        return -errno;
    }
}

static void hdr(uint8_t *p, uint8_t type, uint8_t slot, uint8_t arg, uint32_t seq)
{
    p[0] = type;
    p[1] = slot;
    p[2] = arg;
    p[3] = VER;
    ats_put32(p + 4, seq);
}

struct cmd {
    const struct ats_udp_desc *d;
    const uint8_t *wdata;
    uint32_t wlen, rlen;
    uint8_t *rdata;
    uint8_t slot;
    uint32_t seq, epoch;
    uint32_t rgot;                  /* RDATA chunks received */
    int cpl, running;
    uint8_t status;
    uint32_t result;
};

static int send_submit(struct udp *u, const struct cmd *c, uint32_t mask)
{
    uint8_t p[32];
    const struct ats_udp_desc *d = c->d;
    hdr(p, T_SUBMIT, c->slot, 0, c->seq);
    ats_put32(p + 8, mask);
    p[12] = (uint8_t)c->wlen;
    p[13] = (uint8_t)(c->wlen >> 8);
    p[14] = (uint8_t)c->rlen;
    p[15] = (uint8_t)(c->rlen >> 8);
    p[16] = d->op;
    p[17] = d->txid;
    p[18] = d->flags;
    p[19] = (uint8_t)((d->attr & 3u) | (d->prio & 3u) << 2 | (d->aux_buf ? 1u << 6 : 0u));
    p[20] = (uint8_t)d->nlb;
    p[21] = (uint8_t)(d->nlb >> 8);
    p[22] = (uint8_t)(d->lba >> 32);
    p[23] = (uint8_t)(d->lba >> 40);
    ats_put32(p + 24, (uint32_t)d->lba);
    ats_put32(p + 28, d->aux);
    return send_pkt(u, p, sizeof p);
}

/* the DATA chunks whose bit is set in `which` */
static int send_chunks(struct udp *u, const struct cmd *c, uint32_t which)
{
    for (uint32_t k = 0; k < nchunks(c->wlen); k++) {
        if (!(which >> k & 1u))
            continue;
        uint32_t n = c->wlen - k * CHUNK < CHUNK ? c->wlen - k * CHUNK : CHUNK;
        hdr(u->pkt, T_DATA, c->slot, (uint8_t)k, c->seq);
        memcpy(u->pkt + 8, c->wdata + k * CHUNK, n);
        int st = send_pkt(u, u->pkt, 8 + n);
        if (st)
            return st;
    }
    return 0;
}

static int finished(const struct cmd *c)
{
    return c->cpl && c->rgot == all_bits(nchunks(c->rlen));
}

/* one received packet: 0 go on, 1 re-arm the timeout, < 0 the call fails */
static int handle(struct udp *u, struct cmd *c, const uint8_t *p, size_t n)
{
    u->st.received++;
    if (n < 8 || p[3] != VER || p[1] != c->slot || ats_get32(p + 4) != c->seq) {
        u->st.ignored++;                           /* an earlier command's late packet, or not ours */
        return 0;
    }
    uint8_t t = p[0], arg = p[2];
    uint32_t w2 = n >= 12 ? ats_get32(p + 8) : 0;
    switch (t) {
    case T_RDATA: {
        uint32_t k = arg, nch = nchunks(c->rlen);
        if (k >= nch || (c->rgot >> k & 1u)) {
            u->st.ignored++;                       /* a duplicate cannot change received data */
            return 0;
        }
        uint32_t want = c->rlen - k * CHUNK < CHUNK ? c->rlen - k * CHUNK : CHUNK;
        if (n - 8 != want) {
            u->st.ignored++;
            return 0;
        }
        memcpy(c->rdata + k * CHUNK, p + 8, want);
        c->rgot |= 1u << k;
        return 0;
    }
    case T_CPL:
        if (n != 12) {
            u->st.ignored++;
            return 0;
        }
        c->cpl = 1;
        c->running = 1;
        c->status = arg;
        c->result = w2;
        return 0;
    case T_STATE:
        if (n != 12) {
            u->st.ignored++;
            return 0;
        }
        if (arg == S_LOADING) {
            uint32_t miss = all_bits(nchunks(c->wlen)) & ~w2;
            for (uint32_t k = 0; k < 32; k++)
                u->st.resent_chunks += miss >> k & 1u;
            int st = send_chunks(u, c, miss);
            return st ? st : 1;
        }
        if (arg == S_RUNNING)
            c->running = 1;
        return 0;
    case T_ERROR:
        if (arg == E_STALE && (w2 & 0xFFu) == T_SUBMIT && !c->cpl && !c->running) {
            /* our SUBMIT is older than the slot's command (of an earlier run of this host): never
             * accepted, so it goes again 2^31 further on, once for every command numbered before */
            u->st.resync++;
            if (c->epoch < u->epoch) {
                u->seq++;
            } else {
                u->seq += 1u << 31;
                u->epoch++;
            }
            c->seq = u->seq;
            c->epoch = u->epoch;
            int st = send_submit(u, c, 0);
            if (!st)
                st = send_chunks(u, c, all_bits(nchunks(c->wlen)));
            return st ? st : 1;
        }
        if (arg == E_STALE) {
            u->st.stale++;                         /* a late duplicate of our own DATA */
            return 0;
        }
        if (arg == E_BUSY) {
            u->st.busy++;                          /* the slot's earlier command still runs */
            return 0;
        }
        u->st.link_errors++;
        return ATS_E_LINK_ERR(arg ? arg : 0xFF);
    default:
        u->st.ignored++;
        return 0;
    }
}

/* waits up to `ms` for packets and handles those queued (at most 256, so that a flood of foreign
 * packets cannot hold the caller past its deadline) */
static int pump(struct udp *u, struct cmd *c, uint64_t ms, int *rearm)
{
    struct pollfd pf = {u->fd, POLLIN, 0};
    int r = poll(&pf, 1, (int)(ms > 60000 ? 60000 : ms));
    if (r < 0)
        return errno == EINTR ? 0 : -errno;
    if (r == 0)
        return 0;
    for (int npk = 0; npk < 256; npk++) {
        struct sockaddr_in src;
        socklen_t sl = sizeof src;
        ssize_t k = recvfrom(u->fd, u->pkt, sizeof u->pkt, MSG_DONTWAIT, (struct sockaddr *)&src, &sl);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED)
                return 0;                          /* drained (or an ICMP error: a lost packet) */
            return -errno;
        }
        if (sl != sizeof src || src.sin_family != AF_INET || src.sin_addr.s_addr != u->dev.sin_addr.s_addr ||
            src.sin_port != u->dev.sin_port) {
            u->st.ignored++;                       /* not from the device */
            continue;
        }
        int st = handle(u, c, u->pkt, (size_t)k);
        if (st < 0)
            return st;
        if (st > 0)
            *rearm = 1;
        if (finished(c))
            return 0;
    }
    return 0;
}

static uint64_t wait_of(const struct udp *u, uint32_t tries)
{
    uint64_t w = (uint64_t)u->o.timeout_ms << (tries > 20 ? 20 : tries);
    return w > u->o.max_timeout_ms ? u->o.max_timeout_ms : w;
}

int ats_udp_cmd(ats_dev *dev, const struct ats_udp_desc *d, const void *wdata, uint32_t wlen, void *rdata,
                uint32_t rlen, uint32_t *result)
{
    if (!dev || !d)
        return -EINVAL;
    if (!ats_is_udp(dev))
        return -ENOTSUP;
    struct udp *u = U(dev);
    if (result)
        *result = 0;
    if (u->failed)
        return -EIO;
    if ((wlen && !wdata) || (rlen && !rdata) || wlen % 4u || rlen % 4u || wlen > u->o.slot_bytes ||
        rlen > u->o.slot_bytes || d->lba >> 48)
        return -EINVAL;
    struct cmd c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.wdata = wdata;
    c.wlen = wlen;
    c.rdata = rdata;
    c.rlen = rlen;
    c.slot = (uint8_t)u->next_slot;
    u->next_slot = (u->next_slot + 1u) % u->o.nslot;
    c.seq = ++u->seq;
    c.epoch = u->epoch;
    u->st.cmds++;
    u->st.last_slot = c.slot;
    int st = send_submit(u, &c, 0);
    if (!st)
        st = send_chunks(u, &c, all_bits(nchunks(wlen)));
    uint32_t tries = 0;
    uint64_t deadline = now_ms() + wait_of(u, 0);
    while (!st && !finished(&c)) {
        uint64_t t = now_ms();
        if (t >= deadline) {
            if (++tries > u->o.max_retries) {
                u->failed = 1;
                u->st.timeouts++;
                st = -ETIMEDOUT;
                break;
            }
            u->st.retries++;
            uint32_t miss = all_bits(nchunks(rlen)) & ~c.rgot;
            if ((st = send_submit(u, &c, miss)))
                break;
            deadline = t + wait_of(u, tries);
            continue;
        }
        int rearm = 0;
        st = pump(u, &c, deadline - t, &rearm);
        if (rearm)
            deadline = now_ms() + wait_of(u, tries);
    }
    u->st.last_seq = c.seq;
    if (st)
        return st;
    if (result)
        *result = c.result;
    return c.status;
}

/* ---------------------------------------------------------------------- the NVMe commands */
/* §2 device status -> NVMe (SCT << 8) | SC, host-interface.md §1.8 */
int ats_udp_nvme_status(int sts)
{
    switch (sts) {
    case ATS_STS_OK: return 0;
    case ATS_STS_BAD_OP: return ATS_SC_INVALID_OPCODE;
    case ATS_STS_BAD_FIELD: return ATS_SC_INVALID_FIELD;
    case ATS_STS_BAD_LBA: return ATS_SC_LBA_RANGE;
    case ATS_STS_MEDIA_ERROR: return ATS_SC_READ_ERROR;
    case ATS_STS_PROGRAM_FAIL: return ATS_SC_WRITE_FAULT;
    case ATS_STS_NO_SPACE: return ATS_SC_CAP_EXCEEDED;
    case ATS_STS_BAD_TXID: case ATS_STS_TX_FULL: case ATS_STS_INDEX_FULL: case ATS_STS_TX_EMPTY:
    case ATS_STS_TABLE_FULL:
        return ATS_SC_VENDOR(sts);
    default: return ATS_SC_INTERNAL;
    }
}

/* one descriptor; a device status becomes its NVMe form */
static int desc_nvme(ats_dev *dev, const struct ats_udp_desc *d, const void *w, uint32_t wl, void *r, uint32_t rl,
                     uint32_t *dw0)
{
    int st = ats_udp_cmd(dev, d, w, wl, r, rl, dw0);
    return st > 0 ? ats_udp_nvme_status(st) : st;
}

#define CDW13_KNOWN (0x3Fu | ATS_CDW13_COMMIT | ATS_CDW13_BARRIER | 3u << 16)

static int udp_exec(ats_dev *dev, int admin, struct ats_sqe *s, void *data, uint32_t len, enum ats_dir dir,
                    uint32_t *dw0)
{
    struct udp *u = U(dev);
    uint8_t opc = (uint8_t)s->dw[0];
    struct ats_udp_desc d;
    memset(&d, 0, sizeof d);
    if (admin) {
        /* no admin queue on the link (IDENTIFY at open) but the device's settings: Set / Get Features
         * of a FID 0xC0 … 0xFF is one FEATURE as the front end makes it (host-interface.md §1.6: CDW10[7:0]
         * only, Save and SEL ignored; lba = FID, nlb 1 Set / 0 Get, aux = CDW11 of a Set; DW0 = the
         * result, 0 after a non-OK answer) */
        uint32_t fid = s->dw[10] & 0xFFu;
        if ((opc != ADM_SET_FEATURES && opc != ADM_GET_FEATURES) || fid < ATS_FID_DEV_FIRST || len)
            return -ENOTSUP;
        d.op = ATS_OP_FEATURE;
        d.lba = fid;
        d.nlb = opc == ADM_SET_FEATURES;
        d.aux = opc == ADM_SET_FEATURES ? s->dw[11] : 0;
        int st = desc_nvme(dev, &d, NULL, 0, NULL, 0, dw0);
        if (st && dw0)
            *dw0 = 0;
        return st;
    }
    if (u->failed)
        return -EIO;
    if ((len && !data) || (len && dir == ATS_DIR_NONE))
        return -EINVAL;
    uint32_t c13 = s->dw[13];
    uint64_t lba = (uint64_t)s->dw[10] | (uint64_t)s->dw[11] << 32;
    d.txid = (uint8_t)(c13 & 0x3Fu);
    d.attr = (uint8_t)(c13 >> 16 & 3u);
    d.nlb = (uint16_t)(s->dw[12] & 0xFFFFu);
    d.lba = lba;
    /* the front end's own checks (§1.5, §1.8): opcode, NSID, reserved CDW13 bits */
    switch (opc) {
    case OPC_FLUSH: case OPC_WRITE: case OPC_READ: case OPC_DSM: case OPC_TX_WRITE: case OPC_TX_READ:
    case OPC_TX_BEGIN: case OPC_TX_COMMIT: case OPC_RANGE_FLUSH: case OPC_TX_ABORT:
        break;
    default:
        return ATS_SC_INVALID_OPCODE;              /* SWRITE / SREAD / DiffWrite: not over the link */
    }
    if (s->dw[1] != 1u && !(opc == OPC_FLUSH && s->dw[1] == 0xFFFFFFFFu))
        return ATS_SC_INVALID_NS;
    if (c13 & ~CDW13_KNOWN)
        return ATS_SC_INVALID_FIELD;
    switch (opc) {
    case OPC_WRITE: case OPC_TX_WRITE: case OPC_READ: case OPC_TX_READ: {
        int wr = opc == OPC_WRITE || opc == OPC_TX_WRITE;
        if (lba >> 48)
            return ATS_SC_LBA_RANGE;
        if ((uint64_t)(d.nlb + 1u) * dev->info.lba_bytes > dev->info.max_transfer)
            return ATS_SC_INVALID_FIELD;           /* beyond MDTS (the slot) */
        if (len != (d.nlb + 1u) * dev->info.lba_bytes)
            return -EINVAL;
        d.op = wr ? ATS_OP_WRITE : ATS_OP_READ;
        if (wr)
            d.flags = (uint8_t)((s->dw[12] >> 30 & 1u ? ATS_FLAG_FUA : 0u) |
                                (opc == OPC_TX_WRITE && (c13 & ATS_CDW13_COMMIT) ? ATS_FLAG_COMMIT : 0u) |
                                (opc == OPC_TX_WRITE && (c13 & ATS_CDW13_BARRIER) ? ATS_FLAG_BARRIER : 0u));
        if (opc == OPC_WRITE || opc == OPC_READ)
            d.txid = 0, d.attr = 0;                /* plain commands: SIMPLE, no txid (§1.5) */
        return wr ? desc_nvme(dev, &d, data, len, NULL, 0, dw0) : desc_nvme(dev, &d, NULL, 0, data, len, dw0);
    }
    case OPC_FLUSH:
        d.op = ATS_OP_FLUSH;
        d.nlb = 0, d.lba = 0, d.txid = 0, d.attr = 0;
        return desc_nvme(dev, &d, NULL, 0, NULL, 0, dw0);
    case OPC_TX_BEGIN: case OPC_TX_COMMIT: case OPC_TX_ABORT:
        d.op = opc == OPC_TX_BEGIN ? ATS_OP_TX_BEGIN : opc == OPC_TX_COMMIT ? ATS_OP_TX_COMMIT : ATS_OP_TX_ABORT;
        d.nlb = 0, d.lba = 0, d.attr = 0;
        return desc_nvme(dev, &d, NULL, 0, NULL, 0, dw0);
    case OPC_RANGE_FLUSH: {
        uint32_t nr = s->dw[10] & 0xFFu;
        if (nr > 7 || len != 8u * (nr + 1u))
            return nr > 7 ? ATS_SC_INVALID_FIELD : -EINVAL;
        d.op = ATS_OP_RFLUSH;
        d.nlb = (uint16_t)nr, d.lba = 0, d.txid = 0, d.attr = 0;
        d.aux = 0;                                  /* the list at offset 0 of the slot's buffer */
        d.aux_buf = 1;
        return desc_nvme(dev, &d, data, len, NULL, 0, dw0);
    }
    case OPC_DSM: {
        uint32_t nr = s->dw[10] & 0xFFu;
        if (nr > 7)
            return ATS_SC_INVALID_FIELD;
        if (len != 16u * (nr + 1u))
            return -EINVAL;
        if (!(s->dw[11] & (1u << 2)))
            return 0;                               /* hints without AD: no descriptor */
        /* one TRIM per range in list order; the first non-OK status, later ranges still go */
        int first = 0;
        const uint8_t *l = data;
        for (uint32_t i = 0; i <= nr; i++) {
            uint32_t n = ats_get32(l + 16 * i + 4);
            uint64_t sl = ats_get64(l + 16 * i + 8);
            int st;
            if (n < 1 || n > 65536u)
                st = ATS_SC_INVALID_FIELD;
            else if (sl >> 48)
                st = ATS_SC_LBA_RANGE;
            else {
                struct ats_udp_desc t;
                memset(&t, 0, sizeof t);
                t.op = ATS_OP_TRIM;
                t.lba = sl;
                t.nlb = (uint16_t)(n - 1u);
                st = desc_nvme(dev, &t, NULL, 0, NULL, 0, NULL);
            }
            if (st < 0)
                return st;                          /* the link failed: stop */
            if (st && !first)
                first = st;
        }
        if (dw0)
            *dw0 = 0;
        return first;
    }
    default:
        return ATS_SC_INVALID_OPCODE;
    }
}

/* FLUSH (every acknowledged write durable: the board has no shutdown handshake), then release */
static int udp_close(ats_dev *dev)
{
    struct udp *u = U(dev);
    int st = -EIO;
    if (!u->failed) {
        struct ats_udp_desc d;
        memset(&d, 0, sizeof d);
        d.op = ATS_OP_FLUSH;
        st = desc_nvme(dev, &d, NULL, 0, NULL, 0, NULL);
    }
    close(u->fd);
    free(u);
    return st;
}

/* no arm_cut / cycle (simulation only); no put_list: SWRITE is the NVMe front end's */
static const struct ats_ops udp_ops = {udp_exec, udp_close, NULL, NULL, NULL};

int ats_is_udp(const ats_dev *dev)
{
    return dev && dev->ops == &udp_ops;
}

int ats_udp_stats(const ats_dev *dev, struct ats_udp_stats *out)
{
    if (!out || !ats_is_udp(dev))
        return !out ? -EINVAL : -ENOTSUP;
    *out = ((struct udp *)dev->priv)->st;
    return 0;
}

static int fill_defaults(struct ats_udp_opts *o)
{
    if (!o->port)
        o->port = ATS_UDP_PORT;
    if (!o->nslot)
        o->nslot = 4;
    if (!o->slot_bytes)
        o->slot_bytes = 4096;
    if (!o->timeout_ms)
        o->timeout_ms = 20;
    if (!o->max_timeout_ms)
        o->max_timeout_ms = 1000;
    if (!o->max_retries)
        o->max_retries = 30;
    if (o->max_timeout_ms < o->timeout_ms)
        o->max_timeout_ms = o->timeout_ms;
    if (o->nslot > 256 || o->slot_bytes % CHUNK || o->slot_bytes > MAX_SLOT_BYTES)
        return -EINVAL;
    return 0;
}

static uint32_t random_seq(void)
{
    uint32_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
            v = 0;
        close(fd);
    }
    if (!v) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        v = (uint32_t)t.tv_nsec ^ (uint32_t)t.tv_sec * 2654435761u ^ (uint32_t)getpid() << 16;
    }
    return v;
}

int ats_open_udp(const char *host, const struct ats_udp_opts *opts, ats_dev **out)
{
    if (!host || !out)
        return -EINVAL;
    struct ats_udp_opts o;
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    int st = fill_defaults(&o);
    if (st)
        return st;
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)o.port);
    if (getaddrinfo(host, port, &hints, &ai) || !ai)
        return -EHOSTUNREACH;
    struct udp *u = calloc(1, sizeof *u);
    if (!u) {
        freeaddrinfo(ai);
        return -ENOMEM;
    }
    memcpy(&u->dev, ai->ai_addr, sizeof u->dev);
    freeaddrinfo(ai);
    u->o = o;
    u->seq = o.have_seq0 ? o.seq0 - 1u : random_seq();   /* the first command takes seq0 */
    u->fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (u->fd < 0) {
        st = -errno;
        free(u);
        return st;
    }
    int rcv = 1 << 22;
    setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    struct sockaddr_in me;
    memset(&me, 0, sizeof me);
    me.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(INADDR_ANY);
    me.sin_port = htons(o.local_port);
    if (bind(u->fd, (struct sockaddr *)&me, sizeof me)) {
        st = -errno;
        close(u->fd);
        free(u);
        return st;
    }
    ats_dev *dev = ats_dev_alloc(&udp_ops, u);
    if (!dev) {
        close(u->fd);
        free(u);
        return -ENOMEM;
    }
    /* IDENTIFY (docs/architecture.md §1.1): magic, page_bytes (word 6), num_lbas (8), num_tx (9),
     * tx_entries (10) */
    uint8_t id[ADM_BYTES];
    struct ats_udp_desc d;
    memset(&d, 0, sizeof d);
    d.op = ATS_OP_IDENTIFY;
    st = ats_udp_cmd(dev, &d, NULL, 0, id, ADM_BYTES, NULL);
    if (st > 0)
        st = ats_udp_nvme_status(st);
    if (!st && ats_get32(id) != IDENT_MAGIC)
        st = -ENODEV;
    if (!st) {
        struct ats_info in;
        memset(&in, 0, sizeof in);
        in.lba_bytes = ats_get32(id + 4 * 6);
        in.num_lbas = ats_get32(id + 4 * 8);
        in.num_tx = ats_get32(id + 4 * 9);
        in.tx_entries = ats_get32(id + 4 * 10);
        in.atomic_blocks = 1;                       /* no atomic-write unit over the link */
        if (in.num_tx > ATS_MAX_TX)
            in.num_tx = ATS_MAX_TX;
        uint32_t mt = o.slot_bytes < ATS_MAX_XFER ? o.slot_bytes : ATS_MAX_XFER;
        if (in.lba_bytes < 512 || in.lba_bytes & (in.lba_bytes - 1u) || in.lba_bytes > mt || !in.num_lbas ||
            !in.num_tx || !in.tx_entries)
            st = -EPROTO;                           /* a page the slots cannot carry, or nonsense */
        else
            in.max_transfer = mt / in.lba_bytes * in.lba_bytes;
        dev->info = in;
    }
    if (st) {
        close(u->fd);
        free(u);
        ats_dev_free(dev);
        return st;
    }
    *out = dev;
    return 0;
}

/* "HOST[:PORT][,key=value…]" (the part after "udp:") */
int ats_open_udp_addr(const char *spec, ats_dev **out)
{
    if (!spec || !out)
        return -EINVAL;
    char buf[256];
    if (strlen(spec) >= sizeof buf)
        return -EINVAL;
    strcpy(buf, spec);
    struct ats_udp_opts o;
    memset(&o, 0, sizeof o);
    char *opt = strchr(buf, ',');
    if (opt)
        *opt++ = 0;
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = 0;
        char *end;
        unsigned long p = strtoul(colon + 1, &end, 10);
        if (*end || !p || p > 65535)
            return -EINVAL;
        o.port = (uint16_t)p;
    }
    if (!buf[0])
        return -EINVAL;
    while (opt && *opt) {
        char *next = strchr(opt, ',');
        if (next)
            *next++ = 0;
        char *eq = strchr(opt, '=');
        if (!eq)
            return -EINVAL;
        *eq = 0;
        char *end;
        unsigned long long v = strtoull(eq + 1, &end, 0);
        if (*end || eq[1] == 0 || v > 0xFFFFFFFFull)
            return -EINVAL;
        if (!strcmp(opt, "nslot"))
            o.nslot = (uint32_t)v;
        else if (!strcmp(opt, "slot_bytes"))
            o.slot_bytes = (uint32_t)v;
        else if (!strcmp(opt, "timeout_ms"))
            o.timeout_ms = (uint32_t)v;
        else if (!strcmp(opt, "max_timeout_ms"))
            o.max_timeout_ms = (uint32_t)v;
        else if (!strcmp(opt, "retries"))
            o.max_retries = (uint32_t)v;
        else if (!strcmp(opt, "seq0"))
            o.seq0 = (uint32_t)v, o.have_seq0 = 1;
        else if (!strcmp(opt, "local_port") && v <= 65535)
            o.local_port = (uint16_t)v;
        else
            return -EINVAL;
        opt = next;
    }
    return ats_open_udp(buf, &o, out);
}
