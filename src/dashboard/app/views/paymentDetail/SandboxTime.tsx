import { Time } from '../../components/Time';

/** A time on the sandbox clock, and how long ago (or how soon) that is; the clock is named once, after the time. */
export function SandboxTime({ iso }: { iso: string | null | undefined }) {
  return (
    <span className="sandbox-time">
      <Time iso={iso} clock="sandbox" /> <span className="muted relative">(<Time iso={iso} clock="sandbox" relative />)</span>
    </span>
  );
}
