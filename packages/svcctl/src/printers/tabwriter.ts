/**
 * Go's text/tabwriter as kubectl configures it (min width 6, padding 3, spaces, no flags):
 * cells end at tabs, the text after a line's last tab is not aligned, and a column is as wide
 * as its widest cell plus the padding within each block of consecutive lines that have it.
 */
export interface TabwriterOptions {
  minWidth?: number;
  padding?: number;
  /**
   * kubectl's RememberWidths: column widths kept across calls (never shrinking), so rows
   * printed later (`get -w`) line up with the first ones. Updated in place.
   */
  remembered?: number[];
}

function runes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function tabwrite(text: string, o: TabwriterOptions = {}): string {
  const minWidth = o.minWidth ?? 6;
  const padding = o.padding ?? 3;
  const endsWithNewline = text.endsWith('\n');
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split('\n').map((l) => l.split('\t'));
  const out: string[] = [];
  const widths: number[] = [];

  const writeLines = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      const cells = lines[i] ?? [];
      let s = '';
      cells.forEach((c, j) => {
        s += c;
        const w = widths[j];
        if (j < cells.length - 1 && w !== undefined) s += ' '.repeat(Math.max(0, w - runes(c)));
      });
      out.push(s);
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    let start = line0;
    for (let i = line0; i < line1; i++) {
      if (column >= (lines[i]?.length ?? 0) - 1) continue;
      writeLines(start, i);
      start = i;
      let width = minWidth;
      for (; i < line1; i++) {
        const cells = lines[i] ?? [];
        if (column >= cells.length - 1) break;
        width = Math.max(width, runes(cells[column] ?? '') + padding);
      }
      const kept = o.remembered;
      if (kept) {
        if (kept.length < widths.length) kept.push(...widths.slice(kept.length));
        const k = kept[widths.length];
        if (k === undefined) kept.push(width);
        else if (k > width) width = k;
        else kept[widths.length] = width;
      }
      widths.push(width);
      format(start, i);
      widths.pop();
      start = i;
      i--;
    }
    writeLines(start, line1);
  };

  format(0, lines.length);
  return out.join('\n') + (endsWithNewline ? '\n' : '');
}
