// Preload: loads the registered assets (assets/manifest.json, if any), then the menu. Every other picture is drawn
// with Graphics by the scenes.
import { loadAssets } from '../assets.js';
import { Scene } from '../game.js';

export default class Preload extends Scene {
  static KEY = 'Preload';

  create() {
    loadAssets().then(() => { if (!this.destroyed) this.game.start('Menu'); });
  }
}
