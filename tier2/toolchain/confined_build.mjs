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

function confine(roots) {
  return {
    name: "tier2-confine",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === RESOLVING) return undefined; // our own build.resolve below: esbuild's resolver
        const refuse = (why) => ({ errors: [{ text: `import of ${JSON.stringify(args.path)} ${why}` }] });
        const r = await build.resolve(args.path, {
          kind: args.kind, importer: args.importer, namespace: args.namespace, resolveDir: args.resolveDir,
          with: args.with, pluginData: RESOLVING,
        });
        if (r.errors.length > 0) return { errors: r.errors, warnings: r.warnings };
        if (r.external) return { path: r.path, external: true, warnings: r.warnings };
        if (r.namespace === "") return undefined; // disabled by a package.json "browser" field: an empty module
        if (r.namespace === "dataurl") return { path: r.path, namespace: r.namespace, warnings: r.warnings };
        if (r.namespace !== "file") return refuse(`is not a file (namespace ${r.namespace})`);
        const real = realOrNull(r.path);
        if (real === null || !inside(real, roots)) return refuse("resolves outside the project");
        return { path: real, namespace: "file", sideEffects: r.sideEffects, suffix: r.suffix, warnings: r.warnings };
      });
      // glob-style imports (import(`../${x}.js`)) are expanded by esbuild without onResolve: check every load
      build.onLoad({ filter: /.*/, namespace: "file" }, (args) => {
        const real = realOrNull(args.path);
        if (real !== null && inside(real, roots)) return undefined;
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
      plugins: [confine(roots)],
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
