// icebird reads through global fetch, which has no file:// in Node 20:
// importing this module makes fetch serve local paths (plain, file:/ or
// file:///), with HEAD and Range, as an object store would.  http(s)://
// URLs go to the network as before.
import { statSync, openSync, readSync, closeSync } from 'node:fs';

const net = globalThis.fetch; // http(s):// URLs still go to the network

globalThis.fetch = async (url, init = {}) => {
  let p = String(url);
  if (/^https?:\/\//.test(p)) return net(url, init);
  if (p.startsWith('file://')) p = p.slice(7); else if (p.startsWith('file:')) p = p.slice(5);
  let size;
  try { size = statSync(p).size; } catch { return new Response('not found', { status: 404 }); }
  if ((init.method || 'GET') === 'HEAD')
    return new Response(null, { status: 200, headers: { 'content-length': String(size) } });
  const range = init.headers && (init.headers.Range || init.headers.range);
  let start = 0, end = size - 1, status = 200;
  if (range) {
    const m = /bytes=(\d+)-(\d*)/.exec(range);
    start = Number(m[1]); if (m[2]) end = Math.min(Number(m[2]), size - 1); status = 206;
  }
  const buf = Buffer.alloc(Math.max(0, end - start + 1));
  const fd = openSync(p, 'r'); readSync(fd, buf, 0, buf.length, start); closeSync(fd);
  return new Response(buf, { status, headers: { 'content-length': String(buf.length) } });
};
