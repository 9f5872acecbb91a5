/**
 * The CDK app (`npx cdk synth`, `npx cdk deploy`; cdk.json runs this with tsx).
 * Stage: `-c stage=<name>` (default dev): dev, prod, or a stage of opflow.stack.json (`-c config=<file>`
 * names another file; the `opflowStack` context may hold the same document). Optional: `-c alarmEmail=...`, `-c alarmTopicArn=...`,
 * `-c jwtIssuer=https://... -c jwtAudience=a,b [-c jwtOperatorGroups=g1,g2 -c jwtOperatorClaim=cognito:groups]`. See docs/guides/deploy.md.
 * buildOpflowApp also registers cdk-nag: `Validations.of(app).addPlugins(new AwsSolutionsChecks(app))`,
 * so an unacknowledged AwsSolutions finding fails `synth` and `deploy`.
 */
import { App } from 'aws-cdk-lib';
import { ConfigFileError } from '../../shared/config/opflow-config';
import { InvalidStackSettingsError, InvalidStageConfigError } from '../config';
import { buildOpflowApp } from '../lib/opflow-app';

const app = new App();
try {
  buildOpflowApp(app);
} catch (error) {
  if (
    error instanceof InvalidStageConfigError ||
    error instanceof InvalidStackSettingsError ||
    error instanceof ConfigFileError
  ) {
    // A config mistake is the deployer's to fix: say which field, without a stack trace.
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
app.synth();
