// Items of the "Select target" quick pick: the platforms whose rules apply, then the device IR compiles for.
import { IR_TARGETS, TARGETS } from './constants';

export interface TargetItem {
  label: string;
  description?: string;
  setting?: 'target' | 'irTarget'; // undefined for separators
  value?: string;
  separator?: boolean;
}

const TARGET_LABELS: Record<string, string> = {
  auto: 'Per file, from its imports and devices',
  cuda: 'NVIDIA GPUs',
  ascend: 'Huawei Ascend NPUs',
  both: 'NVIDIA and Ascend',
};
const IR_LABELS: Record<string, string> = {
  auto: 'The platform of each file',
  sm_90: 'Hopper (H100/H200)',
  sm_80: 'Ampere (A100)',
  sm_100: 'Blackwell (B200)',
  ascend910b3: 'Ascend 910B3',
};

export function targetItems(current: string | undefined, currentIr: string | undefined): TargetItem[] {
  const mark = (on: boolean): string => (on ? ' (current)' : '');
  return [
    { label: 'Rules for', separator: true },
    ...TARGETS.map((t) => ({
      label: t,
      description: TARGET_LABELS[t] + mark(t === current),
      setting: 'target' as const,
      value: t,
    })),
    { label: 'Compile IR for', separator: true },
    ...IR_TARGETS.map((t) => ({
      label: t,
      description: IR_LABELS[t] + mark(t === currentIr),
      setting: 'irTarget' as const,
      value: t,
    })),
  ];
}
