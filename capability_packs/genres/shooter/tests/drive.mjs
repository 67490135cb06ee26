// Plays the template's pure rules (src/state.js) the way the validator plays the game: one JSON line in per action
// ({"action": "left"|"right"|"fire"|"wait", "frames": n}), the state snapshot out after n frames of 1000/60 ms with
// that input held. The Python tests use it to check probe.py against the real rules, without a browser.
// Usage: node drive.mjs <dir with theme.json player.json enemies.json waves.json>
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { validateTables, createState, tick, takeEvents, snapshot } from '../template/src/state.js';

const read = (name) => JSON.parse(readFileSync(join(process.argv[2], `${name}.json`), 'utf8'));
const tables = validateTables({ theme: read('theme'), player: read('player'), enemies: read('enemies'), waves: read('waves') });
const state = createState(tables);
const out = () => process.stdout.write(`${JSON.stringify({ scene: 'Play', ...snapshot(state) })}\n`);
out();
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { action, frames } = JSON.parse(line);
  const input = { left: action === 'left', right: action === 'right', fire: action === 'fire' };
  for (let i = 0; i < frames; i++) tick(state, 1000 / 60, input);
  takeEvents(state);
  out();
}
