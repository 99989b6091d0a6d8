// MCP Apps end to end: the ops example's ui://ops/processes view rendered by a real browser
// host. A headless Debian chromium (through playwright-core, executablePath) holds the view in
// a sandboxed iframe; the host side is the official @modelcontextprotocol/ext-apps AppBridge,
// wired to a real MCP client (@modelcontextprotocol/client, stdio) of the ops server. Only the
// postMessage hop between the bridge (in Node) and the iframe (in the page) is ours: a
// Transport that posts into the iframe and hears what it posts back, as PostMessageTransport
// does inside a browser.
//
// Checks (one PASS/FAIL line each; exit 1 when any failed):
//   the server advertises io.modelcontextprotocol/ui; processes_view points at the view
//   (getToolUiResourceUri); resources/read answers one text/html;profile=mcp-app item; the tool
//   result embeds the page for this client (it advertises the extension and the MIME type);
//   the view completes ui/initialize with the bridge, renders every row of the tool result it
//   is handed, themes itself from the host's CSS variables, calls tools/call back through the
//   host (Refresh shows a process spawned meanwhile), answers ui/resource-teardown; the page
//   makes no network request. A screenshot is saved to $APPS_ARTIFACTS (default ./artifacts).
//
// usage: node e2e.mjs [OPS_BINARY]   (default ../../target/debug/examples/ops)
//        CHROMIUM=/usr/bin/chromium (default) APPS_ARTIFACTS=dir

import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  AppBridge,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const HERE = new URL('.', import.meta.url).pathname;
const OPS = resolve(process.argv[2] ?? join(HERE, '../../target/debug/examples/ops'));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = resolve(process.env.APPS_ARTIFACTS ?? join(HERE, 'artifacts'));
const UI = 'io.modelcontextprotocol/ui';
const VIEW = 'ui://ops/processes';
// The host's theme: what the page must pick up from hostContext.styles.variables.
const BACKGROUND = 'rgb(18, 24, 38)';
const TEXT = 'rgb(226, 232, 240)';

let passed = 0;
let failed = 0;
function check(label, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`PASS apps ${label}`);
  } else {
    failed++;
    console.log(`FAIL apps ${label}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
  return ok;
}

/** The bridge's side of the postMessage hop, driven through the page. */
class IframeTransport {
  constructor(page) {
    this.page = page;
  }
  async start() {}
  async send(message) {
    await this.page.evaluate((m) => document.getElementById('view').contentWindow.postMessage(m, '*'), message);
  }
  async close() {
    this.onclose?.();
  }
  /** A message the view posted to its parent. */
  deliver(message) {
    this.onmessage?.(message);
  }
}

// The host page: a strict CSP (what the view's `csp: {}` asks a host for: no origin at all; a
// srcdoc iframe inherits it), the host's own colours, and an iframe sandboxed to scripts only.
const HOST_PAGE = `<!doctype html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<style>body{margin:0;background:${BACKGROUND}} iframe{border:1px solid #445;width:640px;height:320px}</style>
</head><body>
<iframe id="view" sandbox="allow-scripts" title="ui://ops/processes"></iframe>
<script>
  window.addEventListener('message', (e) => {
    if (e.source === document.getElementById('view').contentWindow) window.__fromView(e.data);
  });
</script>
</body></html>`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(predicate, ms = 15000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await predicate()) return true;
    await sleep(50);
  }
  return predicate();
}

async function main() {
  // --- the MCP side: a client that renders views, against the real ops server over stdio.
  const client = new Client(
    { name: 'surface-apps-e2e', version: '0.0.0' },
    { capabilities: { extensions: { [UI]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  await client.connect(new StdioClientTransport({ command: OPS, args: [], stderr: 'ignore' }));
  const caps = client.getServerCapabilities();
  check('the server advertises the UI extension', caps?.extensions?.[UI] !== undefined, caps);

  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'processes_view');
  check('processes_view is listed', tool !== undefined, tools.map((t) => t.name));
  const uri = tool && getToolUiResourceUri(tool);
  check('processes_view points at ui://ops/processes (ext-apps getToolUiResourceUri)', uri === VIEW, tool?._meta);
  check(
    "the tool's _meta.ui carries no csp or permissions",
    tool?._meta?.ui && !('csp' in tool._meta.ui) && !('permissions' in tool._meta.ui),
    tool?._meta,
  );

  const read = await client.readResource({ uri: VIEW });
  const item = read.contents[0];
  check(
    'resources/read answers one text/html;profile=mcp-app item with the page',
    read.contents.length === 1 && item.uri === VIEW && item.mimeType === RESOURCE_MIME_TYPE && item.text?.includes('ui/initialize'),
    { count: read.contents.length, uri: item?.uri, mimeType: item?.mimeType },
  );
  check('the page meta asks for a border and no origin', item._meta?.ui?.prefersBorder === true && item._meta?.ui?.csp !== undefined, item._meta);

  // A process that is not running, so the table holds two states.
  await client.callTool({ name: 'proc_spawn', arguments: { name: 'backup', paused: true } });
  const result = await client.callTool({ name: 'processes_view', arguments: {} });
  const rows = result.structuredContent?.processes ?? [];
  check('the answer is text first, then the table as structured content', result.content[0]?.type === 'text' && rows.length === 3, result.content.map((b) => b.type));
  check(
    'the answer embeds the page for a client that renders views',
    result.content.some((b) => b.type === 'resource' && b.resource.uri === VIEW && b.resource.mimeType === RESOURCE_MIME_TYPE),
    result.content.map((b) => b.type),
  );

  // --- the browser host.
  const profile = mkdtempSync(join(tmpdir(), 'surface-apps-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const requests = [];
  context.on('request', (r) => {
    if (!/^(about|data|blob):/.test(r.url())) requests.push(r.url());
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const consoleErrors = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    const transport = new IframeTransport(page);
    await page.exposeFunction('__fromView', (message) => transport.deliver(message));
    await page.setContent(HOST_PAGE);

    const bridge = new AppBridge(
      client,
      { name: 'surface-apps-e2e-host', version: '0.0.0' },
      { serverTools: {}, logging: {} },
      {
        hostContext: {
          theme: 'dark',
          displayMode: 'inline',
          platform: 'web',
          styles: {
            variables: {
              '--color-background-primary': BACKGROUND,
              '--color-text-primary': TEXT,
              '--font-sans': 'monospace',
            },
          },
        },
      },
    );
    let initialized = false;
    bridge.oninitialized = () => {
      initialized = true;
    };
    await bridge.connect(transport);
    // Load the page the server served, as read above.
    await page.evaluate((html) => {
      document.getElementById('view').srcdoc = html;
    }, item.text);
    check('the view completes ui/initialize with the AppBridge', await until(() => initialized), consoleErrors);
    check('the bridge learned the app', bridge.getAppVersion?.()?.name === 'ops-processes', bridge.getAppVersion?.());

    await bridge.sendToolInput({ arguments: {} });
    await bridge.sendToolResult(result);
    const view = page.frameLocator('#view');
    const shown = await until(async () => (await view.locator('tbody tr').count()) === 3);
    const cells = await view.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    check(
      'the view renders every row of the tool result',
      shown && JSON.stringify(cells) === JSON.stringify(rows.map((p) => [String(p.pid), p.name, p.state])),
      cells,
    );
    const style = await view.locator('body').evaluate((b) => {
      const s = getComputedStyle(b);
      return { background: s.backgroundColor, color: s.color };
    });
    check("the view is themed from the host's CSS variables", style.background === BACKGROUND && style.color === TEXT, style);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'processes.png') });
    console.log(`apps: screenshot ${join(ARTIFACTS, 'processes.png')}`);

    // tools/call from the view, through the host: Refresh shows what changed meanwhile.
    await client.callTool({ name: 'proc_spawn', arguments: { name: 'editor' } });
    await view.locator('#refresh').click();
    const refreshed = await until(async () => (await view.locator('tbody tr').count()) === 4);
    const names = await view.locator('tbody td.name').allTextContents();
    check('Refresh calls processes_view back through the host', refreshed && names.includes('editor'), names);

    const teardown = await bridge.teardownResource({});
    check('the view answers ui/resource-teardown', teardown !== undefined, teardown);
    check('the page made no network request', requests.length === 0, requests);
    check('the page logged no error', consoleErrors.length === 0, consoleErrors);
    await bridge.close();
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    await client.close();
  }
}

try {
  await main();
} catch (e) {
  check('the run completes', false, e?.stack ?? String(e));
}
console.log(`apps: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
