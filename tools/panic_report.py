#!/usr/bin/env python3
"""Groups the panic call sites of several builds (tools/panic_sites.py --tsv outputs).

    panic_report.py DIR/<target>-O<opt>.sites ...

Prints each source line with call sites once (the innermost inlined frame in the crate's own
sources, `src/…`, with a line number; `:0` where LLVM merged several calls into one) with the
panic functions called there; then the builds and float types it appears in, the number of
call sites, and the functions (float type written as T) it was inlined into.
"""
import collections
import os
import re
import sys

SHORT = {"thumbv6m-none-eabi": "M0", "thumbv7em-none-eabihf": "M4F", "thumbv8m.main-none-eabihf": "M33"}


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_file(label):
    """`src/…/module.rs:?` of an sgmcmc function's name, for a site without a line of its own."""
    m = re.search(r"sgmcmc::((?:[a-z_0-9]+::)+)", label)
    if not m:
        return None
    parts = m.group(1).strip(":").split("::")
    for k in range(len(parts), 0, -1):
        for path in (os.path.join("src", *parts[:k]) + ".rs", os.path.join("src", *parts[:k], "mod.rs")):
            if os.path.exists(os.path.join(ROOT, path)):
                return path + ":?"
    return None


def own_frame(frames, caller):
    """(function, src/file:line) of the innermost frame in the crate's sources."""
    chain = [f.rsplit(" @ ", 1) for f in frames.split(" <- ") if " @ " in f]
    own = [(fn, loc) for fn, loc in chain
           if re.search(r"/src/.*\.rs:\d+$", loc) and "rustlib" not in loc
           and "panic-check" not in loc and ".cargo" not in loc]
    numbered = [(fn, loc) for fn, loc in own if not loc.endswith(":0")]
    if not own:
        # No frame in the crate's sources (LTO can attribute a merged call to another unit's
        # file, at line 0): the module of the innermost sgmcmc function named in the chain.
        for fn, _ in chain + [(caller, "")]:
            path = module_file(fn)
            if path:
                return fn, path
    fn, loc = (numbered or own or chain or [(caller, "?")])[0]
    if "/rustlib/src/rust/library/" in loc:
        return fn, re.sub(r"^.*/rustlib/src/rust/library/", "", loc)
    return fn, re.sub(r"^.*?/(src/)", r"\1", loc)


def normalise(fn):
    """A function's name with the float type as T, the check crate's model as Model and
    sgmcmc's module paths dropped."""
    fn = re.sub(r"sgmcmc_panic_check(_\w)?::abi::Opaque<f\d\d, [^<>]*>", "Model", fn)
    fn = re.sub(r"\bf(32|64)\b", "T", fn)
    fn = re.sub(r"rand_pcg::pcg64::Lcg64Xsh32", "Pcg32", fn)
    fn = re.sub(r"sgmcmc::(?:\w+::)*(\w+)", r"\1", fn)
    return re.sub(r" \(\.llvm\.\d+\)", "", fn)


def main():
    sites = collections.defaultdict(lambda: (set(), set(), [0], set(), set()))
    for path in sys.argv[1:]:
        target, opt = re.match(r"(.*)-O(\w+)\.sites$", os.path.basename(path)).groups()
        for line in open(path).read().splitlines()[1:]:
            address, callee, caller, frames, up = (line.split("\t") + ["", "", "", ""])[:5]
            fn, loc = own_frame(frames, caller)
            if not loc.startswith("src/") and up:
                # An out-of-line instance of a core function: name its callers.
                ups = sorted({normalise(u) for u in up.split(" | ")})
                fn = f"{fn} (out of line; called from {' | '.join(ups)})"
            floats = set(re.findall(r"\bf(?:32|64)\b", fn + " " + caller + " " + up))
            fn = normalise(fn)
            callee = re.sub(r"^core::(panicking::(panic_const::)?)?", "", callee)
            builds, types, count, fns, callees = sites[loc]
            callees.add(callee)
            builds.add((opt, target))
            types.update(floats)
            fns.add(fn)
            count[0] += 1
    if not sites:
        return
    print(f"\n{len(sites)} source lines with panic call sites (the panic functions called; the "
          f"builds and float types, call sites in all builds; the functions they are inlined "
          f"into):")
    def key(item):
        line = re.sub(r"^.*:", "", item[0])
        return re.sub(r":\d+$", "", item[0]), int(line) if line.isdigit() else 0
    for loc, (builds, types, count, fns, callees) in sorted(sites.items(), key=key):
        by_opt = collections.defaultdict(list)
        for opt, target in sorted(builds):
            by_opt[opt].append(SHORT.get(target, target))
        where = "; ".join(f"O{opt}: {' '.join(ts)}" for opt, ts in sorted(by_opt.items()))
        floats = "/".join(sorted(types)) or "float type not in the names"
        print(f"  {loc}  {', '.join(sorted(callees))}\n      {where}; {floats}; {count[0]} call sites")
        for fn in sorted(fns)[:4]:
            print(f"      in {fn[:400]}")
        if len(fns) > 4:
            print(f"      … and {len(fns) - 4} more")


if __name__ == "__main__":
    main()
