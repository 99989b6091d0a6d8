//! Compile-fail and compile-pass cases of the `surface` DSL.
//!
//! Each file under `ui/fail/` makes one mistake (or, for `several_mistakes_at_once.rs`, several)
//! and checks the exact diagnostic in its `.stderr`; each file under `ui/pass/` compiles and
//! asserts at run time. Regenerate expected output with `TRYBUILD=overwrite`, then read it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
