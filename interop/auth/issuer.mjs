// The authorization server of the auth tests (tests/auth_http.rs) and of the README's example:
// oauth2-mock-server on a loopback port. Its token endpoint follows RFC 8707: a `resource`
// parameter becomes the token's `aud`, and a client-credentials token's `sub` is the client id.
// For an MCP client's own OAuth flow (interop/python/check_oauth.py) it also takes dynamic client
// registration (RFC 7591, `POST /register`, named in its metadata as `registration_endpoint`), and
// an authorization-code token carries the scope its authorization request asked for.
//
// `node issuer.mjs --port N` serves on port N until stopped. Without `--port` it takes an
// ephemeral port and is driven over stdin/stdout one JSON line at a time.
//
// On start it prints {"issuer": URL, "kid": KID}. Then each line in is a command, each line out
// its answer ({"error": ...} when it fails):
//   {"op":"token","claims":{...},"kid":K?,"expiresIn":N?}  -> {"token"}   a token it signs
//                                  (claims merged into the payload; a null claim is removed)
//   {"op":"forge","kind":"none"|"hs256"|"tampered"|"unknown-kid","claims":{...}} -> {"token"}
//                                  a token it did not sign properly, built from a good one
//   {"op":"rotate"}                -> {"kid"}    a new signing key, published beside the old
//   {"op":"opaque","token":T,"claims":{...}} -> {}  introspection answers {active:true, ...claims}
//                                  for T (every other token: {active:false})
//   {"op":"stop"}                  -> {}         the server stops listening (JWKS down)
import { OAuth2Server } from 'oauth2-mock-server';
import { SignJWT, exportSPKI, generateKeyPair, importJWK } from 'jose';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

const server = new OAuth2Server();
const first = await server.issuer.keys.generate('RS256');
// The mock's own request handler behind a thin front: its introspection route reads no body, so
// the front parses the form (and insists on client credentials) before handing the request on.
const app = server.service.requestHandler;
const front = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/register') return register(req, res);
  if (req.method === 'GET' && req.url === '/.well-known/openid-configuration') {
    // The mock's document, naming the registration endpoint too.
    res.json = (doc) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ ...doc, registration_endpoint: `${server.issuer.url}/register` }));
      return res;
    };
  }
  if (req.method !== 'POST' || req.url !== '/introspect') return app(req, res);
  if (!/^Basic /.test(req.headers.authorization ?? '')) {
    res.writeHead(401).end();
    return;
  }
  let form = '';
  req.on('data', (chunk) => (form += chunk));
  req.on('end', () => {
    req.body = Object.fromEntries(new URLSearchParams(form));
    app(req, res);
  });
});
// RFC 7591: any client may register; it gets a fresh public client id (no secret).
function register(req, res) {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    let metadata;
    try {
      metadata = JSON.parse(body);
    } catch {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"invalid_client_metadata"}');
      return;
    }
    const client = {
      ...metadata,
      client_id: randomUUID(),
      client_id_issued_at: Math.floor(Date.now() / 1000),
      token_endpoint_auth_method: 'none',
    };
    res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify(client));
  });
}
// The scope each authorization code was asked for, until its token is issued.
const codeScopes = new Map();
server.service.on('beforeAuthorizeRedirect', ({ url }, req) => {
  const code = url.searchParams.get('code');
  if (code && typeof req.query.scope === 'string') codeScopes.set(code, req.query.scope);
});
const codeScope = (req) => (req.body?.grant_type === 'authorization_code' ? codeScopes.get(req.body.code) : undefined);
server.service.on('beforeResponse', (response, req) => {
  const scope = codeScope(req);
  if (scope !== undefined) {
    response.body.scope = scope;
    codeScopes.delete(req.body.code);
  }
});
server.service.on('beforeTokenSigning', (token, req) => {
  if (req.body?.resource) token.payload.aud = req.body.resource;
  const scope = codeScope(req);
  if (scope !== undefined) token.payload.scope = scope;
  if (req.body?.grant_type === 'client_credentials') {
    token.payload.sub = req.body.client_id ?? basicUser(req.headers.authorization);
  }
});
const basicUser = (header) =>
  /^Basic /.test(header ?? '') ? Buffer.from(header.slice(6), 'base64').toString().split(':')[0] : undefined;
const portFlag = process.argv.indexOf('--port');
const port = portFlag > 0 ? Number(process.argv[portFlag + 1]) : 0;
await new Promise((resolve) => front.listen(port, '127.0.0.1', resolve));
server.issuer.url = `http://localhost:${front.address().port}`;
const opaque = new Map();
server.service.on('beforeIntrospect', (response, req) => {
  const claims = opaque.get(req.body?.token);
  response.body = claims ? { active: true, ...claims } : { active: false };
});

const say = (value) => process.stdout.write(JSON.stringify(value) + '\n');
const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

async function token({ claims = {}, kid, expiresIn }) {
  return server.issuer.buildToken({
    kid,
    expiresIn,
    scopesOrTransform: (_header, payload) => {
      for (const [k, v] of Object.entries(claims)) {
        if (v === null) delete payload[k];
        else payload[k] = v;
      }
    },
  });
}

async function forge({ kind, claims }) {
  const good = await token({ claims });
  const [header, payload, signature] = good.split('.');
  const body = JSON.parse(Buffer.from(payload, 'base64url'));
  const kid = JSON.parse(Buffer.from(header, 'base64url')).kid;
  switch (kind) {
    case 'none':
      return `${b64({ alg: 'none', typ: 'JWT', kid })}.${payload}.`;
    case 'hs256': {
      // The classic confusion: the issuer's public key, as PEM, used as an HMAC secret.
      const jwk = server.issuer.keys.toJSON().find((k) => k.kid === kid);
      const pem = await exportSPKI(await importJWK({ ...jwk, alg: 'RS256' }, 'RS256'));
      const head = b64({ alg: 'HS256', typ: 'JWT', kid });
      const mac = createHmac('sha256', pem).update(`${head}.${payload}`).digest('base64url');
      return `${head}.${payload}.${mac}`;
    }
    case 'tampered':
      return `${header}.${b64({ ...body, sub: 'mallory' })}.${signature}`;
    case 'unknown-kid': {
      const { privateKey } = await generateKeyPair('RS256');
      return new SignJWT(body).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'not-published' }).sign(privateKey);
    }
    default:
      throw new Error(`unknown forgery ${kind}`);
  }
}

say({ issuer: server.issuer.url, kid: first.kid });
if (port) await new Promise(() => {}); // serve until stopped
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  try {
    const command = JSON.parse(line);
    switch (command.op) {
      case 'token':
        say({ token: await token(command) });
        break;
      case 'forge':
        say({ token: await forge(command) });
        break;
      case 'rotate':
        say({ kid: (await server.issuer.keys.generate('RS256')).kid });
        break;
      case 'opaque':
        opaque.set(command.token, command.claims ?? {});
        say({});
        break;
      case 'stop':
        front.closeAllConnections();
        await new Promise((resolve) => front.close(resolve));
        say({});
        break;
      default:
        say({ error: `unknown op ${command.op}` });
    }
  } catch (e) {
    say({ error: String(e?.stack ?? e) });
  }
}
front.closeAllConnections();
front.close();
