/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the SQEs of docs/host-interface.md §1.5 and §1.6, PRPs (§1.4) and the CQE status. */
#include <string.h>

#include "atstx_int.h"

uint32_t ats_cdw13(uint32_t txid, int commit, int barrier, uint32_t attr)
{
    return (txid & 0x3Fu) | (commit ? 1u << 8 : 0) | (barrier ? 1u << 9 : 0) | (attr & 3u) << 16;
}

void ats_sqe_simple(struct ats_sqe *s, uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw13)
{
    memset(s, 0, sizeof *s);
    s->dw[0] = opc;
    s->dw[1] = nsid;
    s->dw[10] = cdw10;
    s->dw[11] = cdw11;
    s->dw[13] = cdw13;
}

void ats_sqe_rw(struct ats_sqe *s, uint8_t opc, uint64_t lba, uint32_t nlb, int fua, uint32_t cdw13)
{
    ats_sqe_simple(s, opc, 1, (uint32_t)lba, (uint32_t)(lba >> 32), cdw13);
    s->dw[12] = ((nlb - 1) & 0xFFFFu) | (fua ? 1u << 30 : 0);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

int ats_range_list(uint8_t *out, const struct ats_range *r, unsigned n)
{
    if (n < 1 || n > 8)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        if (r[i].nlb < 1 || r[i].nlb > 65536 || r[i].lba >> 48)
            return -1;
        put32(out + 8 * i, (uint32_t)r[i].lba);
        put32(out + 8 * i + 4, (r[i].nlb - 1) << 16 | (uint32_t)(r[i].lba >> 32 & 0xFFFF));
    }
    return (int)(8 * n);
}

int ats_dsm_list(uint8_t *out, const struct ats_range *r, unsigned n)
{
    if (n < 1 || n > 8)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        put32(out + 16 * i, 0);                       /* context attributes */
        put32(out + 16 * i + 4, r[i].nlb);            /* length in logical blocks */
        put32(out + 16 * i + 8, (uint32_t)r[i].lba);
        put32(out + 16 * i + 12, (uint32_t)(r[i].lba >> 32));
    }
    return (int)(16 * n);
}

unsigned ats_prps(uint64_t addr, uint32_t len, uint64_t list, uint64_t *prp1, uint64_t *prp2, uint64_t *entries)
{
    uint32_t pages = (len + ATS_PAGE - 1) / ATS_PAGE;
    *prp1 = addr;
    *prp2 = 0;
    if (pages <= 1)
        return 0;
    if (pages == 2) {
        *prp2 = addr + ATS_PAGE;
        return 0;
    }
    *prp2 = list;
    for (uint32_t i = 1; i < pages; i++)
        entries[i - 1] = addr + (uint64_t)i * ATS_PAGE;
    return pages - 1;
}

int ats_cqe_status(uint32_t dw3)
{
    uint32_t sc = dw3 >> 17 & 0xFFu, sct = dw3 >> 25 & 7u;
    return (int)(sct << 8 | sc);
}
