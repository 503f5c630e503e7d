/**
 * A local OpenAI-compatible endpoint for tests: POST /v1/chat/completions, non-streaming JSON,
 * answering each request with whatever the test's script returns for it. Every request body and
 * its headers are kept so tests can assert what the backend sent (tools offered, tool results).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters: unknown } }[];
  stream?: boolean;
}

export interface Reply {
  text?: string;
  calls?: { name: string; args: Record<string, unknown> }[];
  /** Held back this long before answering (for timeouts and aborts). */
  delayMs?: number;
  /** Answer with this error status and OpenAI's error body instead (401: a refused key). */
  status?: number;
}

export interface ScriptedServer {
  baseUrl: string;
  requests: { body: ChatRequest; headers: http.IncomingHttpHeaders }[];
  close: () => Promise<void>;
}

/** The tool results the backend sent back in a request, by tool call id. */
export function toolResults(body: ChatRequest): Map<string, string> {
  return new Map(body.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id ?? '', m.content ?? '']));
}

export async function scriptedServer(script: (body: ChatRequest, n: number) => Reply): Promise<ScriptedServer> {
  const requests: ScriptedServer['requests'] = [];
  let calls = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      requests.push({ body, headers: req.headers });
      const n = requests.length - 1;
      let reply: Reply;
      try {
        reply = script(body, n);
      } catch (e) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: String(e) } }));
        return;
      }
      if (reply.status !== undefined) {
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: {
              message: 'Incorrect API key provided.',
              type: 'invalid_request_error',
              param: null,
              code: reply.status === 401 ? 'invalid_api_key' : null,
            },
          }),
        );
        return;
      }
      const toolCalls = (reply.calls ?? []).map((c) => ({
        id: `call_${(calls += 1)}`,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      }));
      const payload = {
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: reply.text ?? null,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      };
      const send = (): void => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
