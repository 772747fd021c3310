// icebird turns s3://BUCKET/KEY into https://BUCKET.s3.amazonaws.com/KEY
// and fetches that: importing this module (after fetch_shim.mjs) sends
// those requests, and s3:// ones, to the tests' S3 server at $S3_ENDPOINT
// instead, path-style (the test grants anonymous GetObject on its bucket).
// Without S3_ENDPOINT nothing changes.
const endpoint = process.env.S3_ENDPOINT;
const prev = globalThis.fetch;
if (endpoint)
  globalThis.fetch = async (url, init = {}) => {
    const u = String(url);
    const m = /^https:\/\/([^/.]+)\.s3\.amazonaws\.com\/(.*)$/.exec(u) ||
      /^s3[an]?:\/\/([^/]+)\/(.*)$/.exec(u);
    return prev(m ? `${endpoint}/${m[1]}/${m[2]}` : url, init);
  };
