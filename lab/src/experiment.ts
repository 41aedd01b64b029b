import type { LabWorld } from "./world.ts";

/** One experiment: a name to type, a line for `list`, and the run itself. */
export interface Experiment {
  name: string;
  summary: string;
  run(world: LabWorld): Promise<void>;
}
