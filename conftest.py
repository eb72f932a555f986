"""Test ordering for `make test` (pytest-xdist, 2 workers): the longest items first, so that no long
item starts last and runs alone at the end (longest-processing-time-first scheduling). The order
within each group and of everything else stays pytest's own."""

# nodeid fragments, longest first (measured on `make test`: core power-cut runs, then the remap
# engine presets, the queue + buffer power-cut test, the NAND subsystem and the write buffer)
LONG_FIRST = ("ats_ssd_core", "ats_remap_engine", "ats_ssd_order", "ats_nand_subsys", "ats_wbuf",
              "ats_nand_page")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        return next((i for i, k in enumerate(LONG_FIRST) if k in item.nodeid), len(LONG_FIRST))
    items.sort(key=rank)
