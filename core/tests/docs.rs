//! docs/algorithms.md against the catalogue: each algorithm's facts are
//! written in its file (its `//!` header and catalogue entry) and summed up
//! in the docs' table; this test keeps the table true to the code.

use ringleader_core::algo::catalogue::CATALOGUE;

/// The rows of the table under "## The algorithms": (name, winner, bound cell).
fn table(doc: &str) -> Vec<(String, String, String)> {
    let start = doc.find("## The algorithms").expect("the algorithms section");
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| name |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 5, "a row of five cells: {l}");
            (cells[0].trim_matches('`').to_string(), cells[2].to_string(), cells[3].to_string())
        })
        .collect()
}

/// The catalogue's formula up to its first remark (" (", " if " or ", " outside parentheses).
fn head(formula: &str) -> &str {
    let mut depth = 0;
    for (i, c) in formula.char_indices() {
        match c {
            '(' if depth == 0 && formula[..i].ends_with(' ') => return formula[..i - 1].trim_end(),
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | ' ' if depth == 0 && (formula[i..].starts_with(", ") || formula[i..].starts_with(" if ")) => {
                return &formula[..i];
            }
            _ => {}
        }
    }
    formula
}

/// The docs' typeset formula and the catalogue's ASCII one, in one notation.
fn normal(s: &str) -> String {
    let mut s = s.to_string();
    for (from, to) in [
        ("−", "-"),
        ("²", "^2"),
        ("⌊log n⌋", "floor(log2 n)"),
        ("⌈log n⌉", "ceil(log2 n)"),
        ("⌊log₃ n⌋", "floor(log3 n)"),
        ("≤", "<="),
        ("…", "..."),
    ] {
        s = s.replace(from, to);
    }
    s.chars().filter(|c| !matches!(c, ' ' | '*' | '·')).collect()
}

/// Every catalogue algorithm has one row and one section in docs/algorithms.md and nothing else does; its row
/// names its rule as the winner, says "exact" exactly when the catalogue has an exact count, and shows the
/// catalogue's bound formula.
#[test]
fn docs_algorithms_table_matches_the_catalogue() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/algorithms.md")).unwrap();
    let rows = table(&doc);
    let mut names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let mut catalogue: Vec<&str> = CATALOGUE.iter().map(|s| s.name).collect();
    names.sort_unstable();
    catalogue.sort_unstable();
    assert_eq!(names, catalogue, "the table lists the catalogue, each once");
    for spec in CATALOGUE {
        let (name, winner, bound) = rows.iter().find(|r| r.0 == spec.name).unwrap();
        assert!(winner.starts_with(spec.rule.as_str()), "{name}: winner {winner:?}, rule {:?}", spec.rule);
        assert_eq!(bound.contains("exact"), spec.extras.exact.is_some(), "{name}: {bound:?}");
        let formula = head(spec.bound_formula);
        assert!(normal(bound).contains(&normal(formula)), "{name}: the table's bound {bound:?} lacks {formula:?}");
        assert_eq!(doc.matches(&format!("(`{name}`)\n")).count(), 1, "{name}: one section");
    }
}
