//! The README is a landing page whose example is the quick start CI builds from the packaged
//! crates (`.ci/quickstart`), and whose figures live elsewhere.

use std::path::Path;

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The first ```rust block of the README.
fn readme_example(readme: &str) -> &str {
    let start = readme.find("```rust").expect("the README has a Rust example");
    let body = &readme[start..];
    let body = &body[body.find('\n').expect("a fence line") + 1..];
    &body[..body.find("\n```").expect("the example's fence closes") + 1]
}

#[test]
fn the_readme_example_is_the_quick_start_word_for_word() {
    let readme = read("README.md");
    assert_eq!(
        readme_example(&readme),
        read("examples/quickstart.rs"),
        "README.md's example and examples/quickstart.rs differ: change both"
    );
}

#[test]
fn the_readme_is_a_landing_page() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move detail into docs/ (the guide)"
    );
    for command in [
        "cargo run --example ops",
        "cargo test --workspace",
        "cargo add mcp-surface",
    ] {
        assert!(readme.contains(command), "README.md does not say `{command}`");
    }
    // Speed ratios are stated once, in BENCHMARKS.md.
    for (i, line) in readme.lines().enumerate() {
        assert!(
            !line.contains('×'),
            "README.md:{}: a ratio belongs in BENCHMARKS.md: {line}",
            i + 1
        );
    }
}

#[test]
fn every_chapter_in_docs_is_in_the_guide() {
    let guide = read("src/guide.rs");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut chapters = 0;
    for entry in std::fs::read_dir(&dir).expect("docs/ exists") {
        let name = entry
            .expect("a directory entry")
            .file_name()
            .into_string()
            .expect("UTF-8");
        if name.ends_with(".md") {
            chapters += 1;
            let include = format!("include_str!(\"../docs/{name}\")");
            assert!(
                guide.contains(&include),
                "docs/{name} is not pulled into src/guide.rs"
            );
            assert!(
                read("README.md").contains(&format!("(docs/{name})")),
                "README.md does not link docs/{name}"
            );
        }
    }
    assert!(chapters >= 10, "the guide has {chapters} chapters");
}
