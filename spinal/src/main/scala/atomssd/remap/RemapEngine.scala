// SPDX-License-Identifier: Apache-2.0
// ats_remap_engine: the hardware transaction-table remap engine (TxSSD tx tables, Moebius-style
// commit = remap). Owns the L2P mapping table and NUM_TX append-only transaction tables with a
// hashed index, so TX_LOOKUP has constant latency. COMMIT streams the table into the mapping table
// at one entry a cycle, atomically as seen by every lookup; ABORT discards it.
// Theory of operation, port table and timing: spinal/README.md.
package atomssd.remap

import spinal.core._
import spinal.lib._

/** Elaboration parameters. One preset per configuration lives in [[RemapPresets]]. */
case class RemapConfig(
    name: String = "default",
    numTx: Int = 32,          // concurrent transactions; txid 1..numTx (0 = none); power of two
    txEntries: Int = 64,      // entries per transaction table; power of two
    lpnWidth: Int = 32,       // LPN field width on the ports
    ppnWidth: Int = 16,       // PPN width
    mapDepth: Int = 16384,    // LPNs held by the on-chip mapping table (capacity = mapDepth pages)
    hashWays: Int = 4,        // index associativity
    hashBuckets: Int = 1024,  // index buckets; power of two
    tagWidth: Int = 8,        // request tag width
    rspFifoDepth: Int = 16,   // response FIFO (pipeline responses)
    evtFifoDepth: Int = 16    // m_inval / m_map FIFOs
) {
  require(isPow2(numTx) && numTx >= 2, s"numTx must be a power of two >= 2 ($name)")
  require(isPow2(txEntries) && txEntries >= 2, s"txEntries must be a power of two >= 2 ($name)")
  require(isPow2(hashBuckets) && hashBuckets >= 2, s"hashBuckets must be a power of two >= 2 ($name)")
  require(hashWays >= 1, s"hashWays must be >= 1 ($name)")
  require(mapDepth >= 2 && BigInt(mapDepth) <= (BigInt(1) << lpnWidth), s"mapDepth must fit lpnWidth ($name)")
  require(rspFifoDepth >= 8 && evtFifoDepth >= 8, s"FIFOs must hold the pipeline's in-flight items ($name)")
  val txIdxW: Int = log2Up(numTx)           // internal tx index (txid - 1)
  val txidW: Int = log2Up(numTx + 1)        // txid field on the ports
  val eW: Int = log2Up(txEntries)           // entry index
  val cntW: Int = eW + 1                    // entry count 0..txEntries
  val mapIdxW: Int = log2Up(mapDepth)
  val bW: Int = log2Up(hashBuckets)
  val wayW: Int = scala.math.max(1, log2Up(hashWays))
  val lpnHiW: Int = scala.math.max(1, mapIdxW - bW)   // LPN bits above the bucket index (1 if none)
  def indexSlots: Int = hashWays * hashBuckets
}

object RemapPresets {
  /** Default: 32 tx x 64 entries, 16 Ki LPNs (64 MiB of 4 KiB pages); fits 40 % of an LFE5U-85F. */
  val default = RemapConfig()
  /** Tiny: fills every table in a few operations (tests of TX_FULL, INDEX_FULL, BAD_LPN). */
  val tiny = RemapConfig(name = "tiny", numTx = 4, txEntries = 8, lpnWidth = 8, ppnWidth = 8, mapDepth = 40,
    hashWays = 2, hashBuckets = 4, tagWidth = 6, rspFifoDepth = 8, evtFifoDepth = 16)
  /** Mid: a sweep point between tiny and default. */
  val mid = RemapConfig(name = "mid", numTx = 8, txEntries = 32, lpnWidth = 16, ppnWidth = 12, mapDepth = 1000,
    hashWays = 4, hashBuckets = 64)
  /** Bench: room for one 4096-entry transaction (benchmark B1). */
  val bench = RemapConfig(name = "bench", numTx = 2, txEntries = 4096, mapDepth = 16384, hashWays = 4,
    hashBuckets = 4096)
  /** Large: the default tables with 20-bit PPNs (4 GiB raw of 4 KiB pages); the recovery benchmark B5. */
  val large = RemapConfig(name = "large", ppnWidth = 20)
  val all: Seq[RemapConfig] = Seq(default, tiny, mid, bench, large)
}

object RemapOp {
  val MAP_WRITE = 0; val LOOKUP = 1; val TX_WRITE = 2; val TX_LOOKUP = 3
  val COMMIT = 4; val ABORT = 5; val UNMAP = 6
  val width = 4
  val names: Seq[(String, Int)] = Seq("MAP_WRITE" -> MAP_WRITE, "LOOKUP" -> LOOKUP, "TX_WRITE" -> TX_WRITE,
    "TX_LOOKUP" -> TX_LOOKUP, "COMMIT" -> COMMIT, "ABORT" -> ABORT, "UNMAP" -> UNMAP)
}

object RemapStatus {
  val OK = 0; val BAD_OP = 1; val BAD_TXID = 2; val BAD_LPN = 3; val TX_FULL = 4; val INDEX_FULL = 5
  val TX_EMPTY = 6
  val width = 4
  val names: Seq[(String, Int)] = Seq("OK" -> OK, "BAD_OP" -> BAD_OP, "BAD_TXID" -> BAD_TXID,
    "BAD_LPN" -> BAD_LPN, "TX_FULL" -> TX_FULL, "INDEX_FULL" -> INDEX_FULL, "TX_EMPTY" -> TX_EMPTY)
}

case class RemapReq(c: RemapConfig) extends Bundle {
  val op = Bits(RemapOp.width bits)
  val tag = Bits(c.tagWidth bits)
  val txid = UInt(c.txidW bits)
  val lpn = UInt(c.lpnWidth bits)
  val ppn = UInt(c.ppnWidth bits)
}

case class RemapRsp(c: RemapConfig) extends Bundle {
  val tag = Bits(c.tagWidth bits)
  val status = Bits(RemapStatus.width bits)
  val ppn = UInt(c.ppnWidth bits)   // LOOKUP/TX_LOOKUP: mapping; MAP_WRITE/UNMAP: superseded PPN
  val mapped = Bool()               // ppn is valid
  val from_tx = Bool()              // TX_LOOKUP answered from the transaction's own table
  val count = UInt(c.cntW bits)     // TX_WRITE: entries now in the tx; COMMIT/ABORT: entries processed
}

/** A physical page that became invalid (garbage-collection accounting). */
case class RemapInval(c: RemapConfig) extends Bundle {
  val ppn = UInt(c.ppnWidth bits)
  val txid = UInt(c.txidW bits)
  val aborted = Bool()              // 1: a page written by an aborted tx; 0: superseded by a commit
}

/** A mapping applied by a commit, in append order (for the persistence log). */
case class RemapMapUpd(c: RemapConfig) extends Bundle {
  val txid = UInt(c.txidW bits)
  val lpn = UInt(c.lpnWidth bits)
  val ppn = UInt(c.ppnWidth bits)
  val last = Bool()                 // last mapping of this commit
}

case class MapWord(c: RemapConfig) extends Bundle {
  val valid = Bool()
  val ppn = UInt(c.ppnWidth bits)
}

case class TxEntry(c: RemapConfig) extends Bundle {
  val lpn = UInt(c.mapIdxW bits)
  val ppn = UInt(c.ppnWidth bits)
  val way = UInt(c.wayW bits)       // index way holding this LPN's slot
  val first = Bool()                // this entry allocated the slot (the clear pass frees it once)
}

/** An index slot. Only the LPN's quotient (the bits above the bucket index) is stored: the bucket is
  * lpn[bW-1:0] xor fold(higher bits) xor f(tx), so inside one bucket (tx, quotient) determines the
  * LPN, and comparing them is comparing the key. */
case class IndexSlot(c: RemapConfig) extends Bundle {
  val valid = Bool()
  val tx = UInt(c.txIdxW bits)
  val lpnHi = UInt(c.lpnHiW bits)
  val eidx = UInt(c.eW bits)        // latest entry of (tx, lpn)
}

/** rtl/common/ats_ram_sdp.sv: one write port, one read port, read latency 2, one DP16KD on ECP5
  * (the second read stage is the block RAM's output register). */
class AtsRamSdp(width: Int, depth: Int) extends BlackBox {
  addGeneric("WIDTH", width)
  addGeneric("DEPTH", depth)
  val clk = in Bool()
  val wr_en = in Bool()
  val wr_addr = in UInt (log2Up(depth) bits)
  val wr_data = in Bits (width bits)
  val rd_addr = in UInt (log2Up(depth) bits)
  val rd_data = out Bits (width bits)
  noIoPrefix()
  setDefinitionName("ats_ram_sdp")
  mapCurrentClockDomain(clk)
}

/** A table split into bit slices, each one ats_ram_sdp shaped like an ECP5 DP16KD (16K x 1, 8K x 2,
  * 4K x 4, 2K x 9, 1K x 18): no read ever needs a multiplexer across cascaded block RAMs, and every
  * read is registered twice (block RAM read and output registers) before any logic. What a read
  * returns when it collides with a write of the same cycle is not relied on (see fwdRead). */
class SlicedMem[T <: Data](gen: HardType[T], depth: Int, memName: String) extends Area {
  require(depth >= 2 && depth <= 16384, s"$memName: depth $depth does not fit a DP16KD shape")
  val width: Int = gen.getBitsWidth
  val sliceW: Int = if (depth <= 1024) 18 else if (depth <= 2048) 9 else if (depth <= 4096) 4
    else if (depth <= 8192) 2 else 1
  val slices: Seq[AtsRamSdp] = (0 until (width + sliceW - 1) / sliceW).map { i =>
    val r = new AtsRamSdp(scala.math.min(sliceW, width - i * sliceW), depth)
    r.setName(s"u_${memName}_s$i")
    r
  }
  /** Data of `addr` two cycles later. */
  def read2(addr: UInt): T = {
    val t = gen()
    for (r <- slices) r.rd_addr := addr
    t.assignFromBits(Cat(slices.map(_.rd_data)))   // Cat: first argument in the LSBs
    t
  }
  def write(addr: UInt, data: T, en: Bool): Unit = {
    val b = data.asBits
    var lo = 0
    for (r <- slices) {
      r.wr_en := en
      r.wr_addr := addr
      r.wr_data := b(lo, widthOf(r.wr_data) bits)
      lo += widthOf(r.wr_data)
    }
  }
}

/** A forwarded read: the registered memory data, replaced by the write of cycle r (old) or r+1 (new). */
case class Fwd[T <: Data](raw: T, newHit: Bool, oldHit: Bool, oldData: T, newData: T) {
  def value: T = {
    val v = cloneOf(raw)
    v := raw
    when(oldHit) { v := oldData }
    when(newHit) { v := newData }
    v
  }
}

/** One write port shared by several writers (never in the same cycle), and its last write. */
class WritePort[T <: Data](gen: HardType[T], aw: Int, lanes: Int) extends Area {
  val en = Vec.fill(lanes)(False)
  val addr = UInt(aw bits).assignDontCare()
  val data = gen().assignDontCare()
  val en1 = Vec.fill(lanes)(RegInit(False))
  for (l <- 0 until lanes) en1(l) := en(l)
  val addr1 = RegNext(addr)
  val data1 = RegNext(data)
  // Writers declare (registered select, registered address) so that "does this cycle's write hit
  // address a" is a compare of registers, not of the port's address multiplexer.
  private val sources = scala.collection.mutable.ArrayBuffer[(Bool, UInt)]()
  private val hitReqs = scala.collection.mutable.ArrayBuffer[(UInt, Bool)]()
  def addSource(sel: Bool, a: UInt): Unit = sources += ((sel, a))
  /** "This cycle's write hits address a". Readers ask before the writers are elaborated, so the
    * compare is built by [[finish]], once every source is known. */
  def addrHitNow(a: UInt): Bool = {
    val hit = Bool()
    hitReqs += ((a, hit))
    hit
  }
  def finish(): Unit = {
    require(hitReqs.isEmpty || sources.nonEmpty, "WritePort: forwarded reads but no declared writer")
    for ((a, hit) <- hitReqs) hit := sources.map { case (sel, sa) => sel && sa === a }.foldLeft(False: Bool)(_ || _)
  }
}

class RemapEngine(val c: RemapConfig) extends Component {
  setDefinitionName("ats_remap_engine")
  noIoPrefix()

  val clk = in Bool()
  val rst = in Bool()                    // synchronous, active high
  val s_req = slave Stream (RemapReq(c))
  val m_rsp = master Stream (RemapRsp(c))
  val m_inval = master Stream (RemapInval(c))
  val m_map = master Stream (RemapMapUpd(c))
  val init_done = out Bool()             // tables cleared after reset
  val commit_active = out Bool()         // a commit is being applied to the mapping table
  val commit_txid = out UInt (c.txidW bits)

  // Flat port names: s_req_op rather than s_req_payload_op.
  addPrePopTask(() => {
    for (io <- getAllIo) io.setName(io.getName().replace("_payload_", "_"))
  })

  val cd = ClockDomain(clk, rst, config = ClockDomainConfig(clockEdge = RISING, resetKind = SYNC,
    resetActiveLevel = HIGH))
  /** Same clock, no reset: registers with a configuration-time initial value (simulation checks). */
  val bootCd = ClockDomain(clk, config = ClockDomainConfig(clockEdge = RISING, resetKind = BOOT))

  val core = new ClockingArea(cd) {
    import RemapOp._

    def bucketOf(tx: UInt, lpn: UInt): UInt = {
      // XOR-fold of the LPN, with the bit-reversed tx index in the top bits: sequential LPNs of one
      // tx land in distinct buckets, and one LPN written by several txs lands in different buckets.
      var fold = U(0, c.bW bits)
      var lo = 0
      while (lo < c.mapIdxW) {
        val hi = scala.math.min(lo + c.bW, c.mapIdxW) - 1
        fold = fold ^ lpn(hi downto lo).resize(c.bW)
        lo += c.bW
      }
      val txRev = tx.asBits.reversed.asUInt
      val txPart = if (c.bW >= c.txIdxW) (txRev << (c.bW - c.txIdxW)).resize(c.bW) else txRev.resize(c.bW)
      fold ^ txPart
    }
    def entAddr(tx: UInt, e: UInt): UInt = (tx @@ e.resize(c.eW))
    def lpnHi(lpn: UInt): UInt = if (c.mapIdxW > c.bW) lpn(c.mapIdxW - 1 downto c.bW) else U(0, 1 bits)
    /** Balanced binary multiplexer (a Vec read with a dynamic index becomes a long priority chain). */
    def treeMux[T <: Data](sel: UInt, items: Seq[T]): T = {
      def go(level: Int, xs: Seq[T]): T =
        if (xs.size == 1) xs.head
        else go(level + 1, xs.grouped(2).map(p => if (p.size == 2) Mux(sel(level), p(1), p(0)) else p(0)).toSeq)
      go(0, items)
    }
    def st(v: Int): Bits = B(v, RemapStatus.width bits)

    // ---------------------------------------------------------------------------------------
    // Storage. Every table has two copies so that the request pipeline and the commit walk each
    // own a read port; every write goes to both copies. All memories are read-first block RAMs
    // whose output is registered once before any logic (ECP5 DP16KD clock-to-out is long).
    val mapA = new SlicedMem(MapWord(c), c.mapDepth, "l2p_a")      // read by the request pipeline
    val mapB = new SlicedMem(MapWord(c), c.mapDepth, "l2p_b")      // read by the commit walk
    val entX = new SlicedMem(TxEntry(c), c.numTx * c.txEntries, "txtab_x")
    val entY = new SlicedMem(TxEntry(c), c.numTx * c.txEntries, "txtab_y")
    val idxP = Seq.tabulate(c.hashWays)(w => new SlicedMem(IndexSlot(c), c.hashBuckets, s"idx_own_w$w"))
    val idxO = Seq.tabulate(c.hashWays)(w => new SlicedMem(IndexSlot(c), c.hashBuckets, s"idx_ovl_w$w"))

    val mapWr: WritePort[MapWord] = new WritePort(HardType(MapWord(c)), c.mapIdxW, 1)
    val entWr: WritePort[TxEntry] = new WritePort(HardType(TxEntry(c)), c.txIdxW + c.eW, 1)
    val idxWr: WritePort[IndexSlot] = new WritePort(HardType(IndexSlot(c)), c.bW, c.hashWays)
    mapA.write(mapWr.addr, mapWr.data, mapWr.en(0))
    mapB.write(mapWr.addr, mapWr.data, mapWr.en(0))
    entX.write(entWr.addr, entWr.data, entWr.en(0))
    entY.write(entWr.addr, entWr.data, entWr.en(0))
    for (w <- 0 until c.hashWays) {
      idxP(w).write(idxWr.addr, idxWr.data, idxWr.en(w))
      idxO(w).write(idxWr.addr, idxWr.data, idxWr.en(w))
    }

    /** A read issued in cycle r (stage A) whose value is used in cycle r+2 (stage C), corrected for
      * the writes of cycles r and r+1 that the read-first memory cannot see. Address compares are
      * done a cycle early so that stage C only selects. Returns (value, selectNew, selectOld, old). */
    def fwdRead[T <: Data](mem: SlicedMem[T], wp: WritePort[T], lane: Int, addr: UInt): Fwd[T] = {
      val rawC = mem.read2(addr)
      val addrB = RegNext(addr)
      val oldHit = RegNext(wp.en1(lane) && wp.addr1 === addrB) init (False)   // the write of cycle r
      val oldData = RegNext(wp.data1)
      val nextAddrHit = RegNext(wp.addrHitNow(addrB)) init (False)            // the write of cycle r+1
      Fwd(rawC, nextAddrHit && wp.en1(lane), oldHit, oldData, wp.data1)
    }

    // Initialisation state (the init pass itself is at the end, see below)
    val initLen = scala.math.max(c.mapDepth, c.hashBuckets)
    val initCnt = Reg(UInt(log2Up(initLen + 1) bits)) init (0)
    val initDone = RegInit(False)
    val initMap = RegInit(True)     // registered phase flags: they select the write-port multiplexers
    val initIdx = RegInit(True)

    // ---------------------------------------------------------------------------------------
    // Per-transaction state
    val txCount = Vec.fill(c.numTx)(Reg(UInt(c.cntW bits)) init (0))
    val txBusy = Vec.fill(c.numTx)(Reg(Bool()) init (False))   // committing, aborting or clearing

    // Walk registers (declared early: the issue stage looks at them)
    object Phase extends SpinalEnum { val IDLE, APPLY, CLEAR = newElement() }
    val wPhase = RegInit(Phase.IDLE)
    val wAbort = Reg(Bool()) init (False)
    val wTx = Reg(UInt(c.txIdxW bits)) init (0)
    val wTag = Reg(Bits(c.tagWidth bits)) init (0)
    val wN = Reg(UInt(c.cntW bits)) init (0)
    val wIdx = Reg(UInt(c.cntW bits)) init (0)
    val wRspValid = RegInit(False)
    val wRsp = Reg(RemapRsp(c))
    // Overlay: from the cycle after a COMMIT is accepted until its last mapping-table write is
    // visible, every lookup also probes the committing tx's index (copy O) and, on a hit, answers
    // with the tx's latest entry. The commit is thereby atomic and ordered with the request stream.
    val ovActive = RegInit(False)
    val ovTx = Reg(UInt(c.txIdxW bits)) init (0)

    val rspFifo = StreamFifo(RemapRsp(c), c.rspFifoDepth)
    val invalFifo = StreamFifo(RemapInval(c), c.evtFifoDepth)
    val mapFifo = StreamFifo(RemapMapUpd(c), c.evtFifoDepth)
    rspFifo.setDefinitionName("ats_remap_rsp_fifo")
    invalFifo.setDefinitionName("ats_remap_inval_fifo")
    mapFifo.setDefinitionName("ats_remap_map_fifo")

    // ---------------------------------------------------------------------------------------
    // Request pipeline: A accept + read, B register, C resolve the index, C2 act (writes), D entry
    // read, E register, F respond. It never stalls: A accepts only when the response FIFO has room
    // for everything in flight. Every write (C2 here, the walk's W3/W4) happens 3 cycles after its
    // issue, and A leaves one idle cycle after an accepted writer, so a read issued in cycle r can
    // only miss writes of cycles r and r+1, which fwdRead forwards.
    val bV, cV, c2V, dV, eV, fV = RegInit(False)
    val bTx, cTx, c2Tx = Reg(UInt(c.txIdxW bits)) init (0)

    val req = s_req.payload
    val opU = req.op.asUInt
    val isMapWrite = opU === MAP_WRITE
    val isUnmap = opU === UNMAP
    val isLookup = opU === LOOKUP
    val isTxWrite = opU === TX_WRITE
    val isTxLookup = opU === TX_LOOKUP
    val isCommit = opU === COMMIT
    val isAbort = opU === ABORT
    val knownOp = isMapWrite || isUnmap || isLookup || isTxWrite || isTxLookup || isCommit || isAbort
    val isTxOp = isTxWrite || isTxLookup || isCommit || isAbort
    val usesLpn = isMapWrite || isUnmap || isLookup || isTxWrite || isTxLookup
    val txidOk = req.txid =/= 0 && req.txid <= c.numTx
    val lpnOk = req.lpn < c.mapDepth
    val txIdx = (req.txid - 1).resize(c.txIdxW)
    val lpnIdx = req.lpn.resize(c.mapIdxW)
    val err = Bits(RemapStatus.width bits)
    err := st(RemapStatus.OK)
    when(!knownOp) {
      err := st(RemapStatus.BAD_OP)
    } elsewhen (isTxOp && !txidOk) {
      err := st(RemapStatus.BAD_TXID)
    } elsewhen (usesLpn && !lpnOk) {
      err := st(RemapStatus.BAD_LPN)
    }
    val ok = err === RemapStatus.OK
    // ops after which A leaves one idle cycle: writers (see above) and COMMIT (its overlay is armed
    // from stage B, in time for the next accepted request)
    val needsBubble = ok && (isTxWrite || isMapWrite || isUnmap || isCommit)

    // Response credits: requests accepted whose response has not left the FIFO (in the pipeline or
    // in the FIFO) = accepted - released, two counters whose increments are clock enables. The
    // credit flag is registered and conservative by one slot: owed may grow by one per cycle.
    val rspCw = log2Up(c.rspFifoDepth) + 2
    val rspAcc = Reg(UInt(rspCw bits)) init (0)
    val rspRel = Reg(UInt(rspCw bits)) init (0)
    val rspCredit = RegNext((rspAcc - rspRel) <= c.rspFifoDepth - 2) init (False)
    // txBusy is set when a COMMIT/ABORT is accepted, walkRes from then until C2 starts the walk (or
    // finds the tx empty): both are single registers, so acceptance needs no pipeline compares.
    val busyNow = treeMux(txIdx, txBusy.toList)
    val walkRes = RegInit(False)
    val w5Busy = Bool()                    // the APPLY tail (W5) is still emitting (walk section)
    val walkFree = wPhase === Phase.IDLE && !wRspValid && !w5Busy && !walkRes
    val writerLast = RegInit(False)        // a writer was accepted last cycle: leave a bubble
    val txwTurn = RegInit(False)           // a TX_WRITE is being held back by CLEAR steps
    val clearIssue = Bool()                // the CLEAR walk issues a step this cycle (walk section)
    val clearLast = RegInit(False)         // the CLEAR walk issued last cycle (its write lands at r+2)
    // Dead slots: from the acceptance of a COMMIT/ABORT until its CLEAR has freed the tx's index
    // slots, those slots are still in the index although, in request order, they are free. A
    // TX_WRITE of another tx accepted meanwhile must not be refused (INDEX_FULL) because of them.
    // A therefore probes such a TX_WRITE before accepting it: the request pipeline reads the index
    // for whatever s_req presents, accepted or not, so a TX_WRITE held at A for 3 cycles has its own
    // bucket's verdict in the C2 registers. It is accepted unless that bucket has no free way, no
    // slot of its own pair and at least one dead slot; then it waits until CLEAR frees one.
    val deadPending = RegInit(False)       // a COMMIT/ABORT was accepted, its CLEAR has not ended
    val deadTx = Reg(UInt(c.txIdxW bits)) init (0)
    val heldCnt = Reg(UInt(2 bits)) init (0)       // cycles s_req has presented the same request (sat. 3)
    val txwHist = Reg(Bits(4 bits)) init (0)       // bit i: a TX_WRITE was accepted i+1 cycles ago
    val probeBlocked = Bool()                      // C2 verdict for the request presented 3 cycles ago
    // The verdict belongs to the request at A if s_req has held it since (valid, not accepted: the
    // AXI-Stream rule keeps the payload stable) and it saw every index write that can take a way:
    // TX_WRITE writes land 3 cycles after acceptance, forwarded only for the read's cycle and the next.
    val probeFresh = heldCnt === 3 && !txwHist(3)
    val probeOk = probeFresh && !probeBlocked
    val block = !initDone || !rspCredit || writerLast ||
      (ok && isTxOp && busyNow) ||
      (ok && (isCommit || isAbort) && !walkFree) ||
      (ok && (isMapWrite || isUnmap) && ovActive) ||
      (ok && isTxWrite && (clearLast || clearIssue)) ||
      (ok && isTxWrite && deadPending && !probeOk)
    s_req.ready := !block
    val fire = s_req.fire
    val fireTxWrite = fire && ok && isTxWrite
    writerLast := fire && needsBubble
    heldCnt := Mux(s_req.valid && !fire, Mux(heldCnt === 3, heldCnt, heldCnt + 1), U(0, 2 bits))
    txwHist := txwHist(2 downto 0) ## fireTxWrite
    when(fire && ok && (isCommit || isAbort)) {
      txBusy(txIdx) := True
      walkRes := True
      deadPending := True
      deadTx := txIdx
    }

    val bucketP = bucketOf(txIdx, lpnIdx)
    val bucketO = bucketOf(ovTx, lpnIdx)
    val mapF = fwdRead(mapA, mapWr, 0, lpnIdx)
    val slotPF = (0 until c.hashWays).map(w => fwdRead(idxP(w), idxWr, w, bucketP))
    val slotOF = (0 until c.hashWays).map(w => fwdRead(idxO(w), idxWr, w, bucketO))


    // ---- B: registers only (memory data lands), plus the tx's entry count
    bV := fire
    val bOp = RegNext(opU)
    val bTag = RegNext(req.tag)
    val bLpn = RegNext(lpnIdx)
    val bPpn = RegNext(req.ppn)
    val bErr = RegNext(err)
    val bBucketP = RegNext(bucketP)
    val bOv = RegNext(ovActive)
    val bOvTx = RegNext(ovTx)
    bTx := txIdx
    val bCnt = treeMux(bTx, txCount.toList)
    val bCommit = RegNext(fire && ok && isCommit) init (False)
    when(bCommit) {
      ovActive := True
      ovTx := bTx
    }

    // ---- C: select forwarded slots, compare keys, register the match vectors
    cV := bV
    val cOp = RegNext(bOp)
    val cTag = RegNext(bTag)
    val cLpn = RegNext(bLpn)
    val cPpn = RegNext(bPpn)
    val cErr = RegNext(bErr)
    val cBucketP = RegNext(bBucketP)
    val cOv = RegNext(bOv)
    val cOvTx = RegNext(bOvTx)
    val cCntQ = RegNext(bCnt)
    val cCntFull = cCntQ === c.txEntries
    val cCntFullM1 = cCntQ === c.txEntries - 1
    val cCntZero = cCntQ === 0
    cTx := bTx
    // count: B read it before the previous writer's increment (C2 of the op accepted 2 cycles
    // earlier) landed
    val incLast = RegInit(False)
    val incLastTx = Reg(UInt(c.txIdxW bits)) init (0)
    val cInc = incLast && incLastTx === cTx

    val slotP = slotPF.map(_.value)
    val slotO = slotOF.map(_.value)
    val mapCur = mapF.value

    // ---- C2: act on registered match vectors
    c2V := cV
    val c2Op = RegNext(cOp)
    val c2Tag = RegNext(cTag)
    val c2Lpn = RegNext(cLpn)
    val c2Ppn = RegNext(cPpn)
    val c2Ok = RegNext(cErr === RemapStatus.OK) init (False)
    val c2Err = RegNext(cErr)
    val c2BucketP = RegNext(cBucketP)
    val c2OvTx = RegNext(cOvTx)
    val c2Map = RegNext(mapCur)
    // Key compares of the three candidates run in parallel (the forwarded writes' compares from
    // registers, the one against last cycle's write even a stage early), then one select: the
    // block-RAM path is one compare deep.
    def keyMatch(sl: IndexSlot, tx: UInt, lpn: UInt): Bool = sl.valid && sl.tx === tx && sl.lpnHi === lpnHi(lpn)
    def fwdMatch(f: Fwd[IndexSlot], oldM: Bool, newM: Bool, rawM: Bool): Bool =
      Mux(f.newHit, newM, Mux(f.oldHit, oldM, rawM))
    val oldMatchP = RegNext(keyMatch(idxWr.data1, bTx, bLpn)) init (False)
    val oldMatchO = RegNext(bOv && keyMatch(idxWr.data1, bOvTx, bLpn)) init (False)
    val newMatchP = keyMatch(idxWr.data1, cTx, cLpn)
    val newMatchO = cOv && keyMatch(idxWr.data1, cOvTx, cLpn)
    val c2MatchP = RegNext(Vec(slotPF.map(f => fwdMatch(f, oldMatchP, newMatchP, keyMatch(f.raw, cTx, cLpn)))))
    val c2MatchO = RegNext(Vec(slotOF.map(f => fwdMatch(f, oldMatchO, newMatchO, cOv && keyMatch(f.raw, cOvTx, cLpn)))))
    // dead slots (of the tx whose COMMIT/ABORT was accepted and whose CLEAR has not ended), for the
    // TX_WRITE probe; like the key compares, one compare deep after the block RAM
    def deadMatch(sl: IndexSlot): Bool = sl.valid && sl.tx === deadTx
    val oldDeadP = RegNext(deadMatch(idxWr.data1)) init (False)
    val newDeadP = deadMatch(idxWr.data1)
    val c2DeadAny = RegNext(Vec(slotPF.map(f => fwdMatch(f, oldDeadP, newDeadP, deadMatch(f.raw)))).orR) init (False)
    val c2EidxP = RegNext(Vec(slotP.map(_.eidx)))
    val c2EidxO = RegNext(Vec(slotO.map(_.eidx)))
    val c2Cnt = RegNext(cCntQ + cInc.asUInt.resize(c.cntW))
    val c2Full = RegNext(Mux(cInc, cCntFullM1, cCntFull)) init (False)
    val c2Empty = RegNext(!cInc && cCntZero) init (False)
    c2Tx := cTx

    // C also prepares the TX_WRITE decision so that C2's write enables are two LUT levels deep.
    val cFull = Mux(cInc, cCntFullM1, cCntFull)
    val cFreeV = Vec(slotP.map(!_.valid))
    val c2FreeOH = RegNext(OHMasking.first(cFreeV.asBits))
    val c2AnyFree = RegNext(cFreeV.orR) init (False)
    val c2TxwGo = RegNext(cV && cErr === RemapStatus.OK && cOp === TX_WRITE && !cFull) init (False)

    val hitP = c2MatchP.orR
    val hitO = c2MatchO.orR
    // the probe's verdict (C2 registers describe the request A presented 3 cycles ago, accepted or
    // not): a new pair in a bucket with no free way, and at least one way held by a dead slot
    probeBlocked := !hitP && !c2AnyFree && c2DeadAny
    val eidxP = MuxOH(c2MatchP, c2EidxP)
    val eidxO = MuxOH(c2MatchO, c2EidxO)
    val wayEn = Vec((0 until c.hashWays).map(w => c2TxwGo && (c2MatchP(w) || (!hitP && c2FreeOH(w)))))
    val way = Mux(hitP, OHToUInt(c2MatchP).resize(c.wayW), OHToUInt(c2FreeOH).resize(c.wayW))
    val anyFree = c2AnyFree
    val c2IsLookup = RegNext(cOp === LOOKUP)
    val c2IsTxLookup = RegNext(cOp === TX_LOOKUP)
    val useOwn = c2IsTxLookup && hitP
    val useOv = (c2IsTxLookup || c2IsLookup) && !useOwn && hitO
    val c2IsTxWrite = RegNext(cV && cErr === RemapStatus.OK && cOp === TX_WRITE) init (False)
    val c2IsMapWr = RegNext(cV && cErr === RemapStatus.OK && (cOp === MAP_WRITE || cOp === UNMAP)) init (False)
    val c2IsMapWrite = RegNext(cOp === MAP_WRITE)
    val insertOk = c2TxwGo && (hitP || anyFree)

    val c2Status = Bits(RemapStatus.width bits)
    c2Status := c2Err
    val c2RspPpn = UInt(c.ppnWidth bits)
    c2RspPpn := 0
    val c2RspMapped = False
    val c2RspCount = U(0, c.cntW bits)
    val c2NeedsRsp = Bool()
    c2NeedsRsp := c2V
    val walkStart = False
    incLast := insertOk
    incLastTx := c2Tx

    // Write-port data and addresses are selected by registered conditions only; enables may be deep.
    when(c2IsTxWrite) {
      idxWr.addr := c2BucketP
      idxWr.data.valid := True
      idxWr.data.tx := c2Tx
      idxWr.data.lpnHi := lpnHi(c2Lpn)
      idxWr.data.eidx := c2Cnt.resize(c.eW)
    }
    for (w <- 0 until c.hashWays) when(wayEn(w)) { idxWr.en(w) := True }
    when(insertOk) { txCount(c2Tx) := c2Cnt + 1 }
    // The entry itself is written a cycle later (C3), from registers: nothing reads a new entry
    // sooner (a TX_LOOKUP hit reads it in D, 3 cycles after the earliest following acceptance).
    when(RegNext(insertOk) init (False)) { entWr.en(0) := True }
    entWr.addr := RegNext(entAddr(c2Tx, c2Cnt.resize(c.eW)))
    entWr.data.lpn := RegNext(c2Lpn)
    entWr.data.ppn := RegNext(c2Ppn)
    entWr.data.way := RegNext(way)
    entWr.data.first := RegNext(!hitP)
    when(c2IsMapWr) {
      mapWr.en(0) := True
      mapWr.addr := c2Lpn
      mapWr.data.valid := c2IsMapWrite
      mapWr.data.ppn := Mux(c2IsMapWrite, c2Ppn, U(0, c.ppnWidth bits))
    }
    mapWr.addSource(c2IsMapWr, c2Lpn)
    idxWr.addSource(c2IsTxWrite, c2BucketP)

    when(c2V && c2Ok) {
      switch(c2Op) {
        is(MAP_WRITE, UNMAP, LOOKUP, TX_LOOKUP) {
          c2RspPpn := c2Map.ppn
          c2RspMapped := c2Map.valid
        }
        is(TX_WRITE) {
          c2RspCount := Mux(insertOk, c2Cnt + 1, c2Cnt)
          when(c2Full) {
            c2Status := st(RemapStatus.TX_FULL)
          } elsewhen (!hitP && !anyFree) {
            c2Status := st(RemapStatus.INDEX_FULL)
          }
        }
        is(COMMIT, ABORT) {
          walkRes := False
          when(c2Empty) {
            c2Status := st(RemapStatus.TX_EMPTY)
            txBusy(c2Tx) := False
            deadPending := False
            when(c2Op === COMMIT) { ovActive := False }
          } otherwise {
            c2NeedsRsp := False
            walkStart := True
          }
        }
      }
    }

    when(fire) { rspAcc := rspAcc + 1 }
    rspRel := rspRel + ((c2V && !c2NeedsRsp).asUInt +^ rspFifo.io.pop.fire.asUInt).resize(rspCw)

    // ---- D: entry read for tx hits (address from registers)
    dV := c2NeedsRsp
    val dTag = RegNext(c2Tag)
    val dStatus = RegNext(c2Status)
    val dPpn = RegNext(c2RspPpn)
    val dMapped = RegNext(c2RspMapped)
    val dCount = RegNext(c2RspCount)
    val dUseEnt = RegNext(c2V && c2Ok && (useOwn || useOv)) init (False)
    val dFromTx = RegNext(c2V && c2Ok && useOwn) init (False)
    val dEntAddr = RegNext(Mux(useOwn, entAddr(c2Tx, eidxP), entAddr(c2OvTx, eidxO)))
    val entF = entX.read2(dEntAddr)        // lands in F

    // ---- E: registers; F: response
    eV := dV
    val eTag = RegNext(dTag)
    val eStatus = RegNext(dStatus)
    val ePpn = RegNext(dPpn)
    val eMapped = RegNext(dMapped)
    val eCount = RegNext(dCount)
    val eUseEnt = RegNext(dUseEnt) init (False)
    val eFromTx = RegNext(dFromTx) init (False)
    fV := eV
    val fTag = RegNext(eTag)
    val fStatus = RegNext(eStatus)
    val fPpn = RegNext(ePpn)
    val fMapped = RegNext(eMapped) init (False)
    val fCount = RegNext(eCount)
    val fUseEnt = RegNext(eUseEnt) init (False)
    val fFromTx = RegNext(eFromTx) init (False)
    rspFifo.io.push.valid := fV
    rspFifo.io.push.payload.tag := fTag
    rspFifo.io.push.payload.status := fStatus
    rspFifo.io.push.payload.ppn := Mux(fUseEnt, entF.ppn, fPpn)
    rspFifo.io.push.payload.mapped := fUseEnt || fMapped
    rspFifo.io.push.payload.from_tx := fFromTx
    rspFifo.io.push.payload.count := fCount

    // ---------------------------------------------------------------------------------------
    // Commit / abort walk.
    // APPLY (commit): entries in append order. W0 reads entry i (copy Y), W2 reads the old mapping of
    //   its LPN (copy B, corrected for the two previous entries' writes, so duplicates inside a tx
    //   chain correctly), W4 writes the new mapping and emits the old PPN on m_inval and the mapping
    //   on m_map. One entry a cycle unless m_inval/m_map push back. Then the commit response.
    // CLEAR (commit and abort): W0 reads entry i, W2 frees the index slot it allocated (`first`) and,
    //   for an abort, emits its PPN on m_inval. Shares the index write port with TX_WRITE inserts
    //   (they alternate cycles when both want it); the tx stays busy until CLEAR ends.
    when(walkStart) {
      wPhase := Mux(c2Op === COMMIT, Phase.APPLY, Phase.CLEAR)
      wAbort := c2Op === ABORT
      wTx := c2Tx
      wTag := c2Tag
      wN := c2Cnt
      wIdx := 0
    }
    /** The walk's own response (COMMIT after APPLY, ABORT after CLEAR): OK with the entry count. */
    def walkRespond(): Unit = {
      wRspValid := True
      wRsp.tag := wTag
      wRsp.status := st(RemapStatus.OK)
      wRsp.ppn := 0
      wRsp.mapped := False
      wRsp.from_tx := False
      wRsp.count := wN
    }
    commit_active := wPhase === Phase.APPLY
    commit_txid := (wTx.resize(c.txidW) + 1)
    val wTxid = (wTx.resize(c.txidW) + 1)

    val w1V, w2V, w3V, w4V = RegInit(False)
    val w1Last, w2Last, w3Last, w4Last = RegInit(False)
    val w1Clr, w2Clr, w3Clr = RegInit(False)
    // Event credits: walk steps issued whose m_inval / m_map beats have not left their FIFOs (a step
    // pushes at most one beat into each FIFO).
    val evtCw = log2Up(c.evtFifoDepth) + 2
    val evtIss = Reg(UInt(evtCw bits)) init (0)
    val invRel = Reg(UInt(evtCw bits)) init (0)
    val mapRel = Reg(UInt(evtCw bits)) init (0)
    val evtCredit = RegNext((evtIss - invRel) <= c.evtFifoDepth - 2 && (evtIss - mapRel) <= c.evtFifoDepth - 2) init (False)
    val more = wIdx =/= wN
    clearIssue := wPhase === Phase.CLEAR && more && evtCredit && !txwTurn
    // CLEAR and TX_WRITE share the index write port (both write 3 cycles after issue): a TX_WRITE is
    // not accepted in the cycle of a clear step nor in the next one. The walk decides from registers
    // only; once a TX_WRITE has been held back, clear steps pause until it is accepted (txwTurn).
    // (a TX_WRITE that waits for CLEAR to free a dead slot must not stop the CLEAR)
    val txwWaiting = s_req.valid && ok && isTxWrite && !(deadPending && probeFresh && probeBlocked)
    val applyIssue = wPhase === Phase.APPLY && more && evtCredit
    val walkIssue = applyIssue || clearIssue
    clearLast := clearIssue
    // only a TX_WRITE held back *by a clear step* claims the next turn; one waiting for its own tx
    // (busy until this very CLEAR ends) must not stop the CLEAR
    txwTurn := txwWaiting && !busyNow && (clearIssue || clearLast) && !fireTxWrite
    val entW2 = entY.read2(entAddr(wTx, wIdx.resize(c.eW)))     // lands in W2
    when(walkIssue) { wIdx := wIdx + 1 }
    w1V := walkIssue
    w1Last := wIdx === wN - 1
    w1Clr := clearIssue

    // W1: the entry is in the RAM's output register
    w2V := w1V
    w2Last := w1Last
    w2Clr := w1Clr

    invalFifo.io.push.valid := False
    invalFifo.io.push.payload.assignDontCare()
    mapFifo.io.push.valid := False
    mapFifo.io.push.payload.assignDontCare()

    // W2 (clear): compute the slot; W3: free it, emit the aborted PPN
    w3V := w2V
    w3Last := w2Last
    w3Clr := w2Clr
    val entW3 = RegNext(entW2)
    val clrBucket = RegNext(bucketOf(wTx, entW2.lpn))
    val w3ClrFirst = RegNext(w2V && w2Clr && entW2.first) init (False)
    idxWr.addSource(w3ClrFirst, clrBucket)
    when(!c2IsTxWrite) {
      idxWr.addr := clrBucket
      idxWr.data.valid := False
      idxWr.data.tx := 0
      idxWr.data.lpnHi := 0
      idxWr.data.eidx := 0
    }
    when(w3V && w3Clr) {
      when(entW3.first) {
        for (w <- 0 until c.hashWays) when(entW3.way === w) { idxWr.en(w) := True }
      }
      when(wAbort) {
        invalFifo.io.push.valid := True
        invalFifo.io.push.payload.ppn := entW3.ppn
        invalFifo.io.push.payload.txid := wTxid
        invalFifo.io.push.payload.aborted := True
      }
      when(w3Last) {
        wPhase := Phase.IDLE
        txBusy(wTx) := False
        deadPending := False    // this edge's write frees the last slot
        txCount(wTx) := U(0, c.cntW bits)
        when(wAbort) { walkRespond() }
      }
    }

    // W2 (apply): read the old mapping (forwarded from the two previous entries' writes);
    // W3: register; W4: write the new mapping, emit
    val oldMap = fwdRead(mapB, mapWr, 0, entW2.lpn).value
    w4V := w3V && !w3Clr
    w4Last := w3Last
    val entW4 = RegNext(entW3)
    mapWr.addSource(w4V, entW4.lpn)
    when(!c2IsMapWr) {
      mapWr.addr := entW4.lpn
      mapWr.data.valid := True
      mapWr.data.ppn := entW4.ppn
    }
    when(w4V) {
      mapWr.en(0) := True
      when(w4Last) {
        ovActive := False       // the table now holds the whole commit
        wPhase := Phase.CLEAR
        wIdx := 0
      }
    }
    // W5: emit the superseded PPN and the mapping (from registers), then the commit response
    val w5V = RegNext(w4V) init (False)
    w5Busy := w5V
    val w5Last = RegNext(w4Last) init (False)
    val entW5 = RegNext(entW4)
    val oldW5 = RegNext(oldMap)
    when(w5V) {
      invalFifo.io.push.valid := oldW5.valid
      invalFifo.io.push.payload.ppn := oldW5.ppn
      invalFifo.io.push.payload.txid := wTxid
      invalFifo.io.push.payload.aborted := False
      mapFifo.io.push.valid := True
      mapFifo.io.push.payload.txid := wTxid
      mapFifo.io.push.payload.lpn := entW5.lpn.resize(c.lpnWidth)
      mapFifo.io.push.payload.ppn := entW5.ppn
      mapFifo.io.push.payload.last := w5Last
      when(w5Last) { walkRespond() }
    }

    // a step that pushes nothing into a FIFO returns its credit when it would have pushed
    val invNoPush = (w3V && w3Clr && !wAbort) || (w5V && !oldW5.valid)
    val mapNoPush = w3V && w3Clr
    when(walkIssue) { evtIss := evtIss + 1 }
    invRel := invRel + (invalFifo.io.pop.fire.asUInt +^ invNoPush.asUInt).resize(evtCw)
    mapRel := mapRel + (mapFifo.io.pop.fire.asUInt +^ mapNoPush.asUInt).resize(evtCw)

    // ---------------------------------------------------------------------------------------
    // Initialisation after reset: clear the mapping table and the index (last: it overrides the
    // other writers' port muxes; nothing else runs before init_done).
    when(!initDone) {
      initCnt := initCnt + 1
      when(initCnt === initLen - 1) { initDone := True }
      when(initCnt === c.mapDepth - 1) { initMap := False }
      when(initCnt === c.hashBuckets - 1) { initIdx := False }
    }
    when(initMap) {
      mapWr.en(0) := True
      mapWr.addr := initCnt.resized
      mapWr.data.valid := False
      mapWr.data.ppn := 0
    }
    when(initIdx) {
      idxWr.en.foreach(_ := True)
      idxWr.addr := initCnt.resized
      idxWr.data.valid := False
      idxWr.data.tx := 0
      idxWr.data.lpnHi := 0
      idxWr.data.eidx := 0
    }
    init_done := initDone

    // ---------------------------------------------------------------------------------------
    // Simulation checks of the structural promises (the credits and the write-port sharing).
    // They hold from the first reset on, never before: at power-on every register is random (and a
    // simulator with random initial values may even evaluate a clock edge before rst is driven).
    // `checksArmed` has a configuration-time initial value of 0 (BOOT: an initialiser, not a reset)
    // and becomes 1 at the first edge with rst high; while rst is high the checks are masked too.
    val checksOn = Bool()
    new ClockingArea(bootCd) {
      val checksArmed = RegInit(False)
      when(rst) { checksArmed := True }
      checksOn := checksArmed && !rst
    }.setName("")
    def check(cond: Bool, msg: String): Unit = assert(!checksOn || cond, "ats_remap_engine: " + msg)
    check(!(rspFifo.io.push.valid && !rspFifo.io.push.ready), "response FIFO overflow")
    check(!(invalFifo.io.push.valid && !invalFifo.io.push.ready), "m_inval FIFO overflow")
    check(!(mapFifo.io.push.valid && !mapFifo.io.push.ready), "m_map FIFO overflow")
    check(!(c2IsMapWr && w4V), "L2P write collision")
    check(!(w5V && w3V && w3Clr && wAbort), "m_inval push collision")
    check(!(c2IsTxWrite && w3V && w3Clr), "index write collision")

    // every writer is declared by now: build the forwarding compares
    mapWr.finish()
    idxWr.finish()
    entWr.finish()

    // ---------------------------------------------------------------------------------------
    // Outputs
    m_inval << invalFifo.io.pop
    m_map << mapFifo.io.pop
    // m_rsp merges the pipeline's responses (FIFO) and the walk's (COMMIT/ABORT, one register).
    // What is on offer stays on offer until taken (AXI-Stream): the walk's response, once offered,
    // is held in wRsp until taken; a FIFO head offered and not taken keeps priority (rspHold) over a
    // walk response that arrives meanwhile.
    val rspHold = RegInit(False)
    val selW = wRspValid && !rspHold
    m_rsp.valid := wRspValid || rspFifo.io.pop.valid
    m_rsp.payload := Mux(selW, wRsp, rspFifo.io.pop.payload)
    rspFifo.io.pop.ready := m_rsp.ready && !selW
    rspHold := rspFifo.io.pop.valid && !selW && !m_rsp.ready
    when(m_rsp.ready && selW) { wRspValid := False }
  }
}

/** Generates every preset into build/gen/remap_<name>/ (Verilog + params.json for the tests). */
object RemapEngineVerilog {
  def paramsJson(c: RemapConfig): String = {
    val kv = Seq(
      "name" -> ("\"" + c.name + "\""), "NUM_TX" -> c.numTx, "TX_ENTRIES" -> c.txEntries,
      "LPN_W" -> c.lpnWidth, "PPN_W" -> c.ppnWidth, "MAP_DEPTH" -> c.mapDepth, "HASH_WAYS" -> c.hashWays,
      "HASH_BUCKETS" -> c.hashBuckets, "TAG_W" -> c.tagWidth, "TXID_W" -> c.txidW, "CNT_W" -> c.cntW,
      "RSP_FIFO_DEPTH" -> c.rspFifoDepth, "EVT_FIFO_DEPTH" -> c.evtFifoDepth)
    val ops = RemapOp.names.map { case (n, v) => "\"" + n + "\": " + v }.mkString(", ")
    val sts = RemapStatus.names.map { case (n, v) => "\"" + n + "\": " + v }.mkString(", ")
    "{\n" + kv.map { case (k, v) => "  \"" + k + "\": " + v }.mkString(",\n") +
      ",\n  \"ops\": {" + ops + "},\n  \"status\": {" + sts + "}\n}\n"
  }

  def main(args: Array[String]): Unit = {
    val outRoot = if (args.nonEmpty) args(0) else "../build/gen"
    val wanted = if (args.length > 1) args(1).split(",").toSet else RemapPresets.all.map(_.name).toSet
    for (c <- RemapPresets.all if wanted.contains(c.name)) {
      val dir = s"$outRoot/remap_${c.name}"
      new java.io.File(dir).mkdirs()
      SpinalConfig(targetDirectory = dir, oneFilePerComponent = false,
        headerWithDate = false, anonymSignalPrefix = "t")
        .generateVerilog(new RemapEngine(c))
      val p = new java.io.PrintWriter(s"$dir/params.json")
      p.write(paramsJson(c))
      p.close()
      // every source a simulator or synthesiser needs, relative to the repository root
      val f = new java.io.PrintWriter(s"$dir/sources.f")
      f.write(s"$dir/ats_remap_engine.v\nrtl/common/ats_ram_sdp.sv\n")
      f.close()
    }
  }
}
