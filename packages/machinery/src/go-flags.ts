/** Go's `strconv.ParseBool`, which Kubernetes flags use: 1/t/T/TRUE/true/True and their false forms. */
export function parseGoBool(text: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new Error(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** Whether Go's `strconv.ParseBool` reads `text` as true (absent or unparsable: false). */
export function isGoTrue(text: string | null | undefined): boolean {
  try {
    return text !== null && text !== undefined && parseGoBool(text);
  } catch {
    return false;
  }
}
