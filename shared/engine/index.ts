/** The workflow engine: job record, ports, advance(), policies, the step runner and job commands. */

export * from './admission';
export * from './advance';
export * from './deps';
export * from './job-commands';
export * from './job-record';
export * from './policies';
export * from './poll-plan';
export * from './poll-stats';
export * from './poll-timing';
export * from './ports';
export * from './report';
export * from './retry';
export * from './runner';
export * from './sweep';
export * from './workflow';
