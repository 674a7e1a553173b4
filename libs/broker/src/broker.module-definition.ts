import { ConfigurableModuleBuilder } from '@nestjs/common';
import { type BrokerConfigWithSections } from '#broker/config';
import { withBrokerParts, type BrokerModuleExtras } from './broker-parts.js';

/** Raw broker options (the config as written, with the modules' sections); BROKER_CONFIG holds them validated. */
export const BROKER_OPTIONS = Symbol('BROKER_OPTIONS');

export const {
  ConfigurableModuleClass: ConfigurableBrokerModule,
  OPTIONS_TYPE: BROKER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: BROKER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<BrokerConfigWithSections>({
  moduleName: 'Broker',
  optionsInjectionToken: BROKER_OPTIONS,
})
  .setClassMethodName('forRoot')
  // Every key is listed (logger too): Nest strips only the listed ones from the options.
  .setExtras<BrokerModuleExtras>(
    {
      adminApi: true,
      dashboard: true,
      logger: undefined,
      healthPath: '/health',
      metricsPath: '/metrics',
      sections: [],
    },
    (definition, extras) => withBrokerParts(definition, extras, BROKER_OPTIONS),
  )
  .build();
