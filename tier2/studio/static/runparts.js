// Renderers of the run page's parts: an event row, the phases, the plan, the cost bar, the gate verdicts, the
// screenshots, the design documents and spec. Pure functions of API data (text nodes only).
import { blobUrl } from './api.js';
import { badge, clear, clock, h, json, markdown, money } from './dom.js';

export const PHASES = ['setup', 'design', 'implement', 'validate', 'deliver'];

const tokens = (d) => `${d.input_tokens}+${d.output_tokens} tokens`;
const SUMMARY = {
  run_started: (d) => `model ${d.model} (route ${d.model_route}), pack ${d.pack}`,
  phase_changed: (d) => `${d.phase}${d.detail ? ` — ${d.detail}` : ''}`,
  model_called: (d) => `step ${d.step}: ${d.model}, ${tokens(d)}, ${money(d.cost_usd)}`,
  tool_started: (d) => `step ${d.step}: ${d.tool} ${d.summary || ''}`,
  tool_finished: (d) => `step ${d.step}: ${d.tool} ${d.state} ${d.summary || ''}`,
  gate_result: (d) => `${d.passed ? 'PASS' : 'FAIL'} ${d.gate_id} (${d.layer}) ${d.summary || ''}`,
  attempt_started: (d) => `attempt ${d.attempt} on ${d.worker}`
    + (d.resumed_from !== null && d.resumed_from !== undefined ? `, resumed after checkpoint ${d.resumed_from}` : ''),
  policy_refused: (d) => `a policy edit was refused (${d.reason}); the run works under policy ${d.policy}`,
  cancel_requested: (d) => `cancel requested${d.by ? ` by ${d.by}` : ''}`,
  run_finished: (d) => `${d.status}: ${d.stop_reason}`,
  plan_changed: (d) => `${d.node} → ${d.status}`,
  case_hit: (d) => `case library ${d.action} ${d.fixer || ''} for ${d.gate}`
    + (d.action === 'applied' ? (d.fixed ? ' → fixed, no model call' : ' → not fixed') : ''),
  case_recorded: (d) => `case recorded for ${d.gate} (${d.scope}${d.fixer ? `, fixer ${d.fixer}` : ''})`,
  context_compressed: (d) => `${d.agent} context compressed (#${d.seq}): ${d.tokens_before} → ${d.tokens_after} `
    + `tokens of ${d.budget_tokens}, ${d.pinned} pinned`,
  companion_called: (d) => `${d.agent} ${d.state}: ${d.trigger}`
    + (d.agent === 'reviewer' && d.state === 'answered' ? ` (${d.findings} finding(s))` : '')
    + ` · ${d.model_calls} model call(s)` + (d.cost_usd !== null && d.cost_usd !== undefined
      ? ` · $${Number(d.cost_usd).toFixed(4)}` : ''),
  docs_hint: (d) => `engine docs for ${(d.mentions || []).join(', ')}: ${(d.sections || []).join(', ')}`,
  goal_versioned: (d) => {
    const req = (d.diff && d.diff.requirements) || {};
    const n = (k) => (req[k] || []).length;
    return `goal v${d.goal_version} (${d.author}): ${d.text} · requirements +${n('added')} ~${n('changed')} `
      + `-${n('removed')} · ${Object.keys((d.diff && d.diff.invalidated) || {}).length} invalidated · `
      + `${((d.diff && d.diff.reused) || []).length} reused`;
  },
  writer_tasks: (d) => `writer tasks: ${(d.tasks || []).filter((t) => t.status === 'completed').length}`
    + `/${(d.tasks || []).length} done`,
};

export function eventRow(ev) {
  const text = (SUMMARY[ev.type] || (() => ''))(ev.data);
  const failed = (ev.type === 'gate_result' && !ev.data.passed) || (ev.type === 'tool_finished'
    && ev.data.state !== 'success') || (ev.type === 'run_finished' && ev.data.status !== 'delivered');
  return h('tr', { class: failed ? 'bad' : '', dataset: { eventId: ev.id, type: ev.type } },
    h('td', { class: 'num' }, ev.id), h('td', {}, clock(ev.data.at)), h('td', {}, ev.type), h('td', {}, text));
}

export function renderPhases(el, current, status) {
  const at = PHASES.indexOf(current);
  const ended = ['delivered', 'failed', 'stopped'].includes(status);
  clear(el, PHASES.map((p, i) => h('li', {
    class: i < at || (ended && i === at) ? 'done' : i === at ? 'current' : '',
    dataset: { phase: p },
  }, p)));
}

export function renderPlan(el, nodes) {
  const list = Object.entries(nodes || {});
  if (!list.length) { clear(el, h('p', { class: 'muted' }, 'No plan yet.')); return; }
  const counts = {};
  for (const [, n] of list) counts[n.status] = (counts[n.status] || 0) + 1;
  clear(el,
    h('p', { id: 'plan-counts' }, Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(' · ')),
    h('ul', { class: 'plan' }, list.map(([id, n]) => h('li', { dataset: { node: id, status: n.status } },
      badge(n.status), ' ', id))));
}

export function renderCost(el, usage) {
  const budget = (usage && usage.budget) || {};
  const spent = Number((usage && usage.cost_usd) ?? budget.spent_usd ?? 0);
  const cap = Number(budget.cap_usd || 0);
  const parts = [h('span', { id: 'cost-spent' }, money(spent)), cap ? ` of ${money(cap)} budget` : ' (no USD cap)'];
  if (usage && usage.estimated) parts.push(' · tokens estimated');
  if (usage && usage.priced === false) parts.push(' · a model has no price');
  if (budget.spent_tokens !== undefined) parts.push(` · ${budget.spent_tokens} tokens`);
  if (budget.deadline_s) parts.push(` · deadline ${budget.deadline_s} s`);
  clear(el, h('progress', { id: 'budget-bar', max: cap || 1, value: cap ? Math.min(spent, cap) : 0 }), ' ', parts);
}

export function renderGates(el, gates, source) {
  if (!gates || !gates.length) { clear(el, h('p', { class: 'muted' }, 'No gate verdicts yet.')); return; }
  const failed = gates.filter((g) => !g.passed).length;
  clear(el,
    h('p', { id: 'gates-summary' }, `${gates.length - failed} of ${gates.length} gates passed`,
      failed ? ` · ${failed} failed` : '', h('span', { class: 'muted small' }, ` (${source})`)),
    gates.map((g) => h('details', { class: `gate ${g.passed ? 'pass' : 'fail'}`, open: !g.passed,
      dataset: { gateId: g.id, passed: String(g.passed) } },
    h('summary', {}, h('b', {}, g.passed ? '✔ ' : '✘ '), g.id, ' ',
      h('span', { class: 'muted' }, [g.layer, g.mode].filter(Boolean).join(' · ')), ' — ', g.summary || ''),
    (g.findings || []).length ? h('ul', { class: 'findings' },
      g.findings.map((f) => h('li', { class: `sev-${f.severity}` }, `${f.severity}: ${f.message}`))) : null,
    g.evidence !== undefined && g.evidence !== null
      ? h('div', { class: 'evidence' }, h('div', { class: 'muted small' }, 'evidence'), json(g.evidence)) : null)));
}

export async function renderShots(el, shots) {
  clear(el);
  for (const shot of shots || []) {
    const img = h('img', { alt: shot.name, title: shot.path, dataset: { shot: shot.name } });
    el.append(h('figure', {}, img, h('figcaption', {}, shot.name)));
    try {
      img.src = await blobUrl(shot.url);
    } catch (err) {
      img.replaceWith(h('span', { class: 'error' }, `${shot.name}: ${err.message}`));
    }
  }
}

function renderSpec(spec, plan) {
  const reqs = spec.requirements || [];
  const scope = spec.scope || {};
  return h('div', { id: 'spec' },
    h('h3', {}, spec.title || 'Spec', ' ', h('span', { class: 'muted' }, `(${spec.genre || '?'})`)),
    spec.pitch ? h('p', {}, spec.pitch) : null,
    h('p', {}, `buildable: ${scope.buildable ? 'yes' : 'no'}`,
      (scope.unsupported || []).length ? ` · cannot be built: ${scope.unsupported.join('; ')}` : ''),
    h('table', { class: 'reqs' },
      h('thead', {}, h('tr', {}, ['id', 'requirement', 'role', 'status', 'predicate'].map((c) => h('th', {}, c)))),
      h('tbody', {}, reqs.map((r) => {
        const node = (plan || {})[`req.${r.id}`];
        return h('tr', { dataset: { req: r.id } }, h('td', {}, r.id), h('td', {}, r.text), h('td', {}, r.role),
          h('td', {}, node ? badge(node.status) : '–'), h('td', {}, h('code', {}, JSON.stringify(r.predicate))));
      }))),
    h('details', {}, h('summary', {}, 'design/spec.json'), json(spec)));
}

export function renderDesign(el, design, plan, selected) {
  const docs = design.docs || [];
  if (!docs.length && !design.spec) {
    clear(el, h('p', { class: 'muted' }, 'The design phase has not written anything yet.'));
    return selected;
  }
  const pick = docs.find((d) => d.path === selected) ? selected : (docs[0] || {}).path;
  const body = h('div', { id: 'design-doc' });
  const show = (path) => {
    const doc = docs.find((d) => d.path === path);
    for (const b of el.querySelectorAll('.doc-tabs button')) b.classList.toggle('on', b.dataset.path === path);
    clear(body, doc ? markdown(doc.text) : '', doc && doc.truncated ? h('p', { class: 'muted' }, '(truncated)') : '');
    el.dataset.selected = path || '';
  };
  clear(el,
    design.spec ? renderSpec(design.spec, plan) : null,
    design.spec_error ? h('p', { class: 'error' }, design.spec_error) : null,
    docs.length ? h('div', { class: 'doc-tabs' }, docs.map((d) => h('button', { type: 'button',
      dataset: { path: d.path }, onclick: () => show(d.path) }, d.path.split('/').pop()))) : null,
    body);
  show(pick);
  return pick;
}
