/**
 * The design phase as a list of stops: role turns and gates, in order. The spec-author goes
 * first; the ux-designer joins right after it when the spec says the feature is user-facing (or
 * whenever the configuration lists it); the optional `plan` gate sits before the test-strategist,
 * the optional `test_list` gate after it, and the `spec` gate closes the design.
 */
import type { DesignRole } from './roles.js';
import type { GateName, Policy, TurnStep } from './state.js';

export type DesignStop = { kind: 'role'; role: DesignRole } | { kind: 'gate'; gate: GateName };

export const DESIGN_STEP: Record<DesignRole, TurnStep> = {
  'product-owner': 'request',
  'spec-author': 'spec',
  'architect-reviewer': 'architecture',
  dba: 'db-design',
  'test-strategist': 'test-list',
  'ux-designer': 'ux',
};

export function designPlan(policy: Pick<Policy, 'design' | 'optionalGates'>, userFacing: boolean): DesignStop[] {
  const roles = [...policy.design];
  if (userFacing && !roles.includes('ux-designer')) {
    const at = roles.indexOf('spec-author');
    roles.splice(at + 1, 0, 'ux-designer');
  }
  const stops: DesignStop[] = [];
  const gate = (g: 'plan' | 'test_list') => policy.optionalGates.includes(g);
  let planPlaced = false;
  for (const role of roles) {
    if (role === 'test-strategist' && gate('plan') && !planPlaced) {
      stops.push({ kind: 'gate', gate: 'plan' });
      planPlaced = true;
    }
    stops.push({ kind: 'role', role });
    if (role === 'test-strategist' && gate('test_list')) stops.push({ kind: 'gate', gate: 'test_list' });
  }
  if (gate('plan') && !planPlaced) stops.push({ kind: 'gate', gate: 'plan' });
  stops.push({ kind: 'gate', gate: 'spec' });
  return stops;
}

/** Where a gate sits in the plan (-1 when it is not a design gate or not enabled). */
export function designGateIndex(
  policy: Pick<Policy, 'design' | 'optionalGates'>,
  userFacing: boolean,
  gate: GateName,
): number {
  return designPlan(policy, userFacing).findIndex((s) => s.kind === 'gate' && s.gate === gate);
}
