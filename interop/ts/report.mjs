// What the TypeScript checks share: one PASS/FAIL line a check (interop/run counts them), the
// exit status, and how a tool's answer reads.

/** A reporter whose lines start with `PASS <tag>` / `FAIL <tag>`. */
export function reporter(tag) {
  let passed = 0;
  let failed = 0;
  return {
    check(label, ok, detail = '') {
      if (ok) {
        passed++;
        console.log(`PASS ${tag} ${label}`);
      } else {
        failed++;
        console.log(`FAIL ${tag} ${label}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
      }
    },
    get passed() {
      return passed;
    },
    get failed() {
      return failed;
    },
    /** Ends the process: 0 when no check failed. */
    exit() {
      process.exit(failed === 0 ? 0 : 1);
    },
  };
}

/** A tool's value (its structured `value`), else its text. */
export function said(result) {
  if (result.structuredContent && 'value' in result.structuredContent) return result.structuredContent.value;
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}
