/**
 * The chat's small icons, drawn inline: a glyph such as a raised hand is in no font a
 * plain system is sure to have, and a missing glyph shows as an empty box.
 */
type IconName = 'stop' | 'warning' | 'check' | 'gear';

const PATHS: Record<IconName, string> = {
  // An octagon with a bar: "stopped by a human".
  stop: 'M8.3 2h7.4L22 8.3v7.4L15.7 22H8.3L2 15.7V8.3zM7 11v2h10v-2z',
  warning: 'M12 2 1 21h22zm-1 7h2v6h-2zm0 8h2v2h-2z',
  check: 'M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4z',
  gear: 'M19.4 13a7.5 7.5 0 0 0 0-2l2.1-1.6-2-3.5-2.5 1a7.4 7.4 0 0 0-1.7-1L15 3h-4l-.4 2.9a7.4 7.4 0 0 0-1.7 1l-2.5-1-2 3.5L6.6 11a7.5 7.5 0 0 0 0 2l-2.1 1.6 2 3.5 2.5-1a7.4 7.4 0 0 0 1.7 1L11 21h4l.4-2.9a7.4 7.4 0 0 0 1.7-1l2.5 1 2-3.5zM13 15.5a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7z',
};

export function Icon({ name }: { name: IconName }) {
  return (
    <svg className={`icon icon-${name}`} viewBox="0 0 24 24" width="14" height="14" fill="currentColor" aria-hidden>
      <path d={PATHS[name]} />
    </svg>
  );
}
