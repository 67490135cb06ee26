// Boot: first scene. Checks that main.js put the validated tables in the registry, then loads.
import Phaser from 'phaser';

export default class Boot extends Phaser.Scene {
  constructor() {
    super('Boot');
  }

  create() {
    if (!this.registry.get('tables')) {
      throw new Error('tier2 data error: registry tables missing (main.js must validate and register data/*.json)');
    }
    this.scene.start('Preload');
  }
}
