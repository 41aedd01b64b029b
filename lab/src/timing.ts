/**
 * The longest span, from `from` on, with no acknowledgement: between the fault and the first
 * acknowledgement, between two, and up to the first after `to` (the fault's end), or `to`
 * itself when none came after it. `acks` are the times acknowledgements arrived, in any
 * order. What a client of the shop felt during a fault: the lab's failover experiment and
 * the fault suite's rows (test/faults/report.ts) both measure it so.
 */
export function longestWithoutAck(acks: number[], from: number, to: number): number {
  const after = acks.filter((t) => t > from).sort((a, b) => a - b);
  const firstAfterTo = after.findIndex((t) => t >= to);
  const points = [from, ...(firstAfterTo >= 0 ? after.slice(0, firstAfterTo + 1) : [...after, to])];
  let longest = 0;
  for (let i = 1; i < points.length; i++)
    longest = Math.max(longest, (points[i] as number) - (points[i - 1] as number));
  return longest;
}
