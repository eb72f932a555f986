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
    ATS_E_TIMEOUT = -9,    // a bounded wait for the hardware ran out (nothing changed; try again later)
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
    uint32_t version;          // 1 (one page, the format step of the core tests), 2, or 3 (2 + the S-Log section)
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
    // version 3 (section 10.4): the S-Log section's words after the mapping pairs (ats_slog_ckpt_put
    // writes them, ats_slog_ckpt_get reads them). The writer writes n_slog words; the parser copies
    // the stream's words after the pairs, up to cap_slog, into slog (n_slog: how many; 0 for 1 and 2)
    uint32_t *slog;
    uint32_t n_slog, cap_slog;
} ats_ckpt_t;
// words of the stream (without page headers) for this checkpoint, and pages it needs
uint32_t ats_ckpt_words(const ats_geo_t *g, const ats_ckpt_t *c);
uint32_t ats_ckpt_pages(const ats_geo_t *g, const ats_ckpt_t *c);
// page `idx` of the checkpoint into out[page_bytes / 4] (version 2, or 3: the header says 3, the
// stream ends with slog[0..n_slog))
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

// section 6 step 2's resume point in a plan block whose page 0 is old (persistence.md section 6
// "Old pages"): old(ctx, p) reads page p and returns 1 when it is old (valid, kind 0 or 1, seq below
// the checkpoint's seq_base), else 0. Binary search between page 0 (old) and ppb (taken as not old):
// probes lo + (hi - lo) / 2 while hi - lo > 1, lo := the probe when it is old, else hi := the probe.
// Returns lo + 1 (1..ppb): the scan reads the block linearly from there. Every page below the result
// other than the probed old ones is not read. Pages of a block are programmed in ascending order and
// nothing below seq_base is programmed after the checkpoint, so a page below an old page is older
// than the checkpoint (whatever the probes found between). *probes (may be 0) gets the reads made.
typedef int (*ats_page_old_fn)(void *ctx, uint32_t page);
uint32_t ats_scan_resume(uint32_t ppb, ats_page_old_fn old, void *ctx, uint32_t *probes);

// durable prefix: sort recs by seq (in place), drop duplicates (a re-programmed page), and return
// the length k of the run scan_from, scan_from + 1, ... (the rest is after the first gap). recs[k..n)
// holds every other record (the duplicates and those after the gap), in no particular order
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

// ---- DiffTx's S-Log (docs/persistence.md section 10, docs/architecture.md section 11.2: the firmware's
// part is the recovery of section 10.5 and the checkpoint's S-Log section). Pure functions over
// caller-provided tables; no device of this version writes S-Log pages (the hook: README "S-Log").
#define ATS_F_SLOG 0x20u
#define ATS_SLOG_MAGIC 0x474F4C53u   // "SLOG"
#define ATS_SLOG_NO_FIRST 0xFFFFu
#define ATS_SLOG_PG_HDR 16u
#define ATS_SLOG_MAX_CF 8u

// a scanned, valid, well-formed log page (spare kind 1, flags = SLOG, epoch = its LPGN)
typedef struct {
    uint64_t seq;
    uint32_t ppn, lpgn;
    uint16_t first, used;
    const uint8_t *data;       // page_bytes bytes
} ats_lpage_t;
// section 10.1's well-formedness of a log page's data whose spare epoch is `epoch`: ATS_OK and its
// `first` / `used`, or ATS_E_FORMAT (recovery ignores the page)
int ats_slog_page(const uint8_t *data, uint32_t page_bytes, uint32_t epoch, uint16_t *first, uint16_t *used);
// the log pages kept, by LPGN (NULL: none)
typedef const ats_lpage_t *(*ats_lpage_fn)(void *ctx, uint32_t lpgn);

// a record that parses (section 10.2 "The record parses")
typedef struct {
    uint64_t first_seq, commit_seq;   // its first log page's seq; the commit point (its last one's)
    uint32_t first_lpgn, first_byte;  // where it starts
    uint32_t nbytes, txid, txlen, reclen, ncf, hlen;
    uint32_t cf_txid[ATS_SLOG_MAX_CF], cf_reclen[ATS_SLOG_MAX_CF], cf_lpgn[ATS_SLOG_MAX_CF];
} ats_slog_rec_t;
typedef struct {
    uint32_t lpn, ppn, dloc;   // m0, m1 (full: the tx's page; diff: the base), m3 DATA-LOC
    uint16_t off, len;         // m2 fields
    uint8_t ver, is_diff, pad[2];
} ats_mpu_t;
// the record at byte b of log page lpgn: ATS_OK (*r filled), ATS_E_NAND when one of the log pages it
// needs is not kept (torn or not programmed at a cut), ATS_E_FORMAT when it does not parse (the checks
// in section 10.2's order: header, REC-LEN against bytes, its pages, flags, META-PUs); ATS_E_RANGE when
// b is not a 4-aligned byte in 16 .. page_bytes - 1 (a page's `first` always is)
int ats_slog_parse(uint32_t page_bytes, ats_lpage_fn pg, void *ctx, uint32_t lpgn, uint32_t b, ats_slog_rec_t *r);
// META-PU i of a parsed record; for a diff also where its bytes are (*dppn: the log page's PPN,
// *doff: the byte in it), else both 0
int ats_slog_mpu(uint32_t page_bytes, ats_lpage_fn pg, void *ctx, const ats_slog_rec_t *r, uint32_t i,
                 ats_mpu_t *m, uint32_t *dppn, uint32_t *doff);
// every record that parses and starts in one of the kept log pages lpgns[0..n) (ascending): at each
// page's `first` and after each record ending inside a page before its `used` (section 10.1).
// out_lpgn/out_b[0..) their starts; *nbad counts starts that do not parse, *npartial those missing a
// page. Returns the count, or ATS_E_FULL past cap.
int ats_slog_find(uint32_t page_bytes, ats_lpage_fn pg, void *ctx, const uint32_t *lpgns, uint32_t n,
                  uint32_t *out_lpgn, uint32_t *out_b, uint32_t cap, uint32_t *nbad, uint32_t *npartial);

// the fragment lists F (architecture.md section 11.1): up to `cap` LPNs with F != [], each up to
// `frags` fragments in commit order. Entries are unordered (a cleared one takes the last one's place).
typedef struct {
    uint64_t seq;              // its record's commit point
    uint32_t ppn;              // the log page holding its bytes; ATS_UNMAPPED: not known (section 10.4's
                               // unknown-page fragment: reads MEDIA_ERROR on the device)
    uint32_t lpgn;             // with ppn ATS_UNMAPPED: its log page's LPGN (the SLOAD INSERT's); else 0
    uint16_t doff, off, len, pad;
} ats_frag_t;

// the 32-bit LPGN with low `w` bits `low` just below ref (the next LPGN): in [ref - 2^w, ref - 1];
// exact for a page at most 2^w LPGNs older than ref (the backend's rop 4 gives PPN_W bits; section
// 10.4's unknown-page fragment keeps 16)
uint32_t ats_sl_ext_back(uint32_t low, uint32_t ref, uint32_t w);
typedef struct {
    uint32_t cap, frags, n;
    uint32_t *lpn;             // [cap]
    uint8_t *nf;               // [cap]
    ats_frag_t *f;             // [cap * frags]: entry e's list at f[e * frags ...]
} ats_slog_tab_t;
int ats_slog_lookup(const ats_slog_tab_t *t, uint32_t lpn);          // entry index, -1 if F[lpn] = []
uint32_t ats_slog_count(const ats_slog_tab_t *t, uint32_t lpn);      // |F[lpn]|
void ats_slog_clear(ats_slog_tab_t *t, uint32_t lpn);                // F[lpn] := [] (full write, TRIM, COMMIT)
int ats_slog_append(ats_slog_tab_t *t, uint32_t lpn, const ats_frag_t *f);   // ATS_E_FULL when no room
// a MERGE page (section 10.3) of lpn at new_ppn, epoch base_ppn, its seq: 1 applied, 0 stale
int ats_slog_merge(ats_slog_tab_t *t, uint32_t *l2p, uint32_t nlba, uint32_t lpn, uint32_t base_ppn,
                   uint32_t new_ppn, uint64_t seq);
// what lpn reads: its base (read(ctx, ppn) -> the page's data) with F applied in order into out
// [page_bytes]. ATS_E_RANGE: lpn >= nlba or unmapped (nothing read); ATS_E_STATE: unmapped with fragments
typedef const uint8_t *(*ats_read_fn)(void *ctx, uint32_t ppn);
int ats_slog_read(const ats_slog_tab_t *t, const uint32_t *l2p, uint32_t nlba, uint32_t lpn,
                  ats_read_fn read, void *ctx, uint8_t *out, uint32_t page_bytes);
// apply a parsed record: META-PUs in order (full: L2P := m1, F := [] unless fulls = 0, the prefix's
// case where the pending list maps them; diff: appended with the record's commit point). ATS_E_RANGE,
// nothing changed, when a META-PU names an LPN >= nlba; ATS_E_FULL: F's table is full (a correct
// device never exceeds SLOG_LPNS x SLOG_FRAGS; the lists up to then are changed)
int ats_slog_apply(ats_slog_tab_t *t, uint32_t *l2p, uint32_t nlba, uint32_t page_bytes, ats_lpage_fn pg,
                   void *ctx, const ats_slog_rec_t *r, int fulls);
// the scanned page at a PPN (NULL: not kept)
typedef const ats_rec_t *(*ats_ppn_fn)(void *ctx, uint32_t ppn);
// section 10.5 step 3: is the parsed record R, after the gap, complete on the state (l2p, t)? Full
// pages: each full META-PU's m1 kept, kind 0, txid t, lpn m0, no COMMIT / ABORT, seq < R's first log
// page's; skipped when use_flags and flags[0..nflags) (3 words each: txid, reclen, first LPGN, from
// every record that parses) hold R's key (*skipped := 1). Bases: (L2P, |F|) = (m1, ver - 1) per diff,
// counting R's own earlier META-PUs. A META-PU naming an LPN >= nlba: not complete. Returns 1
// complete, 0 not, < 0 an error (a page of R missing: R was not parsed from these pages).
int ats_slog_complete(const ats_slog_tab_t *t, const uint32_t *l2p, uint32_t nlba, uint32_t page_bytes,
                      ats_lpage_fn pg, void *ctx, const ats_slog_rec_t *r, ats_ppn_fn at, void *actx,
                      const uint32_t *flags, uint32_t nflags, int use_flags, int *skipped);
// section 10.5 step 4's hardware loads (rtl/backend/README.md, firmware port op 7 SLOAD), in order:
// rop 0 the next LPGN; rop 1 (LPGN, PPN) for each log page F names, by ascending LPGN (each once);
// rop 2 each fragment, entries in table order, each LPN's list in commit order (LPGN, seq = len |
// off << 12 | doff << 32). lpgn_of(ctx, ppn) gives a page's LPGN (< 0: an error, returned as is);
// load(ctx, rop, lpn, ppn, epoch, seq) issues one and returns ATS_OK or < 0: the first failure is
// returned, nothing after it issued. ppns (the hardware's LPGN -> PPN entries, a power of two; 0: no
// check): of live pages whose LPGNs are equal mod ppns (one entry) only the newest is loaded (rop 1);
// the others' fragments are still loaded (rop 2) and read MEDIA_ERROR. Returns the count of pages not
// loaded so (>= 0), or the error. scratch [2 x cap]: cap >= the distinct pages of F (else ATS_E_FULL
// before any load). *npages: pages loaded. A fragment with ppn ATS_UNMAPPED (section 10.4's unknown
// page) names no page: INSERTed with its lpgn, it reads MEDIA_ERROR
typedef int (*ats_lpgn_fn)(void *ctx, uint32_t ppn, uint32_t *lpgn);
typedef int (*ats_sload_fn)(void *ctx, uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t epoch, uint64_t seq);
int ats_slog_hw_load(const ats_slog_tab_t *t, uint32_t next_lpgn, ats_lpgn_fn lpgn_of, void *lctx,
                     ats_sload_fn load, void *sctx, uint32_t ppns, uint32_t *scratch, uint32_t cap,
                     uint32_t *npages);
// checkpoint version 3's S-Log section (section 10.4): slog_lpgn, nsl, then per entry lpn, base_ppn
// (= l2p[lpn]), nf, nf x {ppn, off | len << 16, doff | lg16 << 16}, nf x {seq lo, seq hi}; a fragment
// whose log page is not known: ppn 0xFFFFFFFF and lg16 = its LPGN's low 16 bits (else lg16 = 0); the
// reader extends lg16 to the newest LPGN below slog_lpgn (ats_sl_ext_back(lg16, slog_lpgn, 16)).
// The writer returns ATS_E_RANGE for an unknown-page fragment not within 2^16 LPGNs below slog_lpgn
uint32_t ats_slog_ckpt_words(const ats_slog_tab_t *t);
int ats_slog_ckpt_put(const ats_slog_tab_t *t, const uint32_t *l2p, uint32_t nlba, uint32_t slog_lpgn,
                      uint32_t *out, uint32_t cap);                   // words written, or ATS_E_FULL
// reads the section at w[0..n) into an empty t (step 1: l2p[lpn] := base_ppn, F[lpn] := its list):
// words used, or ATS_E_FORMAT (short, nf 0, an LPN twice or >= nlba, bits 31:16 of the data-offset
// word nonzero with a PPN other than 0xFFFFFFFF), ATS_E_FULL
int ats_slog_ckpt_get(ats_slog_tab_t *t, uint32_t *l2p, uint32_t nlba, const uint32_t *w, uint32_t n,
                      uint32_t *slog_lpgn);
// section 10.5 step 2 (the durable prefix): ats_replay's rules (same arguments and results; ats_replay
// is this function with s = NULL: no commit point, no F, a MERGE page read as a RELOC page) plus the
// S-Log's: a data page without txid and without RELOC, a TRIM and each page a COMMIT applies also set
// F[lpn] := []; a MERGE page (kind 0, txid 0, RELOC | SLOG) is ats_slog_merge; a log page that is
// the commit point of parsed records (commit(cctx, seq, i) returns the i-th of them in stream order,
// i = 0, 1, ...: records packed into one page share it; NULL: no more) commits each record's txid t
// in that order as a COMMIT (its pending pages in seq order) then appends its fragments
// (ats_slog_apply, fulls = 0); a record whose txid is above ntx changes nothing (counted in
// `ignored`); below seq_base such a commit point only empties t's pending list. With no log page of a record and no MERGE page in
// recs it gives what ats_replay gives. Returns ATS_OK or ats_slog_apply's error.
typedef const ats_slog_rec_t *(*ats_commit_fn)(void *ctx, uint64_t seq, uint32_t i);
typedef struct {
    ats_slog_tab_t *tab;       // F: the checkpoint's section in, the recovered lists out
    ats_commit_fn commit;
    void *cctx;
    ats_lpage_fn pg;           // the log pages (for the records' META-PUs)
    void *pctx;
    uint32_t page_bytes;
    uint32_t slog_commits, merges, merges_stale;   // results
} ats_slog_replay_t;
int ats_slog_replay(ats_replay_t *r, ats_slog_replay_t *s, const ats_rec_t *recs, uint32_t n, uint64_t seq_base);
