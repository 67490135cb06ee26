// Start a run (#/new): a brief with an optional model route and budget, on a fresh project or on a project loaded
// from an archive (POST /v1/projects). #/new?project=<id> preselects a loaded project.
import { post } from './api.js';
import { clear, h } from './dom.js';

const ARCHIVE_TYPES = [[/\.zip$/i, 'application/zip'], [/\.(tar\.gz|tgz)$/i, 'application/gzip'],
  [/\.tar$/i, 'application/x-tar']];

function number(id, label, attrs) {
  return h('label', {}, label, h('input', { id, type: 'number', min: '0', ...attrs }));
}

export function newRunView(ctx, params) {
  const brief = h('textarea', { id: 'brief', rows: 5, cols: 70, required: true,
    placeholder: 'a cozy bakery tycoon: bake bread and cakes, don\'t go broke' });
  const model = h('input', { id: 'model', placeholder: 'default route', size: 20 });
  const project = h('input', { id: 'project-id', placeholder: 'a new project', size: 24,
    value: params.get('project') || '' });
  const pause = h('input', { id: 'pause-design', type: 'checkbox' });
  const error = h('p', { id: 'new-run-error', class: 'error', role: 'alert', hidden: true });
  const submit = h('button', { id: 'start-run', type: 'submit' }, 'Start run');
  const form = h('form', { id: 'new-run', class: 'card' },
    h('h2', {}, 'New run'),
    h('label', { class: 'block' }, 'Brief', brief),
    h('div', { class: 'row' },
      h('label', {}, 'Model route', model),
      number('budget-usd', 'Budget (USD)', { step: '0.01' }),
      number('budget-tokens', 'Tokens', { step: '1' }),
      number('budget-deadline', 'Deadline (s)', { step: '1' })),
    h('div', { class: 'row' },
      h('label', {}, 'Project', project),
      h('label', {}, pause, ' pause after design')),
    submit, error);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    const body = { brief: brief.value };
    if (model.value.trim()) body.model = model.value.trim();
    if (project.value.trim()) body.project_id = project.value.trim();
    if (pause.checked) body.pause_after = 'design';
    const budget = {};
    for (const [id, key] of [['budget-usd', 'usd'], ['budget-tokens', 'tokens'], ['budget-deadline', 'deadline_s']]) {
      const v = document.getElementById(id).value;
      if (v !== '') budget[key] = Number(v);
    }
    if (Object.keys(budget).length) body.budget = budget;
    submit.disabled = true;
    try {
      const run = await post('/v1/runs', body, { idempotencyKey: crypto.randomUUID() });
      location.hash = `#/runs/${encodeURIComponent(run.run_id)}`;
    } catch (err) {
      if (err.status === 401) { ctx.onAuthLost(); return; }
      error.textContent = `The run was not started: ${err.message}`;
      error.hidden = false;
    } finally {
      submit.disabled = false;
    }
  });

  clear(ctx.view, form, uploadCard(project));
  brief.focus();
  return () => {};
}

function uploadCard(projectInput) {
  const file = h('input', { id: 'archive', type: 'file', accept: '.zip,.tar,.tar.gz,.tgz' });
  const result = h('p', { id: 'upload-result', role: 'status' });
  const button = h('button', { id: 'upload', type: 'button' }, 'Load project');
  button.addEventListener('click', async () => {
    const chosen = file.files[0];
    if (!chosen) { result.textContent = 'Choose a .zip or .tar(.gz) archive first.'; return; }
    const type = (ARCHIVE_TYPES.find(([re]) => re.test(chosen.name)) || [null, 'application/octet-stream'])[1];
    button.disabled = true;
    result.textContent = 'Uploading…';
    try {
      const loaded = await post('/v1/projects', undefined, { raw: chosen, contentType: type });
      projectInput.value = loaded.project_id;
      result.className = 'ok';
      result.textContent = `Loaded ${loaded.project_id}: ${loaded.files} files (${loaded.pack})`
        + (loaded.stripped.length ? `; dropped: ${loaded.stripped.join(', ')}` : '')
        + '. The next run works on it.';
    } catch (err) {
      result.className = 'error';
      result.textContent = `The archive was refused: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  });
  return h('section', { class: 'card' },
    h('h3', {}, 'Load a project from an archive'),
    h('p', { class: 'muted' }, 'A zip or tar of an existing game project; the run then works on it.'),
    file, ' ', button, result);
}
