import {
  ConfigError,
  createLogger,
  flushAndExit,
  loadConfig,
  mountAdminOpenApi,
  printableConfig,
  startBroker,
} from 'ws-protocol-broker';
import { AppModule } from './app.module.js';
import { DEFAULT_CONFIG } from './default-config.js';

async function main(): Promise<void> {
  let config;
  const notices: string[] = [];
  try {
    config = loadConfig({ defaults: DEFAULT_CONFIG, notice: (message) => notices.push(message) });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  // `npm start -- --print-config`: the defaults, the CONFIG file and the environment as one, then exit.
  if (process.argv.includes('--print-config')) {
    process.stdout.write(printableConfig(config));
    return;
  }
  const logger = createLogger(config.log.level);
  for (const notice of notices) logger.warn(notice);
  try {
    await startBroker(AppModule.with(config, logger), config, logger, {
      exitOnSignals: true,
      setup: mountAdminOpenApi,
    });
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, 'broker failed to start');
    flushAndExit(logger, 1);
  }
}

void main();
