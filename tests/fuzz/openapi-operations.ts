// Reads the OpenAPI document the running function serves into the list of
// operations the fuzzer attacks, so a route added tomorrow is fuzzed without
// touching the fuzzer.

/** A JSON Schema as the OpenAPI 3.1 document writes it (zod → openapi). */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
  [key: string]: unknown;
};

export interface OperationParam {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  /** Upper-case HTTP method. */
  method: string;
  /** Path template as documented, e.g. /api/v1/devices/{id}. */
  template: string;
  pathParams: OperationParam[];
  queryParams: OperationParam[];
  headerParams: OperationParam[];
  /** JSON request body schema, when the operation takes one. */
  body?: { schema: JsonSchema; required: boolean };
  /** Every documented response status. */
  statuses: number[];
  /** Needs a bearer token (or, with `signed`, a Standard Webhooks signature). */
  secured: boolean;
  /** Authenticated by a Standard Webhooks signature (CI's release routes), not a bearer token. */
  signed: boolean;
  /** Media types of the 2xx answers, e.g. multipart/mixed for the Expo Updates manifest. */
  successMediaTypes: string[];
  /** `GET /api/v1/meta`, for messages. */
  name: string;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, JsonSchema> };
  security?: unknown[];
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

/** Follows `$ref`s into components until a concrete schema remains. */
export function resolveRef(doc: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref && hops < 32; hops++) {
    const name = current.$ref.replace(/^#\/components\/schemas\//, "");
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`the OpenAPI document refers to a missing schema ${current.$ref}`);
    current = target;
  }
  return current;
}

function params(raw: unknown[], where: string): OperationParam[] {
  return raw
    .map((p) => p as { in?: string; name?: string; required?: boolean; schema?: JsonSchema })
    .filter((p) => p.in === where && typeof p.name === "string")
    .map((p) => ({ name: p.name as string, required: p.required === true || where === "path", schema: p.schema ?? {} }));
}

export function listOperations(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const shared = (item.parameters as unknown[] | undefined) ?? [];
    for (const method of METHODS) {
      const raw = item[method] as
        | { parameters?: unknown[]; requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> }; responses?: Record<string, { content?: Record<string, unknown> }>; security?: Record<string, unknown>[] }
        | undefined;
      if (!raw) continue;
      const all = [...shared, ...(raw.parameters ?? [])];
      const bodySchema = raw.requestBody?.content?.["application/json"]?.schema;
      const security = (raw.security ?? doc.security ?? []) as Record<string, unknown>[];
      operations.push({
        method: method.toUpperCase(),
        template,
        pathParams: params(all, "path"),
        queryParams: params(all, "query"),
        headerParams: params(all, "header"),
        body: bodySchema ? { schema: bodySchema, required: raw.requestBody?.required !== false } : undefined,
        statuses: Object.keys(raw.responses ?? {}).map(Number).filter(Number.isInteger).sort(),
        secured: security.length > 0,
        signed: security.some((scheme) => "standardWebhooks" in scheme),
        successMediaTypes: [...new Set(Object.entries(raw.responses ?? {})
          .filter(([status]) => /^2\d\d$/.test(status))
          .flatMap(([, response]) => Object.keys(response.content ?? {})))],
        name: `${method.toUpperCase()} ${template}`,
      });
    }
  }
  return operations.sort((a, b) => a.name.localeCompare(b.name));
}
