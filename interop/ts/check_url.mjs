// The official TypeScript SDK clients answering examples/release's `publish`, which sends the
// user to a sign-in page with a URL-mode elicitation, over stdio:
//   v1 = @modelcontextprotocol/sdk (legacy era, 2025-11-25): `elicitation/create` in URL mode on
//        the session, then `notifications/elicitation/complete` for the same id; a call that
//        does not wait is the error -32042 naming the page;
//   v2 = @modelcontextprotocol/client (`auto`, so 2026-07-28): the ask comes back as one
//        `input_required` round, which the client fulfils through its handler and retries.
// Both declare URL mode (`elicitation: { url: {} }`). Every check prints one PASS/FAIL line; the
// exit code is 1 when any failed.
//
// usage: node check_url.mjs RELEASE_BINARY

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { reporter, said } from './report.mjs';

const report = reporter('ts-url');
const check = report.check;

const [SERVER] = process.argv.slice(2);
const PAGE = 'https://registry.example.com/sign-in?package=release&version=1.4.2';

/** A client of `sdk` that accepts every elicitation, recording each (mode, url, id), and every
 * completion notification's id. */
async function connect(sdk, asked, completed) {
  const capabilities = { elicitation: { form: {}, url: {} } };
  const elicit = async (request) => {
    const { mode, url, elicitationId } = request.params;
    asked.push({ mode: mode ?? 'form', url, id: elicitationId });
    return { action: 'accept' };
  };
  if (sdk === 'v1') {
    const client = new ClientV1({ name: 'surface-interop-v1', version: '0.0.0' }, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, elicit);
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      completed.push(n.params.elicitationId);
    });
    await client.connect(new StdioV1({ command: SERVER, args: [], stderr: 'ignore' }));
    return client;
  }
  const client = new ClientV2(
    { name: 'surface-interop-v2', version: '0.0.0' },
    { capabilities, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', elicit);
  await client.connect(new StdioV2({ command: SERVER, args: [], stderr: 'ignore' }));
  return client;
}

/** Waits (at most `ms`) until `ready()` holds. */
async function until(ready, ms = 5000) {
  const end = Date.now() + ms;
  while (!ready() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return ready();
}

async function scenario(sdk) {
  const tag = `${sdk}/stdio`;
  const asked = [];
  const completed = [];
  const client = await connect(sdk, asked, completed);
  try {
    if (sdk === 'v2') {
      const version = client.getNegotiatedProtocolVersion();
      check(`${tag} negotiates 2026-07-28`, version === '2026-07-28', version);
    }
    const done = await client.callTool({ name: 'publish', arguments: {} });
    check(`${tag} publish answers once the user accepted`, said(done) === 'published 1.4.2', done);
    check(
      `${tag} the host was sent the page, in URL mode`,
      asked.length === 1 && asked[0].mode === 'url' && asked[0].url === PAGE,
      asked,
    );
    if (sdk === 'v1') {
      // The 2026-07-28 draft removed the id and its completion notification (v2 drops them);
      // on the legacy era they key the out-of-band step.
      check(`${tag} the elicitation carries its id`, asked[0]?.id?.length === 32, asked);
      const heard = await until(() => completed.length > 0);
      check(
        `${tag} notifications/elicitation/complete names the same id`,
        heard && completed[0] === asked[0]?.id,
        { completed, asked },
      );
      try {
        const answer = await client.callTool({ name: 'publish', arguments: { wait: false } });
        check(`${tag} not waiting is -32042`, false, answer);
      } catch (e) {
        check(`${tag} not waiting is -32042`, e.code === -32042, { code: e.code, message: e.message });
        const pages = e.data?.elicitations?.map((x) => x.url) ?? [];
        check(`${tag} -32042 names the page`, pages.includes(PAGE), e.data);
      }
    }
  } finally {
    await client.close();
  }
}

for (const sdk of ['v1', 'v2']) {
  try {
    await scenario(sdk);
  } catch (e) {
    check(`${sdk}/stdio session ran to the end`, false, String(e?.stack ?? e));
  }
}
console.log(`${report.passed} passed, ${report.failed} failed`);
report.exit();
