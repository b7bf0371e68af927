// A request's list of function tools, whatever the API's shape of one tool (OpenAI chat's
// {type, function: {name, parameters}}, the Responses API's flat {type, name, parameters},
// Anthropic's {name, input_schema}): each tool an object with a valid, unique name and a schema
// within the limits, and the schemas within their total. The shape is the caller's `read`.
import { checkSchemaLimits, checkToolSchemasTotal } from './grammar-limits.js';
import { checkArray, fail, field, requireObject, type Json } from './validate.js';

/** What a tool name may be (OpenAI's rule), for every route that declares tools. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** One tool as its API's reader found it. */
export interface ReadTool<T> {
  name: string;
  /** Where the name is (`tools[0].function.name`), for the refusal. */
  namePath: string;
  /** Its parameters' schema and where it is, when it has one. */
  schema: { value: unknown; path: string } | null;
  tool: T;
}

/** A rule for names other than OpenAI's (Anthropic allows no '.'). */
export interface NameRule { pattern: RegExp; says: string }

const OPENAI_NAMES: NameRule = { pattern: TOOL_NAME, says: 'must be 1-64 characters of a-z, A-Z, 0-9, _ . -' };

export function parseToolList<T>(v: unknown, path: string, read: (tool: Json, toolPath: string) => ReadTool<T>, names: NameRule = OPENAI_NAMES): T[] {
  if (v === undefined) return [];
  return checkToolList(checkArray(v, path).map((value, i) => ({ value, path: field(path, i) })), path, read, names);
}

/** The same checks over tools gathered from several places (a Responses namespace's members), each with its own path. */
export function checkToolList<T>(
  entries: ReadonlyArray<{ value: unknown; path: string }>, path: string, read: (tool: Json, toolPath: string) => ReadTool<T>, names: NameRule = OPENAI_NAMES,
): T[] {
  const seen = new Set<string>();
  const schemaBytes: number[] = [];
  const tools = entries.map(({ value: t, path: tp }) => {
    const r = read(requireObject(t, tp), tp);
    if (!names.pattern.test(r.name)) fail(r.namePath, names.says);
    if (seen.has(r.name)) fail(r.namePath, `duplicate tool name ${r.name}`);
    seen.add(r.name);
    // requireObject also refuses a missing schema where the reader says there is one.
    if (r.schema) schemaBytes.push(checkSchemaLimits(requireObject(r.schema.value, r.schema.path), r.schema.path));
    return r.tool;
  });
  checkToolSchemasTotal(schemaBytes, path);
  return tools;
}
