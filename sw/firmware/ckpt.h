// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the checkpoint writer (README "Checkpoints"; docs/persistence.md section 5).
#pragma once
#include "fw.h"

extern uint32_t ck_blk;                // block holding the current checkpoint
// the second checkpoint block: the first block of die 0 after block 0 without the factory bad mark
// (block 1 unless it is factory bad; persistence.md section 5), found by format and by recovery
extern uint32_t ck_blk1;
extern uint32_t ckpt_no;
extern uint64_t ck_seq_base, ck_scan_from;
// checkpoint pages (the writer's page image, recovery's pages read) and the mapping lists
extern uint32_t ck_pages[MAX_CK_PAGES][PW];
extern uint32_t map_lpn[NLBA], map_ppn[NLBA];
// the S-Log's fragment lists F (recovered; written as checkpoint version 3's section while not
// empty), the next LPGN, the section's words, and an LPN-indexed scratch mapping (recovery's L2P;
// the checkpoint's bases of F's LPNs)
extern ats_slog_tab_t SL;
extern uint32_t slog_lpgn;
extern uint32_t sl_words[SLOG_WORDS];
extern uint32_t ck_l2p[NLBA];

// hold, drain, note seq and open transactions, release, plan, read the mapping, write the pages to
// the other checkpoint block. The mapping: a LOOKUP of every LPN in the remap engine (ckpt_write),
// or, with the host still out, the list the caller put in map_lpn / map_ppn[0..n_map), ascending
// LPNs (ckpt_write_list): the recovery's recovered mapping, which it loads into the remap engine
// in the same pass; 0 entries for the format's first checkpoint (the remap engine is empty after
// reset). The attach device's 16,384 LOOKUPs were 3.2 M of a format's 7.4 M cycles
int ckpt_write_list(uint32_t n_map);
int ckpt_write(void);
