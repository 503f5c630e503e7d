/** What the main step hands to the post step (core.saveState → STATE_<name>), by name. */
export const STATE = {
  /** The reflink mount to stop and remove (src/action/reflink.ts); unset when nothing was mounted. */
  reflinkMount: 'reflink_mount',
} as const;
