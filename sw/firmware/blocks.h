// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the block table (README "Block states"), the plan and the free-block supply,
// bad blocks, the per-die census, and the NAND / remap helpers every part uses.
#pragma once
#include "fw.h"

enum { B_FREE = ATS_B_FREE, B_PLAN = ATS_B_PLAN, B_OPEN = ATS_B_OPEN, B_USED = ATS_B_USED, B_BAD = ATS_B_BAD,
       B_CKPT = ATS_B_CKPT };

extern uint8_t blk_state[NBLK];
extern uint8_t blk_retire[NBLK];       // grown bad: relocate its pages, never erase or reuse it
extern uint16_t erase_cnt[NBLK];
extern uint16_t vc_base[NBLK];         // valid pages restored by recovery (hardware counts are deltas)
extern uint32_t blk_age[NBLK];         // checkpoint number when the block was handed out
// the current checkpoint's plan: per die, blocks in hand-out order; plan_pos = next to hand out
extern uint16_t plan[NBLK];
extern uint16_t plan_len[NDIE], plan_pos[NDIE];
// blocks of the plan that the durable checkpoint's plan also holds: supply() hands out no further
extern uint16_t plan_ok[NDIE];
// blocks handed out per die since they became needed, with the next_seq at hand-out
extern uint16_t hl_blk[NDIE][BLOCKS];
extern uint64_t hl_seq[NDIE][BLOCKS];
extern uint16_t hl_len[NDIE];
extern uint32_t bad_list[NBLK];
extern uint32_t n_bad;
extern int supply_ok;                  // the plan is this boot's own (recovery has finished reading the old one)
// per-die census of the block states, recounted only after a change (census_dirty)
extern int census_dirty;               // a block state / retire mark changed since the last count
extern int wl_dirty;                   // an erase count or a bad block changed since wl_step looked
extern uint16_t n_free[NDIE];          // erased blocks not in a plan
extern uint8_t n_retired[NDIE];        // a grown bad block still in use

static inline uint32_t bi(uint32_t d, uint32_t b) { return d * BLOCKS + b; }

// valid pages of block b of die d: the recovered base plus the hardware's count since power-on
uint32_t valid_pages(uint32_t d, uint32_t b);
int nread(uint32_t d, uint32_t b, uint32_t p, fw_rsp_t *r);
int nerase(uint32_t d, uint32_t b);    // ATS_E_NAND: the erase failed
// a remap operation: the PPN it answers (0xFFFFFFFF on an error); *mapped if not NULL
uint32_t remap(uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t *mapped);
void mark_bad(uint32_t d, uint32_t b);
// hand each die asking for a block (BLK_NEED) the next block of its durable plan
void supply(void);
// grown bad blocks reported by the backend: marked retired (GC moves their pages)
void take_bad(void);
// recount n_free / n_retired if census_dirty
void census(void);
// room(): ats_hk_room over the live BLK_NEED
uint32_t room(void);
// erase-count min / max over good blocks
void erase_range(uint32_t *emin, uint32_t *emax);
