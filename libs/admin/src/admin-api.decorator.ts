import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
  UseFilters,
  UseGuards,
  UsePipes,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AdminAuthGuard, type AdminRequest } from './admin-auth.guard.js';
import { AdminProblemFilter } from './problem.filter.js';
import { adminValidationPipe } from './validation.js';

/** Marks admin controllers, wherever they live (the OCPP module has its own): the OpenAPI document includes their modules. */
export const ADMIN_API = 'broker:admin-api';

/** Everything an admin controller shares: auth, DTO validation, problem+json errors, OpenAPI tag. */
export function AdminApi(tag: string): ClassDecorator {
  return applyDecorators(
    SetMetadata(ADMIN_API, true),
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
