// Third-party MCP peer: TypeScript SDK v2 (@modelcontextprotocol/server 2.4.x +
// @modelcontextprotocol/node 2.1.x), Streamable HTTP on 127.0.0.1 only.
// Serves protocol 2026-07-28 (stateless per-request _meta envelope, server/discover,
// input_required multi-round-trip) AND the 2025 era (initialize handshake) on one URL.
//
// Usage (after checks/interop/install.sh):
//   node server.mjs --port 8932 [--legacy stateless|stateful|reject]
//        [--response auto|sse|json] [--legacy-response sse|json] [--page-size 5] [--ttl 600]
//   --legacy    how 2025-era (initialize) traffic is served:
//                 stateless = SDK default stateless fallback (createMcpHandler legacy:'stateless')
//                 stateful  = user-land routing with isLegacyRequest() to a session-keeping
//                             NodeStreamableHTTPServerTransport (Mcp-Session-Id); legacy
//                             elicitation via the SDK's input_required->elicitation shim works here
//                 reject    = modern-only endpoint (legacy:'reject')
//   --response  response shaping for 2026-07-28 requests (createMcpHandler responseMode)
//   --legacy-response  JSON vs SSE for --legacy stateful (enableJsonResponse)
// The process exits by itself after --ttl seconds (default 600).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import {
  McpServer, createMcpHandler, isLegacyRequest, inputRequired, acceptedContent, inputResponse,
  ProtocolError, ProtocolErrorCode, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import {
  toNodeHandler, toWebRequest, NodeStreamableHTTPServerTransport, localhostHostValidation, localhostOriginValidation,
} from '@modelcontextprotocol/node';

// ---------------------------------------------------------------- arguments
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']);
    return acc;
  }, []),
);
const PORT = Number(args.port ?? process.argv[2]);
if (!Number.isInteger(PORT) || PORT <= 0) {
  console.error('usage: node server.mjs --port N [--legacy stateless|stateful|reject] [--response auto|sse|json] [--legacy-response sse|json] [--page-size 5] [--ttl 600]');
  process.exit(2);
}
const LEGACY = args.legacy ?? 'stateless';
const RESPONSE = args.response ?? 'auto';
const LEGACY_RESPONSE = args['legacy-response'] ?? 'sse';
const PAGE_SIZE = Number(args['page-size'] ?? 5);
const TTL_S = Number(args.ttl ?? 600);
if (!['stateless', 'stateful', 'reject'].includes(LEGACY)) throw new Error('--legacy must be stateless|stateful|reject');
if (!['auto', 'sse', 'json'].includes(RESPONSE)) throw new Error('--response must be auto|sse|json');

// ---------------------------------------------------------------- fixtures
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
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
const README_URI = 'test://static/readme.txt';
const textResource = { uri: README_URI, mimeType: 'text/plain', text: 'Hello from the TS v2 peer.' };
const blobResource = { uri: 'test://static/pixel.png', mimeType: 'image/png', blob: PNG_B64 };
const resourceLink = { type: 'resource_link', uri: README_URI, name: 'readme', mimeType: 'text/plain', description: 'A text resource the client may read with resources/read' };
const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); reject(new Error('cancelled')); }, { once: true });
});
const encodeCursor = (offset) => Buffer.from(JSON.stringify({ offset })).toString('base64url');
function decodeCursor(cursor) {
  try { const { offset } = JSON.parse(Buffer.from(cursor, 'base64url').toString()); if (Number.isInteger(offset) && offset >= 0) return offset; } catch {}
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
}

// ---------------------------------------------------------------- MCP server factory
function buildServer() {
  const mcp = new McpServer(
    { name: 'peer-ts-v2', version: '2.4.0-peer' },
    { capabilities: { logging: {} }, instructions: 'Third-party test peer built on @modelcontextprotocol/server v2.' },
  );
  const empty = z.object({});
  mcp.registerTool('echo', { description: 'Echo back the given text', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  mcp.registerTool('add', {
    description: 'Add two numbers (text + structuredContent)',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    outputSchema: z.object({ sum: z.number() }),
    annotations: { readOnlyHint: true, idempotentHint: true },
  }, async ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b } }));
  mcp.registerTool('get_text', { description: 'Returns one text content block', inputSchema: empty },
    async () => ({ content: [{ type: 'text', text: 'plain text content' }] }));
  mcp.registerTool('get_image', { description: 'Returns one image content block (PNG)', inputSchema: empty },
    async () => ({ content: [{ type: 'image', data: PNG_B64, mimeType: 'image/png' }] }));
  mcp.registerTool('get_audio', { description: 'Returns one audio content block (WAV)', inputSchema: empty },
    async () => ({ content: [{ type: 'audio', data: WAV_B64, mimeType: 'audio/wav' }] }));
  mcp.registerTool('get_embedded_resource', { description: 'Returns embedded resources (text and blob)', inputSchema: empty },
    async () => ({ content: [{ type: 'resource', resource: textResource }, { type: 'resource', resource: blobResource }] }));
  mcp.registerTool('get_resource_link', { description: 'Returns a resource_link content block', inputSchema: empty },
    async () => ({ content: [resourceLink] }));
  mcp.registerTool('get_mixed', { description: 'Returns text, image, audio, resource and resource_link together', inputSchema: empty },
    async () => ({ content: [
      { type: 'text', text: 'mixed content follows' },
      { type: 'image', data: PNG_B64, mimeType: 'image/png' },
      { type: 'audio', data: WAV_B64, mimeType: 'audio/wav' },
      { type: 'resource', resource: textResource },
      resourceLink,
    ] }));
  mcp.registerTool('fail_tool', { description: 'Tool execution error: result with isError=true', inputSchema: empty },
    async () => ({ isError: true, content: [{ type: 'text', text: 'Something went wrong inside the tool (isError=true)' }] }));
  mcp.registerTool('raise_exception', { description: 'Throws a plain Error inside the tool handler', inputSchema: empty },
    async () => { throw new Error('raise_exception tool always throws'); });
  mcp.registerTool('protocol_error', { description: 'Throws a JSON-RPC error (-32602) instead of returning a result', inputSchema: empty },
    async () => { throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'protocol_error tool always fails with -32602', { hint: 'deliberate' }); });
  mcp.registerTool('slow', {
    description: 'Sleeps `seconds` (default 3) in `steps` steps, emitting progress notifications; honours cancellation',
    inputSchema: z.object({ seconds: z.number().optional(), steps: z.number().int().optional() }),
  }, async ({ seconds = 3, steps = 3 }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await sleep((seconds * 1000) / steps, ctx.mcpReq.signal);
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` } });
      }
    }
    return { content: [{ type: 'text', text: `slept ${seconds}s in ${steps} steps` }] };
  });
  // Multi-round-trip (2026-07-28 input_required). On 2025-era connections the SDK's legacy
  // shim turns the same return value into a real elicitation/create server->client request.
  const nameSchema = z.object({ name: z.string() });
  mcp.registerTool('elicit_name', { description: 'Asks for a name: input_required/elicitation (2026-07-28) or elicitation/create (2025, stateful)', inputSchema: empty },
    async (_args, ctx) => {
      const got = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', nameSchema);
      if (got) return { content: [{ type: 'text', text: `Hello, ${got.name}!` }] };
      const view = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      if (view.kind === 'elicit') return { content: [{ type: 'text', text: `elicitation ${view.action}` }] };
      return inputRequired({
        inputRequests: { user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) },
        requestState: 'round-1',
      });
    });
  // Two rounds: first asks a confirmation, then (in a second input_required) a number.
  mcp.registerTool('two_rounds', { description: 'Two input_required rounds: confirm, then pick a number', inputSchema: empty },
    async (_args, ctx) => {
      const state = ctx.mcpReq.requestState();
      if (state === undefined) {
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: 'Proceed?', requestedSchema: z.object({ ok: z.boolean() }) }) },
          requestState: 'await-confirm',
        });
      }
      if (state === 'await-confirm') {
        const c = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', z.object({ ok: z.boolean() }));
        if (!c?.ok) return { content: [{ type: 'text', text: 'not confirmed' }] };
        return inputRequired({
          inputRequests: { number: inputRequired.elicit({ message: 'Pick a number', requestedSchema: z.object({ n: z.number() }) }) },
          requestState: 'await-number',
        });
      }
      const n = acceptedContent(ctx.mcpReq.inputResponses, 'number', z.object({ n: z.number() }));
      return { content: [{ type: 'text', text: n ? `you picked ${n.n}` : 'no number' }] };
    });
  // Load shedding: the first call answers input_required with only a requestState (no input
  // requests); the retry that echoes it is served. 2025 sessions are served at once.
  mcp.registerTool('busy_once', { description: 'Load shedding (2026-07-28): first answer is input_required with only a requestState; the retry echoing it is served', inputSchema: empty },
    async (_args, ctx) => {
      const state = ctx.mcpReq.requestState();
      if (state === undefined) return inputRequired({ requestState: 'busy-1' });
      return { content: [{ type: 'text', text: `served on retry 1 with state ${state}` }] };
    });
  for (let i = 1; i <= 8; i++) {
    const n = String(i).padStart(2, '0');
    mcp.registerTool(`noop_${n}`, { description: `Filler tool ${n} (for pagination)`, inputSchema: empty },
      async () => ({ content: [{ type: 'text', text: `noop_${n} ok` }] }));
  }
  mcp.registerResource('readme', README_URI, { title: 'Readme', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: textResource.text }] }));
  mcp.registerPrompt('greeting', { description: 'Greets someone', argsSchema: z.object({ who: z.string() }) },
    async ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${who}` } }] }));

  // McpServer has no page-size option: wrap its tools/list handler with cursor pagination.
  const low = mcp.server;
  const allTools = low._getRequestHandler('tools/list');
  low.setRequestHandler('tools/list', async (request, ctx) => {
    const full = await allTools({ ...request, params: { ...(request.params ?? {}), cursor: undefined } }, ctx);
    const offset = request.params?.cursor ? decodeCursor(request.params.cursor) : 0;
    const tools = full.tools.slice(offset, offset + PAGE_SIZE);
    const nextCursor = offset + PAGE_SIZE < full.tools.length ? encodeCursor(offset + PAGE_SIZE) : undefined;
    return nextCursor ? { ...full, tools, nextCursor } : { ...full, tools };
  });
  return mcp;
}

// ---------------------------------------------------------------- HTTP wiring
const handler = createMcpHandler(() => buildServer(), {
  legacy: LEGACY === 'stateless' ? 'stateless' : 'reject',
  responseMode: RESPONSE,
  onerror: (e) => console.error('mcp handler error:', e?.message ?? e),
});
const modernNode = toNodeHandler(handler);

// --legacy stateful: keep 2025 sessions ourselves, route with isLegacyRequest().
const sessions = new Map();
async function legacyStateful(req, res, body) {
  const sid = req.headers['mcp-session-id'];
  if (sid && sessions.has(sid)) return sessions.get(sid).handleRequest(req, res, body);
  if (sid) {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    return;
  }
  if (req.method === 'POST' && body && !Array.isArray(body) && body.method === 'initialize') {
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: LEGACY_RESPONSE === 'json',
      onsessioninitialized: (id) => sessions.set(id, transport),
      onsessionclosed: (id) => sessions.delete(id),
    });
    await buildServer().connect(transport);
    return transport.handleRequest(req, res, body);
  }
  res.writeHead(400, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } }));
}
function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { data += c; });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

// DNS-rebinding guards, as the SDK README prescribes for hand-wired node:http servers
// (createMcpHandler itself is validation-free): 403 for a non-localhost Host or Origin.
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();
const httpServer = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://127.0.0.1:${PORT}`);
    if (url.pathname !== '/mcp') { res.writeHead(404).end('not found'); return; }
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    if (LEGACY !== 'stateful') { await modernNode(req, res); return; }
    let body;
    if (req.method === 'POST') {
      const raw = await readBody(req);
      try { body = raw ? JSON.parse(raw) : undefined; } catch {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
    }
    const legacy = await isLegacyRequest(await toWebRequest(req, body), body);
    if (legacy) await legacyStateful(req, res, body);
    else await modernNode(req, res, body);
  } catch (err) {
    console.error('request error', err);
    if (!res.headersSent) { res.writeHead(500, { 'Content-Type': 'application/json' }); res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal server error' } })); }
  }
});
httpServer.listen(PORT, '127.0.0.1', () => {
  console.error(`peer-ts-v2 listening on http://127.0.0.1:${PORT}/mcp legacy=${LEGACY} response=${RESPONSE} legacyResponse=${LEGACY_RESPONSE} pageSize=${PAGE_SIZE} ttl=${TTL_S}s`);
  console.error(`LATEST_PROTOCOL_VERSION=${LATEST_PROTOCOL_VERSION} SUPPORTED_PROTOCOL_VERSIONS(legacy handshake)=${JSON.stringify(SUPPORTED_PROTOCOL_VERSIONS)} modern=["2026-07-28"]`);
});
const shutdown = () => { handler.close().catch(() => {}); for (const t of sessions.values()) t.close?.().catch?.(() => {}); httpServer.close(); httpServer.closeAllConnections?.(); process.exit(0); };
setTimeout(() => { console.error(`ttl ${TTL_S}s reached, exiting`); shutdown(); }, TTL_S * 1000).unref();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
