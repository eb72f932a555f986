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
    if (c->version == 3u) w += c->n_slog;
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
    i -= 2u * c->n_map;
    if (c->version == 3u && i < c->n_slog) return c->slog[i];
    return 0;
}

int ats_ckpt_page(const ats_geo_t *g, const ats_ckpt_t *c, uint32_t idx, uint32_t *out) {
    const uint32_t pw = g->page_bytes / 4u, per = pw - ATS_CKPT_HDR_WORDS;
    const uint32_t n = ats_ckpt_pages(g, c), total = ats_ckpt_words(g, c);
    if (idx >= n) return ATS_E_RANGE;
    out[0] = ATS_CKPT_MAGIC;
    out[1] = c->version == 3u ? 3u : 2u;
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
    uint32_t pw, per, hdr, idx, off, npages, version;
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
        if (r->cur[0] != ATS_CKPT_MAGIC || r->cur[1] != r->version || r->cur[2] != r->idx || r->cur[3] != r->npages) {
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
    } else if (c->version == 2u || c->version == 3u) {      // 3: 2 + the S-Log section (section 10.4)
        if (p0[2] != 0u || p0[3] == 0u) return ATS_E_FORMAT;
        r.version = c->version;
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
    if (c->version >= 2u) {
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
    // version 3: the rest of the stream (the S-Log section, then the last page's zero padding), as
    // much as slog holds; ats_slog_ckpt_get finds where the section ends
    c->n_slog = 0;
    if (c->version == 3u && !r.err) {
        const uint32_t left = r.npages * r.per - (r.idx * r.per + r.off);
        const uint32_t k = left < c->cap_slog ? left : c->cap_slog;
        for (uint32_t i = 0; i < k; i++) c->slog[i] = rd(&r);
        c->n_slog = k;
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
        if (k != i) {                            // swapped, not copied: recs[k..n) keeps every other record
            ats_rec_t t;                         // (the S-Log's check after the gap looks pages up there)
            rec_cp(&t, &recs[k]);
            rec_cp(&recs[k], &recs[i]);
            rec_cp(&recs[i], &t);
        }
        k++;
        want++;
    }
    return k;
}

uint32_t ats_scan_resume(uint32_t ppb, ats_page_old_fn old, void *ctx, uint32_t *probes) {
    uint32_t lo = 0, hi = ppb, n = 0;
    while (hi - lo > 1u) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        n++;
        if (old(ctx, mid)) lo = mid;
        else hi = mid;
    }
    if (probes) *probes = n;
    return lo + 1u;
}

// ---- replay: ats_replay is ats_slog_replay without the S-Log (one function, section 10.5 step 2)
int ats_replay(ats_replay_t *r, const ats_rec_t *recs, uint32_t n, uint64_t seq_base) {
    return ats_slog_replay(r, 0, recs, n, seq_base);
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

// ---- S-Log (persistence.md section 10)
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ats_slog_page(const uint8_t *d, uint32_t pb, uint32_t epoch, uint16_t *first, uint16_t *used) {
    const uint32_t f = (uint32_t)d[8] | (uint32_t)d[9] << 8, u = (uint32_t)d[10] | (uint32_t)d[11] << 8;
    if (le32(d) != ATS_SLOG_MAGIC || le32(d + 4) != epoch || le32(d + 12) != 0u) return ATS_E_FORMAT;
    if (u < ATS_SLOG_PG_HDR || u > pb || (u & 3u)) return ATS_E_FORMAT;
    if (f != ATS_SLOG_NO_FIRST && (f < ATS_SLOG_PG_HDR || f >= u || (f & 3u))) return ATS_E_FORMAT;
    *first = (uint16_t)f;
    *used = (uint16_t)u;
    return ATS_OK;
}

// byte x of the record starting at byte b of log page lpgn (section 10.1): its page and offset
typedef struct {
    uint32_t P, lpgn, q0;
    ats_lpage_fn pg;
    void *ctx;
} sl_rd_t;

static const ats_lpage_t *sl_at(const sl_rd_t *s, uint32_t x, uint32_t *o) {
    const uint32_t q = s->q0 + x;
    *o = ATS_SLOG_PG_HDR + q % s->P;
    return s->pg(s->ctx, s->lpgn + q / s->P);
}

static int sl_word(const sl_rd_t *s, uint32_t x, uint32_t *w) {
    uint32_t o;
    const ats_lpage_t *p = sl_at(s, x, &o);
    if (!p) return 0;
    *w = le32(p->data + o);
    return 1;
}

static void sl_init(sl_rd_t *s, uint32_t pb, ats_lpage_fn pg, void *ctx, uint32_t lpgn, uint32_t b) {
    s->P = pb - ATS_SLOG_PG_HDR;
    s->lpgn = lpgn;
    s->q0 = b - ATS_SLOG_PG_HDR;
    s->pg = pg;
    s->ctx = ctx;
}

static void sl_mpu_words(const uint32_t w[4], ats_mpu_t *m) {
    m->lpn = w[0];
    m->ppn = w[1];
    m->len = (uint16_t)(w[2] & 0xFFFu);
    m->off = (uint16_t)((w[2] >> 12) & 0xFFFu);
    m->ver = (uint8_t)((w[2] >> 24) & 0x7Fu);
    m->is_diff = (uint8_t)(w[2] >> 31);
    m->pad[0] = m->pad[1] = 0;
    m->dloc = w[3];
}

static int sl_read_mpu(const sl_rd_t *s, const ats_slog_rec_t *r, uint32_t i, ats_mpu_t *m) {
    uint32_t w[4];
    const uint32_t o = ATS_SLOG_PG_HDR + 8u * r->ncf + 16u * i;
    for (uint32_t k = 0; k < 4u; k++)
        if (!sl_word(s, o + 4u * k, &w[k])) return ATS_E_NAND;
    sl_mpu_words(w, m);
    return ATS_OK;
}

int ats_slog_parse(uint32_t pb, ats_lpage_fn pg, void *ctx, uint32_t lpgn, uint32_t b, ats_slog_rec_t *r) {
    sl_rd_t s;
    uint32_t h[4];
    if (pb < 64u || (pb & 3u) || b < ATS_SLOG_PG_HDR || b >= pb || (b & 3u)) return ATS_E_RANGE;
    sl_init(&s, pb, pg, ctx, lpgn, b);
    for (uint32_t i = 0; i < 4u; i++)
        if (!sl_word(&s, 4u * i, &h[i])) return ATS_E_NAND;
    if ((h[0] & 0xFFu) != 1u || ((h[0] >> 8) & 0xFFu) != 1u || (h[0] >> 24) || h[3]) return ATS_E_FORMAT;
    r->ncf = (h[0] >> 16) & 0xFFu;
    r->txid = h[1] & 0xFFu;
    r->txlen = (h[1] >> 8) & 0xFFFFu;
    r->reclen = h[1] >> 24;
    r->nbytes = h[2];
    r->hlen = ATS_SLOG_PG_HDR + 8u * r->ncf + 16u * r->txlen;
    if (r->ncf > ATS_SLOG_MAX_CF || !r->txid || !r->reclen || (r->nbytes & 3u) || r->nbytes < r->hlen)
        return ATS_E_FORMAT;
    // REC-LEN = floor((b - 16 + bytes - 1) / P) + 1 (64-bit: bytes is any 32-bit word)
    if ((uint64_t)(s.q0 + 0ull + r->nbytes - 1u) / s.P + 1u != r->reclen) return ATS_E_FORMAT;
    // its log pages: all kept, consecutive seqs, all but the last full, the last one's used covers its end
    const ats_lpage_t *last = 0;
    for (uint32_t i = 0; i < r->reclen; i++) {
        const ats_lpage_t *p = pg(ctx, lpgn + i);
        if (!p) return ATS_E_NAND;
        if (i == 0) r->first_seq = p->seq;
        if (p->seq != r->first_seq + i) return ATS_E_FORMAT;
        if (i + 1u < r->reclen && p->used != pb) return ATS_E_FORMAT;
        last = p;
    }
    if (last->used < ATS_SLOG_PG_HDR + (s.q0 + r->nbytes - 1u) % s.P + 1u) return ATS_E_FORMAT;
    r->commit_seq = last->seq;
    r->first_lpgn = lpgn;
    r->first_byte = b;
    for (uint32_t i = 0; i < r->ncf; i++) {
        uint32_t c0, c1;
        sl_word(&s, ATS_SLOG_PG_HDR + 8u * i, &c0);
        sl_word(&s, ATS_SLOG_PG_HDR + 8u * i + 4u, &c1);
        if ((c0 & 0x00FFFF00u) || !(c0 >> 24)) return ATS_E_FORMAT;
        r->cf_txid[i] = c0 & 0xFFu;
        r->cf_reclen[i] = c0 >> 24;
        r->cf_lpgn[i] = c1;
    }
    for (uint32_t i = 0; i < r->txlen; i++) {
        ats_mpu_t m;
        sl_read_mpu(&s, r, i, &m);
        if (!m.is_diff) {
            if (m.off || m.len || m.ver || m.dloc) return ATS_E_FORMAT;
        } else {
            if (!m.len || (m.len & 3u) || (m.off & 3u) || (uint32_t)m.off + m.len > pb || !m.ver || (m.dloc & 3u) ||
                m.dloc < r->hlen || (uint64_t)m.dloc + m.len > r->nbytes)
                return ATS_E_FORMAT;
            if ((s.q0 + m.dloc) / s.P != (s.q0 + m.dloc + m.len - 1u) / s.P) return ATS_E_FORMAT;
        }
    }
    return ATS_OK;
}

int ats_slog_mpu(uint32_t pb, ats_lpage_fn pg, void *ctx, const ats_slog_rec_t *r, uint32_t i, ats_mpu_t *m,
                 uint32_t *dppn, uint32_t *doff) {
    sl_rd_t s;
    if (i >= r->txlen) return ATS_E_RANGE;
    sl_init(&s, pb, pg, ctx, r->first_lpgn, r->first_byte);
    int st = sl_read_mpu(&s, r, i, m);
    if (st) return st;
    *dppn = *doff = 0;
    if (m->is_diff) {
        const ats_lpage_t *p = sl_at(&s, m->dloc, doff);
        if (!p) return ATS_E_NAND;
        *dppn = p->ppn;
    }
    return ATS_OK;
}

int ats_slog_find(uint32_t pb, ats_lpage_fn pg, void *ctx, const uint32_t *lpgns, uint32_t n, uint32_t *out_lpgn,
                  uint32_t *out_b, uint32_t cap, uint32_t *nbad, uint32_t *npartial) {
    const uint32_t P = pb - ATS_SLOG_PG_HDR;
    uint32_t k = 0;
    *nbad = *npartial = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ats_lpage_t *p = pg(ctx, lpgns[i]);
        if (!p) continue;
        uint32_t b = p->first;
        while (b != ATS_SLOG_NO_FIRST) {
            ats_slog_rec_t r;
            const int st = ats_slog_parse(pb, pg, ctx, lpgns[i], b, &r);
            if (st == ATS_E_NAND) {
                (*npartial)++;
                break;
            }
            if (st) {
                (*nbad)++;
                break;
            }
            if (k >= cap) return ATS_E_FULL;
            out_lpgn[k] = lpgns[i];
            out_b[k++] = b;
            // the next record follows when this one ends inside the page, before its used
            const uint64_t end = (uint64_t)(b - ATS_SLOG_PG_HDR) + r.nbytes;
            if (end >= P || ATS_SLOG_PG_HDR + end >= p->used) break;
            b = ATS_SLOG_PG_HDR + (uint32_t)end;
        }
    }
    return (int)k;
}

// ---- fragment lists
int ats_slog_lookup(const ats_slog_tab_t *t, uint32_t lpn) {
    for (uint32_t e = 0; e < t->n; e++)
        if (t->lpn[e] == lpn) return (int)e;
    return -1;
}

uint32_t ats_slog_count(const ats_slog_tab_t *t, uint32_t lpn) {
    const int e = ats_slog_lookup(t, lpn);
    return e < 0 ? 0u : t->nf[e];
}

static void sl_drop(ats_slog_tab_t *t, uint32_t e) {
    const uint32_t l = --t->n;
    if (e != l) {
        t->lpn[e] = t->lpn[l];
        t->nf[e] = t->nf[l];
        memcpy(&t->f[e * t->frags], &t->f[l * t->frags], t->nf[l] * sizeof(ats_frag_t));
    }
}

void ats_slog_clear(ats_slog_tab_t *t, uint32_t lpn) {
    const int e = ats_slog_lookup(t, lpn);
    if (e >= 0) sl_drop(t, (uint32_t)e);
}

int ats_slog_append(ats_slog_tab_t *t, uint32_t lpn, const ats_frag_t *f) {
    int e = ats_slog_lookup(t, lpn);
    if (e < 0) {
        if (t->n >= t->cap || !t->frags) return ATS_E_FULL;
        e = (int)t->n++;
        t->lpn[e] = lpn;
        t->nf[e] = 0;
    }
    if (t->nf[e] >= t->frags || t->nf[e] == 255u) return ATS_E_FULL;
    t->f[(uint32_t)e * t->frags + t->nf[e]++] = *f;
    return ATS_OK;
}

int ats_slog_merge(ats_slog_tab_t *t, uint32_t *l2p, uint32_t nlba, uint32_t lpn, uint32_t base_ppn,
                   uint32_t new_ppn, uint64_t seq) {
    if (lpn >= nlba) return ATS_E_RANGE;
    if (l2p[lpn] == ATS_UNMAPPED || (l2p[lpn] != base_ppn && l2p[lpn] != new_ppn)) return 0;
    l2p[lpn] = new_ppn;
    const int e = ats_slog_lookup(t, lpn);
    if (e < 0) return 1;
    ats_frag_t *f = &t->f[(uint32_t)e * t->frags];
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->nf[e]; i++)
        if (f[i].seq >= seq) f[k++] = f[i];
    t->nf[e] = (uint8_t)k;
    if (!k) sl_drop(t, (uint32_t)e);
    return 1;
}

int ats_slog_read(const ats_slog_tab_t *t, const uint32_t *l2p, uint32_t nlba, uint32_t lpn, ats_read_fn read,
                  void *ctx, uint8_t *out, uint32_t pb) {
    if (lpn >= nlba) return ATS_E_RANGE;
    const int e = ats_slog_lookup(t, lpn);
    if (l2p[lpn] == ATS_UNMAPPED) return e < 0 ? ATS_E_RANGE : ATS_E_STATE;
    const uint8_t *base = read(ctx, l2p[lpn]);
    if (!base) return ATS_E_NAND;
    memcpy(out, base, pb);
    if (e < 0) return ATS_OK;
    // in commit order: a later fragment's bytes win
    for (uint32_t i = 0; i < t->nf[e]; i++) {
        const ats_frag_t *f = &t->f[(uint32_t)e * t->frags + i];
        const uint8_t *lp = read(ctx, f->ppn);
        if (!lp) return ATS_E_NAND;
        if ((uint32_t)f->off + f->len > pb || (uint32_t)f->doff + f->len > pb) return ATS_E_RANGE;
        memcpy(out + f->off, lp + f->doff, f->len);
    }
    return ATS_OK;
}

// every META-PU readable and its LPN below nlba (checked before anything changes)
static int sl_lpns_ok(uint32_t nlba, uint32_t pb, ats_lpage_fn pg, void *ctx, const ats_slog_rec_t *r) {
    for (uint32_t i = 0; i < r->txlen; i++) {
        ats_mpu_t m;
        uint32_t dppn, doff;
        const int st = ats_slog_mpu(pb, pg, ctx, r, i, &m, &dppn, &doff);
        if (st) return st;
        if (m.lpn >= nlba) return ATS_E_RANGE;
    }
    return ATS_OK;
}

int ats_slog_apply(ats_slog_tab_t *t, uint32_t *l2p, uint32_t nlba, uint32_t pb, ats_lpage_fn pg, void *ctx,
                   const ats_slog_rec_t *r, int fulls) {
    const int ok = sl_lpns_ok(nlba, pb, pg, ctx, r);
    if (ok) return ok;
    for (uint32_t i = 0; i < r->txlen; i++) {
        ats_mpu_t m;
        uint32_t dppn, doff;
        int st = ats_slog_mpu(pb, pg, ctx, r, i, &m, &dppn, &doff);
        if (st) return st;
        if (m.lpn >= nlba) return ATS_E_RANGE;
        if (!m.is_diff) {
            if (fulls) {
                l2p[m.lpn] = m.ppn;
                ats_slog_clear(t, m.lpn);
            }
            continue;
        }
        ats_frag_t f = {r->commit_seq, dppn, 0, (uint16_t)doff, m.off, m.len, 0};
        if ((st = ats_slog_append(t, m.lpn, &f))) return st;
    }
    return ATS_OK;
}

int ats_slog_complete(const ats_slog_tab_t *t, const uint32_t *l2p, uint32_t nlba, uint32_t pb, ats_lpage_fn pg,
                      void *ctx, const ats_slog_rec_t *r, ats_ppn_fn at, void *actx, const uint32_t *flags,
                      uint32_t nflags, int use_flags, int *skipped) {
    int flagged = 0;
    *skipped = 0;
    const int lo = sl_lpns_ok(nlba, pb, pg, ctx, r);
    if (lo == ATS_E_RANGE) return 0;   // names an LPN the device does not have: applied nowhere
    if (lo) return lo;
    if (use_flags)
        for (uint32_t i = 0; i < nflags && !flagged; i++)
            flagged = flags[3u * i] == r->txid && flags[3u * i + 1u] == r->reclen && flags[3u * i + 2u] == r->first_lpgn;
    int full_ok = 1;
    for (uint32_t i = 0; i < r->txlen && !flagged && full_ok; i++) {
        ats_mpu_t m;
        uint32_t dppn, doff;
        const int st = ats_slog_mpu(pb, pg, ctx, r, i, &m, &dppn, &doff);
        if (st) return st;
        if (m.is_diff) continue;
        const ats_rec_t *p = at(actx, m.ppn);
        full_ok = p && p->kind == ATS_KIND_DATA && p->txid == r->txid && p->lpn == m.lpn &&
                  !(p->flags & (ATS_F_COMMIT | ATS_F_ABORT)) && p->seq < r->first_seq;
    }
    if (!full_ok) return 0;
    *skipped = flagged;
    // bases, in order, counting the record's own earlier META-PUs of the LPN (no table: a rescan)
    for (uint32_t i = 0; i < r->txlen; i++) {
        ats_mpu_t m, q;
        uint32_t dppn, doff;
        int st = ats_slog_mpu(pb, pg, ctx, r, i, &m, &dppn, &doff);
        if (st) return st;
        if (!m.is_diff) continue;
        if (m.lpn >= nlba) return 0;
        uint32_t base = l2p[m.lpn], k = ats_slog_count(t, m.lpn);
        for (uint32_t j = 0; j < i; j++) {
            if ((st = ats_slog_mpu(pb, pg, ctx, r, j, &q, &dppn, &doff))) return st;
            if (q.lpn != m.lpn) continue;
            if (!q.is_diff) base = q.ppn, k = 0;
            else k++;
        }
        if (base == ATS_UNMAPPED || base != m.ppn || k != m.ver - 1u) return 0;
    }
    return 1;
}

// ---- checkpoint version 3's S-Log section
// pages: scratch[0..n) PPNs, scratch[cap..cap+n) their LPGNs, kept sorted by LPGN (insertion)
static int sl_page_index(const uint32_t *pp, uint32_t n, uint32_t ppn) {
    for (uint32_t i = 0; i < n; i++)
        if (pp[i] == ppn) return (int)i;
    return -1;
}

int ats_slog_hw_load(const ats_slog_tab_t *t, uint32_t next_lpgn, ats_lpgn_fn lpgn_of, void *lctx,
                     ats_sload_fn load, void *sctx, uint32_t ppns, uint32_t *scratch, uint32_t cap,
                     uint32_t *npages) {
    uint32_t *pp = scratch, *lg = scratch + cap, n = 0;
    *npages = 0;
    for (uint32_t e = 0; e < t->n; e++)
        for (uint32_t k = 0; k < t->nf[e]; k++) {
            const uint32_t ppn = t->f[e * t->frags + k].ppn;
            if (ppn == ATS_UNMAPPED || sl_page_index(pp, n, ppn) >= 0) continue;   // unknown: no page
            if (n >= cap) return ATS_E_FULL;
            uint32_t l;
            const int st = lpgn_of(lctx, ppn, &l);
            if (st < 0) return st;
            uint32_t i = n++;
            for (; i > 0 && lg[i - 1u] > l; i--) { pp[i] = pp[i - 1u]; lg[i] = lg[i - 1u]; }
            pp[i] = ppn;
            lg[i] = l;
        }
    // a page whose entry of the LPGN -> PPN table a newer live page takes (LPGNs equal mod ppns) is
    // not loaded: its fragments are still INSERTed, and the read merge answers them MEDIA_ERROR (the
    // table's tag is the whole LPGN: never another page's bytes)
    uint32_t loaded = 0, shadowed = 0;
    int st = load(sctx, 0u, 0u, 0u, next_lpgn, 0u);
    for (uint32_t i = 0; st == ATS_OK && i < n; i++) {
        int newer = 0;
        for (uint32_t j = i + 1u; ppns && !newer && j < n; j++)
            newer = ((lg[i] ^ lg[j]) & (ppns - 1u)) == 0u;
        if (newer) { shadowed++; continue; }
        st = load(sctx, 1u, 0u, pp[i], lg[i], 0u);
        loaded++;
    }
    for (uint32_t e = 0; st == ATS_OK && e < t->n; e++)
        for (uint32_t k = 0; st == ATS_OK && k < t->nf[e]; k++) {
            const ats_frag_t *f = &t->f[e * t->frags + k];
            // an unknown page's fragment: INSERTed with its LPGN, which no loaded page has (LPGNs are
            // unique, and every page the device writes later has one at or above next_lpgn): it
            // reads MEDIA_ERROR, as on the device before the power cycle
            const int i = f->ppn == ATS_UNMAPPED ? -1 : sl_page_index(pp, n, f->ppn);
            st = load(sctx, 2u, t->lpn[e], i < 0 ? 0u : f->ppn, i < 0 ? f->lpgn : lg[i],
                      (uint64_t)f->len | (uint64_t)f->off << 12 | (uint64_t)f->doff << 32);
        }
    if (st != ATS_OK) return st;
    *npages = loaded;
    return (int)shadowed;
}

uint32_t ats_slog_ckpt_words(const ats_slog_tab_t *t) {
    uint32_t w = 2u;
    for (uint32_t e = 0; e < t->n; e++) w += 3u + 5u * t->nf[e];
    return w;
}

uint32_t ats_sl_ext_back(uint32_t low, uint32_t ref, uint32_t w) {
    const uint32_t mask = w >= 32u ? 0xFFFFFFFFu : (1u << w) - 1u;
    return ref - 1u - ((ref - 1u - low) & mask);
}

int ats_slog_ckpt_put(const ats_slog_tab_t *t, const uint32_t *l2p, uint32_t nlba, uint32_t slog_lpgn, uint32_t *out,
                      uint32_t cap) {
    if (ats_slog_ckpt_words(t) > cap) return ATS_E_FULL;
    uint32_t k = 0;
    out[k++] = slog_lpgn;
    out[k++] = t->n;
    for (uint32_t e = 0; e < t->n; e++) {
        const ats_frag_t *f = &t->f[e * t->frags];
        if (t->lpn[e] >= nlba) return ATS_E_RANGE;
        out[k++] = t->lpn[e];
        out[k++] = l2p[t->lpn[e]];
        out[k++] = t->nf[e];
        for (uint32_t i = 0; i < t->nf[e]; i++) {
            uint32_t lg16 = 0;
            if (f[i].ppn == ATS_UNMAPPED) {   // an unknown page: its LPGN's low 16 bits, extended back
                lg16 = f[i].lpgn & 0xFFFFu;
                if (ats_sl_ext_back(lg16, slog_lpgn, 16u) != f[i].lpgn) return ATS_E_RANGE;
            }
            out[k++] = f[i].ppn;
            out[k++] = (uint32_t)f[i].off | (uint32_t)f[i].len << 16;
            out[k++] = f[i].doff | lg16 << 16;
        }
        for (uint32_t i = 0; i < t->nf[e]; i++) {
            out[k++] = (uint32_t)f[i].seq;
            out[k++] = (uint32_t)(f[i].seq >> 32);
        }
    }
    return (int)k;
}

int ats_slog_ckpt_get(ats_slog_tab_t *t, uint32_t *l2p, uint32_t nlba, const uint32_t *w, uint32_t n,
                      uint32_t *slog_lpgn) {
    uint32_t k = 2;
    if (n < 2u) return ATS_E_FORMAT;
    *slog_lpgn = w[0];
    t->n = 0;
    for (uint32_t s = 0; s < w[1]; s++) {
        if (n - k < 3u) return ATS_E_FORMAT;
        const uint32_t lpn = w[k], base = w[k + 1u], nf = w[k + 2u];
        k += 3u;
        if (!nf || lpn >= nlba || ats_slog_lookup(t, lpn) >= 0 || (n - k) / 5u < nf) return ATS_E_FORMAT;
        for (uint32_t i = 0; i < nf; i++) {
            const uint32_t *x = &w[k + 3u * i], *q = &w[k + 3u * nf + 2u * i];
            if ((x[2] >> 16) && x[0] != ATS_UNMAPPED) return ATS_E_FORMAT;
            const uint32_t lg = x[0] == ATS_UNMAPPED ? ats_sl_ext_back(x[2] >> 16, *slog_lpgn, 16u) : 0u;
            ats_frag_t f = {(uint64_t)q[0] | (uint64_t)q[1] << 32, x[0], lg, (uint16_t)x[2], (uint16_t)x[1],
                            (uint16_t)(x[1] >> 16), 0};
            const int st = ats_slog_append(t, lpn, &f);
            if (st) return st;
        }
        l2p[lpn] = base;
        k += 5u * nf;
    }
    return (int)k;
}

// ---- section 10.5 step 2 (and, with s = NULL, section 4: ats_replay)
// a page's mapping applied (a full write, a committed page): L2P := its PPN, F emptied
static void sl_map(ats_replay_t *r, ats_slog_tab_t *t, const ats_rec_t *x) {
    if (x->lpn >= r->nlba) return;               // cannot be written by the device: ignored
    r->l2p[x->lpn] = x->ppn;
    r->applied++;
    if (t) ats_slog_clear(t, x->lpn);
}

int ats_slog_replay(ats_replay_t *r, ats_slog_replay_t *s, const ats_rec_t *recs, uint32_t n, uint64_t seq_base) {
    ats_slog_tab_t *tab = s ? s->tab : 0;
    for (uint32_t t = 0; t <= r->ntx; t++) r->head[t] = r->tail[t] = -1;
    r->applied = r->trims = r->relocs_applied = r->relocs_stale = r->commits = r->aborts = r->dropped_open = 0;
    r->ignored = 0;
    if (s) s->slog_commits = s->merges = s->merges_stale = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ats_rec_t *x = &recs[i];
        const int live = x->seq >= seq_base;     // below: in the checkpoint's mapping already
        const uint32_t t = x->txid;
        r->next[i] = -1;
        if (t > r->ntx) {                        // not this device's: its seq stays, nothing else
            r->ignored++;
            continue;
        }
        // a log page that is the commit point of parsed records (records packed into one page share
        // it): how many; those of a txid above ntx change nothing
        uint32_t ncp = 0;
        if (s && x->kind == ATS_KIND_LOG && (x->flags & ATS_F_SLOG)) {
            const ats_slog_rec_t *sr;
            while ((sr = s->commit(s->cctx, x->seq, ncp)) != 0) {
                if (sr->txid > r->ntx) r->ignored++;
                ncp++;
            }
        }
        if (x->kind == ATS_KIND_LOG && (x->flags & ATS_F_TRIM)) {
            if (live && x->lpn < r->nlba) {
                r->l2p[x->lpn] = ATS_UNMAPPED;
                if (tab) ats_slog_clear(tab, x->lpn);
                r->trims++;
            }
        } else if (ncp) {
            for (uint32_t j = 0; j < ncp; j++) {   // in stream order
                const ats_slog_rec_t *sr = s->commit(s->cctx, x->seq, j);
                const uint32_t tt = sr->txid;
                if (tt > r->ntx) continue;
                if (live) {   // tt commits as at a COMMIT, then its fragments are appended
                    for (int32_t k = r->head[tt]; k >= 0; k = r->next[k]) sl_map(r, tab, &recs[k]);
                    const int st = ats_slog_apply(tab, r->l2p, r->nlba, s->page_bytes, s->pg, s->pctx, sr, 0);
                    if (st) return st;
                    s->slog_commits++;
                }
                r->head[tt] = r->tail[tt] = -1;
            }
        } else if (x->kind == ATS_KIND_DATA && t == 0) {
            if (live) {
                if (s && (x->flags & (ATS_F_RELOC | ATS_F_SLOG)) == (ATS_F_RELOC | ATS_F_SLOG)) {
                    const int m = x->lpn < r->nlba ? ats_slog_merge(tab, r->l2p, r->nlba, x->lpn, x->epoch, x->ppn, x->seq) : 0;
                    if (m > 0) s->merges++;
                    else s->merges_stale++;
                } else if (x->flags & ATS_F_RELOC) {
                    if (x->lpn < r->nlba && r->l2p[x->lpn] == x->epoch) {
                        r->l2p[x->lpn] = x->ppn;
                        r->relocs_applied++;
                    } else {
                        r->relocs_stale++;
                    }
                } else {
                    sl_map(r, tab, x);
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
                for (int32_t k = r->head[t]; k >= 0; k = r->next[k]) sl_map(r, tab, &recs[k]);
                r->commits++;
            }
            r->head[t] = r->tail[t] = -1;
        }
    }
    for (uint32_t t = 1; t <= r->ntx; t++)
        if (r->head[t] >= 0) r->dropped_open++;
    return ATS_OK;
}
