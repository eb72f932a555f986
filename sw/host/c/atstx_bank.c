/* SPDX-License-Identifier: Apache-2.0
 * atstx_bank: an application that keeps accounts consistent with device transactions only (no
 * journal of its own). One account a page at LBA 16 + account: "BANK", account u32, balance i64,
 * the transfer that wrote it u32, CRC-32 of the 20 bytes before, zeros.
 *
 *   atstx_bank --socket P init  [--accounts A]            every balance 1000 (transfer 0), one tx
 *   atstx_bank --socket P run   --transfers N --seed S [--cut-after-cycles C] [--accounts A]
 *   atstx_bank --socket P check [--accounts A]
 *
 * Transfer t (1 … N) of seed S: x = S * 2654435761 + t (32 bits, 0 -> 1), k = 2 + xs32(x) % 3
 * distinct accounts a_i = xs32(x) % A (drawn again on a repeat), amount = 1 + xs32(x) % 50; a_0 pays
 * amount to each other. One transaction writes the k pages: odd t commit with the COMMIT flag on
 * the last write, even t with TX Commit. After each commit returns: "committed t". A power cut
 * (the simulator's, armed C cycles after the start of `run`) ends `run` with exit status 3.
 * `check` prints "account a balance b xfer t" per account and "total T"; exit status 2 when a page
 * is torn or foreign or the total is not A * 1000. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atstx.h"
#include "atstx_demo_util.h"

#define BASE 16u
#define MAXA 256

static uint32_t pb;

static void mkpage(uint8_t *p, uint32_t a, int64_t bal, uint32_t t)
{
    memset(p, 0, pb);
    memcpy(p, "BANK", 4);
    memcpy(p + 4, &a, 4);
    memcpy(p + 8, &bal, 8);
    memcpy(p + 16, &t, 4);
    uint32_t c = crc32_z(p, 20);
    memcpy(p + 20, &c, 4);
}

static int parse(const uint8_t *p, uint32_t a, int64_t *bal, uint32_t *t)
{
    uint32_t acct, c;
    memcpy(&acct, p + 4, 4);
    memcpy(bal, p + 8, 8);
    memcpy(t, p + 16, 4);
    memcpy(&c, p + 20, 4);
    if (memcmp(p, "BANK", 4) || acct != a || c != crc32_z(p, 20))
        return -1;
    for (uint32_t i = 24; i < pb; i++)
        if (p[i])
            return -1;
    return 0;
}

static int fail(const char *what, int st)
{
    fprintf(stderr, "atstx_bank: %s: %s\n", what, ats_strerror(st));
    return st == ATS_E_POWER_CUT ? 3 : 1;
}

int main(int argc, char **argv)
{
    const char *sock = NULL, *cmd = NULL;
    unsigned accts = 32, n = 0;
    uint32_t seed = 1;
    unsigned long long cut = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) sock = argv[++i];
        else if (!strcmp(argv[i], "--accounts") && i + 1 < argc) accts = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--transfers") && i + 1 < argc) n = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--cut-after-cycles") && i + 1 < argc) cut = strtoull(argv[++i], NULL, 0);
        else cmd = argv[i];
    }
    if (!sock || !cmd || accts < 4 || accts > MAXA) {
        fprintf(stderr, "usage: atstx_bank --socket PATH init|run|check [--accounts 4..%d] [--transfers N --seed S "
                        "--cut-after-cycles C]\n", MAXA);
        return 64;
    }
    ats_dev *dev;
    int st = ats_open_sim(sock, &dev);
    if (st)
        return fail("open", st);
    struct ats_info info;
    ats_info(dev, &info);
    pb = info.lba_bytes;
    uint8_t *page = malloc(pb);
    int rc = 0;
    if (!strcmp(cmd, "init")) {
        ats_tx *tx;
        if ((st = ats_tx_begin(dev, &tx)))
            return fail("begin", st);
        for (uint32_t a = 0; a < accts && !st; a++) {
            mkpage(page, a, 1000, 0);
            st = a + 1 < accts ? ats_tx_write(tx, BASE + a, 1, page) : ats_tx_commit_write(tx, BASE + a, 1, page);
        }
        if (st || (st = ats_flush(dev)))
            return fail("init", st);
        printf("init: %u accounts of 1000\n", accts);
    } else if (!strcmp(cmd, "run")) {
        int64_t bal[MAXA];
        for (uint32_t a = 0; a < accts; a++) {
            uint32_t t;
            if ((st = ats_read(dev, BASE + a, 1, page)))
                return fail("read", st);
            if (parse(page, a, &bal[a], &t))
                return fail("torn account before run", -5);
        }
        if (cut) {
            uint64_t now;
            ats_sim_cycle(dev, &now);
            ats_sim_arm_cut(dev, 1, now + cut);
        }
        for (uint32_t t = 1; t <= n; t++) {
            uint32_t x = seed * 2654435761u + t, a[4];
            if (!x)
                x = 1;
            uint32_t k = 2 + xs32(&x) % 3;
            for (uint32_t i = 0; i < k; i++) {
                uint32_t j;
                do {
                    a[i] = xs32(&x) % accts;
                    for (j = 0; j < i && a[j] != a[i]; j++)
                        ;
                } while (j < i);
            }
            int64_t amt = 1 + xs32(&x) % 50;
            ats_tx *tx;
            if ((st = ats_tx_begin(dev, &tx)))
                return fail("begin", st);
            for (uint32_t i = 0; i < k && !st; i++) {
                int64_t nb = i == 0 ? bal[a[0]] - amt * (k - 1) : bal[a[i]] + amt;
                mkpage(page, a[i], nb, t);
                if (i + 1 < k)
                    st = ats_tx_write(tx, BASE + a[i], 1, page);
                else if (t & 1)
                    st = ats_tx_commit_write(tx, BASE + a[i], 1, page);
                else if (!(st = ats_tx_write(tx, BASE + a[i], 1, page)))
                    st = ats_tx_commit(tx, NULL);
            }
            if (st) {
                printf("stopped at transfer %u: %s\n", t, ats_strerror(st));
                fflush(stdout);
                ats_close(dev);
                return st == ATS_E_POWER_CUT ? 3 : 1;
            }
            bal[a[0]] -= amt * (k - 1);
            for (uint32_t i = 1; i < k; i++)
                bal[a[i]] += amt;
            printf("committed %u\n", t);
            fflush(stdout);
        }
    } else if (!strcmp(cmd, "check")) {
        int64_t total = 0;
        for (uint32_t a = 0; a < accts; a++) {
            int64_t b;
            uint32_t t;
            if ((st = ats_read(dev, BASE + a, 1, page)))
                return fail("read", st);
            if (parse(page, a, &b, &t)) {
                printf("account %u torn or foreign\n", a);
                rc = 2;
                continue;
            }
            printf("account %u balance %lld xfer %u\n", a, (long long)b, t);
            total += b;
        }
        printf("total %lld\n", (long long)total);
        if (total != (int64_t)accts * 1000)
            rc = 2;
    } else {
        fprintf(stderr, "atstx_bank: unknown command %s\n", cmd);
        rc = 64;
    }
    free(page);
    st = ats_close(dev);
    if (st && !rc)
        return fail("close", st);
    return rc;
}
