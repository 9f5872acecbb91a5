/** Reading a request's body: bounded, or drained so a keep-alive connection stays usable. */
import type { IncomingMessage } from 'node:http';
import { MAX_BODY_BYTES } from './constants';
import { invalidParameter } from './sandbox-rejection';

/** The request body as text, refused past MAX_BODY_BYTES. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw invalidParameter(`the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Consume what is left of a request body, so keep-alive connections stay usable. */
export async function drain(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return;
  try {
    for await (const _ of req) {
      // discard
    }
  } catch {
    // the client went away; nothing to answer
  }
}
