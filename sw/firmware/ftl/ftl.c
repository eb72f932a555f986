// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: pure FTL algorithms (ftl.h). No hardware access, no libc beyond string.h.
#include "ftl.h"

#include <string.h>

static uint32_t log2u(uint32_t v) {
    uint32_t r = 0;
    while ((1u << r) < v) r++;
    return r;
}

int ats_geo_init(ats_geo_t *g, uint32_t num_chan, uint32_t ways, uint32_t blocks, uint32_t ppb,
                 uint32_t page_bytes, uint32_t nlba, uint32_t ntx) {
    // persistence.md section 1: WAYS 1, 2 or 4; the die count and pages per block powers of two
    // (bounded here so that no product below overflows: GC scores need ppb <= 32768)
    if (num_chan < 1 || num_chan > 16 || (ways != 1 && ways != 2 && ways != 4) || !blocks || blocks > 65535 ||
        ppb < 2 || ppb > 32768 || page_bytes < 64 || page_bytes > 65536 || (page_bytes & 3))
        return ATS_E_RANGE;
    g->ndie = num_chan * ways;
    g->ways = ways;
    g->blocks = blocks;
    g->ppb = ppb;
    g->page_bytes = page_bytes;
    g->nlba = nlba;
    g->ntx = ntx;
    g->die_w = log2u(g->ndie);
    g->pg_w = log2u(ppb);
    if ((1u << g->die_w) != g->ndie || (1u << g->pg_w) != ppb) return ATS_E_RANGE;
    return ATS_OK;
}

// ---- checkpoint stream (version 2):
//   ndie, blocks, ppb, n_map, scan_from lo, scan_from hi, ckpt_no, n_bad,
//   per die: plan_len, plan blocks; bad list; erase counts (two u16 per word, block 2i low);
//   n_map pairs lpn, ppn
#define CK_FIXED 8u

uint32_t ats_ckpt_words(const ats_geo_t *g, const ats_ckpt_t *c) {
    uint32_t w = CK_FIXED;
    for (uint32_t d = 0; d < g->ndie; d++) w += 1u + c->plan_len[d];
    w += c->n_bad;
    w += (g->ndie * g->blocks + 1u) / 2u;
    w += 2u * c->n_map;
    return w;
}

uint32_t ats_ckpt_pages(const ats_geo_t *g, const ats_ckpt_t *c) {
    const uint32_t per = g->page_bytes / 4u - ATS_CKPT_HDR_WORDS;
    return (ats_ckpt_words(g, c) + per - 1u) / per;
}

// word i of the stream
static uint32_t ck_word(const ats_geo_t *g, const ats_ckpt_t *c, uint32_t i) {
    if (i < CK_FIXED) {
        switch (i) {
        case 0: return g->ndie;
        case 1: return g->blocks;
        case 2: return g->ppb;
        case 3: return c->n_map;
        case 4: return (uint32_t)c->scan_from;
        case 5: return (uint32_t)(c->scan_from >> 32);
        case 6: return c->ckpt_no;
        default: return c->n_bad;
        }
    }
    i -= CK_FIXED;
    for (uint32_t d = 0; d < g->ndie; d++) {
        if (i == 0) return c->plan_len[d];
        i--;
        if (i < c->plan_len[d]) return c->plan[d * g->blocks + i];
        i -= c->plan_len[d];
    }
    if (i < c->n_bad) return c->bad[i];
    i -= c->n_bad;
    const uint32_t nb = g->ndie * g->blocks, ew = (nb + 1u) / 2u;
    if (i < ew) {
        uint32_t lo = c->erase_cnt[2u * i], hi = (2u * i + 1u < nb) ? c->erase_cnt[2u * i + 1u] : 0u;
        return lo | (hi << 16);
    }
    i -= ew;
    if (i < 2u * c->n_map) return (i & 1u) ? c->map_ppn[i / 2u] : c->map_lpn[i / 2u];
    return 0;
}

int ats_ckpt_page(const ats_geo_t *g, const ats_ckpt_t *c, uint32_t idx, uint32_t *out) {
    const uint32_t pw = g->page_bytes / 4u, per = pw - ATS_CKPT_HDR_WORDS;
    const uint32_t n = ats_ckpt_pages(g, c), total = ats_ckpt_words(g, c);
    if (idx >= n) return ATS_E_RANGE;
    out[0] = ATS_CKPT_MAGIC;
    out[1] = 2u;
    out[2] = idx;
    out[3] = n;
    for (uint32_t k = 0; k < per; k++) {
        uint32_t i = idx * per + k;
        out[ATS_CKPT_HDR_WORDS + k] = (i < total) ? ck_word(g, c, i) : 0u;
    }
    return ATS_OK;
}

// stream reader over pages (version 2) or one page (version 1)
typedef struct {
    ats_page_fn page;
    void *ctx;
    uint32_t pw, per, hdr, idx, off, npages;
    const uint32_t *cur;
    int err;
} ck_rd_t;

static uint32_t rd(ck_rd_t *r) {
    if (r->err) return 0;
    if (r->off >= r->per) {
        r->idx++;
        r->off = 0;
        if (r->idx >= r->npages || !(r->cur = r->page(r->ctx, r->idx))) {
            r->err = 1;
            return 0;
        }
        if (r->cur[0] != ATS_CKPT_MAGIC || r->cur[1] != 2u || r->cur[2] != r->idx || r->cur[3] != r->npages) {
            r->err = 1;
            return 0;
        }
    }
    return r->cur[r->hdr + r->off++];
}

int ats_ckpt_parse(const ats_geo_t *g, ats_ckpt_t *c, ats_page_fn page, void *ctx) {
    const uint32_t *p0 = page(ctx, 0);
    if (!p0 || p0[0] != ATS_CKPT_MAGIC) return ATS_E_FORMAT;
    ck_rd_t r;
    memset(&r, 0, sizeof r);
    r.page = page;
    r.ctx = ctx;
    r.pw = g->page_bytes / 4u;
    r.cur = p0;
    c->version = p0[1];
    if (c->version == 1u) {
        // magic, version, ndie, blocks, ppb, n_map, plan, pairs (one page)
        r.hdr = 2u;
        r.per = r.pw - 2u;
        r.npages = 1u;
        if (rd(&r) != g->ndie || rd(&r) != g->blocks || rd(&r) != g->ppb) return ATS_E_FORMAT;
        c->n_map = rd(&r);
        c->scan_from = c->seq_base;
        c->ckpt_no = 0;
        c->n_bad = 0;
    } else if (c->version == 2u) {
        if (p0[2] != 0u || p0[3] == 0u) return ATS_E_FORMAT;
        r.hdr = ATS_CKPT_HDR_WORDS;
        r.per = r.pw - ATS_CKPT_HDR_WORDS;
        r.npages = p0[3];
        if (rd(&r) != g->ndie || rd(&r) != g->blocks || rd(&r) != g->ppb) return ATS_E_FORMAT;
        c->n_map = rd(&r);
        uint64_t lo = rd(&r);
        c->scan_from = lo | ((uint64_t)rd(&r) << 32);
        c->ckpt_no = rd(&r);
        c->n_bad = rd(&r);
        if (c->scan_from > c->seq_base) return ATS_E_FORMAT;
    } else {
        return ATS_E_FORMAT;
    }
    if (c->n_map > c->cap_map || c->n_bad > c->cap_bad) return ATS_E_FULL;
    for (uint32_t d = 0; d < g->ndie; d++) {
        uint32_t n = rd(&r);
        if (n > g->blocks) return ATS_E_FORMAT;
        c->plan_len[d] = (uint16_t)n;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t b = rd(&r);
            if (b >= g->blocks) return ATS_E_FORMAT;
            c->plan[d * g->blocks + i] = (uint16_t)b;
        }
    }
    if (c->version == 2u) {
        for (uint32_t i = 0; i < c->n_bad; i++) c->bad[i] = rd(&r);
        const uint32_t nb = g->ndie * g->blocks;
        for (uint32_t i = 0; i < (nb + 1u) / 2u; i++) {
            uint32_t w = rd(&r);
            c->erase_cnt[2u * i] = (uint16_t)w;
            if (2u * i + 1u < nb) c->erase_cnt[2u * i + 1u] = (uint16_t)(w >> 16);
        }
    } else if (c->erase_cnt) {
        memset(c->erase_cnt, 0, sizeof(uint16_t) * g->ndie * g->blocks);
    }
    for (uint32_t i = 0; i < c->n_map; i++) {
        c->map_lpn[i] = rd(&r);
        c->map_ppn[i] = rd(&r);
    }
    return r.err ? ATS_E_FORMAT : ATS_OK;
}

// ---- durable prefix
// a record copied field by field: a struct assignment compiled (-Os) to a memcpy call, three a swap
static inline void rec_cp(ats_rec_t *d, const ats_rec_t *s) {
    d->seq = s->seq;
    d->ppn = s->ppn;
    d->lpn = s->lpn;
    d->epoch = s->epoch;
    d->txid = s->txid;
    d->kind = s->kind;
    d->flags = s->flags;
    d->pad = s->pad;
}

// sift-down of a max-heap by seq. The moving record is held aside and written once where it stops
// (each step moves the larger child up): the same array as swapping it down step by step, so the
// sort's order, ties included, is the swapping version's
static void sift(ats_rec_t *a, uint32_t i, uint32_t n) {
    ats_rec_t t;
    rec_cp(&t, &a[i]);
    for (;;) {
        const uint32_t l = 2u * i + 1u;
        uint32_t m = i;
        uint64_t ms = t.seq;
        if (l < n && a[l].seq > ms) {
            m = l;
            ms = a[l].seq;
        }
        if (l + 1u < n && a[l + 1u].seq > ms) m = l + 1u;
        if (m == i) break;
        rec_cp(&a[i], &a[m]);
        i = m;
    }
    rec_cp(&a[i], &t);
}

uint32_t ats_log_add(ats_rec_t *recs, uint32_t n, uint32_t cap, const ats_rec_t *x, uint32_t *dropped) {
    if (n < cap) {
        rec_cp(&recs[n], x);
        return n + 1u;
    }
    if (cap == 0u) {
        (*dropped)++;
        return n;
    }
    if (*dropped == 0u)                          // the first drop: a max-heap by seq from now on
        for (uint32_t i = cap / 2u; i-- > 0;) sift(recs, i, cap);
    (*dropped)++;
    if (x->seq < recs[0].seq) {                  // the highest seq kept goes, x comes in
        rec_cp(&recs[0], x);
        sift(recs, 0, cap);
    }
    return n;
}

uint32_t ats_prefix(ats_rec_t *recs, uint32_t n, uint64_t scan_from) {
    // heap sort by seq (no allocation; n is the active log)
    for (uint32_t i = n / 2u; i-- > 0;) sift(recs, i, n);
    for (uint32_t e = n; e > 1u; e--) {
        ats_rec_t t;
        rec_cp(&t, &recs[0]);
        rec_cp(&recs[0], &recs[e - 1u]);
        rec_cp(&recs[e - 1u], &t);
        sift(recs, 0, e - 1u);
    }
    uint32_t k = 0;
    uint64_t want = scan_from;
    for (uint32_t i = 0; i < n; i++) {
        if (recs[i].seq < want) continue;        // a duplicate (re-programmed page), or below scan_from
        if (recs[i].seq != want) break;          // the first gap
        if (k != i) rec_cp(&recs[k], &recs[i]);
        k++;
        want++;
    }
    return k;
}

// ---- replay
static void apply(ats_replay_t *r, const ats_rec_t *x) {
    if (x->lpn >= r->nlba) return;               // cannot be written by the device: ignored
    r->l2p[x->lpn] = x->ppn;
    r->applied++;
}

int ats_replay(ats_replay_t *r, const ats_rec_t *recs, uint32_t n, uint64_t seq_base) {
    for (uint32_t t = 0; t <= r->ntx; t++) r->head[t] = r->tail[t] = -1;
    r->applied = r->trims = r->relocs_applied = r->relocs_stale = r->commits = r->aborts = r->dropped_open = 0;
    r->ignored = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ats_rec_t *x = &recs[i];
        const int live = x->seq >= seq_base;     // below: in the checkpoint's mapping already
        const uint32_t t = x->txid;
        r->next[i] = -1;
        if (t > r->ntx) {                        // not this device's: its seq stays, nothing else
            r->ignored++;
            continue;
        }
        if (x->kind == ATS_KIND_LOG && (x->flags & ATS_F_TRIM)) {
            if (live && x->lpn < r->nlba) {
                r->l2p[x->lpn] = ATS_UNMAPPED;
                r->trims++;
            }
        } else if (x->kind == ATS_KIND_DATA && t == 0) {
            if (live) {
                if (x->flags & ATS_F_RELOC) {
                    if (x->lpn < r->nlba && r->l2p[x->lpn] == x->epoch) {
                        r->l2p[x->lpn] = x->ppn;
                        r->relocs_applied++;
                    } else {
                        r->relocs_stale++;
                    }
                } else {
                    apply(r, x);
                }
            }
        } else if (x->kind == ATS_KIND_DATA && t != 0) {
            if (r->tail[t] < 0) r->head[t] = (int32_t)i;
            else r->next[r->tail[t]] = (int32_t)i;
            r->tail[t] = (int32_t)i;
        }
        if (t != 0 && (x->flags & ATS_F_ABORT)) {
            r->head[t] = r->tail[t] = -1;
            if (live) r->aborts++;
        } else if (t != 0 && (x->flags & ATS_F_COMMIT)) {
            if (live) {
                for (int32_t k = r->head[t]; k >= 0; k = r->next[k]) apply(r, &recs[k]);
                r->commits++;
            }
            r->head[t] = r->tail[t] = -1;
        }
    }
    for (uint32_t t = 1; t <= r->ntx; t++)
        if (r->head[t] >= 0) r->dropped_open++;
    return ATS_OK;
}

// ---- GC victim: greedy = fewest valid pages; cost-benefit (Rosenblum/Kawaguchi) = the largest
// age * (1 - u) / (2u) with u = valid / ppb, compared without division: age * (ppb - v) / (2 v)
int ats_gc_pick(ats_gc_policy_t pol, const uint32_t *valid, const uint32_t *age, uint32_t n, uint32_t ppb) {
    int best = -1;
    uint64_t bnum = 0, bden = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (valid[i] >= ppb) continue;           // nothing to gain
        if (pol == ATS_GC_GREEDY) {
            if (best < 0 || valid[i] < valid[best]) best = (int)i;
            continue;
        }
        if (valid[i] == 0) {                     // nothing to copy: always worth it, oldest first
            if (best < 0 || valid[best] != 0 || age[i] > age[best]) best = (int)i;
            continue;
        }
        if (best >= 0 && valid[best] == 0) continue;
        const uint64_t num = (uint64_t)age[i] * (ppb - valid[i]), den = 2u * (uint64_t)valid[i];
        // num / den > bnum / bden  <=>  num * bden > bnum * den (ties: the lower index stays)
        if (best < 0 || num * bden > bnum * den) {
            best = (int)i;
            bnum = num;
            bden = den;
        }
    }
    return best;
}

int ats_wl_pick_free(const uint16_t *erase_cnt, uint32_t n) {
    int best = -1;
    for (uint32_t i = 0; i < n; i++)
        if (best < 0 || erase_cnt[i] < erase_cnt[best]) best = (int)i;
    return best;
}

uint32_t ats_wl_order(const uint16_t *erase_cnt, uint16_t *order, uint32_t n, uint32_t m) {
    // bounded stable insertion: the list holds the first min(m, n) of the order; a candidate that
    // does not beat the list's last (full list, erase count >= the last's) is dropped: O(n * m)
    // worst case, O(n) when the counts are even
    uint32_t len = 0;
    if (m == 0u) return 0u;
    for (uint32_t i = 0; i < n; i++) {
        if (len == m && erase_cnt[order[len - 1u]] <= erase_cnt[i]) continue;
        uint32_t j = len < m ? len++ : len - 1u;
        while (j > 0 && erase_cnt[order[j - 1u]] > erase_cnt[i]) {
            order[j] = order[j - 1u];
            j--;
        }
        order[j] = (uint16_t)i;
    }
    return len;
}

int ats_wl_static_due(const uint16_t *erase_cnt, const uint8_t *usable, uint32_t n, uint32_t thresh) {
    uint32_t lo = 0xFFFFFFFFu, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!usable[i]) continue;
        if (erase_cnt[i] < lo) lo = erase_cnt[i];
        if (erase_cnt[i] > hi) hi = erase_cnt[i];
    }
    return hi >= lo && hi - lo > thresh;
}
