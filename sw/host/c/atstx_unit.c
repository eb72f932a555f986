/* SPDX-License-Identifier: Apache-2.0
 * atstx_unit: the SQE encodings, PRPs and CQE status decoding of libatstx against values worked
 * out by hand from docs/host-interface.md §1.4, §1.5 and §1.8 (not from the library's code). */
#include <stdio.h>
#include <string.h>

#include "atstx_int.h"

static int fails;
#define EQ(a, b) do { unsigned long long _a = (a), _b = (b); \
    if (_a != _b) { fprintf(stderr, "%s:%d: %s = 0x%llx, want 0x%llx\n", __FILE__, __LINE__, #a, _a, _b); fails++; } } while (0)

int main(void)
{
    struct ats_sqe s;
    /* TX Write of 3 blocks at LBA 0x1_2345_6789, txid 5, COMMIT: CDW10/11 = SLBA, CDW12 = NLB 2,
     * CDW13 = 5 | 1 << 8 */
    ats_sqe_rw(&s, OPC_TX_WRITE, 0x123456789ull, 3, 0, ats_cdw13(5, 1, 0, 0));
    EQ(s.dw[0], 0x81); EQ(s.dw[1], 1); EQ(s.dw[10], 0x23456789); EQ(s.dw[11], 0x1); EQ(s.dw[12], 2);
    EQ(s.dw[13], 0x105);
    /* Write with FUA of 1 block: CDW12 bit 30 */
    ats_sqe_rw(&s, OPC_WRITE, 7, 1, 1, 0);
    EQ(s.dw[0], 0x01); EQ(s.dw[12], 0x40000000); EQ(s.dw[13], 0);
    /* barrier write: TXID 0 + BARRIER (bit 9); ORDERED attribute is bits 17:16 = 1 */
    EQ(ats_cdw13(0, 0, 1, 0), 0x200); EQ(ats_cdw13(63, 0, 0, 1), 0x1003F);
    /* TX Commit of txid 31: only CDW13 */
    ats_sqe_simple(&s, OPC_TX_COMMIT, 1, 0, 0, ats_cdw13(31, 0, 0, 0));
    EQ(s.dw[0], 0x88); EQ(s.dw[13], 31); EQ(s.dw[10], 0); EQ(s.dw[12], 0);
    /* Range Flush entry: LBA 0x0000_ABCD_0000_1234, 16 blocks -> dword0 = 0x1234, dword1 = 15 << 16 | 0xABCD */
    uint8_t l[128];
    struct ats_range r[2] = {{0xABCD00001234ull, 16}, {5, 65536}};
    EQ(ats_range_list(l, r, 2), 16);
    uint32_t d[4];
    memcpy(d, l, 16);
    EQ(d[0], 0x1234); EQ(d[1], 0x000FABCD); EQ(d[2], 5); EQ(d[3], 0xFFFF0000);
    struct ats_range bad = {1ull << 48, 1};
    EQ(ats_range_list(l, &bad, 1), (unsigned long long)-1);
    EQ(ats_range_list(l, r, 0), (unsigned long long)-1);
    /* DSM range: context attributes 0, length (1-based), SLBA 64-bit */
    EQ(ats_dsm_list(l, r, 1), 16);
    memcpy(d, l, 16);
    EQ(d[0], 0); EQ(d[1], 16); EQ(d[2], 0x1234); EQ(d[3], 0xABCD);
    /* PRPs: 1 page -> PRP1 only; 2 pages -> PRP2 = second page; 16 pages -> a list of 15 */
    uint64_t p1, p2, e[16];
    EQ(ats_prps(0x20000, 512, 0x14000, &p1, &p2, e), 0); EQ(p1, 0x20000); EQ(p2, 0);
    EQ(ats_prps(0x20000, 8192, 0x14000, &p1, &p2, e), 0); EQ(p2, 0x21000);
    EQ(ats_prps(0x20000, 65536, 0x14000, &p1, &p2, e), 15); EQ(p2, 0x14000); EQ(e[0], 0x21000); EQ(e[14], 0x2F000);
    EQ(ats_prps(0x20000, 8193, 0x14000, &p1, &p2, e), 2); EQ(e[1], 0x22000);
    /* CQE DW3: status field bits 31:17 = {DNR, M, CRD, SCT, SC}; phase bit 16 */
    EQ(ats_cqe_status(0x00010000u), 0);
    EQ(ats_cqe_status(1u << 31 | 0u << 25 | 0x80u << 17 | 1u << 16), 0x0080);     /* LBA Out of Range */
    EQ(ats_cqe_status(1u << 31 | 7u << 25 | 0x04u << 17), 0x0704);                /* TX_FULL */
    EQ(ats_cqe_status(2u << 25 | 0x81u << 17), 0x0281);                           /* Unrecovered Read Error */
    EQ(ATS_SC_TX_FULL, 0x0704); EQ(ATS_SC_LBA_RANGE, 0x0080);
    if (fails) {
        fprintf(stderr, "atstx_unit: %d failed\n", fails);
        return 1;
    }
    printf("atstx_unit: all checks passed\n");
    return 0;
}
