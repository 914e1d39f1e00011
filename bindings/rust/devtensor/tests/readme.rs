//! bindings/rust/README.md shows examples/realistic.rs as it is, so that the two cannot
//! drift; tests/packaging/run builds and runs the README's copy out of tree.
use std::path::Path;

/// The fenced block after the line `<!-- consumer: TAG -->`, as tests/packaging/run reads
/// it (the lines between the next line starting with ``` and the one after it).
fn readme_block(readme: &str, tag: &str) -> Option<String> {
    let mark = format!("<!-- consumer: {tag} -->");
    let lines: Vec<&str> = readme.split_inclusive('\n').collect();
    let at = lines.iter().position(|l| l.trim_end_matches('\n') == mark)?;
    let open = at + 1 + lines[at + 1..].iter().position(|l| l.starts_with("```"))?;
    let close = open + 1 + lines[open + 1..].iter().position(|l| l.starts_with("```"))?;
    Some(lines[open + 1..close].concat())
}

#[test]
fn readme_shows_the_realistic_example_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let in_tree = std::fs::read_to_string(root.join("examples/realistic.rs")).unwrap();
    let shown = readme_block(&readme, "examples/realistic.rs")
        .expect("no fenced block after <!-- consumer: examples/realistic.rs --> in README.md");
    assert!(
        shown == in_tree,
        "the block after <!-- consumer: examples/realistic.rs --> in bindings/rust/README.md \
         is not examples/realistic.rs; copy the file into the README.\nREADME:\n{shown}\nfile:\n{in_tree}"
    );
}

#[test]
fn readme_block_reads_as_the_packaging_test_does() {
    let md = "x\n<!-- consumer: a -->\ntext\n```sh\none\n  two\n```\n<!-- consumer: b -->\n";
    assert_eq!(readme_block(md, "a").as_deref(), Some("one\n  two\n"));
    assert_eq!(readme_block(md, "b"), None);
    assert_eq!(readme_block(md, "c"), None);
}
