"""The block file lists (`.f`): the one place a block's sources are written.

Every hand-written top has `rtl/<area>/<top>.f` (simulation models `sim/...`, bench tops
`bench/...`), a generated SpinalHDL configuration `build/gen/<block>_<preset>/sources.f`. Lint
(tools/lint.sh, Verilator `-f`), the cocotb runner (atstb.runner.block_sources), the synthesis
check (synth/run_synth.py, blocks.json "filelist"), the SoC (soc/ats_litex.py) and the
full-system simulation (sim/soc/build.py) read them. Format, as Verilator reads it:
- one path per line, relative to the repository root, in compile order (packages first);
- `//` and `#` comments, blank lines;
- `-f <list>`: the entries of another list (relative to the root; each file once, first place wins);
- `+incdir+<dir>` and `+define+<NAME>[=<value>]`.

Standard library only: synth/run_synth.py and the SoC scripts import it without cocotb.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# where `<top>.f` of a hand-written top is looked for (in this order)
SEARCH = ("rtl", "sim", "bench")


class FileListError(Exception):
    """A file list that is missing, unreadable, ambiguous or includes itself."""


@dataclass
class FileList:
    sources: list[Path] = field(default_factory=list)     # absolute, in compile order, each once
    incdirs: list[Path] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)      # NAME or NAME=VALUE
    lists: list[Path] = field(default_factory=list)       # the .f files read (nested ones too)

    def verilator_args(self) -> list[str]:
        """`+incdir+` / `+define+` arguments for a Verilator build (empty for every list today)."""
        return [f"+incdir+{d}" for d in self.incdirs] + [f"+define+{d}" for d in self.defines]

    def add(self, other: "FileList") -> None:
        for attr in ("sources", "incdirs", "defines", "lists"):
            mine = getattr(self, attr)
            mine += [x for x in getattr(other, attr) if x not in mine]


def _words(path: Path) -> list[str]:
    try:
        text = path.read_text()
    except OSError as e:
        raise FileListError(f"cannot read file list {path}: {e}") from None
    out = []
    for line in text.splitlines():
        line = line.split("//")[0].strip()
        if line and not line.startswith("#"):
            out += line.split()
    return out


def read_filelist(path: Path | str, root: Path = ROOT, _stack: tuple = ()) -> FileList:
    """Parse one `.f` file (and the lists it includes with `-f`)."""
    path = Path(path)
    path = (path if path.is_absolute() else root / path).resolve()
    if path in _stack:
        raise FileListError(f"file list {path} includes itself: "
                            + " -> ".join(str(p) for p in (*_stack, path)))
    fl = FileList(lists=[path])
    words = _words(path)
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-f":
            if i + 1 >= len(words):
                raise FileListError(f"{path}: `{w}` without a file name")
            fl.add(read_filelist(words[i + 1], root, (*_stack, path)))
            i += 2
            continue
        if w.startswith("+incdir+"):
            fl.add(FileList(incdirs=[(root / d).resolve() for d in w[len("+incdir+"):].split("+") if d]))
        elif w.startswith("+define+"):
            fl.add(FileList(defines=[d for d in w[len("+define+"):].split("+") if d]))
        elif w.startswith(("-", "+")):
            raise FileListError(f"{path}: option {w!r} is not supported in a file list "
                                "(paths, -f, +incdir+, +define+ only; paths relative to the root)")
        else:
            fl.add(FileList(sources=[root / w]))
        i += 1
    return fl


def find_filelist(top: str, root: Path = ROOT) -> Path:
    """`<top>.f` of a hand-written top under rtl/ (then sim/, bench/): exactly one."""
    name = top if top.endswith(".f") else f"{top}.f"
    for d in SEARCH:
        hits = sorted((root / d).rglob(name))
        if len(hits) > 1:
            raise FileListError(f"{name}: several file lists: {', '.join(str(h) for h in hits)}")
        if hits:
            return hits[0]
    raise FileListError(f"no file list {name} under {', '.join(SEARCH)}/ (every top has one: "
                        "docs/contributing.md \"Add a block\")")


def resolve(name: str | Path, root: Path = ROOT) -> Path:
    """A top name (`ats_wbuf`) or a path to a `.f` file (absolute or relative to the root)."""
    s = str(name)
    if s.endswith(".f") and ("/" in s or Path(s).is_absolute()):
        p = Path(s)
        return p if p.is_absolute() else root / p
    return find_filelist(s, root)


def filelist(*names: str | Path, root: Path = ROOT) -> FileList:
    """The union of several tops' lists, in the order given, each file once (first place wins)."""
    fl = FileList()
    for n in names:
        fl.add(read_filelist(resolve(n, root), root))
    return fl


def block_sources(*names: str | Path, replace: dict[str, Path | str] | None = None,
                  root: Path = ROOT) -> list[Path]:
    """The sources of one or more tops from their `.f` lists, e.g. `block_sources("ats_wbuf")`,
    `block_sources("ats_nvme_bar", "ats_nvme_rq", "ats_nvme_qm")`; a name may also be a `.f` path
    (`"build/gen/remap_default/sources.f"`). `replace` {file name: path}: the file of that name is
    taken from `path` instead, in its place (mutation runs, another remap preset); a name that is
    not in the lists is an error. Lists with `+incdir+`/`+define+` need `filelist(...)
    .verilator_args()` in the build's arguments: this refuses them rather than drop them."""
    fl = filelist(*names, root=root)
    if fl.incdirs or fl.defines:
        raise FileListError(f"{', '.join(map(str, fl.lists))}: +incdir+/+define+ entries; build with "
                            "filelist(...).sources and .verilator_args()")
    srcs = list(fl.sources)
    for fname, new in (replace or {}).items():
        idx = [i for i, s in enumerate(srcs) if s.name == fname]
        if not idx:
            raise FileListError(f"replace: {fname} is not in {', '.join(map(str, names))}'s lists")
        for i in idx:
            srcs[i] = Path(new)
    return srcs


def main(argv: list[str] | None = None) -> int:
    """`python cocotb_tests/lib/atstb/filelist.py LIST.f...`: the lists flattened for Verilator `-f`
    (nested lists resolved, each file once, paths relative to the root; tools/lint.sh)."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(main.__doc__, file=sys.stderr)
        return 2
    try:
        fl = filelist(*[Path(a).resolve() if Path(a).exists() else a for a in args])
    except FileListError as e:
        print(f"filelist: {e}", file=sys.stderr)
        return 1

    def r(p: Path) -> str:
        try:
            return str(p.relative_to(ROOT))
        except ValueError:
            return str(p)
    for d in fl.incdirs:
        print(f"+incdir+{r(d)}")
    for d in fl.defines:
        print(f"+define+{d}")
    for s in fl.sources:
        print(r(s))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
