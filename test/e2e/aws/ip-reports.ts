/**
 * A job's report as the aws e2e tests of the IP workflows read it: the files kept in S3 (the
 * emulator), and each read back through the API's signed links.
 */
import { request } from 'undici';
import { expect } from 'vitest';
import type { AwsWorld } from './harness/aws-world';

/** The job's report keys in S3, its Markdown, HTML and result.json through the API's links. */
export async function reportOf(world: AwsWorld, id: string) {
  const keys = await world.reports.list(`reports/${id}/`);
  for (const name of ['report.html', 'report.md', 'result.json'])
    expect(keys).toContain(`reports/${id}/${name}`);
  const answer = await world.api('GET', `/jobs/${id}/report`);
  expect(answer.status).toBe(200);
  const files = answer.body.files as { name: string; url: string }[];
  const read = async (name: string) => {
    const file = files.find((candidate) => candidate.name === name);
    expect(file, name).toBeDefined();
    const got = await request(file!.url);
    expect(got.statusCode).toBe(200);
    return got.body.text();
  };
  return {
    keys,
    markdown: await read('report.md'),
    html: await read('report.html'),
    result: JSON.parse(await read('result.json')),
  };
}
