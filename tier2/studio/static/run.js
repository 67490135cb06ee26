// The run page (#/runs/<id>): the live event timeline, phase and plan progress, the thread's goal versions and plan
// diffs, the writer's tasks, cost and budget, the design as it lands, every gate verdict with its evidence and
// screenshots, the game in a sandboxed iframe; cancel, follow-up.
import { RunStream, TERMINAL, get, post } from './api.js';
import { age, badge, clear, h } from './dom.js';
import {
  eventRow, renderCost, renderDesign, renderGates, renderPhases, renderPlan, renderShots,
} from './runparts.js';
import { planVersions, renderWriterTasks } from './plans.js';

function throttle(fn, ms) {
  let timer = null;
  let again = false;
  const run = async () => {
    again = false;
    try { await fn(); } finally {
      timer = setTimeout(() => { timer = null; if (again) trigger(); }, ms);
    }
  };
  const trigger = () => { if (timer) again = true; else { timer = -1; run(); } };
  return trigger;
}

export function runView(ctx, runId) {
  const base = `/v1/runs/${encodeURIComponent(runId)}`;
  const el = (tag, id, attrs = {}, ...kids) => h(tag, { id, ...attrs }, ...kids);
  const status = el('span', 'run-status');
  const phase = el('span', 'run-phase');
  const meta = el('div', 'run-meta', { class: 'muted small' });
  const cancel = el('button', 'cancel-run', { type: 'button', hidden: true }, 'Cancel run');
  const phases = el('ol', 'phases', { class: 'phases' });
  const plan = el('div', 'plan');
  const cost = el('div', 'cost');
  const streamState = el('span', 'stream-state', { class: 'muted small' }, 'connecting…');
  const events = el('tbody', 'events-body');
  const gates = el('div', 'gates');
  const shots = el('div', 'shots', { class: 'shots' });
  const design = el('div', 'design');
  const play = el('div', 'play');
  const follow = el('div', 'follow-up-box');
  const tasks = el('div', 'writer-tasks');
  let versions = null; // the thread's goal versions (plans.js), once the run's thread is known
  const planNodes = {};
  let record = null;
  let stream = null;
  let alive = true;
  let docSelected = null;
  let gatesSource = null;

  const failed = (err) => {
    if (err.status === 401) ctx.onAuthLost();
    else ctx.showNotice(err.message);
  };

  function showRecord(run) {
    record = run;
    clear(status, badge(run.status));
    phase.textContent = run.phase;
    clear(meta, `${run.run_id} · project ${run.project_id || '–'} · thread ${run.thread_id || '–'}`,
      ` · model ${run.model_route || (run.model && run.model.route) || 'default'}`,
      run.policy ? ` · policy ${run.policy}` : '', ` · created ${age(run.created_at)}`,
      run.stop_reason ? ` · ${run.stop_reason}` : '');
    const ended = TERMINAL.includes(run.status);
    cancel.hidden = ended;
    cancel.disabled = Boolean(run.cancel_requested);
    if (run.cancel_requested && !ended) cancel.textContent = 'Cancel requested…';
    renderPhases(phases, run.phase, run.status);
    Object.assign(planNodes, (run.plan && run.plan.nodes) || {});
    renderPlan(plan, planNodes);
    renderCost(cost, run.usage);
    if (ended) { showDelivery(); showFollowUp(); }
  }

  const refreshRecord = throttle(async () => {
    try { showRecord(await get(base)); } catch (err) { failed(err); }
  }, 1500);

  const refreshPlans = throttle(async () => { if (versions) await versions.refresh(); }, 1500);

  const refreshDesign = throttle(async () => {
    try {
      docSelected = renderDesign(design, await get(`${base}/design`), planNodes, docSelected);
    } catch (err) {
      if (err.status !== 409) failed(err); // 409: no project yet
    }
  }, 2000);

  const refreshGates = throttle(async () => {
    try {
      const report = await get(`${base}/report`);
      gatesSource = `report ${report.path}`;
      renderGates(gates, report.gates, gatesSource);
      renderShots(shots, report.screenshots);
    } catch (err) {
      if (err.status === 404 || err.status === 409) {
        if (record && TERMINAL.includes(record.status)) await deliveryGates();
      } else failed(err);
    }
  }, 2000);

  let delivery = null;
  async function loadDelivery() {
    if (!delivery) delivery = get(`${base}/delivery`);
    try { return await delivery; } catch (err) { delivery = null; if (err.status !== 409) failed(err); return null; }
  }

  async function deliveryGates() {
    const found = await loadDelivery();
    if (found) renderGates(gates, found.verification.gates, 'delivery.json');
  }

  async function showDelivery() {
    if (play.dataset.ready) return;
    play.dataset.ready = '1';
    const found = await loadDelivery();
    if (!found) { delete play.dataset.ready; return; }
    const done = found.completion ? h('p', { id: 'completion' }, found.completion.summary || '') : null;
    if (found.build && found.build.ok && found.preview && found.preview.path) showPlay(done);
    else clear(play, done, h('p', { class: 'muted', id: 'no-game' }, 'This run has no built game to play.'));
  }

  function onEvent(ev) {
    const box = events.closest('.timeline');
    const following = box && box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
    events.append(eventRow(ev));
    if (following) box.scrollTop = box.scrollHeight;
    syncStream();
    const d = ev.data;
    if (ev.type === 'phase_changed') { phase.textContent = d.phase; renderPhases(phases, d.phase, 'running'); }
    if (ev.type === 'plan_changed') {
      planNodes[d.node] = { ...(planNodes[d.node] || {}), status: d.status, evidence: d.evidence };
      renderPlan(plan, planNodes);
      if (d.node.startsWith('design.')) refreshDesign();
    }
    if (ev.type === 'gate_result') refreshGates();
    if (ev.type === 'goal_versioned') refreshPlans();
    if (ev.type === 'writer_tasks') renderWriterTasks(tasks, d.tasks);
    if (ev.type === 'run_finished') { refreshDesign(); refreshGates(); refreshPlans(); }
    refreshRecord();
  }

  // the stream's counters on the page (people see the state; tests read the counters)
  function syncStream() {
    Object.assign(streamState.dataset, { opens: stream.opens, duplicates: stream.duplicates, gaps: stream.gaps,
      last: stream.lastId });
  }

  function onState(state, detail) {
    streamState.textContent = detail ? `${state}: ${detail}` : state;
    streamState.dataset.state = state;
    syncStream();
  }

  function showPlay(done) {
    const start = el('button', 'play-game', { type: 'button' }, 'Play the game');
    const frameBox = el('div', 'game-frame');
    start.addEventListener('click', async () => {
      if (frameBox.firstChild) { clear(frameBox); start.textContent = 'Play the game'; return; }
      try {
        const grant = await post(`${base}/play-token`);
        clear(frameBox, h('iframe', { id: 'game', src: grant.url, sandbox: 'allow-scripts', width: 820,
          height: 620, title: 'the game', referrerpolicy: 'no-referrer' }));
        start.textContent = 'Stop the game';
      } catch (err) { failed(err); }
    });
    clear(play, done, h('p', { class: 'muted' }, 'The built game (dist/) runs in a sandboxed frame: scripts only, ',
      'no network, no access to this page.'), start, frameBox);
  }

  function showFollowUp() {
    if (follow.dataset.ready || !record || !record.thread_id) return;
    follow.dataset.ready = '1';
    const text = el('textarea', 'follow-up-brief', { rows: 3, cols: 70, required: true,
      placeholder: 'keep the gameplay, make it a snowy frozen tavern' });
    const form = el('form', 'follow-up', {}, text, h('br'), h('button', { type: 'submit' }, 'Send follow-up'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const run = await post('/v1/runs', { brief: text.value, thread_id: record.thread_id },
          { idempotencyKey: crypto.randomUUID() });
        location.hash = `#/runs/${encodeURIComponent(run.run_id)}`;
      } catch (err) { failed(err); }
    });
    clear(follow, h('p', { class: 'muted' }, 'Continue this thread: same project, the conversation goes on.'), form);
  }

  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await post(`${base}/cancel`);
      cancel.textContent = 'Cancel requested…';
    } catch (err) { cancel.disabled = false; failed(err); }
  });

  const card = (title, ...kids) => h('section', { class: 'card' }, h('h3', {}, title), ...kids);

  (async () => {
    let run;
    try {
      run = await get(base);
    } catch (err) {
      if (err.status === 401) { ctx.onAuthLost(); return; }
      clear(ctx.view, h('section', { class: 'card' }, h('h2', {}, 'Run not found'),
        h('p', { id: 'run-missing', class: 'error' }, err.status === 404
          ? 'There is no run with this id for your tenant (it does not exist, or it belongs to another tenant).'
          : `The run could not be read: ${err.message}`),
        h('a', { href: '#/runs' }, 'Back to the runs')));
      return;
    }
    if (!alive) return;
    versions = run.thread_id ? planVersions(run.thread_id, run.run_id, failed) : null;
    renderWriterTasks(tasks, []);
    clear(ctx.view,
      h('section', { class: 'card' },
        h('div', { class: 'bar' }, h('h2', { id: 'run-brief' }, run.brief), cancel),
        h('p', {}, status, ' phase ', phase), meta),
      h('div', { class: 'grid' },
        card('Progress', phases, plan), card('Cost and budget', cost)),
      h('div', { class: 'grid' },
        card('Plan versions', versions ? versions.el : h('p', { class: 'muted' }, 'This run has no thread.')),
        card('Writer tasks', tasks)),
      card('Timeline', streamState, h('div', { class: 'timeline' }, h('table', { id: 'events', class: 'events' },
        h('thead', {}, h('tr', {}, ['#', 'time', 'event', ''].map((c) => h('th', {}, c)))), events))),
      card('Gates', gates, shots), card('Play', play), card('Design', design), card('Follow-up', follow));
    showRecord(run);
    refreshDesign();
    refreshGates();
    refreshPlans();
    stream = new RunStream(runId, onEvent, onState);
    stream.start();
  })();

  return () => { alive = false; if (stream) stream.close(); };
}
