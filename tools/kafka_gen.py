#!/usr/bin/env python3
"""Generate floe's Kafka codec tables from src/kafka/messages.def.

Reads our declaration and writes src/kafka/proto_gen.h (typed structs,
API keys, allocation helpers) and src/kafka/proto_gen.c (field tables the
interpreter in proto.c walks).  Standard library only.  Run via `make gen`;
the output is committed, like Redis's generated command table."""
import re
import sys

PRIM = {
    'bool': ('bool', 'FLOE_KT_BOOL'),
    'int8': ('int8_t', 'FLOE_KT_INT8'),
    'int16': ('int16_t', 'FLOE_KT_INT16'),
    'uint16': ('uint16_t', 'FLOE_KT_UINT16'),
    'int32': ('int32_t', 'FLOE_KT_INT32'),
    'uint32': ('uint32_t', 'FLOE_KT_UINT32'),
    'int64': ('int64_t', 'FLOE_KT_INT64'),
    'float64': ('double', 'FLOE_KT_FLOAT64'),
    'uuid': ('floe_kuuid_t', 'FLOE_KT_UUID'),
    'string': ('floe_kstr_t', 'FLOE_KT_STRING'),
    'bytes': ('floe_kbytes_t', 'FLOE_KT_BYTES'),
    'records': ('floe_kbytes_t', 'FLOE_KT_RECORDS'),
}
PRIM_ARR = {'int32': 'floe_karr_i32_t', 'int64': 'floe_karr_i64_t',
            'string': 'floe_karr_str_t'}
VMAX = 32767


def snake(name):
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', name)
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', s)
    return s.lower()


def vrange(s, where):
    m = re.fullmatch(r'(\d+)(\+|-(\d+))?', s)
    if not m:
        sys.exit(f'{where}: bad version range {s!r}')
    lo = int(m.group(1))
    if m.group(2) == '+':
        return lo, VMAX
    if m.group(3) is not None:
        return lo, int(m.group(3))
    return lo, lo


class Field:
    def __init__(self, name, typ, vers, where):
        self.name, self.typ, self.where = name, typ, where
        self.vmin, self.vmax = vrange(vers, where)
        self.nmin, self.nmax = 1, 0
        self.tag = -1
        self.default = None
        self.children = []


def parse(path):
    apis = []
    cur = None
    msg = None
    stack = []  # (indent, field)
    for ln, raw in enumerate(open(path), 1):
        where = f'{path}:{ln}'
        line = raw.rstrip('\n')
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        indent = len(line) - len(line.lstrip(' '))
        toks = line.split()
        if indent == 0:
            if toks[0] == 'api':
                if len(toks) != 6 or toks[4] != 'flex':
                    sys.exit(f'{where}: expected "api KEY Name MIN-MAX flex V+"')
                lo, hi = vrange(toks[3], where)
                flex = VMAX if toks[5] == 'none' else vrange(toks[5], where)[0]
                cur = {'key': int(toks[1]), 'name': toks[2], 'vmin': lo,
                       'vmax': hi, 'flex': flex, 'request': [], 'response': []}
                apis.append(cur)
            elif toks[0] in ('request', 'response') and cur:
                msg = cur[toks[0]]
                stack = []
            else:
                sys.exit(f'{where}: unexpected {toks[0]!r}')
            continue
        if msg is None or indent % 2:
            sys.exit(f'{where}: field outside a message or odd indent')
        if len(toks) < 3:
            sys.exit(f'{where}: expected "Name type versions ..."')
        f = Field(toks[0], toks[1], toks[2], where)
        i = 3
        while i < len(toks):
            if toks[i] == 'null':
                f.nmin, f.nmax = vrange(toks[i + 1], where)
                i += 2
            elif toks[i] == 'tag':
                f.tag = int(toks[i + 1])
                i += 2
            elif toks[i] == '=':
                f.default = toks[i + 1]
                i += 2
            else:
                sys.exit(f'{where}: unexpected {toks[i]!r}')
        base = f.typ[2:] if f.typ.startswith('[]') else f.typ
        if base not in PRIM and not f.typ.startswith('[]'):
            sys.exit(f'{where}: unknown type {f.typ!r}')
        if f.typ.startswith('[]') and base in PRIM and base not in PRIM_ARR:
            sys.exit(f'{where}: arrays of {base} are not supported')
        depth = indent // 2 - 1
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if depth == 0:
            msg.append(f)
        else:
            if not stack or stack[-1][0] != depth - 1:
                sys.exit(f'{where}: bad nesting')
            stack[-1][1].children.append(f)
        if f.typ.startswith('[]') and base not in PRIM:
            stack.append((depth, f))
    for a in apis:
        for kind in ('request', 'response'):
            check(a[kind], a)
    return apis


def check(fields, api):
    tags = set()
    for f in fields:
        base = f.typ[2:] if f.typ.startswith('[]') else f.typ
        if f.typ.startswith('[]') and base not in PRIM and not f.children:
            sys.exit(f'{f.where}: struct array {f.typ} has no fields')
        if f.tag >= 0:
            if f.tag in tags:
                sys.exit(f'{f.where}: duplicate tag {f.tag}')
            tags.add(f.tag)
            if f.vmin < api['flex']:
                sys.exit(f'{f.where}: tagged field in non-flexible versions')
        check(f.children, api)


class Gen:
    def __init__(self):
        self.h = []   # struct typedefs (dependency order)
        self.c = []   # field tables
        self.helpers = []
        self.names = set()

    def struct(self, cname, fields, label, root=None):
        """Emit typedef + table for one struct; returns descriptor name.
        Nested structs are named root_<struct type> (unique per message)."""
        root = root or cname
        if cname in self.names:
            sys.exit(f'{label}: struct name {cname} declared twice')
        self.names.add(cname)
        members = []
        sub = {}
        for f in fields:
            if f.children:
                sub[f.name] = self.struct(f'{root}_{snake(f.typ[2:])}',
                                          f.children, f.typ[2:], root)
        for f in fields:
            fn = snake(f.name)
            if f.children:
                members.append(f'    struct {{ {root}_{snake(f.typ[2:])}_t *v; '
                               f'int32_t n; }} {fn};')
            elif f.typ.startswith('[]'):
                members.append(f'    {PRIM_ARR[f.typ[2:]]} {fn};')
            else:
                members.append(f'    {PRIM[f.typ][0]} {fn};')
        if not members:
            members.append('    uint8_t unused_;')
        self.h.append(f'typedef struct {cname} {{\n' + '\n'.join(members) +
                      f'\n}} {cname}_t;\n')
        dname = 'floe_kd' + cname[len('floe_k'):]
        rows = []
        for f in fields:
            is_arr = f.typ.startswith('[]')
            base = f.typ[2:] if is_arr else f.typ
            kt = 'FLOE_KT_STRUCT' if f.children else PRIM[base][1]
            d = f.default
            def_int, def_null = 0, 0
            if d is not None:
                if d == 'null':
                    def_null = 1
                elif d == 'true':
                    def_int = 1
                elif d in ('false', '""'):
                    pass
                else:
                    def_int = int(d, 0)
            subp = f'&{sub[f.name]}' if f.children else 'NULL'
            rows.append(
                f'    {{"{f.name}", {kt}, {int(is_arr)}, {f.vmin}, {f.vmax}, '
                f'{f.nmin}, {f.nmax}, {f.tag}, offsetof({cname}_t, '
                f'{snake(f.name)}), {subp}, {def_int}LL, {def_null}}},')
        # tagged fields must be written in ascending tag order: keep the
        # table in declaration order but check the tags ascend
        tags = [f.tag for f in fields if f.tag >= 0]
        if tags != sorted(tags):
            sys.exit(f'{label}: tagged fields must be declared in tag order')
        if rows:
            self.c.append(f'static const floe_kfield_t {dname}_fields[] = {{\n' +
                          '\n'.join(rows) + '\n};')
            self.c.append(f'const floe_kstruct_t {dname} = {{"{label}", '
                          f'sizeof({cname}_t), {len(rows)}, {dname}_fields}};\n')
        else:
            self.c.append(f'const floe_kstruct_t {dname} = {{"{label}", '
                          f'sizeof({cname}_t), 0, NULL}};\n')
        self.helpers.append(
            f'extern const floe_kstruct_t {dname};\n'
            f'static inline {cname}_t *{cname}_new(floe_arena_t *a)\n'
            f'{{ return ({cname}_t *)floe_kstruct_new(a, &{dname}); }}\n'
            f'static inline {cname}_t *{cname}_new_array(floe_arena_t *a, int32_t n)\n'
            f'{{ return ({cname}_t *)floe_kstruct_new_array(a, &{dname}, n); }}\n')
        return dname


def main():
    src, out_h, out_c = sys.argv[1:4]
    apis = parse(src)
    g = Gen()
    enum = []
    table = []
    for a in sorted(apis, key=lambda a: a['key']):
        sn = snake(a['name'])
        enum.append(f'    FLOE_KAPI_{sn.upper()} = {a["key"]},')
        dq = g.struct(f'floe_k_{sn}_req', a['request'], a['name'] + 'Request')
        dr = g.struct(f'floe_k_{sn}_resp', a['response'], a['name'] + 'Response')
        table.append(f'    {{{a["key"]}, "{a["name"]}", {a["vmin"]}, {a["vmax"]}, '
                     f'{a["flex"]}, &{dq}, &{dr}}},')
    with open(out_h, 'w') as h:
        h.write('/* Generated by tools/kafka_gen.py from src/kafka/messages.def.'
                '\n * Do not edit: change the declaration and run `make gen`. */\n'
                '#ifndef FLOE_KAFKA_PROTO_GEN_H\n#define FLOE_KAFKA_PROTO_GEN_H\n\n'
                '#include "kafka/proto.h"\n\n')
        h.write('enum floe_kapi_key {\n' + '\n'.join(enum) + '\n};\n\n')
        h.write(f'#define FLOE_KAPI_COUNT {len(apis)}\n\n')
        h.write('\n'.join(g.h))
        h.write('\n/* Field tables and typed allocation helpers (objects come '
                'with declared defaults). */\n')
        h.write('\n'.join(g.helpers))
        h.write('\n#endif\n')
    with open(out_c, 'w') as c:
        c.write('/* Generated by tools/kafka_gen.py from src/kafka/messages.def.'
                '\n * Do not edit: change the declaration and run `make gen`. */\n'
                '#include <stddef.h>\n\n#include "kafka/proto_gen.h"\n\n')
        c.write('\n'.join(g.c))
        c.write('\nconst floe_kapi_t floe_kapi_table[] = {\n' + '\n'.join(table) +
                '\n};\nconst size_t floe_kapi_table_len = '
                f'{len(apis)};\n')


if __name__ == '__main__':
    main()
