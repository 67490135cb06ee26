// A headless play harness for the Python tests: drives the real rules (../template/src/state.js) frame by frame
// the way the validator drives the page — an action's first key held for N frames of 1000/60 ms — and prints the
// snapshot after each action. Usage: node harness.mjs <tables.json>; then one JSON line per action on stdin:
// {"action": "right", "frames": 12, "gap": 0}  ("gap": idle frames after releasing the key; "wait" holds nothing).
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createState, tick, snapshot, ACTIONS } from '../template/src/state.js';

const raw = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const tables = { theme: raw['theme.json'], levels: raw['levels.json'], physics: raw['physics.json'] };
const st = createState(tables);
const FRAME = 1000 / 60;
const held = (action) => ({ left: action === 'left', right: action === 'right', jump: action === 'jump' });

process.stdout.write(`${JSON.stringify(snapshot(st, tables))}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { action, frames, gap = 0 } = JSON.parse(line);
  if (action !== 'wait' && !ACTIONS[action]) throw new Error(`unknown action ${action}`);
  for (let i = 0; i < frames; i++) tick(st, tables, FRAME, held(action));
  for (let i = 0; i < gap; i++) tick(st, tables, FRAME, {});
  process.stdout.write(`${JSON.stringify(snapshot(st, tables))}\n`);
}
