#!/usr/bin/python3
"""Avro interop with python3-avro (Debian), driven by tests/unit/test_avro_interop.c.

  avro_interop.py read DIR   read every floe_*.avro in DIR whose codec this
                             python-avro supports; compare header schema,
                             metadata and records with NAME.json next to it
  avro_interop.py write DIR  write py_CASE_CODEC.avro from avro_cases.json

Prints "ok - ..." / "not ok - ...: why" lines.  Records are compared in
floe's JSON rendering (floe_avro_value_to_json): unions as their branch's
value, bytes/fixed as {"$bytes": hex}, NaN/Infinity as strings.  python-avro
applies logical types (date, timestamp-micros, decimal, ...), so values are
converted back to their underlying Avro values for the comparison.
"""
import datetime
import decimal
import json
import math
import os
import sys
import warnings

import avro.codecs
import avro.datafile
import avro.io
import avro.errors
import avro.schema

# Iceberg marks map-as-array with logicalType "map", unknown to python-avro.
warnings.simplefilter("ignore", avro.errors.IgnoredLogicalType)

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
EPOCH_DATE = datetime.date(1970, 1, 1)


def codecs():
    out = ["null", "deflate"]
    if avro.codecs.has_snappy:
        out.append("snappy")
    if avro.codecs.has_zstandard:
        out.append("zstandard")
    return out


def num_out(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def unscaled_bytes(d, scale, size):
    """Decimal -> two's complement big-endian bytes (minimal, or size bytes)."""
    n = int(d.scaleb(scale))
    if size is None:
        size = (n.bit_length() + 8) // 8  # + a sign bit, rounded up
    return n.to_bytes(size, "big", signed=True)


def to_ours(s, v):
    """python-avro datum -> floe's JSON rendering, guided by the schema."""
    t = s.type
    lt = getattr(s, "logical_type", None)
    if isinstance(s, avro.schema.UnionSchema):
        for b in s.schemas:
            if b.validate(v) is not None or (b.type == "null" and v is None):
                return to_ours(b, v)
        raise ValueError("no union branch for %r" % (v,))
    if t == "null":
        return None
    if t in ("boolean", "string", "enum"):
        return v
    if t == "int":
        if isinstance(v, datetime.date):
            return (v - EPOCH_DATE).days
        if isinstance(v, datetime.time):
            return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
        return v
    if t == "long":
        if isinstance(v, datetime.datetime):
            unit = 1000 if lt == "timestamp-millis" else 1
            return (v - EPOCH) // datetime.timedelta(microseconds=unit)
        if isinstance(v, datetime.time):
            return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000000 + v.microsecond
        return v
    if t in ("float", "double"):
        return num_out(v)
    if t in ("bytes", "fixed"):
        if isinstance(v, decimal.Decimal):
            v = unscaled_bytes(v, s.get_prop("scale") or 0, s.size if t == "fixed" else None)
        return {"$bytes": v.hex()}
    if t == "array":
        return [to_ours(s.items, x) for x in v]
    if t == "map":
        return {k: to_ours(s.values, x) for k, x in v.items()}
    if t in ("record", "error"):
        return {f.name: to_ours(f.type, v[f.name]) for f in s.fields}
    raise ValueError("unhandled type %s" % t)


def from_ours(s, j):
    """floe's JSON rendering -> python-avro datum (logical types as python types)."""
    t = s.type
    lt = getattr(s, "logical_type", None)
    if isinstance(s, avro.schema.UnionSchema):
        if j is None:
            return None
        return from_ours(next(b for b in s.schemas if b.type != "null"), j)
    if t == "int" and lt == "date":
        return EPOCH_DATE + datetime.timedelta(days=j)
    if t == "long" and lt == "timestamp-micros":
        return EPOCH + datetime.timedelta(microseconds=j)
    if t == "long" and lt == "time-micros":
        return (datetime.datetime.min + datetime.timedelta(microseconds=j)).time()
    if t in ("float", "double"):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(j, j) if isinstance(j, str) else float(j)
    if t in ("bytes", "fixed"):
        b = bytes.fromhex(j["$bytes"])
        if lt == "decimal":
            return decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-(s.get_prop("scale") or 0))
        return b
    if t == "array":
        return [from_ours(s.items, x) for x in j]
    if t == "map":
        return {k: from_ours(s.values, x) for k, x in j.items()}
    if t in ("record", "error"):
        return {f.name: from_ours(f.type, j[f.name]) for f in s.fields}
    return j


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def read_mode(d):
    have = codecs()
    files = sorted(f for f in os.listdir(d) if f.startswith("floe_") and f.endswith(".avro"))
    if not files:
        print("not ok - python-avro read: no floe_*.avro files")
    for f in files:
        name = f[:-5]
        want = json.load(open(os.path.join(d, name + ".json")))
        why = []
        try:
            with open(os.path.join(d, f), "rb") as fh:
                r = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
                codec = r.get_meta("avro.codec").decode()
                if codec not in have:
                    r.close()
                    continue  # this python-avro lacks the module for it
                if not same(json.loads(r.get_meta("avro.schema").decode()), want["schema"]):
                    why.append("header schema differs: %s" % r.get_meta("avro.schema").decode())
                for k, v in want["meta"].items():
                    m = r.get_meta(k)
                    if m is None or m.decode() != v:
                        why.append("meta %s = %r" % (k, m))
                schema = r.datum_reader.writers_schema
                recs = [to_ours(schema, x) for x in r]
                r.close()
            if len(recs) != len(want["records"]):
                why.append("%d records, want %d" % (len(recs), len(want["records"])))
            for i, (a, b) in enumerate(zip(recs, want["records"])):
                if len(why) < 3 and not same(a, b):
                    why.append("record %d: %s != %s" % (i, json.dumps(a), json.dumps(b)))
            if why:
                print("not ok - python-avro reads %s: %s" % (name, "; ".join(why)))
            else:
                print("ok - python-avro reads %s (%d records)" % (name, len(recs)))
        except Exception as e:  # report, do not stop at the first file
            print("not ok - python-avro reads %s: %s: %s" % (name, type(e).__name__, e))


def write_mode(d):
    cases = json.load(open(os.path.join(HERE, "avro_cases.json")))["cases"]
    for c in cases:
        schema = avro.schema.parse(json.dumps(c["schema"]))
        for codec in codecs():
            name = "py_%s_%s" % (c["name"], codec)
            try:
                with open(os.path.join(d, name + ".avro"), "wb") as fh:
                    w = avro.datafile.DataFileWriter(fh, avro.io.DatumWriter(), schema, codec=codec)
                    for k, v in c["meta"].items():
                        w.set_meta(k, v.encode())
                    for i, rec in enumerate(c["records"]):
                        w.append(from_ours(schema, rec))
                        if i == 0:
                            w.flush()  # more than one block
                    w.close()
                print("ok - python-avro writes %s" % name)
            except Exception as e:
                print("not ok - python-avro writes %s: %s: %s" % (name, type(e).__name__, e))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("read", "write"):
        print("usage: avro_interop.py read|write DIR", file=sys.stderr)
        sys.exit(2)
    (read_mode if sys.argv[1] == "read" else write_mode)(sys.argv[2])
