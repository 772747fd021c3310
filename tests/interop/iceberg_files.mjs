// Reading an Iceberg table's own files with avsc, for tests: the current
// metadata (through version-hint.text) and the records of Avro manifests.
import { readFileSync } from 'node:fs';
import avro from 'avsc';

export const localPath = (p) => p.replace(/^file:(\/\/)?/, '');

export function currentMetadata(loc) {
  const hint = readFileSync(`${loc}/metadata/version-hint.text`, 'utf8').trim();
  return JSON.parse(readFileSync(`${loc}/metadata/v${hint}.metadata.json`, 'utf8'));
}

export const readAvro = (path) => new Promise((res, rej) => {
  const out = [];
  avro.createFileDecoder(localPath(path)).on('data', (d) => out.push(d)).on('end', () => res(out))
    .on('error', rej);
});
