//! The pictures in docs/, as a reader's browser draws them: chromium lays out
//! every SVG under docs/ with its real fonts, and the test measures each text
//! label's box. No two labels may overlap, none may cover the mark of a
//! swallowed id or stick out of the picture (the legend is inside it), and no
//! picture may be wider than a page comfortably shows.
//!
//! Needs `chromedriver` and `chromium` (see t10); skipped without them,
//! except in CI.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::browser::{Browser, chromedriver};

/// The widest a picture in docs/ may be, in CSS pixels.
const MAX_WIDTH: f64 = 1_040.0;

/// Every SVG file under `dir`, sorted.
fn pictures(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "svg") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The overlapping pairs of text labels in the picture open in `browser` (each label's words and
/// box), the labels over a swallowed id's mark or out of the picture, the picture's width and its
/// number of swallowed ids' marks. Two boxes overlap if they share more than a pixel each way.
fn overlaps(browser: &Browser) -> (Vec<String>, f64, u64) {
    let v = browser.run(
        "const svg = document.documentElement;
         const boxes = Array.from(document.querySelectorAll('text'))
           .filter(t => t.textContent.trim() !== '' && t.getAttribute('display') !== 'none')
           .map(t => { const r = t.getBoundingClientRect();
                       return {t: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; });
         const out = [];
         for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
           const a = boxes[i], b = boxes[j];
           const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
           if (w > 1 && h > 1) out.push(`\"${a.t}\" and \"${b.t}\" (${w.toFixed(0)} x ${h.toFixed(0)} px at ${a.x0.toFixed(0)},${a.y0.toFixed(0)})`);
         }
         const page = svg.getBoundingClientRect();
         for (const a of boxes) {
           if (a.x0 < page.left - 1 || a.y0 < page.top - 1 || a.x1 > page.right + 1 || a.y1 > page.bottom + 1)
             out.push(`\"${a.t}\" out of the picture (at ${a.x0.toFixed(0)},${a.y0.toFixed(0)})`);
           for (const m of document.querySelectorAll('.swallowed circle')) {
             const r = m.getBoundingClientRect();
             const w = Math.min(a.x1, r.right) - Math.max(a.x0, r.left), h = Math.min(a.y1, r.bottom) - Math.max(a.y0, r.top);
             if (w > 1 && h > 1) out.push(`\"${a.t}\" over a swallowed id's mark at ${r.left.toFixed(0)},${r.top.toFixed(0)}`);
           }
         }
         return [out, svg.getBoundingClientRect().width, document.querySelectorAll('.swallowed').length];",
    );
    let pairs = v[0].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
    (pairs, v[1].as_f64().unwrap_or(0.0), v[2].as_u64().unwrap_or(0))
}

/// Every picture under docs/, laid out by chromium: no two text labels overlap, none covers a
/// swallowed id's mark (there are some) or sticks out of the picture, and none is wider than
/// about a page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_label_in_the_docs_pictures_overprints_another() {
    let Some(driver) = chromedriver() else { return };
    let docs = ringleader_tests::workspace_root().join("docs");
    let files = pictures(&docs);
    assert!(files.len() >= 10, "the pictures of docs/: {files:?}");
    let (found, marks) = tokio::task::spawn_blocking(move || {
        let browser = Browser::start(&driver);
        let (mut found, mut marks) = (Vec::new(), 0);
        for f in &files {
            browser.go(&format!("file://{}", f.display()));
            let (pairs, width, swallowed) = overlaps(&browser);
            let name = f.strip_prefix(&docs).unwrap_or(f).display().to_string();
            if width > MAX_WIDTH {
                found.push(format!("{name}: {width:.0} px wide"));
            }
            found.extend(pairs.into_iter().map(|p| format!("{name}: {p}")));
            marks += swallowed;
        }
        (found, marks)
    })
    .await
    .unwrap();
    assert!(found.is_empty(), "{} problems:\n{}", found.len(), found.join("\n"));
    assert!(marks > 0, "the ring pictures mark swallowed ids, so their check is not empty");
}
