// Entry point: validates the data tables, builds the Game (a PixiJS Application, src/game.js) and installs
// window.__TIER2__.
import theme from '../data/theme.json';
import player from '../data/player.json';
import enemies from '../data/enemies.json';
import waves from '../data/waves.json';
import { validateTables, createState } from './state.js';
import { installHook } from './hook.js';
import { Game } from './game.js';
import Boot from './scenes/Boot.js';
import Preload from './scenes/Preload.js';
import Menu from './scenes/Menu.js';
import Play from './scenes/Play.js';
import GameOver from './scenes/GameOver.js';

// Throws "tier2 data error: <file> <key>: ..." (an uncaught page error) if a table is broken.
const tables = validateTables({ theme, player, enemies, waves });
const game = new Game({ background: theme.palette.background, scenes: [Boot, Preload, Menu, Play, GameOver] });
game.registry.set('tables', tables);
game.registry.set('state', createState(tables));
installHook(game, tables);
game.boot(document.getElementById('game'));
