// One warm Lambda instance of the bundled ingest function (functions/ingest, built as the CDK app
// builds it), in a process of its own for bench/ingest.ts to measure: plain Node, no tsx, nothing
// loaded but the bundle (and its document extractors, beside it, when a document needs them). As
// Lambda's asynchronous invoke, the parent sends each event here over IPC (the S3 event, then the
// function's hand-overs to itself); this process only runs the handler, with a context whose deadline is
// `timeoutMs` of real time, and answers with the handler's answer and its RSS. On `exit` it reports
// its peak RSS (`maxRSS`) and the RSS it had once the bundle was loaded.
//
//   node bench/ingest-lambda.mjs <bundle.mjs>   (forked with an IPC channel; settings in the environment)
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const mb = (bytes) => bytes / 1024 / 1024;
const { handler } = await import(pathToFileURL(process.argv[2]).href);
const loadedRssMb = mb(process.memoryUsage().rss);

process.on('message', async (message) => {
  if (message.kind === 'exit') {
    process.send({ kind: 'exit', peakRssMb: process.resourceUsage().maxRSS / 1024, loadedRssMb }, () =>
      process.exit(0),
    );
    return;
  }
  const deadline = performance.now() + message.timeoutMs;
  const context = {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'opflow-bench-ingest',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:opflow-bench-ingest',
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/opflow-bench-ingest',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    const answer = await handler(message.event, context);
    process.send({ kind: 'answer', answer, rssMb: mb(process.memoryUsage().rss) });
  } catch (error) {
    process.send({
      kind: 'answer',
      error: String(error?.stack ?? error),
      rssMb: mb(process.memoryUsage().rss),
    });
  }
});
process.send({ kind: 'ready', loadedRssMb });
