// docs/testing-controllers.md shows the operator example and its CRD verbatim: keep them equal.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const doc = readFileSync(join(__dirname, '../../../../docs/testing-controllers.md'), 'utf8');
const startingAt = (text: string, start: string): string => text.slice(text.indexOf(start));

it('shows operator.int.test.ts from its first import, as it is', () => {
  const test = readFileSync(join(__dirname, 'operator.int.test.ts'), 'utf8');
  expect(doc).toContain('```ts\n' + startingAt(test, 'import ') + '```\n');
});

it('shows widget-crd.yaml from its apiVersion, as it is', () => {
  const crd = readFileSync(join(__dirname, 'widget-crd.yaml'), 'utf8');
  expect(doc).toContain('```yaml\n' + startingAt(crd, 'apiVersion') + '```\n');
});
