/**
 * Unknown keys are refused by default, and decided against the schema the gate advertises (the
 * input side, every object closed by `closeObjects`): the enforced and the advertised contracts
 * agree by construction. Validators that strip extra keys (zod's plain `z.object`) report
 * success; the advertised schema, compiled once with Ajv, finds each key it does not allow —
 * also inside unions and under transforms, where comparing input and output would misjudge.
 * @module
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { Issue } from "./result.js";
import { issue, MAX_ISSUES } from "./issues.js";
import type { Redactor } from "./redact.js";
import type { JsonSchema } from "./standard.js";

/** Finds the keys the advertised schema does not allow; `[]` when there are none. */
export type UnknownKeyCheck = (received: unknown, redact: Redactor) => Issue[];

let ajv: Ajv2020 | undefined;

function compiler(): Ajv2020 {
  // Only additionalProperties / unevaluatedProperties verdicts are used; the runtime schema stays
  // authoritative for everything else, so formats are not validated here.
  ajv ??= new Ajv2020({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
  return ajv;
}

/** JSON pointer (`/a/0`) to the dot path the envelope uses (`a.0`). */
function dotted(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function unknownKeyOf(e: ErrorObject): string | undefined {
  if (e.keyword === "additionalProperties") return (e.params as { additionalProperty?: string }).additionalProperty;
  if (e.keyword === "unevaluatedProperties") return (e.params as { unevaluatedProperty?: string }).unevaluatedProperty;
  return undefined;
}

/**
 * Compile the check for one tool's advertised input schema. Throws if Ajv cannot compile it
 * (the gate reports that as a configuration error).
 */
export function compileUnknownKeyCheck(advertised: JsonSchema): UnknownKeyCheck {
  const { $schema: _ignored, ...schema } = advertised;
  const validate: ValidateFunction = compiler().compile(schema);
  return (received, redact) => {
    if (validate(received)) return [];
    const out: Issue[] = [];
    const seen = new Set<string>();
    for (const e of validate.errors ?? []) {
      const key = unknownKeyOf(e);
      if (key === undefined) continue;
      const path = [...dotted(e.instancePath), key].join(".");
      if (seen.has(path)) continue;
      seen.add(path);
      out.push(issue(path, "unrecognized_key", "Unknown field", redact));
      if (out.length >= MAX_ISSUES) break;
    }
    return out;
  };
}
