/* SPDX-License-Identifier: Apache-2.0
 * atstx_script: runs libatstx calls read from standard input, one a line, and prints one result
 * line each, so that a test in another language checks the library against its own model.
 *   info                       -> "info LBA_BYTES NUM_LBAS NUM_TX TX_ENTRIES MAX_TRANSFER"
 *   w LBA NLB SEED FLAGS       ats_write of the xorshift32 pattern of SEED (atstx_demo_util.h)
 *   r LBA NLB                  ats_read -> "st S crc C" (CRC-32 of the data when S = 0)
 *   f | rf LBA NLB | trim LBA NLB
 *   tb                         ats_tx_begin -> "st S txid T"
 *   tw T LBA NLB SEED | tcw T LBA NLB SEED | tr T LBA NLB | tc T (-> "st S entries E") | ta T
 * Every other line prints "st S" with S the call's status (atstx.h convention). --socket PATH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atstx.h"
#include "atstx_demo_util.h"

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--socket")) {
        fprintf(stderr, "usage: atstx_script --socket PATH < script\n");
        return 64;
    }
    ats_dev *dev;
    int st = ats_open_sim(argv[2], &dev);
    if (st) {
        printf("open %d %s\n", st, ats_strerror(st));
        return 1;
    }
    struct ats_info in;
    ats_info(dev, &in);
    uint8_t *buf = malloc(in.max_transfer);
    ats_tx *txs[65] = {0};
    char line[256], op[16];
    unsigned long long a[4];
    while (fgets(line, sizeof line, stdin)) {
        int n = sscanf(line, "%15s %llu %llu %llu %llu", op, &a[0], &a[1], &a[2], &a[3]);
        if (n < 1)
            continue;
        uint32_t len = n >= 3 ? (uint32_t)a[1] * in.lba_bytes : 0;
        uint32_t tl = n >= 4 ? (uint32_t)a[2] * in.lba_bytes : 0;
        ats_tx **tp = n >= 2 && a[0] <= 64 ? &txs[a[0]] : NULL;
        if (!strcmp(op, "info")) {
            printf("info %u %llu %u %u %u\n", in.lba_bytes, (unsigned long long)in.num_lbas, in.num_tx,
                   in.tx_entries, in.max_transfer);
        } else if (!strcmp(op, "w") && n == 5 && len <= in.max_transfer) {
            fill_pattern(buf, len, (uint32_t)a[2]);
            printf("st %d\n", ats_write(dev, a[0], (uint32_t)a[1], buf, (unsigned)a[3]));
        } else if (!strcmp(op, "r") && n == 3 && len <= in.max_transfer) {
            st = ats_read(dev, a[0], (uint32_t)a[1], buf);
            printf("st %d crc %u\n", st, st ? 0 : crc32_z(buf, len));
        } else if (!strcmp(op, "f")) {
            printf("st %d\n", ats_flush(dev));
        } else if ((!strcmp(op, "rf") || !strcmp(op, "trim")) && n == 3) {
            struct ats_range r = {a[0], (uint32_t)a[1]};
            printf("st %d\n", op[0] == 'r' ? ats_rflush(dev, &r, 1) : ats_trim(dev, &r, 1));
        } else if (!strcmp(op, "tb")) {
            ats_tx *tx = NULL;
            st = ats_tx_begin(dev, &tx);
            if (!st)
                txs[ats_tx_id(tx)] = tx;
            printf("st %d txid %u\n", st, st ? 0 : ats_tx_id(tx));
        } else if ((!strcmp(op, "tw") || !strcmp(op, "tcw")) && n == 5 && tp && *tp && tl <= in.max_transfer) {
            fill_pattern(buf, tl, (uint32_t)a[3]);
            if (op[1] == 'w') {
                printf("st %d\n", ats_tx_write(*tp, a[1], (uint32_t)a[2], buf));
            } else {
                st = ats_tx_commit_write(*tp, a[1], (uint32_t)a[2], buf);
                if (st != ATS_SC_TX_FULL)
                    *tp = NULL;                        /* ended (a local TX_FULL leaves it open) */
                printf("st %d\n", st);
            }
        } else if (!strcmp(op, "tr") && n == 4 && tp && *tp && tl <= in.max_transfer) {
            st = ats_tx_read(*tp, a[1], (uint32_t)a[2], buf);
            printf("st %d crc %u\n", st, st ? 0 : crc32_z(buf, tl));
        } else if (!strcmp(op, "tc") && n == 2 && tp && *tp) {
            uint32_t e = 0;
            st = ats_tx_commit(*tp, &e);
            *tp = NULL;
            printf("st %d entries %u\n", st, e);
        } else if (!strcmp(op, "ta") && n == 2 && tp && *tp) {
            printf("st %d\n", ats_tx_abort(*tp));
            *tp = NULL;
        } else {
            printf("bad line\n");
        }
        fflush(stdout);
    }
    free(buf);
    st = ats_close(dev);
    printf("close %d\n", st);
    return st ? 1 : 0;
}
