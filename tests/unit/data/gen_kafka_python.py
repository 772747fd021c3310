#!/usr/bin/python3
"""Write golden RecordBatch v2 files with kafka-python's own batch builder
(python3-kafka; codecs from python3-snappy, python3-lz4, python3-zstandard),
one file per codec: kafka_python_<codec>.bin.  kafka-python frames snappy
the way snappy-java does (xerial), in 32 KiB blocks.  test_batch_golden.c
decodes these files; rerun this script only to refresh them:
    /usr/bin/python3 tests/unit/data/gen_kafka_python.py tests/unit/data
"""
import os
import sys

from kafka.record.default_records import DefaultRecordBatchBuilder

N = 400
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def value_of(i):
    return ('{"i":%d,"text":"' % i + "".join("lorem%d " % j for j in range(i % 40)) + '"}').encode()


def main(outdir):
    for name, codec in CODECS.items():
        b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                      producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                      batch_size=1 << 24)
        for i in range(N):
            b.append(i, 1700000000000 + i, ("key-%d" % i).encode(),
                     None if i % 5 == 4 else value_of(i), [("hdr", b"hv"), ("nullh", None)])
        data = bytes(b.build())
        with open(os.path.join(outdir, "kafka_python_%s.bin" % name), "wb") as f:
            f.write(data)
        print(name, len(data))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
