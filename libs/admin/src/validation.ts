import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { type FieldError } from './problem.js';
import { InvalidFieldsException } from './problem.filter.js';

function flatten(errors: readonly ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix + error.property;
    const own = error.constraints ? [{ field, messages: Object.values(error.constraints) }] : [];
    return [...own, ...flatten(error.children ?? [], `${field}.`)];
  });
}

/** class-validator DTOs: unknown properties refused, values transformed to the DTO's types. */
export const adminValidationPipe = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
  exceptionFactory: (errors) => new InvalidFieldsException(flatten(errors)),
});
