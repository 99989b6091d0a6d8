// The official TypeScript SDK clients answering what examples/conformance's tools ask of their
// host — a form (elicitation), a message from its model (sampling), its roots — over stdio:
//   v1 = @modelcontextprotocol/sdk (legacy era, 2025-11-25: the server sends the requests);
//   v2 = @modelcontextprotocol/client (`auto`, so 2026-07-28: the asks come back as
//        `input_required` results, which the client fulfils through its handlers and retries).
// Every check prints one PASS/FAIL line; the exit code is 1 when any failed.
//
// usage: node check_asks.mjs CONFORMANCE_BINARY

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { reporter, said } from './report.mjs';

const report = reporter('ts-asks');
const check = report.check;

const [SERVER] = process.argv.slice(2);

const VALUES = { name: 'Ada', username: 'Ada', color: 'blue', ok: true, email: 'ada@example.com', context: 'tests' };

/** Handlers of a host that fills forms in from their field names, has its model say "Paris" and
 * owns one root; each records what it was asked. */
function host(asked, decline = false) {
  return {
    elicit: async (request) => {
      asked.push(`elicit ${request.params.message}`);
      if (decline) return { action: 'decline' };
      const fields = Object.keys(request.params.requestedSchema?.properties ?? {});
      return { action: 'accept', content: Object.fromEntries(fields.filter((f) => f in VALUES).map((f) => [f, VALUES[f]])) };
    },
    sample: async () => {
      asked.push('sample');
      return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model', stopReason: 'endTurn' };
    },
    roots: async () => {
      asked.push('roots');
      return { roots: [{ uri: 'file:///work', name: 'Work' }] };
    },
  };
}

async function connect(sdk, handlers) {
  const capabilities = handlers ? { sampling: {}, elicitation: {}, roots: {} } : {};
  if (sdk === 'v1') {
    const client = new ClientV1({ name: 'surface-interop-v1', version: '0.0.0' }, { capabilities });
    if (handlers) {
      client.setRequestHandler(ElicitRequestSchema, handlers.elicit);
      client.setRequestHandler(CreateMessageRequestSchema, handlers.sample);
      client.setRequestHandler(ListRootsRequestSchema, handlers.roots);
    }
    await client.connect(new StdioV1({ command: SERVER, args: [], stderr: 'ignore' }));
    return client;
  }
  const client = new ClientV2(
    { name: 'surface-interop-v2', version: '0.0.0' },
    { capabilities, versionNegotiation: { mode: 'auto' } },
  );
  if (handlers) {
    client.setRequestHandler('elicitation/create', handlers.elicit);
    client.setRequestHandler('sampling/createMessage', handlers.sample);
    client.setRequestHandler('roots/list', handlers.roots);
  }
  await client.connect(new StdioV2({ command: SERVER, args: [], stderr: 'ignore' }));
  return client;
}

async function scenario(sdk) {
  const tag = `${sdk}/stdio`;
  const asked = [];
  let client = await connect(sdk, host(asked));
  try {
    if (sdk === 'v2') {
      check(`${tag} negotiates 2026-07-28`, client.getNegotiatedProtocolVersion() === '2026-07-28', client.getNegotiatedProtocolVersion());
    }
    const all = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} });
    check(`${tag} one round asks a form, the model and the roots`, said(all) === 'Paris Ada (roots: file:///work)', all);
    check(`${tag} the host was asked each once`, JSON.stringify([...asked].sort()) === JSON.stringify(['elicit What is your name?', 'roots', 'sample']), asked);
    const two = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
    check(`${tag} two asks in sequence, two rounds`, said(two) === 'Ada likes blue', two);
    const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
    check(`${tag} a tool samples the host's model`, said(sampled) === 'LLM response: Paris', sampled);
    const form = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    check(
      `${tag} a typed form comes back accepted`,
      said(form) === 'User response: action=accept, content={"email":"ada@example.com","username":"Ada"}',
      form,
    );
    const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt', arguments: {} });
    check(`${tag} a prompt asks before it renders`, prompt.messages?.[0]?.content?.text === 'Use this context: tests', prompt);
  } finally {
    await client.close();
  }

  client = await connect(sdk, host([], true));
  try {
    const answer = await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
    check(`${tag} a declined form reaches the tool as decline`, said(answer) === 'Elicitation completed: action=decline, content=null', answer);
  } finally {
    await client.close();
  }

  client = await connect(sdk, null);
  try {
    const answer = await client.callTool({ name: 'test_missing_capability', arguments: {} });
    check(`${tag} sampling without the capability is a tool error (legacy)`, sdk === 'v1' && answer.isError === true, answer);
  } catch (e) {
    check(`${tag} sampling without the capability is refused with -32021`, sdk === 'v2' && e.code === -32021, { code: e.code, message: String(e.message) });
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
console.log(`ts-asks: ${report.passed} passed, ${report.failed} failed`);
report.exit();
