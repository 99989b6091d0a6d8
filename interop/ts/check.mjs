// The official TypeScript SDK clients against examples/ops and examples/bundle, over stdio and
// over Streamable HTTP:
//   v1 = @modelcontextprotocol/sdk (the 1.x line; speaks the legacy era, 2025-11-25);
//   v2 = @modelcontextprotocol/client (the 2.x line; `auto` negotiation, so 2026-07-28 with us).
// On ops, v2 also checks the skills extension with the SDK's own SkillsClient (v1 has none).
// Every check prints one PASS/FAIL line; the exit code is 1 when any failed.
//
// usage: node check.mjs OPS_BINARY BUNDLE_BINARY

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { reporter } from './report.mjs';

const report = reporter('ts');
const check = report.check;

const [OPS, BUNDLE] = process.argv.slice(2);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(predicate, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return true;
    await sleep(25);
  }
  return predicate();
}

/** Starts `binary --http 127.0.0.1:0` and answers its URL and a stop function. */
async function httpServer(binary) {
  const child = spawn(binary, ['--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8');
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from ${binary}: ${err}`)), 10000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/(http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`${binary} exited ${code}: ${err}`)));
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/** One connected client of either SDK line, with what it heard. */
async function connect(sdk, target) {
  const heard = { updated: [], toolsChanged: 0 };
  let client;
  if (sdk === 'v1') {
    client = new ClientV1({ name: 'surface-interop-v1', version: '0.0.0' }, { capabilities: {} });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => heard.updated.push(n.params.uri));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => heard.toolsChanged++);
    const transport = target.url
      ? new HttpV1(new URL(target.url))
      : new StdioV1({ command: target.binary, args: [], stderr: 'ignore' });
    await client.connect(transport);
  } else {
    client = new ClientV2(
      { name: 'surface-interop-v2', version: '0.0.0' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    client.setNotificationHandler('notifications/resources/updated', (n) => heard.updated.push(n.params.uri));
    client.setNotificationHandler('notifications/tools/list_changed', () => heard.toolsChanged++);
    const transport = target.url
      ? new HttpV2(new URL(target.url))
      : new StdioV2({ command: target.binary, args: [], stderr: 'ignore' });
    await client.connect(transport);
  }
  return { client, heard };
}

const toolNames = async (client) => new Set((await client.listTools()).tools.map((t) => t.name));
const same = (set, list) => set.size === list.length && list.every((x) => set.has(x));

async function expectError(promise) {
  try {
    await promise;
    return { code: undefined, message: 'it answered' };
  } catch (e) {
    return { code: e.code, message: String(e.message) };
  }
}

async function checkOps(sdk, transport) {
  const tag = `${sdk}/${transport} ops`;
  const server = transport === 'http' ? await httpServer(OPS) : null;
  const target = server ? { url: server.url } : { binary: OPS };
  const { client, heard } = await connect(sdk, target);
  try {
    if (sdk === 'v2') {
      check(`${tag} negotiates 2026-07-28`, client.getNegotiatedProtocolVersion() === '2026-07-28', client.getNegotiatedProtocolVersion());
    }
    check(`${tag} server identity`, client.getServerVersion()?.name === 'ops', client.getServerVersion());
    check(`${tag} instructions`, client.getInstructions() === 'Everything here is about processes, not files.', client.getInstructions());
    const tools = await toolNames(client);
    check(`${tag} tools/list`, same(tools, ['proc_spawn', 'proc_kill', 'load_sample', 'count', 'processes_view', 'proc_wait']), [...tools]);
    const resources = (await client.listResources()).resources.map((r) => r.uri).sort();
    // No ui://ops/processes: this client does not declare the MCP Apps extension. The triage
    // skill's SKILL.md is an ordinary resource too.
    check(`${tag} resources/list`, resources.join(' ') === 'skill://triage/SKILL.md surface://cells/load surface://collections/processes surface://events/autosave surface://streams/log', resources);
    if (sdk === 'v2') {
      // The 2.x SDK's skills client: lists, gets, and reads SKILL.md verifying its size, digest
      // and frontmatter against the entry (it throws on any mismatch).
      const skills = new SkillsClient(client);
      check(`${tag} skills extension declared`, skills.supported, client.getServerCapabilities());
      const { skills: entries } = await skills.list();
      check(`${tag} skills/list`, entries.length === 1 && entries[0].uri === 'skill://triage/SKILL.md' && entries[0].frontmatter.name === 'triage', entries);
      const { skill } = await skills.get('skill://triage/SKILL.md');
      check(`${tag} skills/get`, JSON.stringify(skill) === JSON.stringify(entries[0]), skill);
      const file = await skills.read(skill);
      check(`${tag} SKILL.md read and verified`, file.verified && file.frontmatter?.name === 'triage' && file.body?.includes('- tool `proc_kill`'), file);
      const unknown = await expectError(skills.get('skill://nope/SKILL.md'));
      check(`${tag} skills/get of an unknown skill is -32602`, unknown.code === -32602, unknown);
    }
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    check(`${tag} resources/templates/list`, templates.join() === 'surface://collections/processes/{id}', templates);
    const load = JSON.parse((await client.readResource({ uri: 'surface://cells/load' })).contents[0].text);
    check(`${tag} read a cell`, load.procs === 2, load);
    const init = JSON.parse((await client.readResource({ uri: 'surface://collections/processes/1' })).contents[0].text);
    check(`${tag} read an item`, init.name === 'init', init);

    const uri = 'surface://cells/load';
    let sub;
    if (sdk === 'v1') await client.subscribeResource({ uri });
    else sub = await client.listen({ resourceSubscriptions: [uri] });
    const spawned = await client.callTool({ name: 'proc_spawn', arguments: { name: 'ts' } });
    check(`${tag} call proc_spawn`, !spawned.isError && spawned.structuredContent?.pid === 3 && spawned.structuredContent?.name === 'ts', spawned);
    check(`${tag} ${sdk === 'v1' ? 'resources/subscribe' : 'subscriptions/listen'} delivers updated`, await until(() => heard.updated.includes(uri)), heard.updated);
    if (sub) await sub.close();
    else await client.unsubscribeResource({ uri });

    const counted = await client.callTool({ name: 'count', arguments: { state: 'running' } });
    check(`${tag} bespoke tool with arguments`, counted.structuredContent?.value === 3, counted);
    // proc_kill refuses with a detail, so it advertises no outputSchema: every SDK (the 1.x
    // one checks structuredContent against an outputSchema even when isError) reads the refusal.
    const refused = await client.callTool({ name: 'proc_kill', arguments: { pid: 999 } });
    check(
      `${tag} refusal is isError with detail`,
      refused.isError === true &&
        refused.content[0]?.text === 'surface-mcp: there is no process 999' &&
        refused.structuredContent?.kind === 'no-such-process',
      refused,
    );
    const bad = await client.callTool({ name: 'proc_kill', arguments: {} });
    check(`${tag} a missing argument is isError naming it`, bad.isError === true && /pid/.test(bad.content[0]?.text), bad);
    const unknown = await expectError(client.callTool({ name: 'proc_configure', arguments: { pid: 1, nice: 0 } }));
    check(`${tag} an unexposed procedure is refused with -32602`, unknown.code === -32602, unknown);
    const missing = await expectError(client.readResource({ uri: 'surface://cells/nope' }));
    check(`${tag} an unknown resource is refused`, missing.code === (sdk === 'v2' ? -32602 : -32002), missing);
  } finally {
    await client.close();
    await server?.stop();
  }
}

async function checkBundle(sdk, transport) {
  const tag = `${sdk}/${transport} bundle`;
  const server = transport === 'http' ? await httpServer(BUNDLE) : null;
  const target = server ? { url: server.url } : { binary: BUNDLE };
  const { client, heard } = await connect(sdk, target);
  try {
    check(`${tag} instructions are read at connect`, client.getInstructions() === 'Tenants standing now: a, b.', client.getInstructions());
    let tools = await toolNames(client);
    check(`${tag} tools/list has core, tenants and root tools`, ['who_get', 'a_ops_run', 'b_here', 'roster_set', 'roster_narrow'].every((t) => tools.has(t)), [...tools]);
    let sub;
    if (sdk === 'v2') sub = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
    const set = await client.callTool({ name: 'roster_set', arguments: { keys: ['a', 'c'] } });
    check(`${tag} roster_set answers the new keys`, JSON.stringify(set.structuredContent) === '{"value":["a","c"]}', set);
    check(`${tag} tools/list_changed arrives after the reroster`, await until(() => heard.toolsChanged > 0), heard);
    tools = await toolNames(client);
    check(`${tag} the re-read list follows the roster`, tools.has('c_ops_run') && !tools.has('b_ops_run'), [...tools]);
    const gone = await client.callTool({ name: 'b_ops_run', arguments: {} });
    check(`${tag} a retired tool is refused by name`, gone.isError === true && /no longer served/.test(gone.content[0]?.text), gone);
    const c = await client.callTool({ name: 'c_ops_run', arguments: {} });
    check(`${tag} the new tenant answers`, c.structuredContent?.value === 'c', c);
    const narrowed = await client.callTool({ name: 'roster_narrow', arguments: { key: 'a' } });
    check(`${tag} roster_narrow`, !narrowed.isError, narrowed);
    check(`${tag} a second list_changed arrives`, await until(() => heard.toolsChanged > 1), heard);
    if (sub) await sub.close();
  } finally {
    await client.close();
    await server?.stop();
  }
}

/** One HTTP bundle server, several concurrent sessions of both SDK lines. */
async function checkSharedHttp() {
  const tag = 'http bundle shared by concurrent sessions';
  const server = await httpServer(BUNDLE);
  const sessions = [];
  try {
    for (const sdk of ['v1', 'v2', 'v1', 'v2', 'v1', 'v2']) sessions.push({ sdk, ...(await connect(sdk, { url: server.url })) });
    check(`${tag}: six sessions open`, sessions.length === 6);
    check(
      `${tag}: each read the instructions at its own connect`,
      sessions.every((s) => s.client.getInstructions() === 'Tenants standing now: a, b.'),
      sessions.map((s) => s.client.getInstructions()),
    );
    const subs = await Promise.all(
      sessions.filter((s) => s.sdk === 'v2').map((s) => s.client.listen({ toolsListChanged: true })),
    );
    const answers = await Promise.all(sessions.map((s, i) => s.client.callTool({ name: i % 2 ? 'a_here' : 'who_get', arguments: {} })));
    check(`${tag}: concurrent calls all answer`, answers.every((a, i) => a.structuredContent?.value === (i % 2 ? 'a' : 'core')), answers);
    await sessions[0].client.callTool({ name: 'roster_set', arguments: { keys: ['x'] } });
    check(`${tag}: one reroster notifies every live session`, await until(() => sessions.every((s) => s.heard.toolsChanged > 0)), sessions.map((s) => `${s.sdk}:${s.heard.toolsChanged}`));
    const late = await connect('v1', { url: server.url });
    check(`${tag}: a later session reads the instructions anew`, late.client.getInstructions() === 'Tenants standing now: x.', late.client.getInstructions());
    const lateModern = await connect('v2', { url: server.url });
    check(`${tag}: a later 2026-07-28 session reads them anew too`, lateModern.client.getInstructions() === 'Tenants standing now: x.', lateModern.client.getInstructions());
    sessions.push({ sdk: 'v1', ...late }, { sdk: 'v2', ...lateModern });
    for (const s of subs) await s.close();
  } finally {
    for (const s of sessions) await s.client.close().catch(() => {});
    await server.stop();
  }
}

for (const [name, run] of [
  ...['v1', 'v2'].flatMap((sdk) =>
    ['stdio', 'http'].flatMap((transport) => [
      [`${sdk}/${transport} ops`, () => checkOps(sdk, transport)],
      [`${sdk}/${transport} bundle`, () => checkBundle(sdk, transport)],
    ]),
  ),
  ['http shared bundle', checkSharedHttp],
]) {
  try {
    await Promise.race([run(), sleep(60000).then(() => { throw new Error('timed out after 60 s'); })]);
  } catch (e) {
    check(`${name} ran to the end`, false, String(e?.stack ?? e));
  }
}
console.log(`ts: ${report.passed} passed, ${report.failed} failed`);
report.exit();
