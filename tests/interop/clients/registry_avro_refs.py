"""Avro schema references through floe's registry with python3-confluent-
kafka's SchemaRegistryClient (1.7: Schema(..., references=[SchemaReference
(...)])): the topic's Customer schema, registered again with its references,
keeps its id; lookup_schema and get_schema answer the references.  Its
AvroSerializer needs fastavro (not in Debian), so records are written with
python3-avro, the referenced types parsed first into the same names, in the
Confluent wire format, and produced with confluent_kafka's Producer (rows
30..49 of tests/interop/clients/registry_avro_refs.mjs).  Needs FLOE_KAFKA,
FLOE_HTTP and REFS_TOPIC."""
import io
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BROKER, check, eq, finish, step  # noqa: E402
import avro.io  # noqa: E402
import avro.name  # noqa: E402
import avro.schema  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient  # noqa: E402

HTTP = os.environ['FLOE_HTTP']
TOPIC = os.environ['REFS_TOPIC']
N1, N2 = 30, 20

client = SchemaRegistryClient({'url': 'http://%s' % HTTP})
refs = [SchemaReference('com.acme.Address', '%s-address' % TOPIC, 1),
        SchemaReference('com.acme.Kind', '%s-kind' % TOPIC, 1)]
state = {}


def texts():
    """The three schemas as the registry has them (the referenced ones by
    subject, the topic's by its latest version)."""
    addr = client.get_latest_version('%s-address' % TOPIC).schema.schema_str
    kind = client.get_latest_version('%s-kind' % TOPIC).schema.schema_str
    cust = client.get_latest_version('%s-value' % TOPIC)
    return addr, kind, cust


def register():
    addr, kind, cust = texts()
    sid = client.register_schema('%s-value' % TOPIC, Schema(cust.schema.schema_str, 'AVRO', refs))
    eq(sid, cust.schema_id, 'the id of the schema registered again with its references')
    found = client.lookup_schema('%s-value' % TOPIC, Schema(cust.schema.schema_str, 'AVRO', refs))
    eq((found.schema_id, found.version), (cust.schema_id, 1), 'lookup')
    got = client.get_schema(sid)
    eq([(r.name, r.subject, r.version) for r in got.references],
       [(r.name, r.subject, r.version) for r in refs], 'references of get_schema')
    state.update(id=sid, addr=addr, kind=kind, cust=cust.schema.schema_str)


def row(i):
    return {'id': i, 'name': 'cust %d \u2713' % i,
            'home': {'street': '%d Main St' % i, 'city': 'Lyon' if i % 2 else 'Oslo',
                     'zip': 'Z%d' % i if i % 3 else None},
            'kind': 'WHOLESALE' if i % 2 else 'RETAIL',
            'work': None if i % 4 else {'street': '%d Work Rd' % i, 'city': 'Bonn', 'zip': None}}


def produce():
    names = avro.name.Names()
    avro.schema.make_avsc_object(json.loads(state['addr']), names)
    avro.schema.make_avsc_object(json.loads(state['kind']), names)
    schema = avro.schema.make_avsc_object(json.loads(state['cust']), names)
    writer = avro.io.DatumWriter(schema)
    p = Producer({'bootstrap.servers': BROKER, 'acks': 'all'})
    for i in range(N1, N1 + N2):
        buf = io.BytesIO()
        buf.write(struct.pack('>bI', 0, state['id']))
        writer.write(row(i), avro.io.BinaryEncoder(buf))
        p.produce(TOPIC, key=b'p%d' % i, value=buf.getvalue())
    check(p.flush(30) == 0, 'records left unsent')


step('avro_refs_python_register_with_references', 60, register)
if 'id' in state:
    step('avro_refs_python_produce', 60, produce)
finish()
