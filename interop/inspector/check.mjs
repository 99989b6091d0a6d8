// The MCP Inspector's CLI (@modelcontextprotocol/inspector --cli) against examples/ops and
// examples/bundle, over stdio and Streamable HTTP: list, call, read, its tool-schema portability
// check (--strict) and a bounded load run. Every check prints one PASS/FAIL line.
//
// usage: node check.mjs OPS_BINARY BUNDLE_BINARY

import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const [OPS, BUNDLE] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const INSPECTOR = join(dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');
let passed = 0;
let failed = 0;

function check(label, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`PASS inspector ${label}`);
  } else {
    failed++;
    console.log(`FAIL inspector ${label}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`.slice(0, 2000));
  }
}

/** Runs `inspector --cli ...args`; answers exit status, parsed stdout (when JSON) and stderr. */
function inspector(...args) {
  const r = spawnSync(process.execPath, [INSPECTOR, '--cli', ...args], { encoding: 'utf8', timeout: 60000 });
  let json;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { status: r.status, json, stdout: r.stdout, stderr: r.stderr };
}

async function httpServer(binary) {
  const child = spawn(binary, ['--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8');
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/(http:\/\/\S+)/);
      if (m) resolve(m[1]);
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

const names = (r) => (r.json?.tools ?? []).map((t) => t.name).sort().join(' ');

// ops over stdio
let r = inspector(OPS, '--method', 'tools/list', '--strict');
check('stdio ops tools/list', r.status === 0 && names(r) === 'count load_sample proc_kill proc_spawn proc_wait processes_view', r);
check('stdio ops tool schemas are portable (--strict finds no problem)', r.status === 0 && !/problem|error/i.test(r.stderr), r.stderr);
r = inspector(OPS, '--method', 'tools/call', '--tool-name', 'proc_spawn', '--tool-arg', 'name=inspected');
check('stdio ops tools/call proc_spawn', r.status === 0 && r.json?.structuredContent?.name === 'inspected' && r.json?.isError === false, r);
r = inspector(OPS, '--method', 'tools/call', '--tool-name', 'count', '--tool-arg', 'state=running');
check('stdio ops tools/call count with an argument', r.status === 0 && r.json?.structuredContent?.value === 2, r);
r = inspector(OPS, '--method', 'tools/call', '--tool-name', 'proc_kill', '--tool-arg', 'pid=999');
check(
  'stdio ops a refusal comes back as isError',
  // proc_kill advertises no outputSchema (it refuses with a detail), so the Inspector's 1.x SDK,
  // which checks structuredContent against one even when isError, reads the refusal as sent.
  r.json?.isError === true &&
    r.json?.content?.[0]?.text === 'surface-mcp: there is no process 999' &&
    r.json?.structuredContent?.kind === 'no-such-process',
  r,
);
r = inspector(OPS, '--method', 'resources/list');
// The four members and the triage skill's SKILL.md; the ui:// view is listed only to clients
// that declare the Apps extension.
check('stdio ops resources/list', r.status === 0 && r.json?.resources?.length === 5, r);
r = inspector(OPS, '--method', 'resources/read', '--uri', 'surface://collections/processes/2');
check('stdio ops resources/read an item', r.status === 0 && JSON.parse(r.json?.contents?.[0]?.text ?? '{}').name === 'shell', r);

// bundle over stdio
r = inspector(BUNDLE, '--method', 'tools/list');
check('stdio bundle tools/list', r.status === 0 && ['a_ops_run', 'b_here', 'roster_set', 'who_get'].every((n) => names(r).split(' ').includes(n)), names(r));
r = inspector(BUNDLE, '--method', 'tools/call', '--tool-name', 'b_here');
check('stdio bundle tools/call a sibling tool', r.status === 0 && r.json?.structuredContent?.value === 'b', r);

// ops over HTTP
const server = await httpServer(OPS);
try {
  r = inspector(server.url, '--method', 'tools/list', '--strict');
  check('http ops tools/list', r.status === 0 && names(r) === 'count load_sample proc_kill proc_spawn proc_wait processes_view', r);
  r = inspector(server.url, '--method', 'tools/call', '--tool-name', 'load_sample');
  check('http ops tools/call load_sample', r.status === 0 && r.json?.structuredContent?.procs === 2, r);
  r = inspector(server.url, '--method', 'resources/templates/list');
  check('http ops resources/templates/list', r.status === 0 && r.json?.resourceTemplates?.[0]?.uriTemplate === 'surface://collections/processes/{id}', r);
  r = inspector(server.url, '--method', 'tools/call', '--tool-name', 'load_sample', '--load', '--load-requests', '200', '--load-concurrency', '8');
  check('http ops 200 calls, 8 at a time, all answer', r.status === 0 && r.json?.ok === 200 && r.json?.errors === 0, r.json ?? r);
  if (r.json?.latencyMs) console.log(`  inspector load: ${r.json.throughput} calls/s, p50 ${r.json.latencyMs.p50} ms, p99 ${r.json.latencyMs.p99} ms`);
} finally {
  await server.stop();
}

console.log(`inspector: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
