// Identifiers shared by the client's modules; package.json contributes the same ids.

export const EXTENSION_NAME = 'tritonlens';
export const CONFIG_SECTION = 'tritonlens';
export const IR_SCHEME = 'tritonlens-ir';
export const KERNELS_VIEW = 'tritonlens.kernels';

// Custom requests and notifications of the tritonlens language server.
export const KERNELS_REQUEST = 'tritonlens/kernels';
export const IR_REQUEST = 'tritonlens/ir';
export const STATUS_NOTIFICATION = 'tritonlens/status';
export const CANDIDATE_REQUEST = 'tritonlens/candidate';
export const CANDIDATE_SCHEME = 'tritonlens-candidate';
export const ROOFLINE_REQUEST = 'tritonlens/roofline';

export const Commands = {
  analyzeKernel: 'tritonlens.analyzeKernel',
  profileKernel: 'tritonlens.profileKernel',
  optimizeKernel: 'tritonlens.optimizeKernel',
  showIr: 'tritonlens.showIr',
  selectTarget: 'tritonlens.selectTarget',
  restart: 'tritonlens.restart',
  showOutput: 'tritonlens.showOutput',
  refreshKernels: 'tritonlens.refreshKernels',
  openLocation: 'tritonlens.openLocation',
  showCandidateDiff: 'tritonlens.showCandidateDiff',
  showRoofline: 'tritonlens.showRoofline',
} as const;

// Commands the server implements (forwarded to workspace/executeCommand); contributed statically so they show
// in the palette before the server has started.
export const SERVER_COMMANDS: readonly string[] = [
  Commands.analyzeKernel,
  Commands.profileKernel,
  Commands.optimizeKernel,
];

// Commands the client implements itself.
export const CLIENT_COMMANDS: readonly string[] = [
  Commands.showIr,
  Commands.selectTarget,
  Commands.restart,
  Commands.showOutput,
  Commands.refreshKernels,
  Commands.openLocation,
  Commands.showCandidateDiff,
  Commands.showRoofline,
];

// Server commands that may run long (compile, profile, verify): shown with a cancellable progress notification.
export const LONG_RUNNING_COMMANDS: readonly string[] = [
  Commands.analyzeKernel,
  Commands.profileKernel,
  Commands.optimizeKernel,
];

export const TARGETS = ['auto', 'cuda', 'ascend', 'both'] as const;
export const IR_TARGETS = ['auto', 'sm_90', 'sm_80', 'sm_100', 'ascend910b3'] as const;

// IR stages offered before the server has said which it has for a kernel.
export const DEFAULT_STAGES: Record<string, readonly string[]> = {
  cuda: ['ttir', 'ttgir', 'llir', 'ptx', 'sass'],
  ascend: ['ttir', 'ttadapter', 'hivm'],
};
