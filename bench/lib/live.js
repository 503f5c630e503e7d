/* global fetch, TextDecoder, AbortController */
/**
 * How long a change takes to reach an open dashboard page: open the page's event stream (as the
 * browser's EventSource does), make the change once the stream is open, and time until its
 * `change` event arrives and until the page's new HTML has been fetched (what the page's script
 * does next). Returns milliseconds.
 */
export async function liveLatency({ eventsUrl, pageUrl, headers = {}, change }) {
  const controller = new AbortController();
  const res = await fetch(eventsUrl, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const until = async (pattern) => {
    while (!pattern.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the event stream ended');
      text += decoder.decode(value, { stream: true });
    }
  };
  await until(/retry: \d+/);
  const t0 = performance.now();
  await change();
  await until(/event: change/);
  const eventMs = performance.now() - t0;
  const page = await fetch(pageUrl, { headers });
  await page.text();
  const pageMs = performance.now() - t0;
  controller.abort();
  await reader.cancel().catch(() => undefined);
  return { eventMs, pageMs };
}
