/**
 * A baseline of a cold import (scripts/bundle-sizes.ts): Node's own modules that the AWS SDK's HTTP
 * handler and credentials load (http, https, crypto, zlib, stream), imported and nothing else.
 * Built as the functions are. Its cold import is the part of an SDK client's that no bundling can
 * cut: a function that talks to AWS over HTTPS pays it before any package of its own.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import stream from 'node:stream';
import zlib from 'node:zlib';

export const handler = async () => ({
  loaded: [http.Agent, https.Agent, crypto.createHash, zlib.createGzip, stream.Readable].length,
});
