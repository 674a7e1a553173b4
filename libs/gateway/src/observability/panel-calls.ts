/** One call a panel's form offers: its id (what `{action}` becomes) and the payload the form starts from. */
export interface PanelCallAction {
  readonly id: string;
  /** A minimal valid payload, shown in the form's JSON editor for the operator to change. */
  readonly example: unknown;
}

/**
 * Calls an operator may send to one of a panel's rows from the dashboard (the OCPP module's
 * central-system calls to a charge point). The page offers the panel's row keys as targets (any other
 * may be typed), the actions in their order, POSTs the edited payload as JSON to the module's own admin
 * route with the page's admin credential, and shows what the route answers, status and body, as it is:
 * the route decides everything, the page knows nothing of the module.
 */
export interface PanelCalls {
  /** The form's heading ('Call a charge point'). */
  readonly title: string;
  /** What a target is ('Charge point identity'). */
  readonly targetLabel: string;
  /**
   * The module's admin route under /admin/v1/ that takes each call, `{target}` and `{action}` each
   * once among its segments ('charge-points/{target}/calls/{action}'): the page puts the URI-encoded
   * target and action in their place.
   */
  readonly route: string;
  /** At least one, at most MAX_PANEL_CALL_ACTIONS, ids unique. */
  readonly actions: readonly PanelCallAction[];
}

/** A panel's calls as GET /admin/v1/dashboard/panel-calls lists them: which panel's rows they go to. */
export interface PanelCallsInfo extends PanelCalls {
  readonly panel: string;
}

/** The most actions one form offers (the page lists them all in one picker). */
export const MAX_PANEL_CALL_ACTIONS = 100;

/** A route segment: the placeholders, or the characters a path segment takes unencoded. */
const SEGMENT = /^(?:\{target\}|\{action\}|[A-Za-z0-9_~-][A-Za-z0-9._~-]*)$/;
/** An action id: a path segment with no dot, so never '.' or '..'. */
const ACTION_ID = /^[A-Za-z0-9_~-]{1,64}$/;

/**
 * Throws, naming the panel, when `calls` could not make a form: a route that is not a relative path
 * under the admin API with each placeholder once (no '..', no query, no other host), or actions that
 * are missing, too many, repeated or not path segments.
 */
export function checkPanelCalls(panel: string, calls: PanelCalls): void {
  const segments = calls.route.split('/');
  const placeholders = (name: string) => segments.filter((s) => s === `{${name}}`).length;
  if (
    !segments.every((s) => SEGMENT.test(s)) ||
    placeholders('target') !== 1 ||
    placeholders('action') !== 1
  ) {
    throw new Error(
      `dashboard panel ${panel}: a call route is a relative path with {target} and {action} once each: ${calls.route}`,
    );
  }
  const ids = calls.actions.map((a) => a.id);
  if (ids.length === 0 || ids.length > MAX_PANEL_CALL_ACTIONS) {
    throw new Error(
      `dashboard panel ${panel}: 1 to ${MAX_PANEL_CALL_ACTIONS} call actions, not ${ids.length}`,
    );
  }
  const bad = ids.find((id, i) => !ACTION_ID.test(id) || ids.indexOf(id) !== i);
  if (bad !== undefined) {
    throw new Error(
      `dashboard panel ${panel}: call action ids are unique path segments without a dot: ${bad}`,
    );
  }
}
