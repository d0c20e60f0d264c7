// Benchmark contender: the TypeScript SDK client (@modelcontextprotocol/sdk), Streamable HTTP.
// node client.mjs URL WORK N PAR REPS ERA: one warm-up work item, then REPS timed rounds of N work
// items, PAR at a time. A work item: connect (initialize handshake; this SDK speaks only the
// 2025 era), list every page or call the tool WORK, terminate the session, close.
// Prints {"ms":[per round],"check":tool count or text length}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, work, n, par, reps] = process.argv.slice(2);

async function item() {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  let check = 0;
  if (work === 'list') {
    let cursor;
    do {
      const r = await client.listTools(cursor ? { cursor } : undefined);
      check += r.tools.length;
      cursor = r.nextCursor;
    } while (cursor);
  } else {
    const r = await client.callTool({ name: work, arguments: { text: 'hello' } });
    for (const c of r.content) if (c.type === 'text') check += c.text.length;
  }
  await transport.terminateSession();
  await client.close();
  return check;
}

async function round() {
  let check = 0;
  for (let done = 0; done < +n; ) {
    const batch = Math.min(+par, +n - done);
    const all = await Promise.all(Array.from({ length: batch }, item));
    check = all[all.length - 1];
    done += batch;
  }
  return check;
}

let check = await item();
const ms = [];
for (let i = 0; i < +reps; i++) {
  const t = process.hrtime.bigint();
  check = await round();
  ms.push(Number(process.hrtime.bigint() - t) / 1e6);
}
console.log(JSON.stringify({ ms, check }));
process.exit(0);
