import { humanAge } from '../commands/get.js';
import { type DescribeWriter, asObj, str } from './writer.js';

type Obj = Record<string, unknown>;

function since(t: unknown): string {
  if (!t) return '<unknown>';
  return humanAge(Date.now() - Date.parse(str(t)));
}

/** kubectl's DescribeEvents: events sorted by last timestamp, with counts and series. */
export function describeEvents(w: DescribeWriter, events: Obj[]): void {
  if (events.length === 0) {
    w.write(0, 'Events:\t<none>\n');
    return;
  }
  const sorted = [...events].sort((a, b) => Date.parse(str(a.lastTimestamp)) - Date.parse(str(b.lastTimestamp)) || 0);
  w.write(0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  w.write(1, '----\t------\t----\t----\t-------\n');
  for (const e of sorted) {
    const first = e.eventTime ? since(e.eventTime) : since(e.firstTimestamp);
    const series = asObj(e.series);
    let interval = first;
    if (e.series) interval = `${since(series.lastObservedTime)} (x${str(series.count)} over ${first})`;
    else if (Number(e.count ?? 0) > 1) interval = `${since(e.lastTimestamp)} (x${str(e.count)} over ${first})`;
    const source = str(asObj(e.source).component) || str(e.reportingComponent);
    let message = str(e.message).trim();
    const fieldPath = str(asObj(e.involvedObject).fieldPath);
    if (fieldPath) message = `${fieldPath}: ${message}`;
    w.write(1, `${str(e.type)}\t${str(e.reason)}\t${interval}\t${source}\t${message}\n`);
  }
}
