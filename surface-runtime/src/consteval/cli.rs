//! The argv face's names, checked in const evaluation where a roster is static.

use super::rules::str_eq;

/// The reader commands; a tool of one of these names is refused.
pub const READER_COMMANDS: &[&str] = &["list", "get", "keys", "watch", "completions", "help"];

/// Refuses, in const evaluation, a statically named tool that collides with a reader command:
/// a compile error where the roster is static.
///
/// ```
/// # use surface_runtime::cli::assert_tool_names;
/// const _: () = assert_tool_names(&["count", "proc_kill"]);
/// ```
///
/// ```compile_fail
/// # use surface_runtime::cli::assert_tool_names;
/// const _: () = assert_tool_names(&["count", "list"]); // `list` is a reader command
/// ```
pub const fn assert_tool_names(names: &[&str]) {
    let mut i = 0;
    while i < names.len() {
        let mut r = 0;
        while r < READER_COMMANDS.len() {
            if str_eq(names[i], READER_COMMANDS[r]) {
                panic!(
                    "a tool is named like a reader command of the argv face (list, get, keys, watch, completions, help): rename the tool"
                );
            }
            r += 1;
        }
        i += 1;
    }
}
