// Plays the template's pure rules (src/state.js) the way the validator plays the game: one JSON line in per action
// ({"action": "left"|"right"|"fire"|"wait", "frames": n}), the state snapshot out after n frames of 1000/60 ms with
// that input held. Used by the Python tests to check probe.py against the real rules. Usage: node drive.mjs <dataDir>
import { createInterface } from 'node:readline';
import { loadTemplateModule, loadTables } from './load.mjs';

const S = await loadTemplateModule('src/state.js');
const tables = S.validateTables(loadTables(process.argv[2]));
const state = S.createState(tables);
const out = (s) => process.stdout.write(`${JSON.stringify({ scene: 'Play', ...S.snapshot(s) })}\n`);
out(state);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { action, frames } = JSON.parse(line);
  const input = { left: action === 'left', right: action === 'right', fire: action === 'fire' };
  for (let i = 0; i < frames; i++) S.tick(state, 1000 / 60, input);
  S.takeEvents(state);
  out(state);
}
