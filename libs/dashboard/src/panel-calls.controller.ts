import { Controller, Get } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminApi } from '#broker/admin';
import { GatewayMetrics, type PanelCallsInfo } from '#broker/gateway';

/**
 * The calls the modules' panels offer (DashboardPanel.calls), read once by the page to build its call
 * forms: each names the module's own admin route that takes the call, so a script does what the form
 * does by POSTing there. Names no module.
 */
@AdminApi('dashboard')
@Controller('admin/v1/dashboard')
export class PanelCallsController {
  constructor(private readonly metrics: GatewayMetrics) {}

  @Get('panel-calls')
  @ApiOperation({
    summary: "The calls the modules' panels offer to their rows: route, actions and an example payload each",
    description:
      "POST an action's payload as JSON to the route under /admin/v1/, with {target} and {action} replaced by the URI-encoded row key and action id.",
  })
  list(): PanelCallsInfo[] {
    return this.metrics.panels.calls();
  }
}
