/**
 * Starts the real `opflow serve` (bin/opflow.js) and reads its URL from the first line of standard
 * output: for the tests of the MCP endpoint and the dashboard.
 */
import { childEnv, type OpflowProcess, startOpflow } from './opflow-process';

export { childEnv };

export async function startServe(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<{ run: OpflowProcess; url: string }> {
  const run = startOpflow(['serve', '--port', '0', '--json', ...args], options);
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    run.child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (!stdout.includes('\n')) return;
      const firstLine = stdout.slice(0, stdout.indexOf('\n'));
      try {
        resolve((JSON.parse(firstLine) as { url: string }).url);
      } catch {
        reject(new Error(`no URL on the first line of opflow serve: ${firstLine}`));
      }
    });
    void run.done.then((result) =>
      reject(new Error(`opflow serve exited (${result.code ?? result.signal}):\n${result.stderr}`)),
    );
  });
  return { run, url };
}
