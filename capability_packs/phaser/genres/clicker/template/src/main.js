// Entry point: validates the data tables, builds the Phaser.Game and installs window.__TIER2__.
import Phaser from 'phaser';
import theme from '../data/theme.json';
import upgrades from '../data/upgrades.json';
import economy from '../data/economy.json';
import { validateTables, createState } from './state.js';
import { installHook } from './hook.js';
import Boot from './scenes/Boot.js';
import Preload from './scenes/Preload.js';
import Menu from './scenes/Menu.js';
import Play from './scenes/Play.js';
import GameOver from './scenes/GameOver.js';

// Throws "tier2 data error: <file> <key>: ..." (an uncaught page error) if a table is broken.
const tables = validateTables({ theme, upgrades, economy });

function pickRenderer() {
  const wanted = new URLSearchParams(window.location.search).get('renderer');
  if (wanted === 'canvas') return Phaser.CANVAS;
  if (wanted === 'webgl') return Phaser.WEBGL;
  return Phaser.AUTO;
}

const game = new Phaser.Game({
  type: pickRenderer(),
  width: 800,
  height: 600,
  parent: 'game',
  backgroundColor: theme.palette.background,
  scale: { mode: Phaser.Scale.FIT, autoCenter: Phaser.Scale.CENTER_BOTH },
  render: { preserveDrawingBuffer: true },
  seed: ['tier2'],
  banner: false,
  audio: { noAudio: true },
  title: theme.title,
  scene: [Boot, Preload, Menu, Play, GameOver],
});

game.registry.set('tables', tables);
game.registry.set('state', createState(tables));
installHook(game, tables);
