// Entry point: validates the data tables, builds the Game (a PixiJS Application, src/game.js) and installs
// window.__TIER2__.
import theme from '../data/theme.json';
import mazes from '../data/mazes.json';
import rules from '../data/rules.json';
import { validateTables, createState } from './state.js';
import { installHook } from './hook.js';
import { Game } from './game.js';
import Boot from './scenes/Boot.js';
import Preload from './scenes/Preload.js';
import Menu from './scenes/Menu.js';
import Play from './scenes/Play.js';
import GameOver from './scenes/GameOver.js';

// Throws "tier2 data error: <file> <key>: ..." (an uncaught page error) if a table is broken.
const tables = validateTables({ theme, mazes, rules });
const game = new Game({ background: theme.palette.background, scenes: [Boot, Preload, Menu, Play, GameOver] });
game.registry.set('tables', tables);
game.registry.set('state', createState(tables));
installHook(game, tables);
game.boot(document.getElementById('game'));
