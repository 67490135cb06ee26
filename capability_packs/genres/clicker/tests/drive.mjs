// Plays the template's pure rules (src/state.js) the way the validator's latch play drives the page, for the Python
// tests that compare them with the genre's mirror (sim.py). One JSON line in, one out:
//   {"tables": {"theme.json": ..., ...}}  a fresh Play (createState) of these tables: {"actions", "state"} out
//   {"action": "click", "frames": 12}     the action's key handled as Play.js onKey does, then frames + 1 ticks of
//                                          1000/60 ms ("wait": the frames pass with no key); the snapshot out
// Usage: node drive.mjs
import { createInterface } from 'node:readline';
import { validateTables, createState, actionsFor, click, buy, tick, abandon, snapshot } from '../template/src/state.js';

const FRAME = 1000 / 60;
let state = null;
let acts = null;
const scene = () => (state.outcome === 'running' ? 'Play' : state.outcome === 'abandoned' ? 'Menu' : 'GameOver');
const snap = () => ({ scene: scene(), ...snapshot(state) });

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const msg = JSON.parse(line);
  if (msg.tables) {
    const t = msg.tables;
    const tables = validateTables({ theme: t['theme.json'], upgrades: t['upgrades.json'], economy: t['economy.json'] });
    state = createState(tables);
    acts = actionsFor(tables);
    process.stdout.write(`${JSON.stringify({ actions: acts, state: snap() })}\n`);
    continue;
  }
  const { action, frames } = msg;
  if (action !== 'wait') {
    if (action === 'abandon') abandon(state);
    else if (action === 'click') click(state);
    else if (action.startsWith('buy_')) buy(state, action.slice(4));
    else if (!acts[action]) throw new Error(`unknown action ${action}`);
  }
  for (let i = 0; i < frames + (action === 'wait' ? 0 : 1); i++) tick(state, FRAME);
  process.stdout.write(`${JSON.stringify(snap())}\n`);
}
