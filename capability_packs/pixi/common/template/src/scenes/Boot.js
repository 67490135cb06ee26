// Boot: first scene. Checks that main.js put the validated tables in the registry, then loads.
import { Scene } from '../game.js';

export default class Boot extends Scene {
  static KEY = 'Boot';

  create() {
    if (!this.registry.get('tables')) {
      throw new Error('tier2 data error: registry tables missing (main.js must validate and register data/*.json)');
    }
    this.game.start('Preload');
  }
}
