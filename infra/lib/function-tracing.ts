/**
 * The stage's `tracing` setting: how opflow's functions are traced, always from outside the code (no
 * tracing SDK is bundled; the X-Ray SDK reaches end of support on 2027-02-25). PipelineFunction applies it.
 */
import * as z from 'zod';

/**
 * How the functions are traced (the stage's `tracing` setting), without a tracing SDK in the code:
 * - `off` (the default): no trace is recorded; every log line carries the job id and correlation id.
 * - `active`: Lambda's own active tracing records each invocation in X-Ray (start, duration, cold
 *   start, errors), from outside the code.
 * - `opentelemetry`: active tracing plus an AWS Distro for OpenTelemetry (ADOT) Lambda layer, whose
 *   wrapper instruments the function when it starts (invocations, outgoing HTTPS calls to AWS and
 *   the Open Platform). `layerArn` is the layer version of the stack's region and architecture
 *   (arm64) from AWS's list; opflow's ES-module handlers need a layer that instruments ES modules,
 *   such as the `AWSOpenTelemetryDistroJs` layers.
 */
export const functionTracingSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('off') }),
  z.strictObject({ mode: z.literal('active') }),
  z.strictObject({
    mode: z.literal('opentelemetry'),
    /**
     * With `tracing.mode: opentelemetry`: the ARN of an ADOT Lambda layer version for the stack's
     * region and arm64 (e.g. an `AWSOpenTelemetryDistroJs` layer from AWS's list).
     */
    layerArn: z
      .string()
      .regex(
        /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]{1,140}:\d+$/,
        'must be a Lambda layer version ARN: arn:aws:lambda:<region>:<account>:layer:<name>:<version>',
      ),
  }),
]);
/** A validated {@link functionTracingSchema}. */
export type FunctionTracing = z.infer<typeof functionTracingSchema>;

/** The wrapper script of the ADOT layers that instruments a Node.js handler, ES modules included. */
export const OPENTELEMETRY_EXEC_WRAPPER = '/opt/otel-instrument';
