// Auth on floe's REST catalog (floe started by test_rest_auth with two
// static tokens, two OAuth2 clients and a 3 s token lifetime): what a
// client without, with a wrong, and with an expired token gets (401 and
// the spec's IcebergErrorResponse), the token endpoint's answers
// (OAuthTokenResponse, OAuthError) for client credentials in the form and
// in HTTP Basic, token exchange (a refresh), bad grants; iceberg-js with a
// static and with an issued token.
import { IcebergRestCatalog } from 'iceberg-js';
import { step, assert, eq, sleep, finish } from './common.mjs';
import { shape } from './rest_shapes.mjs';

const http = process.env.FLOE_HTTP;
assert(http, 'FLOE_HTTP is not set');
const base = `http://${http}`;
const TTL_S = 3;

async function call(method, path, { token, headers = {}, body, form } = {}) {
  const h = { ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  if (body) h['Content-Type'] = 'application/json';
  if (form) h['Content-Type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(`${base}/v1/${path}`, {
    method, headers: h, body: form ? new URLSearchParams(form).toString() : body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (text) assert((res.headers.get('content-type') || '').startsWith('application/json'), `${path}: Content-Type`);
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
function unauthorized(r, what) {
  eq(r.status, 401, `${what}: status`);
  shape(r.body, { error: 'object' }, 'IcebergErrorResponse');
  shape(r.body.error, { message: 'string', type: 'string', code: 'number' }, 'ErrorModel');
  eq(r.body.error.type, 'NotAuthorizedException', `${what}: error.type`);
  eq(r.body.error.code, 401, `${what}: error.code`);
  assert(/^Bearer\b/.test(r.headers.get('www-authenticate') || ''), `${what}: WWW-Authenticate ${r.headers.get('www-authenticate')}`);
  return r.body.error.message;
}
function oauthError(r, status, code) {
  eq(r.status, status, `OAuth error status for ${code}`);
  shape(r.body, { error: 'string', error_description: 'string|absent', error_uri: 'string|absent' }, 'OAuthError');
  eq(r.body.error, code, 'OAuthError.error');
  eq(r.headers.get('cache-control'), 'no-store', 'an OAuth error is not cached');
}
function tokenShape(r) {
  eq(r.status, 200, 'token status');
  eq(r.headers.get('cache-control'), 'no-store', 'a token is not cached');
  shape(r.body, { access_token: 'string', token_type: 'string', expires_in: 'number|absent',
    issued_token_type: 'string|absent', refresh_token: 'absent|string', scope: 'string|absent' }, 'OAuthTokenResponse');
  eq(r.body.token_type.toLowerCase(), 'bearer', 'token_type');
  eq(r.body.expires_in, TTL_S, 'expires_in: rest.auth.token.ttl.ms');
  eq(r.body.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token', 'issued_token_type');
  assert(r.body.access_token.length >= 43, 'a token of at least 256 bits');
  return r.body.access_token;
}
const ns = `auth_${process.pid}`;

await step('rest_auth_required', 30, async () => {
  assert(/bearer/i.test(unauthorized(await call('GET', 'config'), 'no header')), 'says a bearer token is wanted');
  unauthorized(await call('GET', 'namespaces'), 'no header on a listing');
  unauthorized(await call('POST', 'namespaces', { body: { namespace: [ns] } }), 'no header on a create');
  eq((await call('HEAD', 'namespaces/x')).status, 401, 'no header on HEAD');
  unauthorized(await call('GET', 'namespaces', { token: 'static-token-three' }), 'a wrong token');
  unauthorized(await call('GET', 'namespaces', { headers: { Authorization: 'Basic ZW5naW5lOnMzY3JldA==' } }), 'Basic on the API');
  // nothing was created by the refused create
  eq((await call('GET', `namespaces/${ns}`, { token: 'static-token-two' })).status, 404, 'the refused create did nothing');
  // /health and /metrics stay open
  eq((await fetch(`${base}/health`)).status, 200, '/health open');
  const m = await (await fetch(`${base}/metrics`)).text();
  assert(/^floe_rest_unauthorized_total [1-9]\d*$/m.test(m), 'refusals counted in /metrics');
});

await step('rest_auth_static_tokens', 30, async () => {
  const r = await call('GET', 'config', { token: 'static-token-one' });
  eq(r.status, 200, 'config with a static token');
  const cat = new IcebergRestCatalog({ baseUrl: base, auth: { type: 'bearer', token: 'static-token-two' } });
  await cat.createNamespace({ namespace: [ns] });
  assert(await cat.namespaceExists({ namespace: [ns] }), 'iceberg-js with a static token');
  const anon = new IcebergRestCatalog({ baseUrl: base });
  let e;
  try { await anon.listNamespaces(); } catch (x) { e = x; }
  assert(e && e.status === 401, `iceberg-js without a token: ${e && e.status}`);
});

let issued;
await step('rest_oauth_client_credentials', 30, async () => {
  issued = tokenShape(await call('POST', 'oauth/tokens', {
    form: { grant_type: 'client_credentials', client_id: 'engine', client_secret: 's3cret', scope: 'catalog' } }));
  const again = tokenShape(await call('POST', 'oauth/tokens', {
    form: { grant_type: 'client_credentials', client_id: 'engine', client_secret: 's3cret' } }));
  assert(again !== issued, 'every token is new');
  // HTTP Basic (RFC 6749 2.3.1: form-encoded id and secret, base64)
  const basic = Buffer.from(`spark:${encodeURIComponent('other%secret')}`).toString('base64');
  tokenShape(await call('POST', 'oauth/tokens', { headers: { Authorization: `Basic ${basic}` }, form: { grant_type: 'client_credentials' } }));
  tokenShape(await call('POST', 'oauth/tokens', {
    form: { grant_type: 'client_credentials', client_id: 'spark', client_secret: 'other%secret' } }));
  const cat = new IcebergRestCatalog({ baseUrl: base, auth: { type: 'bearer', token: issued } });
  eq((await cat.loadNamespaceMetadata({ namespace: [ns] })).properties, {}, 'iceberg-js with an issued token');
  oauthError(await call('POST', 'oauth/tokens', { form: { grant_type: 'client_credentials', client_id: 'engine', client_secret: 'wrong' } }),
    401, 'invalid_client');
  oauthError(await call('POST', 'oauth/tokens', { form: { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 's3cret' } }),
    401, 'invalid_client');
  oauthError(await call('POST', 'oauth/tokens', { form: { grant_type: 'client_credentials' } }), 400, 'invalid_request');
  oauthError(await call('POST', 'oauth/tokens', { form: { client_id: 'engine' } }), 400, 'invalid_request');
  oauthError(await call('POST', 'oauth/tokens', { form: { grant_type: 'password', username: 'a', password: 'b' } }),
    400, 'unsupported_grant_type');
});

await step('rest_oauth_token_exchange_and_expiry', 60, async () => {
  const fresh = tokenShape(await call('POST', 'oauth/tokens', { token: issued, form: {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: issued,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', scope: 'catalog' } }));
  assert(fresh !== issued, 'the exchange issues a new token');
  eq((await call('GET', 'namespaces', { token: fresh })).status, 200, 'the exchanged token works');
  oauthError(await call('POST', 'oauth/tokens', { form: {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: 'made-up',
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' } }), 400, 'invalid_grant');
  oauthError(await call('POST', 'oauth/tokens', { form: {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: issued,
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' } }), 400, 'invalid_request');
  // past the lifetime: the issued tokens are refused, the static ones not
  await sleep(TTL_S * 1000 + 500);
  assert(/expired/.test(unauthorized(await call('GET', 'namespaces', { token: issued }), 'an expired token')), 'says expired');
  unauthorized(await call('GET', `namespaces/${ns}`, { token: fresh }), 'the exchanged token expired too');
  oauthError(await call('POST', 'oauth/tokens', { form: {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: issued,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' } }), 400, 'invalid_grant');
  eq((await call('GET', 'namespaces', { token: 'static-token-one' })).status, 200, 'static tokens do not expire');
  eq((await call('DELETE', `namespaces/${ns}`, { token: 'static-token-one' })).status, 204, 'drop with a static token');
});

finish();
