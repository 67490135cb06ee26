// Plays the template's pure rules (src/state.js) the way the validator's latch play drives the page, for the Python
// tests that compare them with the genre's mirror (sim.py). One JSON line in, the state snapshot out:
//   {"tables": {"theme.json": ..., ...}}  a fresh Play (createState) of these tables: {"actions", "state"} out
//   {"action": "buy_herbs", "frames": 1}  the action's key handled as Play.js onKey does, then frames + 1 ticks of
//                                          1000/60 ms ("wait": the frames pass with no key)
// Usage: node drive.mjs
import { createInterface } from 'node:readline';
import {
  validateTables, createState, actionsFor, buy, craft, deliver, tick, abandon, snapshot,
} from '../template/src/state.js';

const FRAME = 1000 / 60;
let state = null;
let acts = null;
const scene = () => (state.outcome === 'running' ? 'Play' : state.outcome === 'abandoned' ? 'Menu' : 'GameOver');
const out = () => process.stdout.write(`${JSON.stringify({ scene: scene(), ...snapshot(state) })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const msg = JSON.parse(line);
  if (msg.tables) {
    const t = msg.tables;
    const tables = validateTables({
      theme: t['theme.json'], items: t['items.json'], recipes: t['recipes.json'], orders: t['orders.json'],
      prices: t['prices.json'], economy: t['economy.json'],
    });
    state = createState(tables);
    acts = actionsFor(tables);
    process.stdout.write(`${JSON.stringify({ actions: acts, state: { scene: scene(), ...snapshot(state) } })}\n`);
    continue;
  }
  const { action, frames } = msg;
  if (action !== 'wait') {
    if (action === 'abandon') abandon(state);
    else if (action === 'deliver') deliver(state);
    else if (action.startsWith('buy_')) buy(state, action.slice(4));
    else if (action.startsWith('craft_')) craft(state, action.slice(6));
    else if (!acts[action]) throw new Error(`unknown action ${action}`);
  }
  for (let i = 0; i < frames + (action === 'wait' ? 0 : 1); i++) tick(state, FRAME);
  out();
}
