import { DiscoveryService } from '@nestjs/core';
import { type SubprotocolOptions } from './subprotocol.types.js';

/**
 * Marks a provider as a subprotocol module. Discovered at boot by SubprotocolRegistry, the way
 * @nestjs/schedule finds its handlers.
 */
export const Subprotocol = DiscoveryService.createDecorator<SubprotocolOptions>();
