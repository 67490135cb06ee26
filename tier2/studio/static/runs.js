// The runs list (#/runs?status=…&q=…): status, brief, cost, age; filters; refreshed every few seconds while the
// tab is visible; "Older runs" pages on with the service's cursor.
import { get } from './api.js';
import { age, badge, clear, h, money } from './dom.js';

const REFRESH_MS = 3000;
const STATUSES = ['', 'queued', 'running', 'delivered', 'failed', 'stopped'];

function row(run) {
  return h('tr', { dataset: { runId: run.run_id, status: run.status } },
    h('td', {}, badge(run.status)),
    h('td', { class: 'brief' }, h('a', { href: `#/runs/${encodeURIComponent(run.run_id)}` },
      run.brief.length > 140 ? `${run.brief.slice(0, 140)}…` : run.brief),
    h('div', { class: 'muted small' }, run.run_id, run.continues_thread ? ' · follow-up' : '',
      run.cancel_requested && run.status !== 'stopped' ? ' · cancel requested' : '')),
    h('td', {}, run.phase),
    h('td', { class: 'num' }, money(run.cost_usd)),
    h('td', { title: run.created_at ? new Date(run.created_at * 1000).toISOString() : '' }, age(run.created_at)));
}

export function runsView(ctx, params) {
  const status = h('select', { id: 'filter-status', 'aria-label': 'status' },
    STATUSES.map((s) => h('option', { value: s, selected: s === (params.get('status') || '') }, s || 'any status')));
  const text = h('input', { id: 'filter-text', type: 'search', placeholder: 'text in the brief or the id',
    value: params.get('q') || '', size: 30 });
  const body = h('tbody', { id: 'runs-body' });
  const more = h('button', { id: 'runs-more', type: 'button', hidden: true }, 'Older runs');
  const state = h('span', { id: 'runs-state', class: 'muted small' });
  let cursor = null;
  let shown = 50;
  let timer = null;
  let alive = true;

  const query = (extra) => {
    const q = new URLSearchParams();
    if (status.value) q.set('status', status.value);
    if (text.value.trim()) q.set('q', text.value.trim());
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return q.toString();
  };

  async function load() {
    try {
      const page = await get(`/v1/runs?${query({ limit: Math.min(200, shown) })}`);
      if (!alive) return;
      clear(body, page.runs.length ? page.runs.map(row)
        : h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No runs match.')));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      state.textContent = `updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      if (err.status === 401) { ctx.onAuthLost(); return; }
      state.textContent = `could not refresh: ${err.message}`;
    }
  }

  async function older() {
    const page = await get(`/v1/runs?${query({ limit: 50, cursor })}`);
    body.append(...page.runs.map(row));
    shown += page.runs.length;
    cursor = page.next_cursor;
    more.hidden = !cursor;
  }

  function refilter() {
    shown = 50;
    const q = query({});
    history.replaceState(null, '', `#/runs${q ? `?${q}` : ''}`);
    load();
  }

  let debounce = null;
  status.addEventListener('change', refilter);
  text.addEventListener('input', () => { clearTimeout(debounce); debounce = setTimeout(refilter, 250); });
  more.addEventListener('click', older);

  clear(ctx.view,
    h('section', { class: 'card' },
      h('div', { class: 'bar' }, h('h2', {}, 'Runs'), h('a', { class: 'button', href: '#/new' }, 'New run')),
      h('div', { class: 'filters' }, status, ' ', text, ' ', state),
      h('table', { id: 'runs', class: 'runs' },
        h('thead', {}, h('tr', {}, ['Status', 'Brief', 'Phase', 'Cost', 'Age'].map((c) => h('th', {}, c)))), body),
      more));

  load();
  timer = setInterval(() => { if (document.visibilityState === 'visible') load(); }, REFRESH_MS);
  return () => { alive = false; clearInterval(timer); clearTimeout(debounce); };
}
