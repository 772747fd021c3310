// Helpers of the Protobuf registry clients (registry_proto.mjs,
// registry_proto_refs.mjs): protoc's descriptors of a .proto file under
// tests/interop/protos as a registry of its message types, and a table row
// as icebird reads it, normalized for comparison.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';

export function protoTypes(file) {
  const dir = mkdtempSync(join(tmpdir(), 'floe-proto-'));
  try {
    const out = join(dir, 'set.pb');
    execFileSync('protoc', ['-I', new URL('../protos', import.meta.url).pathname,
      '-I', '/usr/include', '--include_imports', '-o', out, file]);
    return createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(out)));
  } finally { rmSync(dir, { recursive: true, force: true }); }
}

export { normRow } from './common.mjs';
