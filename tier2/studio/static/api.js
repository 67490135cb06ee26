// The /v1 API as the Studio uses it: the API key (this tab's sessionStorage), JSON calls with
// `Authorization: Bearer`, errors in the service's one format, and a run's event stream that survives dropped
// connections with no gap and no duplicate.

const KEY = 'tier2.studio.apiKey';

// every `type` of tier2/events.py (a test keeps this list equal to the Python union)
export const EVENT_TYPES = [
  'run_started', 'phase_changed', 'model_called', 'tool_started', 'tool_finished', 'gate_result',
  'attempt_started', 'cancel_requested', 'run_finished', 'plan_changed', 'policy_refused', 'case_hit',
  'case_recorded', 'context_compressed', 'companion_called', 'docs_hint', 'goal_versioned', 'writer_tasks',
];
export const TERMINAL = ['delivered', 'failed', 'stopped'];

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const auth = {
  key: () => sessionStorage.getItem(KEY) || '',
  set: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

function headers(extra = {}, key = auth.key()) {
  return key ? { Authorization: `Bearer ${key}`, ...extra } : { ...extra };
}

async function failure(resp) {
  let code = 'error';
  let message = `${resp.status} ${resp.statusText}`;
  try {
    const body = await resp.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch (_) { /* not JSON: keep the status line */ }
  return new ApiError(resp.status, code, message);
}

export async function call(method, path, { body, raw, contentType, key, idempotencyKey } = {}) {
  const extra = {};
  if (body !== undefined && !raw) extra['Content-Type'] = 'application/json';
  if (raw) extra['Content-Type'] = contentType || 'application/octet-stream';
  if (idempotencyKey) extra['Idempotency-Key'] = idempotencyKey;
  const resp = await fetch(path, {
    method, headers: headers(extra, key === undefined ? auth.key() : key), cache: 'no-store',
    body: raw || (body !== undefined ? JSON.stringify(body) : undefined),
  });
  if (!resp.ok) throw await failure(resp);
  return resp.status === 204 ? null : resp.json();
}

export const get = (path, opts) => call('GET', path, opts);
export const post = (path, body, opts = {}) => call('POST', path, { ...opts, body });

// an image that needs the key (a screenshot): fetched with it, shown through a blob: URL
export async function blobUrl(path) {
  const resp = await fetch(path, { headers: headers(), cache: 'no-store' });
  if (!resp.ok) throw await failure(resp);
  return URL.createObjectURL(await resp.blob());
}

// Follows GET /v1/runs/{id}/events. An EventSource cannot send the key, so it streams with a stream token
// (POST .../stream-token). After a dropped connection the browser reconnects by itself with Last-Event-ID; when it
// gives up (the token expired, the service restarted) a new token is fetched and the stream reopened with
// ?after=<last id>. Ids are monotonic per run: an id at or below the last one seen is a duplicate and dropped.
export class RunStream {
  constructor(runId, onEvent, onState) {
    this.runId = runId;
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastId = 0;
    this.opens = 0;
    this.duplicates = 0;
    this.gaps = 0;
    this.closed = false;
    this.es = null;
    this.retry = 0;
  }

  async start() {
    if (this.closed) return;
    let grant;
    try {
      grant = await post(`/v1/runs/${encodeURIComponent(this.runId)}/stream-token`);
    } catch (err) {
      if (err.status === 401 || err.status === 404) { this.onState('refused', err.message); return; }
      this.later();
      return;
    }
    if (this.closed) return;
    const after = this.lastId ? `&after=${this.lastId}` : '';
    const es = new EventSource(`${grant.events}${after}`);
    this.es = es;
    es.onopen = () => { this.opens += 1; this.retry = 0; this.onState('live'); };
    es.onerror = () => {
      if (this.closed) return;
      if (es.readyState === EventSource.CLOSED) { es.close(); this.later(); } // refused: a fresh token
      else this.onState('reconnecting');                                   // the browser resumes by itself
    };
    for (const type of EVENT_TYPES) es.addEventListener(type, (e) => this.handle(type, e));
  }

  later() {
    this.onState('reconnecting');
    this.retry = Math.min(this.retry + 1, 6);
    setTimeout(() => this.start(), 250 * 2 ** this.retry);
  }

  handle(type, e) {
    const id = Number(e.lastEventId);
    if (!Number.isSafeInteger(id) || id <= this.lastId) { this.duplicates += 1; return; }
    if (id !== this.lastId + 1) this.gaps += 1;
    this.lastId = id;
    let data = {};
    try { data = JSON.parse(e.data); } catch (_) { /* shown as an empty event */ }
    this.onEvent({ id, type, data });
    if (type === 'run_finished') { this.close(); this.onState('ended'); }
  }

  close() {
    this.closed = true;
    if (this.es) this.es.close();
  }
}
