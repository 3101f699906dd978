/**
 * Validating a value with a schema of any kind, the issues listed one
 * `path: problem` per line.
 *
 * @internal
 */
import type { StandardSchemaV1 } from "@standard-schema/spec"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ToolCallError } from "../../TamboError.js"
import type { SupportedSchema } from "../../Tool.js"
import { callApp } from "../callbacks.js"
import * as JsonSchemaValidator from "../jsonSchemaValidate.js"
import { describeError } from "../toolSupport.js"
import { type Classified, classify } from "./schema.js"

const invalid = (issues: ReadonlyArray<JsonSchemaValidator.Issue>): ToolCallError =>
  new ToolCallError({ reason: "InvalidArguments", message: JsonSchemaValidator.formatIssues(issues.slice(0, 10)) })

const validateStandard = (schema: StandardSchemaV1, value: unknown): Effect.Effect<unknown, ToolCallError> => {
  const validator = schema["~standard"]
  return callApp<StandardSchemaV1.Result<unknown>, never, ToolCallError>(
    () => validator.validate(value),
    (defect) =>
      new ToolCallError({
        reason: "InvalidArguments",
        message: `the "${validator.vendor}" validator failed: ${describeError(defect)}`,
        cause: defect
      })
  ).pipe(
    Effect.flatMap((result) =>
      result.issues === undefined
        ? Effect.succeed(result.value)
        : Effect.fail(
          invalid(result.issues.map((issue) => ({
            path: (issue.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
            message: issue.message
          })))
        )
    )
  )
}

/**
 * @internal
 * @since 0.2.0
 * @category Validation
 */
export const validateClassified = (classified: Classified, value: unknown): Effect.Effect<unknown, ToolCallError> => {
  switch (classified._tag) {
    case "EffectSchema":
      return Schema.decodeUnknown(classified.schema, { errors: "all", onExcessProperty: "ignore" })(value).pipe(
        Effect.mapError((error) => invalid(ParseResult.ArrayFormatter.formatErrorSync(error)))
      )
    case "StandardSchema":
      return validateStandard(classified.schema, value)
    case "JsonSchema": {
      const schema = classified.schema
      return Effect.suspend(() => {
        const issues = JsonSchemaValidator.validate(schema, value)
        return issues.length === 0 ? Effect.succeed(value) : Effect.fail(invalid(issues))
      })
    }
  }
}

/**
 * @internal
 * @since 0.2.0
 * @category Validation
 */
export const validate = (schema: SupportedSchema, value: unknown): Effect.Effect<unknown, ToolCallError> => {
  const classified = classify(schema)
  return classified === undefined
    ? Effect.fail(
      new ToolCallError({
        reason: "InvalidArguments",
        message: "the schema is not an Effect Schema, a Standard Schema or a JSON Schema"
      })
    )
    : validateClassified(classified, value)
}
