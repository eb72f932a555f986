/* SPDX-License-Identifier: Apache-2.0
 * atstx_bank: accounts kept consistent by device transactions alone (no journal of its own).
 *
 *   atstx_bank --socket P init  [--accounts A]
 *   atstx_bank --socket P run   --transfers N --seed S [--cut-at-cycle C | --cut-after-cycles D] [--accounts A]
 *   atstx_bank --socket P check [--accounts A]
 * or --addr ADDRESS in place of --socket P: any device ats_open reaches ("udp:192.168.1.50" for a
 * board; the power-cut options are the simulator's: -ENOTSUP elsewhere, "ready cycle 0").
 *
 * Accounts 0 … A-1 (default 64), one an LBA page at LBA 16 + a:
 *   bytes 0-3 "ATSB", 4-7 account, 8-15 balance (signed), 16-19 version (transfers that changed
 *   the account), 20-23 the last such transfer (0: init), 24-27 CRC-32 of the whole page with
 *   these four bytes 0, 28… filler: the xorshift32 stream seeded with a * 65537 + version + 1,
 *   little endian. Every account starts at 1000 (version 0), written by `init` with plain writes
 *   and a Flush.
 *
 * Transfer t (1 … N) of seed S, replayable (xorshift32 of atstx_demo_util.h, 32-bit arithmetic):
 *   x = S * 2654435761 + t (0 -> 1);  k = 2 + xs32(x) % 3 accounts;
 *   a_i = xs32(x) % A for i = 0 … k-1 (drawn again while equal to an earlier one);
 *   amount = 1 + xs32(x) % 50;  a_0 pays `amount` to each other account (balances may go negative).
 * One transaction writes the k pages (TX Begin, TX Write each); odd t put COMMIT on the last write,
 * even t end with TX Commit. After the commit returns: "committed t" (stdout flushed).
 *
 * `run` prints "ready cycle X" first (the device is up), reads every account, then arms a
 * simulated power cut: --cut-at-cycle at cycle C (at once if already past), --cut-after-cycles D
 * cycles after the accounts were read (when transfer 1 starts); when it strikes: "power cut at
 * cycle X in transfer t" and exit status 3 (also when it strikes in the shutdown after the last
 * transfer). `check` prints "account a balance b version v xfer t" per account
 * and "total T"; exit status 2 when a page is torn or foreign or the total is not A * 1000.
 * Other failures: exit status 1; usage: 64. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atstx.h"
#include "atstx_demo_util.h"

#define BASE 16u
#define MAXA 1024u
#define START 1000

struct acct {
    int64_t bal;
    uint32_t ver, xfer;
};

static void mkpage(uint8_t *p, uint32_t pb, uint32_t a, const struct acct *ac)
{
    memcpy(p, "ATSB", 4);
    le_put(p + 4, a, 4);
    le_put(p + 8, (uint64_t)ac->bal, 8);
    le_put(p + 16, ac->ver, 4);
    le_put(p + 20, ac->xfer, 4);
    le_put(p + 24, 0, 4);
    uint32_t x = a * 65537u + ac->ver + 1u;
    for (uint32_t i = 28; i < pb; i += 4) {
        if (!x)
            x = 1;
        le_put(p + i, xs32(&x), pb - i < 4 ? (int)(pb - i) : 4);
    }
    le_put(p + 24, crc32_ieee(p, pb), 4);
}

/* 0 when `p` is account a's page, whole */
static int parse(uint8_t *p, uint32_t pb, uint32_t a, struct acct *ac)
{
    uint32_t crc = (uint32_t)le_get(p + 24, 4);
    le_put(p + 24, 0, 4);
    int bad = memcmp(p, "ATSB", 4) || le_get(p + 4, 4) != a || crc32_ieee(p, pb) != crc;
    le_put(p + 24, crc, 4);
    ac->bal = (int64_t)le_get(p + 8, 8);
    ac->ver = (uint32_t)le_get(p + 16, 4);
    ac->xfer = (uint32_t)le_get(p + 20, 4);
    return bad ? -1 : 0;
}

static int fail(const char *what, int st)
{
    fprintf(stderr, "atstx_bank: %s: %s (%d)\n", what, ats_strerror(st), st);
    return st == ATS_E_POWER_CUT ? 3 : 1;
}

/* reads every account; returns the number of bad pages, or -1 with *st set */
static int read_all(ats_dev *dev, const struct ats_info *in, uint32_t na, struct acct *ac, int *st, int print)
{
    uint32_t per = in->max_transfer / in->lba_bytes, bad = 0;
    uint8_t *buf = malloc((size_t)per * in->lba_bytes);
    if (!buf) {
        *st = -ENOMEM;
        return -1;
    }
    for (uint32_t a0 = 0; a0 < na; a0 += per) {
        uint32_t n = na - a0 < per ? na - a0 : per;
        if ((*st = ats_read(dev, BASE + a0, n, buf))) {
            free(buf);
            return -1;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a = a0 + i;
            if (parse(buf + (size_t)i * in->lba_bytes, in->lba_bytes, a, &ac[a])) {
                bad++;
                if (print)
                    printf("account %u torn or foreign\n", a);
            } else if (print) {
                printf("account %u balance %lld version %u xfer %u\n", a, (long long)ac[a].bal, ac[a].ver,
                       ac[a].xfer);
            }
        }
    }
    free(buf);
    return (int)bad;
}

static int do_init(ats_dev *dev, const struct ats_info *in, uint32_t na)
{
    uint32_t per = in->max_transfer / in->lba_bytes;
    uint8_t *buf = malloc((size_t)per * in->lba_bytes);
    int st = buf ? 0 : -ENOMEM;
    for (uint32_t a0 = 0; !st && a0 < na; a0 += per) {
        uint32_t n = na - a0 < per ? na - a0 : per;
        struct acct ac = {START, 0, 0};
        for (uint32_t i = 0; i < n; i++)
            mkpage(buf + (size_t)i * in->lba_bytes, in->lba_bytes, a0 + i, &ac);
        st = ats_write(dev, BASE + a0, n, buf, 0);
    }
    free(buf);
    if (st || (st = ats_flush(dev)))
        return fail("init", st);
    printf("init: %u accounts of %d\n", na, START);
    return 0;
}

/* the accounts of transfer t (returns k) and its amount */
static uint32_t transfer_plan(uint32_t seed, uint32_t t, uint32_t na, uint32_t a[4], int64_t *amount)
{
    uint32_t x = seed * 2654435761u + t;
    if (!x)
        x = 1;
    uint32_t k = 2 + xs32(&x) % 3;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t j;
        do {
            a[i] = xs32(&x) % na;
            for (j = 0; j < i && a[j] != a[i]; j++)
                ;
        } while (j < i);
    }
    *amount = 1 + xs32(&x) % 50;
    return k;
}

static int do_run(ats_dev *dev, const struct ats_info *in, uint32_t na, struct acct *ac, uint32_t n, uint32_t seed,
                  unsigned long long cut_at, unsigned long long cut_after)
{
    int st;
    uint64_t now = 0;
    ats_sim_cycle(dev, &now);
    printf("ready cycle %llu\n", (unsigned long long)now);
    fflush(stdout);
    int bad = read_all(dev, in, na, ac, &st, 0);
    if (bad < 0)
        return fail("read", st);
    if (bad) {
        fprintf(stderr, "atstx_bank: %d torn or foreign accounts before the run\n", bad);
        return 2;
    }
    if (cut_at || cut_after) {
        ats_sim_cycle(dev, &now);                      /* the accounts are read: transfer 1 starts now */
        uint64_t at = cut_at ? cut_at : now + cut_after;
        if ((st = ats_sim_arm_cut(dev, ATS_CUT_AT_CYCLE, at)))
            return fail("arm the power cut", st);
    }
    uint8_t *page = malloc(in->lba_bytes);
    if (!page)
        return fail("run", -ENOMEM);
    for (uint32_t t = 1; t <= n; t++) {
        uint32_t a[4];
        int64_t amt;
        uint32_t k = transfer_plan(seed, t, na, a, &amt);
        struct acct nw[4];
        for (uint32_t i = 0; i < k; i++) {
            nw[i] = ac[a[i]];
            nw[i].bal += i == 0 ? -amt * (int64_t)(k - 1) : amt;
            nw[i].ver++;
            nw[i].xfer = t;
        }
        ats_tx *tx;
        st = ats_tx_begin(dev, &tx);
        for (uint32_t i = 0; !st && i < k; i++) {
            mkpage(page, in->lba_bytes, a[i], &nw[i]);
            if (i + 1 < k)
                st = ats_tx_write(tx, BASE + a[i], 1, page);
            else if (t & 1)
                st = ats_tx_commit_write(tx, BASE + a[i], 1, page);
            else if (!(st = ats_tx_write(tx, BASE + a[i], 1, page)))
                st = ats_tx_commit(tx, NULL);
        }
        if (st) {
            free(page);
            if (st == ATS_E_POWER_CUT) {
                ats_sim_cycle(dev, &now);
                printf("power cut at cycle %llu in transfer %u\n", (unsigned long long)now, t);
                fflush(stdout);
                return 3;
            }
            return fail("transfer", st);
        }
        for (uint32_t i = 0; i < k; i++)
            ac[a[i]] = nw[i];
        printf("committed %u\n", t);
        fflush(stdout);
    }
    free(page);
    return 0;
}

static int do_check(ats_dev *dev, const struct ats_info *in, uint32_t na, struct acct *ac)
{
    int st;
    int bad = read_all(dev, in, na, ac, &st, 1);
    if (bad < 0)
        return fail("read", st);
    int64_t total = 0;
    for (uint32_t a = 0; a < na; a++)
        total += ac[a].bal;
    printf("total %lld\n", (long long)total);
    return bad || total != (int64_t)na * START ? 2 : 0;
}

int main(int argc, char **argv)
{
    const char *sock = NULL, *addr = NULL, *cmd = NULL;
    unsigned long na = 64, n = 0, seed = 1;
    unsigned long long cut_at = 0, cut_after = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--socket") && v) sock = argv[++i];
        else if (!strcmp(o, "--addr") && v) addr = argv[++i];
        else if (!strcmp(o, "--accounts") && v) na = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(o, "--transfers") && v) n = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(o, "--seed") && v) seed = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(o, "--cut-at-cycle") && v) cut_at = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(o, "--cut-after-cycles") && v) cut_after = strtoull(argv[++i], NULL, 0);
        else if (!cmd && o[0] != '-') cmd = o;
        else cmd = NULL, i = argc;
    }
    if (!sock == !addr || !cmd || na < 4 || na > MAXA || (cut_at && cut_after)) {
        fprintf(stderr, "usage: atstx_bank --socket PATH | --addr ADDRESS init|run|check [--accounts 4..%u] "
                        "[--transfers N --seed S "
                        "[--cut-at-cycle C | --cut-after-cycles D]]\n", MAXA);
        return 64;
    }
    ats_dev *dev;
    int st = sock ? ats_open_sim(sock, &dev) : ats_open(addr, &dev);
    if (st)
        return fail("open", st);
    struct ats_info in;
    ats_info(dev, &in);
    if (BASE + na > in.num_lbas) {
        ats_close(dev);
        fprintf(stderr, "atstx_bank: %lu accounts do not fit in %llu LBAs\n", na, (unsigned long long)in.num_lbas);
        return 64;
    }
    struct acct *ac = calloc(na, sizeof *ac);
    int rc = 64;
    if (!ac)
        rc = fail("accounts", -ENOMEM);
    else if (!strcmp(cmd, "init"))
        rc = do_init(dev, &in, (uint32_t)na);
    else if (!strcmp(cmd, "run"))
        rc = do_run(dev, &in, (uint32_t)na, ac, (uint32_t)n, (uint32_t)seed, cut_at, cut_after);
    else if (!strcmp(cmd, "check"))
        rc = do_check(dev, &in, (uint32_t)na, ac);
    else
        fprintf(stderr, "atstx_bank: unknown command %s\n", cmd);
    free(ac);
    st = ats_close(dev);
    if (st && rc == 0)
        rc = fail("close", st);
    return rc;
}
