import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { sayNodeLine } from '../../../shared/cli/context';

const variable = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
const saved = process.env[variable];
afterEach(() => {
  if (saved === undefined) delete process.env[variable];
  else process.env[variable] = saved;
});

function capture() {
  let text = '';
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { io: { stderr }, text: () => text };
}

describe('the Node line an aws command runs on', () => {
  it("says in one line that Node 20 is past its end of life, and turns off the SDK's seven-line warning", () => {
    delete process.env[variable];
    const out = capture();
    sayNodeLine(out.io, 'v20.20.2');
    expect(out.text().trim().split('\n')).toEqual([
      "opflow: Node v20.20.2 is past its end of life; the aws backend's SDK needs Node 22 or later from January 2027 (supported: Node 22 and 24)",
    ]);
    expect(process.env[variable]).toBe('true');
  });

  it('says nothing on Node 22 or 24, and leaves a setting of the variable by the user alone', () => {
    process.env[variable] = 'false';
    for (const version of ['v22.12.0', 'v24.1.0']) {
      const out = capture();
      sayNodeLine(out.io, version);
      expect(out.text()).toBe('');
    }
    expect(process.env[variable]).toBe('false');
  });
});
