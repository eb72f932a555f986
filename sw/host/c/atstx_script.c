/* SPDX-License-Identifier: Apache-2.0
 * atstx_script: runs libatstx calls read from standard input, one a line, and answers each with
 * one line, so that a test in another language checks the library and the device against its own
 * model (sw/host/tests/test_libatstx.py). Data travel as hex, byte for byte.
 *   info                  -> "info LBA_BYTES NUM_LBAS NUM_TX TX_ENTRIES MAX_TRANSFER ATOMIC_BLOCKS ATOMIC_BOUNDARY
 *                            STATIC_RANGES STATIC_PAGES"
 *   w LBA NLB FLAGS HEX   ats_write (FLAGS: 1 FUA, 2 BARRIER)           -> "st S"
 *   aw LBA NLB FLAGS HEX  ats_atomic_write (FLAGS: 1 FUA)              -> "st S"
 *   sw LBA NLB [LBA NLB…] HEX  ats_static_tx of the ranges (0 to 9 of them), HEX = their data in
 *                         list order                                   -> "st S"
 *   r LBA NLB             ats_read                                     -> "st S HEX" ("st S" on error)
 *   f                     ats_flush
 *   rf LBA NLB [LBA NLB…] ats_rflush          trim LBA NLB [LBA NLB…]   ats_trim
 *   tb                    ats_tx_begin                                 -> "st S txid T"
 *   tw T LBA NLB HEX      ats_tx_write of the open transaction with txid T
 *   tcw T LBA NLB HEX     ats_tx_commit_write
 *   tr T LBA NLB          ats_tx_read                                  -> "st S HEX"
 *   tc T                  ats_tx_commit                                -> "st S entries E"
 *   ta T                  ats_tx_abort
 *   raw OPC CDW13 LBA NLB one NVM command built by the library's encoder with any opcode and CDW13
 *                         (statuses the API itself never provokes: a txid out of range, reserved
 *                         bits, ...); data: NLB LBAs of zeros to the device, or read and dropped,
 *                         as the opcode's low two bits say (at most MAX_TRANSFER bytes)
 *   seal-time [CYCLES]    ats_get_seal_time, or ats_set_seal_time to CYCLES -> "st S value V"
 *   feature FID [VALUE]   ats_get_feature, or ats_set_feature to VALUE  -> "st S value V"
 *   adm OPC CDW10 CDW11   one admin command without data (NSID 0) on the transport as the library
 *                         hands it over (a test's: Save / SEL bits, other FIDs) -> "st S dw0 D"
 *   cycle                 -> "cycle C" (the simulated cycle)
 *   udp OP TXID FLAGS ATTR LBA NLB RLEN [HEX]  one raw descriptor over the UDP link (ats_udp_cmd: the
 *                         core's §2 status, HEX the write data)        -> "st S result R [HEX of RLEN bytes]"
 *   stats                 the UDP link's counters (ats_udp_stats)      -> "stats cmds=… sent=… …"
 * Other lines -> "bad line". At the end of input: ats_close -> "close S".
 * Usage: --socket PATH (the simulator) or --addr ADDRESS (ats_open: "udp:HOST[:PORT][,key=value…]", …). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atstx_demo_util.h"
#include "atstx_int.h"              /* raw: the library's encoder and I/O queue (a test program) */

#define MAXTOK 20

static ats_tx *txs[ATS_MAX_TX + 1];

static void put_status_data(int st, const uint8_t *buf, uint32_t len, char *hex)
{
    if (st) {
        printf("st %d\n", st);
        return;
    }
    hex_encode(hex, buf, len);
    printf("st 0 %s\n", hex);
}

static ats_tx **tx_of(const char *tok)
{
    unsigned long t = strtoul(tok, NULL, 0);
    return t >= 1 && t <= ATS_MAX_TX && txs[t] ? &txs[t] : NULL;
}

/* a number of 32 bits (decimal, 0x…): 0, or -1 for anything else */
static int num32(const char *tok, uint32_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(tok, &end, 0);
    if (!*tok || *end || errno || x > 0xFFFFFFFFull || tok[0] == '-')
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* ranges of "LBA NLB" pairs from tok[1] on */
static int ranges(char **tok, int n, struct ats_range *r)
{
    if (n < 3 || (n - 1) % 2 || (n - 1) / 2 > 8)
        return -1;
    for (int i = 1; i < n; i += 2) {
        r[i / 2].lba = strtoull(tok[i], NULL, 0);
        r[i / 2].nlb = (uint32_t)strtoul(tok[i + 1], NULL, 0);
    }
    return (n - 1) / 2;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "--socket") && strcmp(argv[1], "--addr"))) {
        fprintf(stderr, "usage: atstx_script --socket PATH | --addr ADDRESS < script\n");
        return 64;
    }
    ats_dev *dev;
    int st = !strcmp(argv[1], "--socket") ? ats_open_sim(argv[2], &dev) : ats_open(argv[2], &dev);
    if (st) {
        printf("open %d %s\n", st, ats_strerror(st));
        return 1;
    }
    struct ats_info in;
    ats_info(dev, &in);
    size_t bufsz = in.max_transfer > ATS_MAX_XFER ? in.max_transfer : ATS_MAX_XFER;
    uint8_t *buf = malloc(bufsz);
    char *hex = malloc(2 * bufsz + 1);
    char *line = NULL;
    size_t cap = 0;
    while (buf && hex && getline(&line, &cap, stdin) > 0) {
        char *tok[MAXTOK];
        int n = 0;
        for (char *p = strtok(line, " \t\r\n"); p && n < MAXTOK; p = strtok(NULL, " \t\r\n"))
            tok[n++] = p;
        if (n == 0)
            continue;
        const char *op = tok[0];
        uint64_t lba = n > 1 ? strtoull(tok[1], NULL, 0) : 0;
        uint32_t nlb = n > 2 ? (uint32_t)strtoul(tok[2], NULL, 0) : 0;
        uint64_t len = (uint64_t)nlb * in.lba_bytes;
        struct ats_range r[8];
        int nr;
        ats_tx **tp = n > 1 ? tx_of(tok[1]) : NULL;
        uint64_t tlba = n > 2 ? strtoull(tok[2], NULL, 0) : 0;
        uint32_t tnlb = n > 3 ? (uint32_t)strtoul(tok[3], NULL, 0) : 0;
        uint64_t tlen = (uint64_t)tnlb * in.lba_bytes;
        if (!strcmp(op, "info") && n == 1) {
            printf("info %u %llu %u %u %u %u %u %u %u\n", in.lba_bytes, (unsigned long long)in.num_lbas, in.num_tx,
                   in.tx_entries, in.max_transfer, in.atomic_blocks, in.atomic_boundary, in.static_ranges,
                   in.static_pages);
        } else if (!strcmp(op, "w") && n == 5 && len <= in.max_transfer && !hex_decode(buf, len, tok[4])) {
            printf("st %d\n", ats_write(dev, lba, nlb, buf, (unsigned)strtoul(tok[3], NULL, 0)));
        } else if (!strcmp(op, "aw") && n == 5 && len <= in.max_transfer && !hex_decode(buf, len, tok[4])) {
            printf("st %d\n", ats_atomic_write(dev, lba, nlb, buf, (unsigned)strtoul(tok[3], NULL, 0)));
        } else if (!strcmp(op, "sw") && n % 2 == 0 && n <= 2 * 9 + 2) {
            struct ats_range sr[9];
            unsigned k = (unsigned)(n - 2) / 2;
            uint64_t total = 0;
            for (unsigned i = 0; i < k; i++) {
                sr[i].lba = strtoull(tok[1 + 2 * i], NULL, 0);
                sr[i].nlb = (uint32_t)strtoul(tok[2 + 2 * i], NULL, 0);
                total += (uint64_t)sr[i].nlb * in.lba_bytes;
            }
            if (total > in.max_transfer || hex_decode(buf, total, tok[n - 1]))
                printf("bad line\n");
            else
                printf("st %d\n", ats_static_tx(dev, sr, k, buf));
        } else if (!strcmp(op, "r") && n == 3 && len <= in.max_transfer) {
            put_status_data(ats_read(dev, lba, nlb, buf), buf, (uint32_t)len, hex);
        } else if (!strcmp(op, "f") && n == 1) {
            printf("st %d\n", ats_flush(dev));
        } else if (!strcmp(op, "rf") && (nr = ranges(tok, n, r)) > 0) {
            printf("st %d\n", ats_rflush(dev, r, (unsigned)nr));
        } else if (!strcmp(op, "trim") && (nr = ranges(tok, n, r)) > 0) {
            printf("st %d\n", ats_trim(dev, r, (unsigned)nr));
        } else if (!strcmp(op, "tb") && n == 1) {
            ats_tx *tx = NULL;
            st = ats_tx_begin(dev, &tx);
            if (!st)
                txs[ats_tx_id(tx)] = tx;
            printf("st %d txid %u\n", st, st ? 0 : ats_tx_id(tx));
        } else if ((!strcmp(op, "tw") || !strcmp(op, "tcw")) && n == 5 && tp && tlen <= in.max_transfer &&
                   !hex_decode(buf, tlen, tok[4])) {
            if (!strcmp(op, "tw")) {
                st = ats_tx_write(*tp, tlba, tnlb, buf);
            } else {
                st = ats_tx_commit_write(*tp, tlba, tnlb, buf);
                if (st != -EINVAL && st != -E2BIG)
                    *tp = NULL;                        /* ended, unless refused before sending */
            }
            printf("st %d\n", st);
        } else if (!strcmp(op, "tr") && n == 4 && tp && tlen <= in.max_transfer) {
            put_status_data(ats_tx_read(*tp, tlba, tnlb, buf), buf, (uint32_t)tlen, hex);
        } else if (!strcmp(op, "tc") && n == 2 && tp) {
            uint32_t e = 0;
            st = ats_tx_commit(*tp, &e);
            *tp = NULL;
            printf("st %d entries %u\n", st, e);
        } else if (!strcmp(op, "ta") && n == 2 && tp) {
            printf("st %d\n", ats_tx_abort(*tp));
            *tp = NULL;
        } else if (!strcmp(op, "raw") && n == 5) {
            uint8_t opc = (uint8_t)strtoul(tok[1], NULL, 0);
            uint32_t cdw13 = (uint32_t)strtoul(tok[2], NULL, 0);
            lba = strtoull(tok[3], NULL, 0);
            nlb = (uint32_t)strtoul(tok[4], NULL, 0);
            len = (uint64_t)nlb * in.lba_bytes;
            if (len > in.max_transfer)
                len = in.max_transfer;
            enum ats_dir dir = (opc & 3) == 1 ? ATS_DIR_TO_DEV : (opc & 3) == 2 ? ATS_DIR_TO_HOST : ATS_DIR_NONE;
            struct ats_sqe s;
            if (nlb)
                ats_sqe_rw(&s, opc, lba, nlb, 0, cdw13);
            else                                       /* no LBAs: CDW12 stays 0 */
                ats_sqe_cmd(&s, opc, 1, (uint32_t)lba, (uint32_t)(lba >> 32), cdw13);
            memset(buf, 0, in.max_transfer);
            printf("st %d\n", ats_exec_io(dev, &s, dir ? buf : NULL, dir ? (uint32_t)len : 0, dir, NULL));
        } else if (!strcmp(op, "udp") && (n == 8 || n == 9)) {
            /* a raw descriptor over the UDP link: OP TXID FLAGS ATTR LBA NLB RLEN [HEX write data] */
            struct ats_udp_desc d;
            memset(&d, 0, sizeof d);
            d.op = (uint8_t)strtoul(tok[1], NULL, 0);
            d.txid = (uint8_t)strtoul(tok[2], NULL, 0);
            d.flags = (uint8_t)strtoul(tok[3], NULL, 0);
            d.attr = (uint8_t)strtoul(tok[4], NULL, 0);
            d.lba = strtoull(tok[5], NULL, 0);
            d.nlb = (uint16_t)strtoul(tok[6], NULL, 0);
            uint32_t rlen = (uint32_t)strtoul(tok[7], NULL, 0);
            size_t wl = n == 9 ? strlen(tok[8]) / 2 : 0;
            if (rlen > bufsz / 2 || wl > bufsz / 2 || (wl && hex_decode(buf + bufsz / 2, wl, tok[8]))) {
                printf("bad line\n");
            } else {
                uint32_t res = 0;
                st = ats_udp_cmd(dev, &d, buf + bufsz / 2, (uint32_t)wl, buf, rlen, &res);
                if (st >= 0 && rlen) {
                    hex_encode(hex, buf, rlen);
                    printf("st %d result %u %s\n", st, res, hex);
                } else {
                    printf("st %d result %u\n", st, res);
                }
            }
        } else if (!strcmp(op, "stats") && n == 1) {
            struct ats_udp_stats u;
            st = ats_udp_stats(dev, &u);
            if (st)
                printf("st %d\n", st);
            else
                printf("stats cmds=%llu sent=%llu received=%llu retries=%llu ignored=%llu stale=%llu busy=%llu "
                       "resync=%llu resent_chunks=%llu link_errors=%llu timeouts=%llu last_slot=%u last_seq=%u\n",
                       (unsigned long long)u.cmds, (unsigned long long)u.sent, (unsigned long long)u.received,
                       (unsigned long long)u.retries, (unsigned long long)u.ignored, (unsigned long long)u.stale,
                       (unsigned long long)u.busy, (unsigned long long)u.resync,
                       (unsigned long long)u.resent_chunks, (unsigned long long)u.link_errors,
                       (unsigned long long)u.timeouts, u.last_slot, u.last_seq);
        } else if ((!strcmp(op, "seal-time") && n <= 2) || (!strcmp(op, "feature") && (n == 2 || n == 3))) {
            int seal = op[0] == 's', set = n == (seal ? 2 : 3);
            uint32_t fid = ATS_FEAT_SEAL_TIME, x = 0, v = 0;
            if ((!seal && num32(tok[1], &fid)) || (set && num32(tok[n - 1], &x))) {
                printf("bad line\n");
            } else {
                if (seal)
                    st = set ? ats_set_seal_time(dev, x, &v) : ats_get_seal_time(dev, &v);
                else
                    st = set ? ats_set_feature(dev, fid, x, &v) : ats_get_feature(dev, fid, &v);
                printf("st %d value %u\n", st, v);
            }
        } else if (!strcmp(op, "adm") && n == 4) {
            struct ats_sqe s;
            uint32_t opc = 0, c10 = 0, c11 = 0, d0 = 0;
            if (num32(tok[1], &opc) || opc > 0xFFu || num32(tok[2], &c10) || num32(tok[3], &c11)) {
                printf("bad line\n");         /* a mistyped token is not opcode 0 (Delete SQ) */
            } else {
                ats_sqe_cmd(&s, (uint8_t)opc, 0, c10, c11, 0);
                st = dev->ops->exec(dev, 1, &s, NULL, 0, ATS_DIR_NONE, &d0);
                printf("st %d dw0 %u\n", st, d0);
            }
        } else if (!strcmp(op, "cycle") && n == 1) {
            uint64_t c = 0;
            ats_sim_cycle(dev, &c);
            printf("cycle %llu\n", (unsigned long long)c);
        } else {
            printf("bad line\n");
        }
        fflush(stdout);
    }
    free(line);
    free(buf);
    free(hex);
    st = ats_close(dev);
    printf("close %d\n", st);
    return st ? 1 : 0;
}
