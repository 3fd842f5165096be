/** The operand standing for a `--` of an exec command line (commander drops `--`; see `Invocation.dashIndex`). */
export const DASH_MARK = '\u0000--';
