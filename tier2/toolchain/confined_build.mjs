// Run one esbuild build through the JS API, confined to a project directory.
//
// Usage: node confined_build.mjs < request.json, where the request is
//   {"esbuild": "<dir of the esbuild package>", "project": "<dir>", "packages": ["<node_modules dir>", ...],
//    "outRoot": "<dir>", "options": {entryPoints, outfile, format, target, minify, sourcemap, loader}}
// Written by tier2.toolchain.esbuild; nothing in the project configures the build.
//
// * every import (entry, import, require, dynamic import, CSS @import/url(), `with {type}`) goes through the
//   `tier2-confine` onResolve plugin: it is resolved by esbuild, then refused unless the realpath of the file
//   lies under the project or one of `packages` (the pack's node_modules, also the bare-import search path);
//   namespaces other than `file` are refused too, except inline `data:` URLs and modules a package.json "browser"
//   field disables (both read nothing);
//   an onLoad check repeats the test for every file, for the glob imports esbuild expands without onResolve;
// * no error tells whether a path outside the roots exists: a relative or absolute import that lexically leaves
//   them is refused before anything is resolved (one message, whether or not the file is there); a bare import
//   that is missing and one that resolves outside get the same message (no esbuild notes); a glob import pattern (`import(\`../x/${n}\`)`,
//   `require("../x/" + n)`) whose directory leaves them fails the project file before esbuild lists that directory;
// * a symlink anywhere in the project that leaves those roots fails the build before esbuild reads anything
//   (esbuild itself reads package.json files beside the sources);
// * tsconfigRaw is fixed, so a tsconfig.json/jsconfig.json in the project is never read;
// * output is kept in memory (write: false) and written here, only under `outRoot`, never through a symlink.
// Diagnostics go to stderr in esbuild's own format (file:line:column), exit code 1 on failure.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const OPTION_KEYS = ["entryPoints", "outfile", "format", "target", "minify", "sourcemap", "loader"];
const RESOLVING = Symbol.for("tier2-confine.resolving");

function fail(message) {
  process.stderr.write(`✘ [ERROR] ${message}\n\n`);
  process.exit(1);
}

function inside(file, roots) {
  return roots.some((root) => file === root || file.startsWith(root + path.sep));
}

function realOrNull(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}

function checkSymlinks(dir, roots, project) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      const real = realOrNull(full);
      if (real === null || !inside(real, roots)) {
        fail(`${path.relative(project, full)} is a symlink that leaves the project`);
      }
    } else if (entry.isDirectory()) {
      checkSymlinks(full, roots, project);
    }
  }
}

const PATH_LIKE = /^(?:\/|\.\.?(?:\/|$))/;
const SCRIPT = /\.(?:[cm]?[jt]sx?)$/;
// a dynamic import or require whose argument starts with a literal prefix and goes on with an expression: esbuild
// turns it into a glob over the prefix's directory
const GLOB = /\b(?:import|require)\s*\(\s*(?:`([^`$]*)\$\{|(['"])([^'"\n]*)\2\s*\+)/g;

// where a path-like import points, by name only (nothing on disk is looked at); the ?query/#hash esbuild allows on
// CSS url()s is not part of the file
function lexical(spec, resolveDir) {
  return path.resolve(resolveDir, spec.replace(/[?#].*$/, ""));
}

// the glob patterns of a project script whose directory leaves the roots, with their line and column
function leavingGlobs(file, roots) {
  const text = fs.readFileSync(file, "utf8");
  const found = [];
  for (const m of text.matchAll(GLOB)) {
    const prefix = m[1] ?? m[3];
    if (!PATH_LIKE.test(prefix)) continue;
    const target = path.resolve(path.dirname(file), prefix);
    const dir = prefix.endsWith("/") ? target : path.dirname(target);
    if (inside(dir, roots)) continue;
    const before = text.slice(0, m.index).split("\n");
    found.push({ prefix, line: before.length, column: before[before.length - 1].length });
  }
  return found;
}

function confine(roots, project) {
  return {
    name: "tier2-confine",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === RESOLVING) return undefined; // our own build.resolve below: esbuild's resolver
        const refuse = (why) => ({ errors: [{ text: `import of ${JSON.stringify(args.path)} ${why}` }] });
        const pathLike = PATH_LIKE.test(args.path);
        if (pathLike && args.resolveDir && !inside(lexical(args.path, args.resolveDir), roots)) {
          return refuse("resolves outside the project"); // decided by the name: the same whether it exists or not
        }
        const r = await build.resolve(args.path, {
          kind: args.kind, importer: args.importer, namespace: args.namespace, resolveDir: args.resolveDir,
          with: args.with, pluginData: RESOLVING,
        });
        // a package that is nowhere and one found outside the roots (an ancestor's node_modules) read the same
        const notOurs = () => ({ errors: [{
          text: `Could not resolve ${JSON.stringify(args.path)}: not a file or package of the project or the pack`,
        }] });
        if (r.errors.length > 0) return pathLike ? { errors: r.errors, warnings: r.warnings } : notOurs();
        if (r.external) return { path: r.path, external: true, warnings: r.warnings };
        if (r.namespace === "") return undefined; // disabled by a package.json "browser" field: an empty module
        if (r.namespace === "dataurl") return { path: r.path, namespace: r.namespace, warnings: r.warnings };
        if (r.namespace !== "file") return refuse(`is not a file (namespace ${r.namespace})`);
        const real = realOrNull(r.path);
        if (real === null || !inside(real, roots)) return pathLike ? refuse("resolves outside the project") : notOurs();
        return { path: real, namespace: "file", sideEffects: r.sideEffects, suffix: r.suffix, warnings: r.warnings };
      });
      // glob-style imports (import(`../${x}.js`)) are expanded by esbuild without onResolve: a project script with a
      // pattern that leaves the roots fails before esbuild lists its directory, and every load is checked again
      build.onLoad({ filter: /.*/, namespace: "file" }, (args) => {
        const real = realOrNull(args.path);
        if (real !== null && inside(real, roots)) {
          if (!SCRIPT.test(real) || !inside(real, [project])) return undefined;
          const globs = leavingGlobs(real, roots);
          if (globs.length === 0) return undefined;
          const file = path.relative(project, real);
          return { errors: globs.map((g) => ({
            text: `import pattern ${JSON.stringify(g.prefix + "…")} resolves outside the project`,
            location: { file, line: g.line, column: g.column },
          })) };
        }
        return { errors: [{ text: "a file outside the project was refused (an import pattern that leaves it?)" }] };
      });
    },
  };
}

function writeOutputs(outputFiles, outRoot) {
  for (const file of outputFiles) {
    const dir = path.dirname(file.path);
    fs.mkdirSync(dir, { recursive: true });
    const realDir = realOrNull(dir);
    if (realDir === null || !inside(realDir, [outRoot])) fail(`output directory ${dir} leaves the project`);
    fs.rmSync(file.path, { force: true }); // a symlink is removed, never written through
    fs.writeFileSync(file.path, file.contents, { flag: "wx" });
  }
}

async function main() {
  const request = JSON.parse(fs.readFileSync(0, "utf8"));
  const esbuild = createRequire(import.meta.url)(request.esbuild);
  const project = fs.realpathSync(request.project);
  const packages = request.packages.map((p) => realOrNull(p)).filter((p) => p !== null);
  const roots = [project, ...packages];
  fs.mkdirSync(request.outRoot, { recursive: true });
  const outRoot = fs.realpathSync(request.outRoot);
  checkSymlinks(project, roots, project);
  const options = {};
  for (const key of OPTION_KEYS) if (key in request.options) options[key] = request.options[key];
  if (options.outfile) options.outfile = path.resolve(project, options.outfile);
  let result;
  try {
    result = await esbuild.build({
      ...options,
      bundle: true,
      absWorkingDir: project,
      nodePaths: packages,
      tsconfigRaw: "{}",
      plugins: [confine(roots, project)],
      write: false,
      logLevel: "warning",
      logLimit: 20,
      color: false,
    });
  } catch (exc) {
    if (!Array.isArray(exc?.errors)) fail(`esbuild failed: ${exc?.message ?? exc}`);
    process.exit(1); // esbuild already logged the diagnostics
  }
  writeOutputs(result.outputFiles, outRoot);
}

main().catch((exc) => fail(`confined build failed: ${exc?.message ?? exc}`));
