import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  UseFilters,
  UseGuards,
  UsePipes,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AdminAuthGuard, type AdminRequest } from './admin-auth.guard.js';
import { AdminProblemFilter } from './problem.filter.js';
import { adminValidationPipe } from './validation.js';

/** Everything an admin controller shares: auth, DTO validation, problem+json errors, OpenAPI tag. */
export function AdminApi(tag: string): ClassDecorator {
  return applyDecorators(
    ApiTags(tag),
    ApiBearerAuth(),
    UseGuards(AdminAuthGuard),
    UsePipes(adminValidationPipe),
    UseFilters(AdminProblemFilter),
  );
}

/** Who is making the request, for the audit record (set by AdminAuthGuard). */
export const Actor = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  return context.switchToHttp().getRequest<AdminRequest>().adminActor ?? 'unknown';
});
