import { Option, type Command } from 'commander';
import { componentFeatureGates, parseEmulatedVersion, type FeatureGates } from '@svc/machinery';
import { repeatable, type ParsedFlags } from './flags.js';

// `--feature-gates` and `--emulated-version` of the control-plane components (Kubernetes'
// component-base compatibility flags): the component is `svc`, the gate table Kubernetes 1.32's.

export interface FeatureOptions {
  featureGates: FeatureGates;
  /** `--emulated-version`; unset: the binary's release. */
  emulatedVersion?: string;
}

/** Adds `--feature-gates` and `--emulated-version` (both repeatable). */
export function withFeatureFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--feature-gates <gates>',
        'A set of key=value pairs that describe feature gates for alpha/experimental features, optionally prefixed with the component (svc:Key=true; svc when omitted). Every gate of Kubernetes 1.32 is known; GA gates are locked to true; AllAlpha and AllBeta switch every unset gate of their stage (repeatable).',
      )
        .default([], '')
        .argParser(repeatable),
    )
    .addOption(
      new Option(
        '--emulated-version <versions>',
        "The versions different components emulate their capabilities (APIs, features, ...) of. Version format is <major>.<minor>, e.g. '--emulated-version=svc=1.31'. Options are: svc=1.31. If the component is not specified, defaults to svc (repeatable).",
      )
        .default([], '')
        .argParser(repeatable),
    );
}

/** Reads the flags of `withFeatureFlags`; a bad value ends parsing (exit 2) with Kubernetes' words. */
export function featureOptions(p: ParsedFlags): FeatureOptions {
  const { o, fail } = p;
  let emulatedVersion: string | undefined;
  try {
    emulatedVersion = parseEmulatedVersion(o.emulatedVersion as string[]);
  } catch (e) {
    return fail(`invalid argument for "--emulated-version" flag: ${(e as Error).message}`);
  }
  const featureGates = componentFeatureGates({ emulatedVersion });
  try {
    featureGates.parse(o.featureGates as string[]);
  } catch (e) {
    return fail(`invalid argument for "--feature-gates" flag: ${(e as Error).message}`);
  }
  return { featureGates, emulatedVersion };
}
