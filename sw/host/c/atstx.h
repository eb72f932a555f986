/* SPDX-License-Identifier: Apache-2.0
 * libatstx: the transactional host API of atomssd in C.
 *
 * The library speaks the NVMe commands of docs/host-interface.md §1: the standard Flush (0x00),
 * Write (0x01, FUA), Read (0x02) and Dataset Management (0x09, deallocate), and atomssd's vendor
 * I/O commands TX Write (0x81), TX Read (0x82), TX Begin (0x84), TX Commit (0x88), Range Flush
 * (0x89) and TX Abort (0x8C) with their TXID / COMMIT / BARRIER fields in CDW13 (§1.5), and the
 * admin Set / Get Features (0x09 / 0x0A) of the device's settings, FIDs 0xC0 … 0xFF (§1.6).
 *
 * Three ways to reach a device, the same SQEs for all (ats_open() picks one by address):
 *   ats_open_sim()  the full-system simulation's host port (docs/host-port.md, "NVMe build"): the
 *                   library is the host's NVMe driver (controller enable, Identify, one I/O queue
 *                   pair, PRPs, completions) in the simulator's host memory, over its Unix socket;
 *   ats_open_nvme() a Linux NVMe namespace (/dev/nvmeXnY or /dev/ngXnY) through the kernel's
 *                   passthrough ioctls (an atomssd board behind the in-kernel driver);
 *   ats_open_udp()  a board over the UDP host link (docs/host-port.md "UDP host link"): each SQE
 *                   becomes the §1 descriptor(s) the NVMe front end would make of it.
 * One handle runs one command at a time (queue depth 1); a handle is not thread safe, and the
 * library keeps no state outside its handles.
 *
 * Status convention: every function that returns int returns
 *   0    success (ATS_OK);
 *   > 0  the device's NVMe status from the completion, (SCT << 8) | SC (host-interface.md §1.8;
 *        the atomssd statuses BAD_TXID, TX_FULL, INDEX_FULL, TX_EMPTY, TABLE_FULL are SCT 7,
 *        "vendor specific"): ATS_SC_* below. One status is the library's own: ats_tx_begin
 *        returns ATS_SC_TABLE_FULL, as the device would, when this handle holds every txid;
 *   < 0  a host-side failure, nothing to do with the device's answer: a negative errno
 *          -EINVAL     a bad argument: refused before anything is sent;
 *          -E2BIG      a transaction's page limit (tx_entries), checked before sending;
 *          -ETIMEDOUT  no completion within the command's cycle budget (UDP: its retries);
 *          -EPROTO     a completion or message that breaks the protocol;
 *          -EIO        the controller reported a fatal status, or the handle failed earlier (after
 *                      a timeout or a protocol error it accepts no more commands);
 *          ATS_E_LINK_ERR(code)  the UDP link's device refused a packet (ERROR code; below);
 *          others      the socket's or the ioctl's own errno;
 *        or ATS_E_POWER_CUT: the simulated power was cut, the device is gone until the simulator
 *        is restarted on its die images.
 * ats_strerror() names every status.
 */
#ifndef ATSTX_H
#define ATSTX_H

#include <stddef.h>
#include <stdint.h>

#include "ats_host.h"                /* generated: ATS_STS_* (build/gen/include, tools/contract.py) */
#include "ats_nvme_sc.h"             /* generated: ATS_NVME_SC_* (rtl/nvme/ats_nvme_pkg.sv, tools/contract.py) */

#ifdef __cplusplus
extern "C" {
#endif

#define ATS_OK 0
#define ATS_E_POWER_CUT (-10000)    /* outside the errno range */
#define ATS_E_NOT_ATOMIC (-10001)   /* ats_atomic_write: longer than the atomic unit or across a boundary
                                     * (Identify NAWUPF / NABSPF): nothing sent, never split */

/* NVMe statuses, (SCT << 8) | SC, host-interface.md §1.8 */
#define ATS_SC_INVALID_OPCODE 0x0001 /* Invalid Command Opcode (device BAD_OP) */
#define ATS_SC_INVALID_FIELD  0x0002 /* Invalid Field in Command (BAD_FIELD, reserved CDW13 bits, MDTS) */
#define ATS_SC_DATA_XFER      0x0004 /* Data Transfer Error (a DMA failed) */
#define ATS_SC_INTERNAL       0x0006 /* Internal Error (other device codes) */
#define ATS_SC_INVALID_NS     0x000B /* Invalid Namespace or Format */
#define ATS_SC_CMD_SEQ        0x000C /* Command Sequence Error */
#define ATS_SC_PRP_OFFSET     0x0013 /* PRP Offset Invalid */
#define ATS_SC_LBA_RANGE      0x0080 /* LBA Out of Range (BAD_LBA) */
#define ATS_SC_CAP_EXCEEDED   0x0081 /* Capacity Exceeded (NO_SPACE: the device cannot write any more) */
#define ATS_SC_WRITE_FAULT    0x0280 /* Write Fault (PROGRAM_FAIL) */
#define ATS_SC_READ_ERROR     0x0281 /* Unrecovered Read Error (MEDIA_ERROR) */
/* the device's transaction statuses: Vendor Specific (SCT 7), SC = the device status code */
#define ATS_SC_VENDOR(sts)    (0x0700 | (int)(sts))
#define ATS_SC_BAD_TXID       ATS_SC_VENDOR(ATS_STS_BAD_TXID)   /* txid out of range, or 0 where one is needed */
#define ATS_SC_TX_FULL        ATS_SC_VENDOR(ATS_STS_TX_FULL)    /* the transaction holds its maximum of entries */
#define ATS_SC_INDEX_FULL     ATS_SC_VENDOR(ATS_STS_INDEX_FULL) /* the remap engine's index bucket is full */
#define ATS_SC_TX_EMPTY       ATS_SC_VENDOR(ATS_STS_TX_EMPTY)   /* commit of a transaction with no writes */
#define ATS_SC_TABLE_FULL     ATS_SC_VENDOR(ATS_STS_TABLE_FULL) /* no free transaction (ats_tx_begin) */
/* SWRITE's range-list statuses (host-interface.md §1.11; SCT 7, the front end's own codes) */
#define ATS_SC_SW_NONE        ((int)ATS_NVME_SC_SW_NONE)      /* no range */
#define ATS_SC_SW_MANY        ((int)ATS_NVME_SC_SW_MANY)      /* more ranges than static_ranges */
#define ATS_SC_SW_PAGES       ((int)ATS_NVME_SC_SW_PAGES)     /* more LBAs than static_pages */
#define ATS_SC_SW_EMPTY       ((int)ATS_NVME_SC_SW_EMPTY)     /* a range of 0 LBAs */
#define ATS_SC_SW_LENGTH      ((int)ATS_NVME_SC_SW_LENGTH)    /* the ranges' lengths differ from the data's */
#define ATS_SC_SW_OVERLAP     ((int)ATS_NVME_SC_SW_OVERLAP)   /* two ranges share an LBA */

/* ats_write flags */
#define ATS_FUA     (1u << 0)       /* Force Unit Access: durable when the call returns */
#define ATS_BARRIER (1u << 1)       /* closes the epoch: sent as TX Write with TXID 0 + BARRIER */

/* ats_sim_arm_cut kinds (docs/host-port.md CUT_ARM) */
#define ATS_CUT_NONE       0u       /* disarm */
#define ATS_CUT_AT_CYCLE   1u       /* at simulated cycle `value` (at once when already past) */
#define ATS_CUT_AT_ACCEPT  2u       /* when the device core accepts its `value`-th descriptor */
#define ATS_CUT_AT_CPL     3u       /* at the core's `value`-th completion */

typedef struct ats_dev ats_dev;     /* an open device */
typedef struct ats_tx ats_tx;       /* an open transaction of a device */

struct ats_info {
    uint32_t lba_bytes;             /* LBA size (= the device page), Identify Namespace LBADS */
    uint64_t num_lbas;              /* namespace size in LBAs (NSZE) */
    uint32_t num_tx;                /* txids 1 … num_tx (IDENTIFY word 9, at most 63) */
    uint32_t tx_entries;            /* entries (pages) a transaction holds (IDENTIFY word 10) */
    uint32_t max_transfer;          /* bytes one command moves (MDTS, at most 64 KiB) */
    uint32_t atomic_blocks;         /* LBAs a Write makes all or nothing across power loss: NAWUPF + 1 when
                                     * Identify Namespace NSFEAT bit 1 is set and NABO = 0, else 1
                                     * (host-interface.md §1.10); at most max_transfer / lba_bytes */
    uint32_t atomic_boundary;       /* NABSPF + 1 LBAs: an atomic write must not cross a multiple of it
                                     * (0: no boundary) */
    uint32_t static_ranges;         /* ranges an SWRITE carries at most (Identify byte 3136; 0: no SWRITE) */
    uint32_t static_pages;          /* LBAs an SWRITE carries at most (bytes 3138-3139) */
};

struct ats_range {
    uint64_t lba;                   /* first LBA (< 2^48 for Range Flush) */
    uint32_t nlb;                   /* LBAs, 1 … 65536 */
};

/* ---- devices */

/* Connects to the simulator listening on `socket_path` (+port=; retries for 30 s while it starts),
 * runs it until the firmware accepts commands (boot or power-loss recovery), then brings the NVMe
 * controller up: CC.EN with the admin queues, Identify Controller (MDTS; the atomssd words in
 * bytes 3072…3135: num_tx, tx_entries) and Namespace 1 (LBA size, NSZE), Set Features Number of
 * Queues, one I/O CQ + SQ. -ENODEV when the device is not an atomssd (no vendor magic). */
int ats_open_sim(const char *socket_path, ats_dev **out);

/* Opens a Linux NVMe namespace (/dev/nvmeXnY or the generic /dev/ngXnY) and reads its Identify
 * data with NVME_IOCTL_ADMIN_CMD; commands go through NVME_IOCTL_IO_CMD, the device settings'
 * Set / Get Features through NVME_IOCTL_ADMIN_CMD (both need CAP_SYS_ADMIN).
 * The kernel owns the queues, the PRPs and the controller's state. */
int ats_open_nvme(const char *path, ats_dev **out);

/* Opens a device by address (what the programs' --addr takes):
 *   udp:HOST[:PORT][,key=value…]   a board over the UDP host link (ats_open_udp; HOST an IPv4
 *                                  address or name, PORT 16724 by default; keys: nslot, slot_bytes,
 *                                  timeout_ms, max_timeout_ms, retries, seq0, local_port as in
 *                                  struct ats_udp_opts), e.g. "udp:192.168.1.50" or
 *                                  "udp:192.168.1.50:16724,slot_bytes=4096,timeout_ms=50"
 *   nvme:PATH, or a path under /dev/ a Linux NVMe namespace (ats_open_nvme)
 *   sim:PATH, or any other path     the simulator's host socket (ats_open_sim)
 * -EINVAL for a malformed address (nothing opened). */
int ats_open(const char *addr, ats_dev **out);

/* ---- the UDP host link (docs/host-port.md "UDP host link"; atstx_udp.c)
 * The calls of this header over the link: Read, Write (FUA, BARRIER), TX Begin / Write (COMMIT) /
 * Read / Commit / Abort, Flush, Range Flush, trim, the device settings (FEATURE), as the §1
 * descriptors the NVMe front end would make of them, the core's status as its NVMe status
 * (host-interface.md §1.8). One command at a time; max_transfer = slot_bytes (rounded down to LBAs); no SWRITE (static_ranges = 0: -ENOTSUP),
 * no atomic-write unit (atomic_blocks = 1), no power-cut calls (-ENOTSUP).
 * Host-side statuses of the link: -ETIMEDOUT when a command has no answer after max_retries
 * retries (the handle is failed: -EIO for every later call; the command may or may not have
 * executed), ATS_E_LINK_ERR(code) when the device refused a packet with ERROR `code`
 * (3 BAD_LEN, 4 BAD_SLOT, 5 BAD_FIELD: nothing of the command reached the core; the handle stays
 * usable). Opening sends IDENTIFY: -ENODEV without atomssd's magic, -EPROTO for a geometry the
 * slots cannot carry, -EHOSTUNREACH for a host name that does not resolve. */
#define ATS_UDP_PORT 16724u
#define ATS_E_LINK_BASE (-10100)
#define ATS_E_LINK_ERR(code) (ATS_E_LINK_BASE - (int)(code))   /* -10101 … -10107 (-10355: code 0) */

struct ats_udp_opts {               /* 0 in a field: its default */
    uint16_t port;                  /* the device's UDP port (16724) */
    uint16_t local_port;            /* the host's (0: any) */
    uint32_t nslot;                 /* the bitstream's NSLOT (4); commands take them round robin */
    uint32_t slot_bytes;            /* the bitstream's SLOT_BYTES, a multiple of 1024 up to 32768 (4096,
                                     * the ECPIX-5's): a command's data at most */
    uint32_t timeout_ms;            /* the first wait for an answer (20), doubled per retry ... */
    uint32_t max_timeout_ms;        /* ... up to this (1000) */
    uint32_t max_retries;           /* retries of one command before -ETIMEDOUT (30: about 25 s) */
    uint32_t seq0;                  /* the first sequence number when have_seq0 (else a random one) */
    int have_seq0;
};

/* a §1 descriptor as the link carries it (docs/host-port.md SUBMIT) */
struct ats_udp_desc {
    uint8_t op, txid, flags, attr, prio;
    uint8_t aux_buf;                /* aux is an offset into the slot's buffer (RFLUSH's list) */
    uint16_t nlb;                   /* 0-based */
    uint64_t lba;                   /* 48 bits */
    uint32_t aux;
};

struct ats_udp_stats {
    uint64_t cmds;                  /* descriptors sent (new sequence numbers; resyncs not counted) */
    uint64_t sent, received;        /* packets */
    uint64_t retries;               /* timeouts answered by a SUBMIT again */
    uint64_t ignored;               /* packets of other commands, duplicates, malformed */
    uint64_t stale, busy, resync;   /* ERROR STALE of own DATA; ERROR BUSY; STALE SUBMITs renumbered */
    uint64_t resent_chunks;         /* DATA chunks sent again after STATE loading */
    uint64_t link_errors, timeouts;
    uint32_t last_slot, last_seq;   /* of the last descriptor */
};

int ats_open_udp(const char *host, const struct ats_udp_opts *opts, ats_dev **out);
/* the part of an address after "udp:" */
int ats_open_udp_addr(const char *spec, ats_dev **out);
int ats_is_udp(const ats_dev *dev);
/* One raw descriptor over the link (a test's or a tool's: IDENTIFY, GET_LOG, any opcode): `wlen`
 * bytes of write data, `rlen` bytes of read data back (multiples of 4, at most slot_bytes).
 * Returns the core's §2 status as it is (not its NVMe form) or a host-side status; *result = the
 * completion's result. -ENOTSUP on another transport. */
int ats_udp_cmd(ats_dev *dev, const struct ats_udp_desc *d, const void *wdata, uint32_t wlen, void *rdata,
                uint32_t rlen, uint32_t *result);
/* §2 device status -> NVMe status (host-interface.md §1.8) */
int ats_udp_nvme_status(int sts);
int ats_udp_stats(const ats_dev *dev, struct ats_udp_stats *out);

/* Aborts the transactions still open (TX Abort; their ats_tx handles are freed and must not be
 * used again), then on the simulator: a normal shutdown (CC.SHN = 01, wait for CSTS.SHST = 2:
 * every acknowledged write durable) and QUIT (the simulator powers off, saving its die images).
 * Returns 0 after that clean shutdown; after a power cut it only closes (ATS_E_POWER_CUT), after a
 * failure too (-EIO). Frees `dev` whatever it returns. */
int ats_close(ats_dev *dev);

int ats_info(const ats_dev *dev, struct ats_info *info);

/* A constant string naming `status` (any value the API returns). */
const char *ats_strerror(int status);

/* ---- plain I/O: `nlb` LBAs (1 … max_transfer / lba_bytes) from `lba`, one NVMe command a call
 * (never split: a larger request is -EINVAL). Plain reads see committed data only (INV-ISO). */
int ats_read(ats_dev *dev, uint64_t lba, uint32_t nlb, void *buf);
/* flags: 0, ATS_FUA, ATS_BARRIER or both */
int ats_write(ats_dev *dev, uint64_t lba, uint32_t nlb, const void *buf, unsigned flags);
/* Atomic write (NVMe's standard atomic write, host-interface.md §1.10): one Write of `nlb` LBAs that
 * is all or nothing across power loss (after a cut every LBA reads this write's data or none
 * does) and durable when it returns OK. nlb ≤ atomic_blocks and [lba, lba + nlb) inside one
 * atomic_boundary; otherwise ATS_E_NOT_ATOMIC and nothing is sent (the library never splits it).
 * flags: 0 or ATS_FUA. Device statuses as ats_write (ATS_SC_INDEX_FULL, ATS_SC_CAP_EXCEEDED: nothing
 * of it written, also after later atomic writes: the device aborts its leftovers first,
 * host-interface.md §1.10; ATS_SC_DATA_XFER: all or nothing, but either). */
int ats_atomic_write(ats_dev *dev, uint64_t lba, uint32_t nlb, const void *buf, unsigned flags);
/* Static transaction (SWRITE, host-interface.md §1.11): the `n` ranges, each written with its data,
 * applied all or nothing across power loss, durable and visible as a whole when it returns OK,
 * independent of the handle's txids. `buf` holds every range's data concatenated in list order
 * (range 0's LBAs first). The library checks the list as the device does, in the device's order,
 * and returns the device's status without sending anything: n = 0 ATS_SC_SW_NONE, n > static_ranges
 * ATS_SC_SW_MANY, more than static_pages LBAs ATS_SC_SW_PAGES, a range of 0 LBAs ATS_SC_SW_EMPTY, a
 * range past the namespace ATS_SC_LBA_RANGE, two ranges sharing an LBA ATS_SC_SW_OVERLAP;
 * -ENOTSUP when the device has no SWRITE (static_ranges = 0) or the transport cannot place a range
 * list in host memory (Linux passthrough: the ioctl maps one data buffer); -EINVAL for NULL
 * arguments. Other device statuses as a write's (nothing of it is visible after one; ATS_SC_DATA_XFER,
 * host memory failed: all or nothing, but either, §1.11). */
int ats_static_tx(ats_dev *dev, const struct ats_range *ranges, unsigned n, const void *buf);
/* Flush: every write completed before it is durable when it returns */
int ats_flush(ats_dev *dev);
/* Range Flush of 1 … 8 ranges: the writes to these LBAs completed before it are durable */
int ats_rflush(ats_dev *dev, const struct ats_range *ranges, unsigned n);
/* Dataset Management with AD (deallocate) of 1 … 8 ranges: the LBAs read as zeros */
int ats_trim(ats_dev *dev, const struct ats_range *ranges, unsigned n);

/* ---- transactions
 * A transaction's writes are invisible to plain reads until its commit returns OK; then all of
 * them are visible and durable; after a power cut before that, none is (INV-ATOM).
 *
 * ats_tx_begin takes the lowest txid (1 … num_tx) that no transaction of this handle holds and
 * sends TX Begin; ATS_SC_TABLE_FULL when all are held (nothing sent). The device does not know
 * who owns a txid: two handles (processes) on one device must not share txids. Pages left in a
 * txid by a process that died before its commit or abort stay there until a power cycle (recovery
 * drops them) or a TX Abort of that txid; meanwhile the device answers TX Begin of that txid with
 * TABLE_FULL (returned as ATS_SC_TABLE_FULL), so no next transaction commits them.
 * (On the simulator every open follows a power-on.)
 *
 * The library counts the distinct LBAs a transaction wrote and refuses, before sending it, a write
 * that would take it past tx_entries (-E2BIG, the transaction still open and intact: the caller
 * may commit it and go on in a new one). The device counts entries, not LBAs (a page rewritten
 * after it left the write buffer takes a second entry), so a commit may still end with TX_FULL.
 *
 * The device locks no LBA: a plain write or TRIM of an LBA a transaction wrote changes the
 * committed data, the transaction still reads its own version, and its commit replaces the plain
 * one (rtl/wbuf/README.md "Transactions"); do not let two transactions write one LBA.
 *
 * Ending a transaction: ats_tx_commit, ats_tx_commit_write (once sent) and ats_tx_abort free the
 * handle whatever they return. A commit that returns ATS_SC_TX_FULL or ATS_SC_INDEX_FULL means the
 * device aborted the transaction (nothing of it is visible). If a TX Write itself completes with
 * TX_FULL / INDEX_FULL, the device has ended the transaction: the library sends TX Abort, and the
 * handle then answers every call with that status until it is committed (returns that status)
 * or aborted (returns 0). */
int ats_tx_begin(ats_dev *dev, ats_tx **tx);
uint32_t ats_tx_id(const ats_tx *tx);                 /* the txid (0 for NULL) */
int ats_tx_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf);
/* TX Read: the transaction's own latest writes first, committed data for the rest */
int ats_tx_read(ats_tx *tx, uint64_t lba, uint32_t nlb, void *buf);
/* TX Commit (the device writes a commit record); returns when the transaction is durable and
 * visible. *entries (may be NULL) = the distinct LBAs the transaction committed, counted by the
 * library (the CQE's DW0 is the device's count of entries applied: at least that, more if a page
 * was rewritten after it left the write buffer); 0 unless it returns 0. An empty
 * transaction gives ATS_SC_TX_EMPTY. */
int ats_tx_commit(ats_tx *tx, uint32_t *entries);
/* The transaction's last write carries COMMIT (TxSSD's commit block: no record page); it commits
 * the transaction as ats_tx_commit does. -EINVAL and -E2BIG are refusals before sending: the
 * transaction stays open; after any other return it has ended and the handle is freed. */
int ats_tx_commit_write(ats_tx *tx, uint64_t lba, uint32_t nlb, const void *buf);
/* TX Abort: nothing of the transaction remains. An abort of a transaction that wrote nothing
 * returns 0 (the device's TX_EMPTY is no failure here). */
int ats_tx_abort(ats_tx *tx);

/* ---- device settings (docs/architecture.md §1.2 FEATURE; NVMe Set / Get Features of the vendor
 * FIDs 0xC0 … 0xFF, docs/host-interface.md §1.6)
 * A setting is the device's, volatile: it holds until the device's power-off or reset (not a
 * controller reset), then is back at the build's default; nothing on the media changes with it.
 * Every transport carries them: the simulator and Linux passthrough as admin Set Features (CDW10 =
 * FID, Save 0; CDW11 = the value) / Get Features (CDW10 = FID, SEL 0: current), NSID 0, DW0 of the
 * CQE the value; the UDP link as one §1 FEATURE descriptor (op 11, lba = FID, nlb 1 set / 0 get,
 * aux = the value), its status in NVMe form. Statuses: 0, *value / *now = the setting's value after
 * the command; ATS_SC_INVALID_FIELD (the device's BAD_FIELD, nothing changed) for a FID the device
 * does not have, a value out of the setting's range, or a setting this build lacks; -EINVAL for a
 * FID outside 0xC0 … 0xFF or a NULL argument (nothing sent); otherwise a transport's statuses as for
 * any command (Linux: admin commands need CAP_SYS_ADMIN). The out-parameter is 0 unless it returns 0. */
#define ATS_FID_DEV_FIRST 0xC0u     /* the device's settings: FIDs 0xC0 … 0xFF (ATS_FEAT_* of ats_host.h) */
#define ATS_FID_DEV_LAST  0xFFu
#define ATS_SEAL_TIME_MAX 65535u    /* SEAL_TIME's range: 0 … 65,535 clock cycles */
/* Get Features `fid`: *value = its current value */
int ats_get_feature(ats_dev *dev, uint32_t fid, uint32_t *value);
/* Set Features `fid` to `value`: *now (may be NULL) = its value after the command (the one taken) */
int ats_set_feature(ats_dev *dev, uint32_t fid, uint32_t value, uint32_t *now);
/* FID 0xC0 SEAL_TIME (ATS_FEAT_SEAL_TIME): the clock cycles the S-Log's open log page waits for the
 * next record before it is sealed (0 … ATS_SEAL_TIME_MAX; 0: sealed as soon as no record waits; a
 * set applies to a wait under way). Only builds with an open log page have it (the packing
 * configurations, `*_slogpk*`); elsewhere ATS_SC_INVALID_FIELD. A value above 65,535 is sent and
 * refused by the device (ATS_SC_INVALID_FIELD, the setting unchanged). */
int ats_get_seal_time(ats_dev *dev, uint32_t *cycles);
int ats_set_seal_time(ats_dev *dev, uint32_t cycles, uint32_t *now);

/* ---- simulation only (-ENOTSUP on other devices) */
/* Arms one power cut (ATS_CUT_*): at that point the NAND supply drops, the run stops, and every
 * later call returns ATS_E_POWER_CUT. */
int ats_sim_arm_cut(ats_dev *dev, uint32_t kind, uint64_t value);
/* The simulated cycle (100 MHz clock) where the simulation stands now. */
int ats_sim_cycle(ats_dev *dev, uint64_t *cycle);

#ifdef __cplusplus
}
#endif
#endif
