//! The tree keeps every algorithm in one place: its file under `core/src/algo/`, one line in the list of
//! `core/src/algo/mod.rs`, and its docs. These tests read the workspace's sources and docs/architecture.md's
//! walkthrough, which says so.

use std::fs;
use std::path::{Path, PathBuf};

use ringleader_core::algo::catalogue::CATALOGUE;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The modules listed in `algorithms! { ... }` of core/src/algo/mod.rs, in order.
fn listed_modules() -> Vec<String> {
    let text = fs::read_to_string(root().join("core/src/algo/mod.rs")).unwrap();
    let start = text.find("\nalgorithms! {").expect("the list of algorithms in core/src/algo/mod.rs");
    let body = &text[start + "\nalgorithms! {".len()..];
    let body = &body[..body.find('}').unwrap()];
    body.split(',').map(|m| m.trim().to_string()).filter(|m| !m.is_empty()).collect()
}

/// `code` without line comments and without `#[cfg(test)]` modules (unit tests may name algorithms).
fn without_tests(code: &str) -> String {
    let mut code: String =
        code.lines().map(|l| if l.trim_start().starts_with("//") { "" } else { l }).collect::<Vec<_>>().join("\n");
    while let Some(at) = code.find("#[cfg(test)]\nmod ").or_else(|| code.find("#[cfg(test)]\npub(crate) mod ")) {
        let Some(open) = code[at..].find('{').map(|i| at + i) else { break };
        let end = block_end(&code, open);
        code.replace_range(at..end, "");
    }
    code
}

/// The index just past the `}` closing the block opened at `open`, braces in string and char literals not
/// counted.
fn block_end(code: &str, open: usize) -> usize {
    let bytes = code.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'r' if bytes[i + 1..].starts_with(b"\"") || bytes[i + 1..].starts_with(b"#\"") => {
                let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let from = i + 2 + hashes;
                i = code[from..].find(&close).map_or(bytes.len(), |j| from + j + close.len()) - 1;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'') => i += 3,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// Every `.rs` file under `dir` that is not test code (`tests.rs`, `tests/` folders).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && name != "tests" {
            sources(&path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The catalogue is the list in core/src/algo/mod.rs, entry for entry and in order: each listed module's file
/// declares the entry at its place, so adding an algorithm is its file and that one line.
#[test]
fn the_catalogue_is_the_list_of_modules() {
    let modules = listed_modules();
    assert_eq!(modules.len(), CATALOGUE.len(), "{modules:?}");
    for (module, spec) in modules.iter().zip(CATALOGUE) {
        let file = root().join(format!("core/src/algo/{module}.rs"));
        let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(&format!("name: \"{}\"", spec.name)), "{module}.rs does not declare {}", spec.name);
    }
}

/// Outside core/src/algo/, no source but tests names an algorithm: neither its name as a string (a `match` or
/// `==` on it would be a fact kept outside its entry) nor its module. What differs between algorithms is a
/// field of their catalogue entries.
#[test]
fn no_source_outside_the_algorithms_names_one() {
    let modules = listed_modules();
    let mut files = Vec::new();
    for dir in ["core/src", "node/src", "controller/src", "check/src"] {
        sources(&root().join(dir), &mut files);
    }
    let algo = root().join("core/src/algo");
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&algo)) {
        let code = without_tests(&fs::read_to_string(file).unwrap());
        for (line_no, line) in code.lines().enumerate() {
            let named =
                CATALOGUE.iter().map(|s| format!("\"{}\"", s.name)).find(|quoted| line.contains(quoted.as_str()));
            let module =
                modules.iter().find(|m| line.contains(&format!("algo::{m}")) || line.contains(&format!(" {m}::")));
            if let Some(what) = named.or(module.cloned()) {
                found.push(format!("{}:{}: {what}: {}", file.display(), line_no + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "algorithms named outside core/src/algo/:\n{}", found.join("\n"));
}

/// docs/architecture.md's walkthrough of adding an algorithm names the places the tree has: its file's folder,
/// the list in core/src/algo/mod.rs, the docs the docs test reads, and the wire table; each exists.
#[test]
fn the_walkthrough_names_the_places_an_algorithm_takes() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let start = doc.find("## Adding an algorithm").expect("the walkthrough in docs/architecture.md");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    for place in ["core/src/algo/", "core/src/algo/mod.rs", "docs/algorithms.md", "core/src/protocol/msg.rs"] {
        assert!(section.contains(&format!("`{place}")), "the walkthrough does not name {place}");
        assert!(root().join(place).exists(), "{place} named by the walkthrough does not exist");
    }
    assert!(section.contains("**One line**"), "the walkthrough says an algorithm takes one line of registration");
    assert!(!section.contains("budget.rs"), "no memory row outside the entry");
}

/// Every `.rs` file under `dir`, test code included.
fn all_rust(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_rust(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The places a new algorithm must be written into besides its file, its line and its docs: every `const` or
/// `static` that lists two or more of the catalogue's algorithms by name (a test's fixed list, which the
/// test holds against the catalogue), anywhere in the workspace's code and tests but its benchmarks and
/// examples, as `path: NAME`.
fn fixed_lists() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["core", "check", "node", "controller", "tests", "fuzz"] {
        all_rust(&root().join(dir), &mut files);
    }
    let algo = root().join("core/src/algo");
    let quoted: Vec<String> = CATALOGUE.iter().map(|s| format!("\"{}\"", s.name)).collect();
    let mut found = Vec::new();
    // Benchmarks and examples are left out: their rows are a study someone chose, which no test holds a new
    // algorithm to.
    let skip = |f: &Path| {
        f.starts_with(&algo)
            || f.components().any(|c| ["target", "benches", "examples"].iter().any(|s| c.as_os_str() == *s))
    };
    for file in files.iter().filter(|f| !skip(f)) {
        let code = fs::read_to_string(file).unwrap();
        let mut rest = code.as_str();
        while let Some(at) = [rest.find("const "), rest.find("static ")].into_iter().flatten().min() {
            // The statement runs to the first `;` after its `=` (a type may hold one: `[&str; 3]`).
            let value = rest[at..].find('=').map_or(rest.len(), |j| at + j);
            let statement = &rest[at..rest[value..].find(';').map_or(rest.len(), |j| value + j)];
            let head = statement.split([':', '=']).next().unwrap_or_default();
            let name = head.split_whitespace().nth(1).unwrap_or_default();
            let named = quoted.iter().filter(|q| statement.contains(q.as_str())).count();
            if named >= 2 && name.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) {
                let path = file.strip_prefix(root()).unwrap().display().to_string();
                found.push(format!("{path}: {name}"));
            }
            rest = &rest[at + 6..];
        }
    }
    found
}

/// The walkthrough lists every place a test demands: each fixed list of algorithms in the workspace (a `const`
/// or `static` naming two or more) sits in a file the walkthrough names with the list's name, so that a newcomer
/// who follows it is not surprised by a failing test. A list the tests can derive from the catalogue's facts
/// should be derived instead (`core/tests/handover.rs` runs every kept entry).
#[test]
fn the_walkthrough_lists_every_fixed_list_of_algorithms() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let start = doc.find("## Adding an algorithm").expect("the walkthrough in docs/architecture.md");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let lists = fixed_lists();
    assert!(
        lists.contains(&"core/tests/clock_rate.rs: LEASED".to_string()),
        "the scan finds the one it must: {lists:?}"
    );
    let missing: Vec<&String> = lists
        .iter()
        .filter(|place| {
            let (path, name) = place.split_once(": ").unwrap();
            !(section.contains(&format!("`{path}`")) && section.contains(&format!("`{name}`")))
        })
        .collect();
    assert!(missing.is_empty(), "fixed lists of algorithms the walkthrough does not name: {missing:?} (of {lists:?})");
}
