// The run page's plan versions: the thread's goal versions (vN · author · text · end), the selected version's plan
// diff (requirements added/changed/removed, nodes invalidated and why, nodes reused), its node table (status,
// reused / re-run), metrics and end; and the writer's task list, live from `writer_tasks` events.
// Pure renderers of API data (text nodes only) and one loader per thread.
import { get } from './api.js';
import { badge, clear, h } from './dom.js';

const SIGNS = { added: '+', changed: '~', removed: '−' };

function howOf(id, diff) {
  if ((diff.reused || []).includes(id)) return 'reused';
  if (Object.prototype.hasOwnProperty.call(diff.invalidated || {}, id)) return 're-run';
  return '';
}

function metricText(k, v) {
  if (v && typeof v === 'object') return `${k}: ${Object.entries(v).map(([a, b]) => `${a} ${b}`).join(', ')}`;
  return `${k}: ${v}`;
}

export function renderPlanVersion(el, doc) {
  const diff = doc.diff || {};
  const req = diff.requirements || {};
  const changes = ['added', 'changed', 'removed'].flatMap((kind) => (req[kind] || []).map((r) => h('li',
    { dataset: { change: kind, req: r.id } }, `${SIGNS[kind]} ${r.id} `, r.text || '',
    kind === 'changed' && r.was !== null && r.was !== undefined ? h('span', { class: 'muted' }, ` (was: ${r.was}`,
      (r.fields || []).length ? `; changed: ${r.fields.join(', ')}` : '', ')') : null)));
  const invalidated = Object.entries(diff.invalidated || {});
  const nodes = Object.entries((doc.plan && doc.plan.nodes) || {});
  const end = doc.end;
  clear(el,
    h('p', { id: 'plan-goal' }, h('b', {}, `goal v${doc.goal_version}`), ` (${doc.goal.author}): `, doc.goal.text,
      h('span', { class: 'muted small' }, ` · plan version ${doc.plan_version} · run ${doc.run_id}`)),
    h('h4', {}, 'Requirements'),
    changes.length ? h('ul', { id: 'plan-diff', class: 'diff' }, changes)
      : h('p', { id: 'plan-diff', class: 'muted' }, 'No requirement changed.'),
    h('h4', {}, `Invalidated (${invalidated.length}) · reused (${(diff.reused || []).length})`),
    h('ul', { id: 'plan-invalidated' }, invalidated.map(([id, why]) => h('li', { dataset: { node: id } },
      h('code', {}, id), ` — ${why}`))),
    h('p', { id: 'plan-reused', class: 'small' }, 'reused: ', (diff.reused || []).join(', ') || 'none'),
    nodes.length ? h('table', { id: 'plan-node-table', class: 'nodes' },
      h('thead', {}, h('tr', {}, ['node', 'kind', 'status', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, nodes.map(([id, n]) => {
        const how = howOf(id, diff);
        return h('tr', { dataset: { node: id, status: n.status || '', how } }, h('td', {}, h('code', {}, id)),
          h('td', {}, n.kind || ''), h('td', {}, badge(n.status || '–')), h('td', { class: `how ${how}` }, how));
      }))) : null,
    h('p', { id: 'plan-metrics', class: 'small' },
      Object.entries(doc.metrics || {}).map(([k, v]) => metricText(k, v)).join(' · ') || 'no metrics'),
    end ? h('p', { id: 'plan-end', dataset: { kind: end.kind } }, badge(end.kind), ` ${end.reason || ''}`,
      (end.options || []).length ? h('ul', {}, end.options.map((o) => h('li', {}, o))) : null)
      : h('p', { id: 'plan-end', class: 'muted' }, 'This version\'s run has not ended.'));
}

export function renderWriterTasks(el, tasks) {
  if (!tasks || !tasks.length) { clear(el, h('p', { class: 'muted' }, 'The writer has no task list yet.')); return; }
  const done = tasks.filter((t) => t.status === 'completed').length;
  clear(el,
    h('p', { id: 'writer-tasks-count' }, `${done} of ${tasks.length} tasks done`),
    h('ul', { class: 'tasks' }, tasks.map((t) => h('li', { dataset: { task: t.id, status: t.status } },
      badge(t.status), ' ', t.subject, (t.nodes || []).length
        ? h('span', { class: 'muted small' }, ` — ${t.nodes.join(', ')}`) : null))));
}

// The goal versions of a thread and the selected version. `refresh()` re-reads the list (a `goal_versioned` event,
// the run's end) and keeps the selection unless it was the default (then the newest of this run, else the newest).
export function planVersions(threadId, runId, failed) {
  const list = h('ol', { id: 'goal-versions', class: 'versions' });
  const detail = h('div', { id: 'plan-version' });
  const box = h('div', { id: 'plan-versions' }, list, detail);
  const base = `/v1/threads/${encodeURIComponent(threadId)}`;
  let picked = null; // a version the person chose
  let shown = null;

  async function show(version) {
    try {
      const doc = await get(`${base}/plan?version=${version}`);
      shown = version;
      for (const li of list.children) li.classList.toggle('on', Number(li.dataset.version) === version);
      box.dataset.selected = String(version);
      renderPlanVersion(detail, doc);
    } catch (err) { failed(err); }
  }

  async function refresh() {
    let body;
    try { body = await get(`${base}/plans`); } catch (err) { if (err.status !== 404) failed(err); return; }
    const versions = body.versions || [];
    if (!versions.length) {
      clear(list, h('li', { class: 'muted' }, 'No goal version stored yet.'));
      clear(detail);
      return;
    }
    clear(list, versions.map((v) => h('li', { dataset: { version: v.goal_version, end: v.end || '' } },
      h('button', { type: 'button', onclick: () => { picked = v.goal_version; show(v.goal_version); } },
        `v${v.goal_version} · ${v.author} · ${v.text} · ${v.end || 'running'}`))));
    const mine = versions.filter((v) => v.run_id === runId);
    const want = picked ?? (mine.length ? mine[mine.length - 1] : versions[versions.length - 1]).goal_version;
    await show(want);
  }

  return { el: box, refresh };
}
