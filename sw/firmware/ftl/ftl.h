// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the pure FTL algorithms (no hardware access). They build for VexRiscv and for
// the host (sw/firmware/tests/, `make -C sw/firmware host-test`). On-flash format: docs/persistence.md.
#pragma once
#include <stddef.h>
#include <stdint.h>

// ---- status codes (every firmware function returns one; 0 = OK)
typedef enum {
    ATS_OK = 0,
    ATS_E_RANGE = -1,      // an argument or a stored value out of range
    ATS_E_FORMAT = -2,     // a checkpoint that does not parse
    ATS_E_FULL = -3,       // a fixed-size table is full
    ATS_E_NAND = -4,       // a NAND operation failed
    ATS_E_NOCKPT = -5,     // no complete checkpoint on flash
    ATS_E_NOSPACE = -6,    // no erased block left
    ATS_E_STATE = -7,      // called in the wrong state
    ATS_E_NOTBLANK = -8,   // format refused: a good block's page 0 holds data (persistence.md section 5)
} ats_status_t;

// ---- on-flash format (docs/persistence.md sections 2, 4, 5)
#define ATS_KIND_DATA 0u
#define ATS_KIND_LOG 1u
#define ATS_KIND_MAP 2u
#define ATS_KIND_CKPT 3u
#define ATS_F_COMMIT 0x01u
#define ATS_F_COMMIT_BLOCK 0x02u
#define ATS_F_TRIM 0x04u
#define ATS_F_ABORT 0x08u
#define ATS_F_RELOC 0x10u
#define ATS_CKPT_MAGIC 0x50435441u   // "ATCP"
#define ATS_CKPT_HDR_WORDS 4u        // per checkpoint page (version 2): magic, version, index, count
#define ATS_UNMAPPED 0xFFFFFFFFu
#define ATS_NO_LPN 0xFFFFFFFFu

// one log record: a valid kind-0/1 page found by the scan (its spare fields and where it is)
typedef struct {
    uint64_t seq;
    uint32_t ppn;
    uint32_t lpn;
    uint32_t epoch;
    uint8_t txid, kind, flags, pad;
} ats_rec_t;

// ---- geometry and PPN packing (persistence.md section 1)
typedef struct {
    uint32_t ndie, ways, blocks, ppb, page_bytes, nlba, ntx;
    uint32_t die_w, pg_w;   // log2(ndie), log2(ppb)
} ats_geo_t;
int ats_geo_init(ats_geo_t *g, uint32_t num_chan, uint32_t ways, uint32_t blocks, uint32_t ppb,
                 uint32_t page_bytes, uint32_t nlba, uint32_t ntx);
static inline uint32_t ats_ppn(const ats_geo_t *g, uint32_t die, uint32_t block, uint32_t page) {
    return (block << (g->pg_w + g->die_w)) | (page << g->die_w) | die;
}
static inline uint32_t ats_ppn_die(const ats_geo_t *g, uint32_t ppn) { return ppn & ((1u << g->die_w) - 1); }
static inline uint32_t ats_ppn_page(const ats_geo_t *g, uint32_t ppn) { return (ppn >> g->die_w) & ((1u << g->pg_w) - 1); }
static inline uint32_t ats_ppn_block(const ats_geo_t *g, uint32_t ppn) { return ppn >> (g->die_w + g->pg_w); }

// ---- checkpoint (persistence.md section 5, version 2): a word stream split over pages
typedef struct {
    uint32_t version;          // 1 (one page, the format step of the core tests) or 2
    uint64_t seq_base;         // the spare seq of its pages: the log replays from here
    uint64_t scan_from;        // <= seq_base: first seq of a transaction open at the checkpoint
    uint32_t ckpt_no;          // counts checkpoints
    uint32_t n_map;
    uint32_t n_bad;
    // tables owned by the caller:
    uint16_t *plan_len;        // [ndie]
    uint16_t *plan;            // [ndie * blocks]: die d's plan at plan[d * blocks ...]
    uint32_t *bad;             // [cap_bad]: (die << 16) | block
    uint32_t cap_bad;
    uint16_t *erase_cnt;       // [ndie * blocks] (version 2)
    uint32_t *map_lpn, *map_ppn;  // [cap_map]
    uint32_t cap_map;
} ats_ckpt_t;
// words of the stream (without page headers) for this checkpoint, and pages it needs
uint32_t ats_ckpt_words(const ats_geo_t *g, const ats_ckpt_t *c);
uint32_t ats_ckpt_pages(const ats_geo_t *g, const ats_ckpt_t *c);
// page `idx` of the checkpoint into out[page_bytes / 4] (version 2 only)
int ats_ckpt_page(const ats_geo_t *g, const ats_ckpt_t *c, uint32_t idx, uint32_t *out);
// parse: `page(i)` returns page i's words (NULL: missing); n_pages from page 0's header
typedef const uint32_t *(*ats_page_fn)(void *ctx, uint32_t idx);
int ats_ckpt_parse(const ats_geo_t *g, ats_ckpt_t *c, ats_page_fn page, void *ctx);

// ---- replay (persistence.md section 4): records of the durable prefix, in seq order
typedef struct {
    uint32_t *l2p;             // [nlba]: the checkpoint's mapping in, the recovered one out
    uint32_t nlba;
    uint32_t ntx;              // txids 1..ntx
    int32_t *next;             // [n]: scratch (pending lists)
    int32_t *head, *tail;      // [ntx + 1]: scratch
    // results
    uint32_t applied, trims, relocs_applied, relocs_stale, commits, aborts, dropped_open;
    uint32_t ignored;          // records with a txid above ntx: changed nothing (persistence.md section 4)
} ats_replay_t;
// recs[0..n) are the prefix from scan_from, sorted by seq without a gap. Records below seq_base
// only build the pending lists of transactions open at the checkpoint (they are in its mapping).
// A record whose txid is above ntx cannot have been written by this device: it keeps its place in
// the prefix and changes nothing (no mapping, no pending list, no commit or abort); counted in
// `ignored`. Returns ATS_OK.
int ats_replay(ats_replay_t *r, const ats_rec_t *recs, uint32_t n, uint64_t seq_base);

// the scan's bounded record list: adds x to recs[0..n) (returns the new n) while n < cap; once full,
// x replaces the record with the highest seq if its own seq is lower, else x is dropped (*dropped
// counts both; recs is a max-heap by seq from the first drop on: keep passing the same *dropped).
// So recs always holds the cap lowest seqs met (copies counted): the durable prefix computed from
// them is the full log's prefix cut at a seq, never one with a hole (persistence.md section 6)
uint32_t ats_log_add(ats_rec_t *recs, uint32_t n, uint32_t cap, const ats_rec_t *x, uint32_t *dropped);

// durable prefix: sort recs by seq (in place), drop duplicates (a re-programmed page), and return
// the length of the run scan_from, scan_from + 1, ... (the rest is after the first gap)
uint32_t ats_prefix(ats_rec_t *recs, uint32_t n, uint64_t scan_from);

// ---- garbage collection victim choice (sw/firmware/README.md "GC")
typedef enum { ATS_GC_GREEDY = 0, ATS_GC_COST_BENEFIT = 1 } ats_gc_policy_t;
// cand[i]: a block that may be collected, valid[i] its valid pages, age[i] time since it was
// last written (any unit). Returns the index of the victim, -1 if none.
int ats_gc_pick(ats_gc_policy_t pol, const uint32_t *valid, const uint32_t *age, uint32_t n, uint32_t ppb);

// ---- wear levelling (sw/firmware/README.md "Wear levelling")
// dynamic: index of the candidate with the lowest erase count (ties: the lowest index), -1 if none
int ats_wl_pick_free(const uint16_t *erase_cnt, uint32_t n);
// dynamic, a plan's erased tail at once: order[0..k-1], k = min(n, m), = the first k candidates'
// indices by ascending erase count (ties: the lower index first), the order k repeated
// ats_wl_pick_free calls would give (one bounded stable insertion sort, O(n * m) at worst)
uint32_t ats_wl_order(const uint16_t *erase_cnt, uint16_t *order, uint32_t n, uint32_t m);
// static: whether the spread (max - min erase count over good blocks) exceeds thresh
int ats_wl_static_due(const uint16_t *erase_cnt, const uint8_t *usable, uint32_t n, uint32_t thresh);
