// The ops tools on the official TypeScript SDK, as its README shows them: McpServer +
// registerTool with zod input shapes, served on StdioServerTransport. Same state and behaviour
// as examples/ops.rs: a process table, the load it implies, a log that keeps every line, a
// stray line on stderr per spawn; answers carry structuredContent and the same value as text.
//
// `node server.mjs --http PORT`: the same tools over Streamable HTTP, stateful, the way the
// SDK's README shows it: createMcpExpressApp, one StreamableHTTPServerTransport (and one
// McpServer) per session kept in a map by session id, POST/GET/DELETE on /mcp. The process
// table is shared by every session, as the other servers share theirs.
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

const processes = new Map([
  [1, { pid: 1, name: "init", state: "running" }],
  [2, { pid: 2, name: "shell", state: "running" }],
]);
const load = { cpu: 0.0, procs: 2 };
const log = [];
let nextPid = 3;

const answer = (value) => ({
  content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
  structuredContent: value,
});

function opsServer() {
  const server = new McpServer(
    { name: "ops", version: "0.1.0" },
    { instructions: "Everything here is about processes, not files." },
  );

  server.registerTool(
    "proc_spawn",
    {
      description: "Start a process.",
      inputSchema: { name: z.string().describe("Name of the new process.") },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async ({ name }) => {
      console.error(`ops: executing proc.spawn ${name}`);
      const delay = Number.parseInt(process.env.OPS_SPAWN_DELAY_MS ?? "", 10);
      if (Number.isFinite(delay)) await new Promise((r) => setTimeout(r, delay));
      const pid = nextPid++;
      const process_ = { pid, name, state: "running" };
      processes.set(pid, process_);
      load.procs = processes.size;
      log.push(`spawned ${name} as ${pid}`);
      console.error(`spawned ${name} as ${pid}`);
      return answer({ ...process_ });
    },
  );

  server.registerTool(
    "proc_kill",
    {
      description: "Stop a process.",
      inputSchema: { pid: z.number().int().min(0).describe("The process to kill.") },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async ({ pid }) => {
      const p = processes.get(pid);
      if (!p) {
        return { content: [{ type: "text", text: `there is no process ${pid}` }], isError: true };
      }
      processes.delete(pid);
      load.procs = processes.size;
      log.push(`killed ${p.pid} (${p.name})`);
      return answer({ ok: true });
    },
  );

  server.registerTool(
    "load_sample",
    {
      description: "The current load.",
      inputSchema: {},
      annotations: { readOnlyHint: true, destructiveHint: false },
    },
    async () => answer({ ...load }),
  );

  return server;
}

const http = process.argv.indexOf("--http");
if (http < 0) {
  await opsServer().connect(new StdioServerTransport());
} else {
  const port = Number.parseInt(process.argv[http + 1], 10);
  const app = createMcpExpressApp();
  const transports = {};
  app.post("/mcp", async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = id ? transports[id] : undefined;
    if (!transport && !id && isInitializeRequest(req.body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          transports[sid] = transport;
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) delete transports[transport.sessionId];
      };
      await opsServer().connect(transport);
    }
    if (!transport) {
      res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: No valid session ID provided" }, id: null });
      return;
    }
    await transport.handleRequest(req, res, req.body);
  });
  const existing = async (req, res) => {
    const transport = transports[req.headers["mcp-session-id"]];
    if (!transport) {
      res.status(400).send("Invalid or missing session ID");
      return;
    }
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", existing);
  app.delete("/mcp", existing);
  app.listen(port, "127.0.0.1");
}
