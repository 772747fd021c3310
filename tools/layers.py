#!/usr/bin/env python3
"""The layers of one module: which of its files include and call which.

    tools/layers.py BUILD MODULE [--check] [--dot]

Reads src/MODULE/*.{c,h} for #include "MODULE/..." lines and the object
files BUILD/src/MODULE/*.o (nm) for calls: file A calls file B when A's
object needs a symbol B's object defines.  A header counts as part of the
.c file of the same name (x.h and x_int.h belong to x.c).

Prints the files from the top layer down, each with what it uses; with
--check exits 1 when the include or call graph has a cycle (and names it);
with --dot prints a Graphviz graph instead.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def unit_of(stem):
    """x_int.h is the private header of x.c: one unit."""
    return stem[:-4] if stem.endswith("_int") else stem


def units(module):
    """file stem -> list of source paths (x.c and x.h are one unit)."""
    out = {}
    folder = os.path.join("src", module)
    for name in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(name)
        if ext not in (".c", ".h"):
            continue
        out.setdefault(unit_of(stem), []).append(os.path.join(folder, name))
    return out


def include_edges(module, us):
    edges = {u: set() for u in us}
    for u, paths in us.items():
        for p in paths:
            with open(p, encoding="utf-8", errors="replace") as f:
                for inc in INCLUDE.findall(f.read()):
                    if not inc.startswith(module + "/"):
                        continue
                    stem = unit_of(os.path.splitext(os.path.basename(inc))[0])
                    if stem in us and stem != u:
                        edges[u].add(stem)
    return edges


def nm(obj):
    res = subprocess.run(["nm", obj], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def call_edges(build, module, us):
    folder = os.path.join(build, "src", module)
    defs, needs = {}, {}
    for u in us:
        obj = os.path.join(folder, u + ".o")
        if os.path.exists(obj):
            defs[u], needs[u] = nm(obj)
    owner = {}
    for u, syms in defs.items():
        for s in syms:
            owner[s] = u
    edges = {u: set() for u in us}
    for u, syms in needs.items():
        for s in syms:
            v = owner.get(s)
            if v and v != u:
                edges[u].add(v)
    return edges


def find_cycle(edges):
    """A cycle as a list of nodes, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def layers(edges):
    """Longest-path depth from the bottom: 0 uses nothing of the module."""
    depth = {}

    def d(n, seen=()):
        if n in depth:
            return depth[n]
        if n in seen:
            return 0
        depth[n] = 1 + max((d(m, seen + (n,)) for m in edges[n]), default=-1)
        return depth[n]

    for n in edges:
        d(n)
    return depth


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build, module = args
    us = units(module)
    inc = include_edges(module, us)
    call = call_edges(build, module, us)
    both = {u: inc[u] | call[u] for u in us}
    if "--dot" in argv:
        print("digraph %s {" % module)
        for u in sorted(both):
            for v in sorted(both[u]):
                print('  "%s" -> "%s";' % (u, v))
        print("}")
        return 0
    bad = 0
    for what, edges in (("include", inc), ("call", call)):
        c = find_cycle(edges)
        if c:
            print("layers: src/%s has an %s cycle: %s" % (module, what, " -> ".join(c)))
            bad = 1
    if "--check" in argv:
        if not bad:
            print("layers: src/%s: %d files, no include or call cycle" % (module, len(us)))
        return bad
    depth = layers(both)
    for u in sorted(us, key=lambda x: (-depth[x], x)):
        uses = ", ".join(sorted(both[u])) or "-"
        print("%2d  %-16s uses %s" % (depth[u], u, uses))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
