// TypeBox's Type.Enum writes `{ enum: [...] }` with no `type`. Valid JSON Schema, and the
// validator needs no more, but some client generators make an untyped value of it (`any`,
// `object`) where a string enum was meant. The document gives each such enum of strings its
// type, wherever it is (parameters, bodies, responses, components); the routes validate as before.

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null;

/** @fastify/swagger's transformObject step: `type: "string"` on every untyped enum of strings. */
export function typeStringEnums<T>(document: T): T {
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (!isNode(value)) return;
    const values = value.enum;
    if (Array.isArray(values) && value.type === undefined && values.length > 0 && values.every((v) => typeof v === "string")) {
      value.type = "string";
    }
    Object.values(value).forEach(visit);
  };
  visit(document);
  return document;
}
