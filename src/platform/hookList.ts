/**
 * Hooks a floor below registers for the floors above it (src/server.ts registers them per gateway): each
 * added once, removable when its gateway stops.
 */
export function addHook<H>(hooks: H[], hook: H): () => void {
  if (!hooks.includes(hook)) hooks.push(hook);
  return () => {
    const at = hooks.indexOf(hook);
    if (at >= 0) hooks.splice(at, 1);
  };
}
