// Loads a template module (plain ES modules under template/src, which has no package.json) in node without a
// "type": "module" marker: each relative import is inlined as a data: URL, recursively.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const TEMPLATE = resolve(HERE, '..', 'template');

function dataUrl(file) {
  const src = readFileSync(file, 'utf8').replace(/from\s+'(\.\.?\/[^']+\.js)'/g,
    (_m, rel) => `from '${dataUrl(resolve(dirname(file), rel))}'`);
  return `data:text/javascript;base64,${Buffer.from(src).toString('base64')}`;
}

export const loadTemplateModule = (rel) => import(dataUrl(resolve(TEMPLATE, rel)));

export function loadTables(dir = resolve(TEMPLATE, 'data')) {
  const read = (name) => JSON.parse(readFileSync(resolve(dir, `${name}.json`), 'utf8'));
  return { theme: read('theme'), player: read('player'), enemies: read('enemies'), waves: read('waves') };
}
