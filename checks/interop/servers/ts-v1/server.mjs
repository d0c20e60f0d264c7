// Third-party MCP peer: TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32.x),
// Streamable HTTP on 127.0.0.1 only. Speaks 2024-11-05 .. 2025-11-25 (no 2026-07-28,
// no server/discover: the v1 SDK does not implement them).
//
// Usage (after checks/interop/install.sh):  node server.mjs --port 8931 [--mode stateful|stateless]
//        [--response sse|json] [--page-size 5] [--event-store] [--retry-ms N] [--ttl 600]
// --event-store  resumable SSE (InMemoryEventStore from the SDK examples): events get
//                `id:` fields, priming events, and GET + Last-Event-ID replays them.
// --retry-ms N   `retry:` field the transport puts in SSE priming events (needs --event-store).
// --tasks        instead of the fixture tools, the 2025-11-25 experimental tasks of the SDK
//                (McpServer, `server.experimental.tasks.registerToolTask`, InMemoryTaskStore):
//                `required_task` (taskSupport "required"), `optional_task` ("optional"),
//                `forbidden_task` (a plain tool: "forbidden"), and `call_log`, the names of every
//                `tools/call` the server received, as JSON.
// The process exits by itself after --ttl seconds (default 600).
//
// Endpoint: http://127.0.0.1:PORT/mcp   (POST, GET, DELETE)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import {
  CallToolRequestSchema, ListToolsRequestSchema, ListResourcesRequestSchema,
  ReadResourceRequestSchema, ListPromptsRequestSchema, GetPromptRequestSchema,
  McpError, ErrorCode, isInitializeRequest,
  LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

// ---------------------------------------------------------------- arguments
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']);
    return acc;
  }, []),
);
const PORT = Number(args.port ?? process.argv[2]);
if (!Number.isInteger(PORT) || PORT <= 0) {
  console.error('usage: node server.mjs --port N [--mode stateful|stateless] [--response sse|json] [--page-size 5] [--ttl 600]');
  process.exit(2);
}
const MODE = args.mode ?? 'stateful';
const RESPONSE = args.response ?? 'sse';
const PAGE_SIZE = Number(args['page-size'] ?? 5);
const TTL_S = Number(args.ttl ?? 600);
const EVENT_STORE = args['event-store'] === 'true';
const RETRY_MS = args['retry-ms'] !== undefined ? Number(args['retry-ms']) : undefined;
const eventStore = EVENT_STORE ? new InMemoryEventStore() : undefined;
const TASKS = args.tasks === 'true';
const taskStore = TASKS ? new InMemoryTaskStore() : undefined;
// The name of every tools/call received, in order (reported by `call_log` in --tasks mode).
const CALLS = [];
if (!['stateful', 'stateless'].includes(MODE)) throw new Error('--mode must be stateful|stateless');
if (!['sse', 'json'].includes(RESPONSE)) throw new Error('--response must be sse|json');

// ---------------------------------------------------------------- fixtures
// 1x1 red PNG
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
// 8-sample 8 kHz mono 8-bit PCM WAV
function tinyWav() {
  const samples = Buffer.from([128, 160, 192, 160, 128, 96, 64, 96]);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0); h.writeUInt32LE(36 + samples.length, 4); h.write('WAVE', 8);
  h.write('fmt ', 12); h.writeUInt32LE(16, 16); h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22);
  h.writeUInt32LE(8000, 24); h.writeUInt32LE(8000, 28); h.writeUInt16LE(1, 32); h.writeUInt16LE(8, 34);
  h.write('data', 36); h.writeUInt32LE(samples.length, 40);
  return Buffer.concat([h, samples]).toString('base64');
}
const WAV_B64 = tinyWav();
const RESOURCES = [
  { uri: 'test://static/readme.txt', name: 'readme', title: 'Readme', mimeType: 'text/plain', text: 'Hello from the TS v1 peer.' },
  { uri: 'test://static/pixel.png', name: 'pixel', mimeType: 'image/png', blob: PNG_B64 },
];
const textResource = { uri: RESOURCES[0].uri, mimeType: 'text/plain', text: RESOURCES[0].text };
const blobResource = { uri: RESOURCES[1].uri, mimeType: 'image/png', blob: PNG_B64 };
const resourceLink = { type: 'resource_link', uri: RESOURCES[0].uri, name: 'readme', mimeType: 'text/plain', description: 'A text resource the client may read with resources/read' };

const obj = (properties = {}, required = []) => ({ type: 'object', properties, required });
const TOOLS = [
  { name: 'echo', description: 'Echo back the given text', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
  { name: 'add', description: 'Add two numbers (text + structuredContent)', inputSchema: obj({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']),
    outputSchema: obj({ sum: { type: 'number' } }, ['sum']), annotations: { readOnlyHint: true, idempotentHint: true } },
  { name: 'get_text', description: 'Returns one text content block', inputSchema: obj() },
  { name: 'get_image', description: 'Returns one image content block (PNG)', inputSchema: obj() },
  { name: 'get_audio', description: 'Returns one audio content block (WAV)', inputSchema: obj() },
  { name: 'get_embedded_resource', description: 'Returns embedded resources (text and blob)', inputSchema: obj() },
  { name: 'get_resource_link', description: 'Returns a resource_link content block', inputSchema: obj() },
  { name: 'get_mixed', description: 'Returns text, image, audio, resource and resource_link together', inputSchema: obj() },
  { name: 'fail_tool', description: 'Tool execution error: result with isError=true', inputSchema: obj() },
  { name: 'raise_exception', description: 'Throws a plain Error inside the tools/call handler (low-level Server: becomes a JSON-RPC error)', inputSchema: obj() },
  { name: 'protocol_error', description: 'Throws a JSON-RPC error (-32602) instead of returning a result', inputSchema: obj() },
  { name: 'slow', description: 'Sleeps `seconds` (default 3) in `steps` steps, emitting progress + log notifications; honours cancellation',
    inputSchema: obj({ seconds: { type: 'number' }, steps: { type: 'integer' } }) },
  { name: 'elicit_name', description: 'Asks the client for a name via elicitation/create (needs stateful mode + SSE + client elicitation capability)', inputSchema: obj() },
  { name: 'sample_llm', description: 'Asks the client for an LLM completion via sampling/createMessage (needs stateful mode + SSE + client sampling capability)',
    inputSchema: obj({ prompt: { type: 'string' } }) },
];
for (let i = 1; i <= 8; i++) {
  const n = String(i).padStart(2, '0');
  TOOLS.push({ name: `noop_${n}`, description: `Filler tool ${n} (for pagination)`, inputSchema: obj() });
}
const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); reject(new McpError(ErrorCode.RequestTimeout, 'cancelled')); }, { once: true });
});
const encodeCursor = (offset) => Buffer.from(JSON.stringify({ offset })).toString('base64url');
function decodeCursor(cursor) {
  try { const { offset } = JSON.parse(Buffer.from(cursor, 'base64url').toString()); if (Number.isInteger(offset) && offset >= 0) return offset; } catch {}
  throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
}

// ---------------------------------------------------------------- MCP server
function buildServer() {
  const server = new Server(
    { name: 'peer-ts-v1', version: '1.32.2-peer' },
    { capabilities: { tools: { listChanged: false }, resources: {}, prompts: {}, logging: {} },
      instructions: 'Third-party test peer built on @modelcontextprotocol/sdk v1.' },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const offset = req.params?.cursor ? decodeCursor(req.params.cursor) : 0;
    const page = TOOLS.slice(offset, offset + PAGE_SIZE);
    const next = offset + PAGE_SIZE < TOOLS.length ? encodeCursor(offset + PAGE_SIZE) : undefined;
    return next ? { tools: page, nextCursor: next } : { tools: page };
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: RESOURCES.map(({ uri, name, title, mimeType }) => ({ uri, name, title, mimeType })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const r = RESOURCES.find((x) => x.uri === req.params.uri);
    if (!r) throw new McpError(-32002, `Resource not found: ${req.params.uri}`, { uri: req.params.uri });
    return { contents: [r.text !== undefined ? { uri: r.uri, mimeType: r.mimeType, text: r.text } : { uri: r.uri, mimeType: r.mimeType, blob: r.blob }] };
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [{ name: 'greeting', description: 'Greets someone', arguments: [{ name: 'who', required: true }] }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    if (req.params.name !== 'greeting') throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
    return { messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${req.params.arguments?.who ?? 'nobody'}` } }] };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const a = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'echo': return { content: [{ type: 'text', text: String(a.text ?? '') }] };
      case 'add': {
        if (typeof a.a !== 'number' || typeof a.b !== 'number') throw new McpError(ErrorCode.InvalidParams, 'a and b must be numbers');
        const sum = a.a + a.b;
        return { content: [{ type: 'text', text: JSON.stringify({ sum }) }], structuredContent: { sum } };
      }
      case 'get_text': return { content: [{ type: 'text', text: 'plain text content' }] };
      case 'get_image': return { content: [{ type: 'image', data: PNG_B64, mimeType: 'image/png' }] };
      case 'get_audio': return { content: [{ type: 'audio', data: WAV_B64, mimeType: 'audio/wav' }] };
      case 'get_embedded_resource': return { content: [{ type: 'resource', resource: textResource }, { type: 'resource', resource: blobResource }] };
      case 'get_resource_link': return { content: [resourceLink] };
      case 'get_mixed': return { content: [
        { type: 'text', text: 'mixed content follows' },
        { type: 'image', data: PNG_B64, mimeType: 'image/png' },
        { type: 'audio', data: WAV_B64, mimeType: 'audio/wav' },
        { type: 'resource', resource: textResource },
        resourceLink,
      ] };
      case 'fail_tool': return { isError: true, content: [{ type: 'text', text: 'Something went wrong inside the tool (isError=true)' }] };
      case 'raise_exception': throw new Error('raise_exception tool always throws');
      case 'protocol_error': throw new McpError(ErrorCode.InvalidParams, 'protocol_error tool always fails with -32602', { hint: 'deliberate' });
      case 'slow': {
        const seconds = typeof a.seconds === 'number' ? a.seconds : 3;
        const steps = Number.isInteger(a.steps) && a.steps > 0 ? a.steps : 3;
        const token = req.params._meta?.progressToken;
        for (let i = 1; i <= steps; i++) {
          await sleep((seconds * 1000) / steps, extra.signal);
          if (token !== undefined) {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` } });
          }
          await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'slow', data: `slow step ${i}/${steps}` } });
        }
        return { content: [{ type: 'text', text: `slept ${seconds}s in ${steps} steps` }] };
      }
      case 'elicit_name': {
        const r = await server.elicitInput({
          message: 'What is your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string', description: 'Your name' } }, required: ['name'] },
        }, { relatedRequestId: extra.requestId });
        if (r.action !== 'accept') return { content: [{ type: 'text', text: `elicitation ${r.action}` }] };
        return { content: [{ type: 'text', text: `Hello, ${r.content?.name}!` }] };
      }
      case 'sample_llm': {
        const r = await server.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: String(a.prompt ?? 'Say hi') } }], maxTokens: 50,
        }, { relatedRequestId: extra.requestId });
        return { content: [{ type: 'text', text: `model ${r.model} said: ${r.content?.type === 'text' ? r.content.text : JSON.stringify(r.content)}` }] };
      }
      default:
        if (/^noop_\d\d$/.test(req.params.name)) return { content: [{ type: 'text', text: `${req.params.name} ok` }] };
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    }
  });
  return server;
}

// ---------------------------------------------------------------- --tasks: 2025-11-25 task tools
// A task tool of the SDK's experimental API: the task completes with `text` after `ms`. (A tool
// without an input schema gets only the `extra` argument: it is always the last one.)
function taskHandler(text, ms) {
  const extra = (a) => a[a.length - 1];
  return {
    async createTask(...a) {
      const { taskStore: store, taskRequestedTtl } = extra(a);
      const task = await store.createTask({ ttl: taskRequestedTtl });
      setTimeout(() => {
        store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text }] }).catch(() => {});
      }, ms);
      return { task };
    },
    async getTask(...a) { const { taskId, taskStore: store } = extra(a); return await store.getTask(taskId); },
    async getTaskResult(...a) { const { taskId, taskStore: store } = extra(a); return await store.getTaskResult(taskId); },
  };
}

function buildTaskServer() {
  const mcp = new McpServer(
    { name: 'peer-ts-v1', version: '1.32.2-peer' },
    { capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } }, taskStore,
      instructions: 'Third-party test peer built on @modelcontextprotocol/sdk v1: 2025-11-25 tasks.' },
  );
  mcp.experimental.tasks.registerToolTask('required_task',
    { description: 'Runs only as a 2025-11-25 task (taskSupport required)', execution: { taskSupport: 'required' } },
    taskHandler('required ran', 100));
  mcp.experimental.tasks.registerToolTask('optional_task',
    { description: 'May run as a 2025-11-25 task (taskSupport optional)', execution: { taskSupport: 'optional' } },
    taskHandler('optional ran', 100));
  mcp.registerTool('forbidden_task', { description: 'A plain tool (taskSupport forbidden)' },
    async () => ({ content: [{ type: 'text', text: 'forbidden ran' }] }));
  mcp.registerTool('call_log', { description: 'The names of every tools/call the server received, as JSON' },
    async () => ({ content: [{ type: 'text', text: JSON.stringify(CALLS) }] }));
  return mcp;
}

// ---------------------------------------------------------------- HTTP wiring
const transports = new Map(); // session id -> transport (stateful mode)
function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { data += c; if (data.length > 4 * 1024 * 1024) reject(new Error('body too large')); });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}
const jsonError = (res, status, code, message) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
};

const httpServer = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://127.0.0.1:${PORT}`);
    if (url.pathname !== '/mcp') { res.writeHead(404).end('not found'); return; }
    let body;
    if (req.method === 'POST') {
      const raw = await readBody(req);
      try { body = raw ? JSON.parse(raw) : undefined; } catch { jsonError(res, 400, -32700, 'Parse error'); return; }
      for (const m of Array.isArray(body) ? body : [body]) {
        if (m?.method === 'tools/call') CALLS.push(m.params?.name ?? null);
      }
    }
    if (MODE === 'stateless') {
      if (req.method !== 'POST') { res.writeHead(405, { Allow: 'POST' }).end(); return; }
      const server = TASKS ? buildTaskServer() : buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: RESPONSE === 'json' });
      res.on('close', () => { transport.close(); server.close(); });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    // stateful
    const sid = req.headers['mcp-session-id'];
    if (sid && transports.has(sid)) { await transports.get(sid).handleRequest(req, res, body); return; }
    if (sid) { jsonError(res, 404, -32001, 'Session not found'); return; }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: RESPONSE === 'json',
        eventStore,
        retryInterval: RETRY_MS,
        onsessioninitialized: (id) => transports.set(id, transport),
        onsessionclosed: (id) => transports.delete(id),
      });
      transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
      await (TASKS ? buildTaskServer() : buildServer()).connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
  } catch (err) {
    console.error('request error', err);
    if (!res.headersSent) jsonError(res, 500, -32603, 'Internal server error');
  }
});

httpServer.listen(PORT, '127.0.0.1', () => {
  console.error(`peer-ts-v1 listening on http://127.0.0.1:${PORT}/mcp mode=${MODE} response=${RESPONSE} pageSize=${PAGE_SIZE} eventStore=${EVENT_STORE} retryMs=${RETRY_MS} tasks=${TASKS} ttl=${TTL_S}s`);
  console.error(`LATEST_PROTOCOL_VERSION=${LATEST_PROTOCOL_VERSION} SUPPORTED_PROTOCOL_VERSIONS=${JSON.stringify(SUPPORTED_PROTOCOL_VERSIONS)}`);
});
const shutdown = () => { for (const t of transports.values()) t.close().catch(() => {}); httpServer.close(); httpServer.closeAllConnections?.(); process.exit(0); };
setTimeout(() => { console.error(`ttl ${TTL_S}s reached, exiting`); shutdown(); }, TTL_S * 1000).unref();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
