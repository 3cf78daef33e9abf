// An asc transform that writes a plugin's intents into the module's custom section
// `tdm.intents` (docs/ABI.md section 1a), so `tdm inspect` and `tdm repl` show them for the bare
// module. The intents are read from `tdm-intents.json` next to the entry file or in its parent
// folder (the plugin's folder): a JSON array of {"name", "description", "title", "params",
// "result"} (all but `name` optional; `params` and `result` JSON Schemas). The file is checked
// here (a build error names what is wrong), so a plugin never ships a declaration the host
// refuses. Use it with `"transform": ["<path to>/sdk/assemblyscript/transform/intents.mjs"]` in
// asconfig.json (or `--transform` on the command line).
import { Transform } from "assemblyscript/transform";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const FILE = "tdm-intents.json";
const SECTION = "tdm.intents";
const USER_ENTRY = 1; // SourceKind.UserEntry

function check(intents, file) {
  if (!Array.isArray(intents)) throw new Error(`${file}: must hold a JSON array of {"name", "description"}`);
  const seen = new Set();
  intents.forEach((intent, n) => {
    const at = `${file}: entry ${n + 1}`;
    if (typeof intent?.name !== "string" || intent.name.length === 0 || /\p{Cc}/u.test(intent.name)) {
      throw new Error(`${at}: \`name\` must be a non-empty string without control characters`);
    }
    if (seen.has(intent.name)) throw new Error(`${at}: \`${intent.name}\` is listed twice`);
    seen.add(intent.name);
    if (intent.description !== undefined && typeof intent.description !== "string") {
      throw new Error(`${at}: \`description\` must be a string`);
    }
    if (intent.title !== undefined && typeof intent.title !== "string") {
      throw new Error(`${at}: \`title\` must be a string`);
    }
    for (const key of ["params", "result"]) {
      const schema = intent[key];
      if (schema !== undefined && typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
        throw new Error(`${at}: \`${key}\` must be a JSON Schema (an object or a boolean)`);
      }
    }
  });
}

export default class IntentsTransform extends Transform {
  afterCompile(module) {
    // The user's entry file (library files live under `~lib/`).
    const entry = this.program.sources.find(
      (source) => source.sourceKind === USER_ENTRY && !source.normalizedPath.startsWith("~lib/"),
    );
    if (!entry) return;
    const dir = path.dirname(path.resolve(this.baseDir, entry.normalizedPath));
    const file = [path.join(dir, FILE), path.join(path.dirname(dir), FILE)].find((f) => existsSync(f));
    if (!file) return;
    const intents = JSON.parse(readFileSync(file, "utf8"));
    check(intents, file);
    module.addCustomSection(SECTION, new TextEncoder().encode(JSON.stringify(intents)));
  }
}
