/* SPDX-License-Identifier: Apache-2.0
 * libatstx codec: SQEs (docs/host-interface.md §1.5, §1.6), PRPs (§1.4), range lists and the CQE
 * (NVMe 1.4 §4.6). Pure functions, no I/O; byte order explicit (little endian on the wire). */
#include <errno.h>
#include <string.h>

#include "atstx_int.h"

uint32_t ats_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ats_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

uint64_t ats_get64(const uint8_t *p)
{
    return (uint64_t)ats_get32(p) | (uint64_t)ats_get32(p + 4) << 32;
}

void ats_put64(uint8_t *p, uint64_t v)
{
    ats_put32(p, (uint32_t)v);
    ats_put32(p + 4, (uint32_t)(v >> 32));
}

/* CDW13: TXID 5:0, COMMIT 8, BARRIER 9, ATTR 17:16 */
uint32_t ats_cdw13(uint32_t txid, int commit, int barrier, uint32_t attr)
{
    return (txid & 0x3Fu) | (commit ? ATS_CDW13_COMMIT : 0) | (barrier ? ATS_CDW13_BARRIER : 0) | (attr & 3u) << 16;
}

void ats_sqe_cmd(struct ats_sqe *s, uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw13)
{
    memset(s, 0, sizeof *s);
    s->dw[0] = opc;                 /* FUSE 9:8 = 0, PSDT 15:14 = 0 (PRPs), CID 31:16 by the transport */
    s->dw[1] = nsid;
    s->dw[10] = cdw10;
    s->dw[11] = cdw11;
    s->dw[13] = cdw13;
}

void ats_sqe_rw(struct ats_sqe *s, uint8_t opc, uint64_t lba, uint32_t nlb, int fua, uint32_t cdw13)
{
    ats_sqe_cmd(s, opc, 1, (uint32_t)lba, (uint32_t)(lba >> 32), cdw13);
    s->dw[12] = ((nlb - 1) & 0xFFFFu) | (fua ? 1u << 30 : 0);
}

void ats_sqe_set_cid(struct ats_sqe *s, uint16_t cid)
{
    s->dw[0] = (s->dw[0] & 0xFFFFu) | (uint32_t)cid << 16;
}

void ats_sqe_set_prp(struct ats_sqe *s, uint64_t prp1, uint64_t prp2)
{
    s->dw[6] = (uint32_t)prp1;
    s->dw[7] = (uint32_t)(prp1 >> 32);
    s->dw[8] = (uint32_t)prp2;
    s->dw[9] = (uint32_t)(prp2 >> 32);
}

void ats_sqe_bytes(const struct ats_sqe *s, uint8_t out[64])
{
    for (int i = 0; i < 16; i++)
        ats_put32(out + 4 * i, s->dw[i]);
}

/* DW3: CID 15:0, phase 16, status 31:17 = {DNR 31, M 30, CRD 29:28, SCT 27:25, SC 24:17} */
int ats_cqe_status(uint32_t dw3)
{
    return (int)((dw3 >> 25 & 7u) << 8 | (dw3 >> 17 & 0xFFu));
}

void ats_cqe_parse(const uint8_t in[16], struct ats_cqe *c)
{
    uint32_t dw2 = ats_get32(in + 8), dw3 = ats_get32(in + 12);
    c->dw0 = ats_get32(in);
    c->sqhd = (uint16_t)dw2;
    c->sqid = (uint16_t)(dw2 >> 16);
    c->cid = (uint16_t)dw3;
    c->phase = (uint8_t)(dw3 >> 16 & 1u);
    c->status = ats_cqe_status(dw3);
    c->dnr = (uint8_t)(dw3 >> 31);
}

/* Range Flush entry: dword 0 = LBA[31:0], dword 1 = {NLB 0-based [31:16], LBA[47:32]} */
int ats_range_list(uint8_t *out, const struct ats_range *r, unsigned n)
{
    if (!r || n < 1 || n > 8)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (r[i].nlb < 1 || r[i].nlb > 65536 || r[i].lba >> 48)
            return -EINVAL;
        ats_put32(out + 8 * i, (uint32_t)r[i].lba);
        ats_put32(out + 8 * i + 4, (r[i].nlb - 1) << 16 | (uint32_t)(r[i].lba >> 32 & 0xFFFFu));
    }
    return (int)(8 * n);
}

/* DSM range (NVMe 1.4 Figure 363): context attributes, length in LBAs (1-based), SLBA */
int ats_dsm_list(uint8_t *out, const struct ats_range *r, unsigned n)
{
    if (!r || n < 1 || n > 8)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (r[i].nlb < 1 || r[i].nlb > 65536)
            return -EINVAL;
        ats_put32(out + 16 * i, 0);
        ats_put32(out + 16 * i + 4, r[i].nlb);
        ats_put64(out + 16 * i + 8, r[i].lba);
    }
    return (int)(16 * n);
}

int ats_prps(uint64_t addr, uint32_t len, uint64_t list, uint64_t *prp1, uint64_t *prp2, uint64_t *entries)
{
    if ((addr & 3u) || len < 1 || len > ATS_MAX_XFER)
        return -EINVAL;
    uint64_t first = addr & ~(uint64_t)(ATS_PAGE - 1);
    uint32_t pages = (uint32_t)((addr - first + len + ATS_PAGE - 1) / ATS_PAGE);
    *prp1 = addr;
    *prp2 = 0;
    if (pages == 1)
        return 0;
    if (pages == 2) {
        *prp2 = first + ATS_PAGE;
        return 0;
    }
    /* one list page, no chaining: the entries must not reach the end of the list's page */
    if ((list & 7u) || (list & (ATS_PAGE - 1)) + 8u * (pages - 1) > ATS_PAGE)
        return -EINVAL;
    *prp2 = list;
    for (uint32_t i = 1; i < pages; i++)
        entries[i - 1] = first + (uint64_t)i * ATS_PAGE;
    return (int)(pages - 1);
}

/* SWRITE's list checks in the device's order (host-interface.md §1.11 "Statuses"): NR = 0, NR > the
 * ranges, total LBAs > the pages, a range of 0 LBAs, a range past the namespace, overlapping ranges
 * (the lengths always add up to the data here: the library computes NLB from them) */
int ats_swrite_check(const struct ats_info *in, const struct ats_range *r, unsigned n, uint32_t *nlb)
{
    uint64_t total = 0;
    *nlb = 0;
    if (n == 0)
        return ATS_SC_SW_NONE;
    if (n > in->static_ranges)
        return ATS_SC_SW_MANY;
    for (unsigned i = 0; i < n; i++)
        total += r[i].nlb;
    if (total > in->static_pages)
        return ATS_SC_SW_PAGES;
    for (unsigned i = 0; i < n; i++)
        if (r[i].nlb == 0)
            return ATS_SC_SW_EMPTY;
    for (unsigned i = 0; i < n; i++)
        if (r[i].lba >= in->num_lbas || r[i].nlb > in->num_lbas - r[i].lba)
            return ATS_SC_LBA_RANGE;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            if (r[i].lba < r[j].lba + r[j].nlb && r[j].lba < r[i].lba + r[i].nlb)
                return ATS_SC_SW_OVERLAP;
    *nlb = (uint32_t)total;
    return 0;
}
