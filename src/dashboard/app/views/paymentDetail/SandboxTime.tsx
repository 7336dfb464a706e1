import { Time } from '../../components/Time';

/** A time on the sandbox clock, and how long ago (or how soon) that is. */
export function SandboxTime({ iso }: { iso: string | null | undefined }) {
  return (
    <>
      <Time iso={iso} clock="sandbox" /> <span className="muted">(<Time iso={iso} clock="sandbox" relative />)</span>
    </>
  );
}
