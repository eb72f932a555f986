/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the host-port client (docs/host-port.md). Frames both ways: u32 length (the bytes
 * after it, type included), u8 type, payload; integers little endian. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "atstx_hostport.h"
#include "atstx_int.h"

enum {
    M_MEM_WRITE = 0x02, M_MEM_READ = 0x03, M_RUN = 0x04, M_CUT_ARM = 0x06, M_QUIT = 0x0B,
    M_MMIO_WRITE = 0x0C, M_MMIO_READ = 0x0D,
    M_HELLO = 0x80, M_CPL = 0x81, M_UART = 0x82, M_MEM_DATA = 0x83, M_STOPPED = 0x84, M_INFO_R = 0x85,
    M_MMIO_DATA = 0x86, M_MSI = 0x87, M_ERROR = 0x8F,
};

#define MAX_FRAME (64u << 20)

static int xwrite(int fd, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
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

static int xread(int fd, uint8_t *b, size_t n)
{
    while (n) {
        ssize_t k = read(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            return -EPIPE;                             /* the simulator closed the connection */
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int send_msg(struct ats_hp *hp, uint8_t type, const uint8_t *payload, uint32_t len)
{
    uint8_t h[5];
    ats_put32(h, len + 1);
    h[4] = type;
    int st = xwrite(hp->fd, h, 5);
    return st ? st : xwrite(hp->fd, payload, len);
}

/* the next message: its type, payload in hp->rx */
static int recv_msg(struct ats_hp *hp, uint8_t *type)
{
    uint8_t h[5];
    int st = xread(hp->fd, h, 5);
    if (st)
        return st;
    uint32_t n = ats_get32(h);
    if (n < 1 || n > MAX_FRAME)
        return -EPROTO;
    if (n - 1 > hp->rx_cap) {
        uint8_t *b = realloc(hp->rx, n);
        if (!b)
            return -ENOMEM;
        hp->rx = b;
        hp->rx_cap = n;
    }
    *type = h[4];
    hp->rx_len = n - 1;
    return xread(hp->fd, hp->rx, n - 1);
}

/* waits for a message of type `want`, noting the asynchronous ones on the way */
static int wait_msg(struct ats_hp *hp, uint8_t want)
{
    for (;;) {
        uint8_t t;
        int st = recv_msg(hp, &t);
        if (st)
            return st;
        if (t == want)
            return 0;
        switch (t) {
        case M_MMIO_DATA:
            if (hp->rx_len != 12)
                return -EPROTO;
            hp->mmio_off = ats_get32(hp->rx);
            hp->mmio_val = ats_get32(hp->rx + 4);
            hp->mmio_status = ats_get32(hp->rx + 8);
            hp->mmio_have = 1;
            break;
        case M_MSI:
            hp->msis++;
            break;
        case M_ERROR:
            hp->errors++;
            break;
        case M_CPL:
        case M_UART:
        case M_INFO_R:
            break;
        default:
            return -EPROTO;
        }
    }
}

int ats_hp_connect(struct ats_hp *hp, const char *path, unsigned wait_ms)
{
    memset(hp, 0, sizeof *hp);
    hp->fd = -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    int st = 0;
    for (unsigned t = 0;; t += 50) {
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            st = 0;
            break;
        }
        st = -errno;
        if ((st != -ENOENT && st != -ECONNREFUSED) || t >= wait_ms)
            break;
        struct timespec d = {0, 50 * 1000000L};
        nanosleep(&d, NULL);
    }
    if (st) {
        close(fd);
        return st;
    }
    hp->fd = fd;
    if ((st = wait_msg(hp, M_HELLO)))
        return st;
    /* HELLO is JSON; the NVMe build carries "nvme": true */
    for (uint32_t i = 0; i + 12 <= hp->rx_len; i++)
        if (!memcmp(hp->rx + i, "\"nvme\": true", 12))
            hp->nvme = 1;
    return 0;
}

void ats_hp_close(struct ats_hp *hp)
{
    if (hp->fd >= 0) {
        if (send_msg(hp, M_QUIT, NULL, 0) == 0) {
            struct timeval tv = {120, 0};              /* powering off saves the images: not forever */
            setsockopt(hp->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            uint8_t t;
            while (recv_msg(hp, &t) == 0)              /* until the simulator has exited */
                ;
        }
        close(hp->fd);
    }
    hp->fd = -1;
    free(hp->rx);
    hp->rx = NULL;
}

int ats_hp_run(struct ats_hp *hp, uint64_t cycles, uint32_t until, uint32_t *why)
{
    if (hp->cut)
        return ATS_E_POWER_CUT;
    uint8_t p[12];
    ats_put64(p, cycles);
    ats_put32(p + 8, until);
    int st = send_msg(hp, M_RUN, p, 12);
    if (st || (st = wait_msg(hp, M_STOPPED)))
        return st;
    if (hp->rx_len != 12)
        return -EPROTO;
    hp->cycle = ats_get64(hp->rx);
    uint32_t w = ats_get32(hp->rx + 8);
    if (why)
        *why = w;
    if (w & ATS_HP_R_CUT) {
        hp->cut = 1;
        return ATS_E_POWER_CUT;
    }
    return 0;
}

int ats_hp_mem_write(struct ats_hp *hp, uint32_t addr, const void *data, uint32_t len)
{
    uint32_t n = (len + 3u) & ~3u;
    uint8_t *p = malloc(4 + n);
    if (!p)
        return -ENOMEM;
    ats_put32(p, addr);
    memcpy(p + 4, data, len);
    memset(p + 4 + len, 0, n - len);
    int st = send_msg(hp, M_MEM_WRITE, p, 4 + n);
    free(p);
    return st;
}

int ats_hp_mem_fill(struct ats_hp *hp, uint32_t addr, uint8_t byte, uint32_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        return -ENOMEM;
    memset(p, byte, len);
    int st = ats_hp_mem_write(hp, addr, p, len);
    free(p);
    return st;
}

int ats_hp_mem_read(struct ats_hp *hp, uint32_t addr, void *out, uint32_t len)
{
    uint8_t p[8];
    ats_put32(p, addr);
    ats_put32(p + 4, len);
    int st = send_msg(hp, M_MEM_READ, p, 8);
    if (st || (st = wait_msg(hp, M_MEM_DATA)))
        return st;
    if (hp->rx_len < 4 + len || ats_get32(hp->rx) != addr)
        return -EPROTO;
    memcpy(out, hp->rx + 4, len);
    return 0;
}

int ats_hp_mmio_write(struct ats_hp *hp, uint32_t off, uint32_t value)
{
    uint8_t p[8];
    ats_put32(p, off);
    ats_put32(p + 4, value);
    return send_msg(hp, M_MMIO_WRITE, p, 8);
}

int ats_hp_mmio_read(struct ats_hp *hp, uint32_t off, uint32_t *value, uint64_t budget)
{
    uint8_t p[4];
    ats_put32(p, off);
    hp->mmio_have = 0;
    int st = send_msg(hp, M_MMIO_READ, p, 4);
    for (uint64_t ran = 0; !st && !hp->mmio_have; ran += 10000) {
        if (ran >= budget)
            return -ETIMEDOUT;
        st = ats_hp_run(hp, 10000, ATS_HP_U_MMIO, NULL);
    }
    if (st)
        return st;
    if (hp->mmio_off != off)
        return -EPROTO;                                /* one read at a time: it must be ours */
    *value = hp->mmio_status ? 0xFFFFFFFFu : hp->mmio_val;
    return 0;
}

int ats_hp_arm_cut(struct ats_hp *hp, uint32_t kind, uint64_t value)
{
    uint8_t p[12];
    ats_put32(p, kind);
    ats_put64(p + 4, value);
    return send_msg(hp, M_CUT_ARM, p, 12);
}
