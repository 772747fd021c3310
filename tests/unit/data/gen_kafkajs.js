// Write golden RecordBatch v2 files with kafkajs's own batch encoder
// (kafkajs 2.2.4 from tests/interop; it ships gzip only): one file per
// codec, kafkajs_<codec>.bin.  test_batch_golden.c decodes them.  Refresh:
//   node tests/unit/data/gen_kafkajs.js tests/unit/data
const { createRequire } = require('module')
// resolve kafkajs from tests/interop, wherever this runs from
const require2 = createRequire(require('path').resolve(__dirname, '../../interop/package.json'))
const fs = require('fs')
const path = require('path')
const { RecordBatch } = require2('kafkajs/src/protocol/recordBatch/v0')
const Record = require2('kafkajs/src/protocol/recordBatch/record/v0')
const { Types } = require2('kafkajs/src/protocol/message/compression')
const Long = require2('kafkajs/src/utils/long')

const N = 400
const valueOf = i => {
  let s = `{"i":${i},"text":"`
  for (let j = 0; j < i % 40; j++) s += `lorem${j} `
  return Buffer.from(s + '"}')
}

async function main(outdir) {
  for (const [name, codec] of [['none', Types.None], ['gzip', Types.GZIP]]) {
    const records = []
    for (let i = 0; i < N; i++) {
      records.push(Record({ offsetDelta: i, timestampDelta: i, key: Buffer.from(`key-${i}`),
        value: i % 5 === 4 ? null : valueOf(i), headers: { hdr: Buffer.from('hv') } }))
    }
    const batch = await RecordBatch({ compression: codec, firstOffset: Long.fromInt(0),
      firstTimestamp: 1700000000000, maxTimestamp: 1700000000000 + N - 1,
      lastOffsetDelta: N - 1, producerId: Long.fromInt(-1), producerEpoch: -1,
      firstSequence: -1, records })
    fs.writeFileSync(path.join(outdir, `kafkajs_${name}.bin`), batch.buffer)
    console.log(name, batch.buffer.length)
  }
}
main(process.argv[2] || '.')
