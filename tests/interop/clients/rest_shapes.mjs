// The REST catalog spec's response shapes, checked field by field: shape()
// takes the fields a schema requires and the JSON types each may have
// ('a|b', 'absent' for an optional field left out).
import { assert } from './common.mjs';

export const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
export function shape(obj, fields, what) {
  assert(typeOf(obj) === 'object', `${what}: not an object: ${JSON.stringify(obj)}`);
  for (const [k, t] of Object.entries(fields)) {
    const ok = t.split('|').some((x) => (x === 'absent' ? !(k in obj) : typeOf(obj[k]) === x));
    assert(ok, `${what}: ${k} is ${typeOf(obj[k])}, want ${t}`);
  }
}
