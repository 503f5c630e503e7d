/**
 * A meeting point for work running side by side: `count` parties, each arriving once (a second
 * arrival of the same party counts nothing, so a `finally` may arrive again safely), and `all`
 * resolves once every one has. Proofs and competing attempts wait here before a step that must not
 * overlap another party's earlier step (an agent's turn, a tree not yet made and covered).
 */
export interface Meeting {
  /** One party's arrival: call it as often as convenient, it counts once. */
  arrival(): () => void;
  /** Resolves when all `count` parties have arrived. */
  all: Promise<void>;
}

export function meeting(count: number): Meeting {
  let waiting = count;
  let open: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (open = resolve));
  if (waiting <= 0) open();
  return {
    all,
    arrival() {
      let arrived = false;
      return () => {
        if (arrived) return;
        arrived = true;
        if (--waiting === 0) open();
      };
    },
  };
}
