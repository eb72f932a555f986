"""bench_board.py NAME P=V[,P=V...] [bench_core.py options]: bench/core/bench_core.py (`make bench-core`:
ats_ssd_core 4 x 2 with 8 die models, FEMU array times, 125 MHz, the core's default pin timings) with
the core's table sizes set as the board's (soc/boards/ecpix5.py: QDEPTH, NUM_SLOTS, WIN, RD_SLOTS,
SCHED_DEPTH), built in build/bench/core/obj_board_NAME; the JSON in build/bench/core_board_NAME.json.
docs/boards.md "Resources": the board's table sizes chosen where the read IOPS stay."""
import sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench/core"))
import bench_core as bc
name, params = sys.argv[1], {k: int(v) for k, v in (kv.split("=") for kv in sys.argv[2].split(","))}
orig = bc.build
def build(quiet=False, obj=None, params_=None, **kw):
    return orig(quiet=quiet, obj=bc.OBJ.parent / f"obj_board_{name}", params=params, **kw)
bc.build = build
rest = sys.argv[3:]
if "--json" not in rest:
    rest += ["--json", str(ROOT / f"build/bench/core_board_{name}.json")]
rest += ["--rd-slots", str(params.get("RD_SLOTS", bc.RD_SLOTS)), "--sched-depth", str(params.get("SCHED_DEPTH", bc.SCHED_DEPTH))]
sys.argv = [sys.argv[0], *rest]
sys.exit(bc.main())
