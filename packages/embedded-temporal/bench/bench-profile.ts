// The parts of a V8 .cpuprofile that bench-devserver-profile.ts reads (the same types as the
// repository's bench/profile.ts, kept here so that the package's benches stand on their own).

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}
