// tier2 static scanner: parse game sources with acorn and emit syntactic facts as JSON.
//
// argv:   <node_modules of the pack> (where acorn is installed) <engine module> (the npm name games import)
// stdin:  {"files": {"src/main.js": "<source>", ...}}
// stdout: {"acorn": "<version>", "files": {"src/main.js": {error, chains, bindings, props, classes, defined, numbers}}}
//
// Facts only, no engine knowledge: the pack's adapter resolves them against its engine's API index.
//   chain    {root, steps, w}  a maximal member/call/new expression; root {t: "this", cls} | {t: "id", name} |
//            {t: "engine"} (a binding imported from the engine module); steps ["p", name|null, line, col] |
//            ["c"] | ["n"]; w: the last "p" step is written
//   bindings [name, value]     every way a file-level name gets a value (value: chain | "N" neutral | null unknown)
//   props    [cls, name, value] this.<name> = value inside a class (or a scene-style function)
//   classes  {id, name, line, super: chain|null, members: [...]}
//   defined  names the game itself defines (methods, fields, written properties, function-valued keys)
//   numbers  numeric literals with their syntactic context (for the magic-number report)
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const [nodeModules, ENGINE_MODULE] = process.argv.slice(2);
if (!nodeModules || !ENGINE_MODULE) throw new Error('usage: scan_sources.mjs <node_modules> <engine module>');
const { parse, version } = createRequire(join(resolve(nodeModules), 'scan_sources.cjs'))('acorn');

const SCENE_FUNCTIONS = new Set(['init', 'preload', 'create', 'update']);
const SKIP_KEYS = new Set(['type', 'start', 'end', 'loc', 'range', 'raw', 'regex', 'bigint']);

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

function parseSource(src) {
  const opts = { ecmaVersion: 'latest', locations: true, allowHashBang: true, allowAwaitOutsideFunction: true };
  try {
    return parse(src, { ...opts, sourceType: 'module' });
  } catch (moduleErr) {
    try {
      return parse(src, { ...opts, sourceType: 'script', allowReturnOutsideFunction: true });
    } catch {
      throw moduleErr;
    }
  }
}

const keyName = (key, computed) => {
  if (!computed && key.type === 'Identifier') return key.name;
  if (key.type === 'Literal' && (typeof key.value === 'string' || typeof key.value === 'number')) return String(key.value);
  return null;
};
const isFunction = (n) => n && /^(FunctionExpression|ArrowFunctionExpression|FunctionDeclaration)$/.test(n.type);
const isChainNode = (n) => n && /^(MemberExpression|CallExpression|NewExpression|ChainExpression)$/.test(n.type);

function scanFile(ast) {
  const out = { chains: [], bindings: [], props: [], classes: [], defined: new Set(), numbers: [] };
  const classStack = [];
  const thisStack = [null];
  const anc = [];

  function flatten(node) {
    const steps = [];
    let n = node;
    for (;;) {
      if (n.type === 'ChainExpression') n = n.expression;
      else if (n.type === 'MemberExpression') {
        const p = n.property;
        const name = p.type === 'PrivateIdentifier' ? null : keyName(p, n.computed);
        steps.push(['p', name, p.loc.start.line, p.loc.start.column + 1]);
        n = n.object;
      } else if (n.type === 'CallExpression') {
        steps.push(['c']);
        n = n.callee;
      } else if (n.type === 'NewExpression') {
        steps.push(['n']);
        n = n.callee;
      } else break;
    }
    steps.reverse();
    if (n.type === 'ThisExpression') {
      const cls = thisStack[thisStack.length - 1];
      return cls ? { root: { t: 'this', cls }, steps } : null;
    }
    if (n.type === 'Identifier') return { root: { t: 'id', name: n.name }, steps };
    return null;
  }

  function valueOf(e) {
    if (!e) return 'N';
    if (e.type === 'Literal') return e.regex ? null : 'N';
    if (e.type === 'TemplateLiteral' || e.type === 'UpdateExpression' || e.type === 'BinaryExpression') return 'N';
    if (e.type === 'UnaryExpression') return 'N';
    if (e.type === 'Identifier' && e.name === 'undefined') return 'N';
    if (e.type === 'Identifier' || e.type === 'ThisExpression' || isChainNode(e)) return flatten(e);
    return null;
  }

  function bindPattern(p, value) {
    if (!p) return;
    if (p.type === 'Identifier') out.bindings.push([p.name, value]);
    else if (p.type === 'ObjectPattern') {
      for (const prop of p.properties) {
        if (prop.type === 'RestElement') { bindPattern(prop.argument, null); continue; }
        const k = keyName(prop.key, prop.computed);
        const sub = value && typeof value === 'object' && k && prop.value.type === 'Identifier'
          ? { root: value.root, steps: [...value.steps, ['p', k, prop.key.loc.start.line, prop.key.loc.start.column + 1]] }
          : null;
        bindPattern(prop.value, sub);
      }
    } else if (p.type === 'ArrayPattern') p.elements.forEach((el) => bindPattern(el, null));
    else if (p.type === 'AssignmentPattern') bindPattern(p.left, null);
    else if (p.type === 'RestElement') bindPattern(p.argument, null);
  }

  function thisFor(fn, parent) {
    if (fn.type === 'ArrowFunctionExpression') return thisStack[thisStack.length - 1];
    const cls = classStack[classStack.length - 1];
    if (parent && parent.type === 'MethodDefinition' && cls) return parent.static ? null : cls.id;
    if (fn.type === 'FunctionDeclaration' && fn.id && SCENE_FUNCTIONS.has(fn.id.name)) {
      const top = anc.length <= 2 && anc.every((a) => /^(Program|Export\w+Declaration)$/.test(a.type));
      return top ? 'scenefn' : null;
    }
    if (parent && parent.type === 'Property' && parent.value === fn && SCENE_FUNCTIONS.has(keyName(parent.key, parent.computed))) {
      return 'scenefn';
    }
    return null;
  }

  function numberContext(node) {
    const ctx = { l: node.loc.start.line, c: node.loc.start.column + 1, raw: node.raw, v: Number(node.value),
      neg: false, keys: [], objKeys: null, calls: [], bin: [], decl: null, assign: null, index: false };
    let child = node;
    for (let i = anc.length - 1; i >= 0; i--) {
      const p = anc[i];
      if (p.type === 'UnaryExpression' && child === p.argument && i === anc.length - 1) ctx.neg = p.operator === '-';
      else if (p.type === 'MemberExpression') { if (p.property === child && p.computed) ctx.index = true; break; }
      else if (p.type === 'Property' && p.value === child) {
        ctx.keys.unshift(keyName(p.key, p.computed));
        if (ctx.objKeys === null && anc[i - 1] && anc[i - 1].properties) ctx.objKeys = anc[i - 1].properties.map((q) => q.key && keyName(q.key, q.computed));
      } else if (p.type === 'VariableDeclarator') { ctx.decl = p.id.type === 'Identifier' ? p.id.name : null; break; }
      else if (p.type === 'PropertyDefinition') { ctx.decl = p.key && keyName(p.key, p.computed); break; }
      else if (p.type === 'AssignmentPattern') { ctx.decl = p.left.type === 'Identifier' ? p.left.name : null; break; }
      else if (p.type === 'AssignmentExpression') { ctx.assign = [nameOf(p.left), p.operator]; break; }
      else if (p.type === 'BinaryExpression') ctx.bin.push([p.operator, nameOf(p.left === child ? p.right : p.left)]);
      else if (p.type === 'CallExpression' || p.type === 'NewExpression') {
        if (p.callee === child) break;
        ctx.calls.push(nameOf(p.callee));
      } else if (p.type === 'SwitchCase') { ctx.decl = 'case'; break; }
      else if (!/^(ObjectExpression|ArrayExpression|ConditionalExpression|LogicalExpression|UnaryExpression|SpreadElement|TemplateLiteral|SequenceExpression|ChainExpression)$/.test(p.type)) break;
      child = p;
    }
    return ctx;
  }

  function nameOf(e) {
    if (!e) return null;
    if (e.type === 'Identifier') return e.name;
    if (e.type === 'ThisExpression') return 'this';
    if (e.type === 'MemberExpression') return keyName(e.property, e.computed);
    if (e.type === 'CallExpression') return nameOf(e.callee);
    if (e.type === 'ChainExpression') return nameOf(e.expression);
    return null;
  }

  function enter(node, parent) {
    switch (node.type) {
      case 'ImportDeclaration': {
        const fromEngine = node.source.value === ENGINE_MODULE;
        for (const s of node.specifiers) {
          if (!fromEngine) { out.bindings.push([s.local.name, null]); continue; }
          if (s.type === 'ImportSpecifier') {
            const im = s.imported;
            const step = ['p', im.name ?? im.value, im.loc.start.line, im.loc.start.column + 1];
            out.bindings.push([s.local.name, { root: { t: 'engine' }, steps: [step] }]);
            out.chains.push({ root: { t: 'engine' }, steps: [step], w: false });
          } else out.bindings.push([s.local.name, { root: { t: 'engine' }, steps: [] }]);
        }
        break;
      }
      case 'VariableDeclarator': {
        const loop = anc.length >= 2 && /^For(In|Of)Statement$/.test(anc[anc.length - 2].type);
        bindPattern(node.id, loop ? null : valueOf(node.init));
        break;
      }
      case 'AssignmentExpression': {
        const l = node.left;
        const value = node.operator === '=' ? valueOf(node.right) : 'N';
        if (l.type === 'Identifier') out.bindings.push([l.name, value]);
        else if (l.type === 'MemberExpression' && l.object.type === 'ThisExpression' && !l.computed) {
          const cls = thisStack[thisStack.length - 1];
          if (cls) out.props.push([cls, l.property.name, value]);
        } else if (l.type !== 'MemberExpression') bindPattern(l, null);
        break;
      }
      case 'CatchClause': bindPattern(node.param, null); break;
      case 'ClassDeclaration':
      case 'ClassExpression': {
        const name = node.id ? node.id.name : null;
        const cls = { id: `${name ?? 'anon'}@${node.loc.start.line}:${node.loc.start.column}`, name, line: node.loc.start.line,
          super: node.superClass ? (node.superClass.type === 'Identifier' || isChainNode(node.superClass) ? flatten(node.superClass) : null) : null,
          members: [] };
        if (node.id && node.type === 'ClassDeclaration') out.bindings.push([name, null]);
        for (const m of node.body.body) {
          const k = m.key && keyName(m.key, m.computed);
          if (!k) continue;
          cls.members.push(k);
          out.defined.add(k);
          if (m.type === 'PropertyDefinition' && !m.static) out.props.push([cls.id, k, isFunction(m.value) ? null : valueOf(m.value)]);
        }
        out.classes.push(cls);
        break;
      }
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        if (node.id && node.type === 'FunctionDeclaration') { out.bindings.push([node.id.name, null]); out.defined.add(node.id.name); }
        node.params.forEach((p) => bindPattern(p, null));
        break;
      case 'Property': {
        const k = keyName(node.key, node.computed);
        if (k && (node.method || node.shorthand || isFunction(node.value))) out.defined.add(k);
        break;
      }
      case 'Literal':
        if (typeof node.value === 'number') out.numbers.push(numberContext(node));
        break;
      default:
    }
    if (isChainNode(node)) {
      const continued = parent && ((parent.type === 'MemberExpression' && parent.object === node)
        || ((parent.type === 'CallExpression' || parent.type === 'NewExpression') && parent.callee === node)
        || parent.type === 'ChainExpression');
      const grand = anc[anc.length - 2];
      const write = node.type === 'MemberExpression' && parent && ((parent.type === 'AssignmentExpression' && parent.left === node)
        || parent.type === 'UpdateExpression' || (parent.type === 'UnaryExpression' && parent.operator === 'delete')
        || /^(ArrayPattern|RestElement)$/.test(parent.type) || (parent.type === 'AssignmentPattern' && parent.left === node)
        || (parent.type === 'Property' && parent.value === node && grand && grand.type === 'ObjectPattern')
        || (/^For(In|Of)Statement$/.test(parent.type) && parent.left === node));
      if (write) { const k = keyName(node.property, node.computed); if (k) out.defined.add(k); }
      if (!continued) {
        const ch = flatten(node);
        if (ch && ch.steps.length) out.chains.push({ ...ch, w: write });
      }
    }
  }

  function visit(node, parent) {
    enter(node, parent);
    const isClass = node.type === 'ClassDeclaration' || node.type === 'ClassExpression';
    const fnThis = isFunction(node) ? thisFor(node, parent) : undefined;
    const fieldThis = node.type === 'PropertyDefinition' || node.type === 'StaticBlock';
    const cls = classStack[classStack.length - 1];
    if (isClass) classStack.push(out.classes[out.classes.length - 1]);
    if (fnThis !== undefined) thisStack.push(fnThis);
    anc.push(node);
    for (const key of Object.keys(node)) {
      if (SKIP_KEYS.has(key)) continue;
      const v = node[key];
      // a class field's value sees `this` as the instance (static fields and blocks: the class itself)
      const pushed = fieldThis && (key === 'value' || key === 'body');
      if (pushed) thisStack.push(node.static || node.type === 'StaticBlock' || !cls ? null : cls.id);
      if (Array.isArray(v)) { for (const c of v) if (c && typeof c.type === 'string') visit(c, node); }
      else if (v && typeof v.type === 'string') visit(v, node);
      if (pushed) thisStack.pop();
    }
    anc.pop();
    if (fnThis !== undefined) thisStack.pop();
    if (isClass) classStack.pop();
  }

  visit(ast, null);
  return { ...out, defined: [...out.defined] };
}

const input = JSON.parse(await readStdin());
const files = {};
for (const [path, src] of Object.entries(input.files || {})) {
  try {
    files[path] = { error: null, ...scanFile(parseSource(src)) };
  } catch (err) {
    const loc = err.loc || {};
    files[path] = { error: { message: String(err.message || err), line: loc.line ?? null, col: (loc.column ?? -1) + 1 } };
  }
}
process.stdout.write(JSON.stringify({ acorn: version, files }));
