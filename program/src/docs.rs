//! docs/programs.md cannot drift from the crate: every JSON example in it
//! parses with the crate's own parsers, as what its code block says it is,
//! and docs/programs.schema.json defines every form.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::manifest::Manifest;
use crate::wire;

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

/// The ```` ```json <form> ```` blocks of `text`: (form, body).
fn json_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```json") {
                    open = Some((info.trim().to_string(), String::new()));
                }
            }
            Some((form, body)) => {
                if line.starts_with("```") {
                    blocks.push((std::mem::take(form), std::mem::take(body)));
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "an unclosed ```json block");
    blocks
}

/// Every JSON example of the manual is what its block says: the manifest reads, each request is
/// one this side writes for that manifest, each reply, input and output is taken by the crate.
#[test]
fn the_manuals_examples_parse_with_the_crates_parsers() {
    let text = std::fs::read_to_string(docs().join("programs.md")).unwrap();
    let blocks = json_blocks(&text);
    let (_, manifest) = blocks.iter().find(|(form, _)| form == "manifest").expect("a manifest example");
    let m = Manifest::parse(Path::new("program.json"), manifest).unwrap();
    let names = |s: &str| crate::intern(s);
    let mut seen = std::collections::BTreeSet::new();
    for (form, body) in &blocks {
        let line: String =
            serde_json::from_str::<Value>(body).unwrap_or_else(|e| panic!("{form}: {e}\n{body}")).to_string();
        let parsed = match form.as_str() {
            "manifest" => Manifest::parse(Path::new("program.json"), body).map(drop).map_err(|e| e.to_string()),
            "request" => wire::parse_request(&m, &line).map(drop),
            "input" => wire::parse_input(&m, &serde_json::from_str(&line).unwrap()),
            "reply-init" => wire::parse_reply(&m, &line, true, &names).map(drop),
            "reply" => wire::parse_reply(&m, &line, false, &names).map(drop),
            "reply-error" => match wire::parse_reply(&m, &line, false, &names) {
                Err(e) if e.starts_with("the program said: ") => Ok(()),
                other => Err(format!("not an error reply: {other:?}")),
            },
            "output" => {
                let reply = format!("{{\"state\": 0, \"out\": [{line}]}}");
                wire::parse_reply(&m, &reply, false, &names).map(drop)
            }
            other => panic!(
                "a ```json block of no known form: `{other}` (manifest, request, input, reply-init, reply, reply-error, output)"
            ),
        };
        parsed.unwrap_or_else(|e| panic!("{form}: {e}\n{body}"));
        seen.insert(form.as_str());
    }
    assert_eq!(seen.len(), 7, "every form has an example: {seen:?}");
    let outputs: Vec<String> = blocks
        .iter()
        .filter(|(form, _)| form == "output")
        .map(|(_, body)| serde_json::from_str::<Value>(body).unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    for ty in ["send", "decide", "set_timer", "cancel_timer", "lead", "persist", "handing_over"] {
        assert!(outputs.iter().any(|o| o == ty), "no example of output `{ty}`");
    }
    let inputs: Vec<String> = blocks
        .iter()
        .filter(|(form, _)| form == "input")
        .map(|(_, body)| serde_json::from_str::<Value>(body).unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    for ty in ["start", "message", "timer", "suspect", "heartbeat", "leave", "restore"] {
        assert!(inputs.iter().any(|i| i == ty), "no example of input `{ty}`");
    }
}

/// The JSON Schema is JSON of draft 2020-12 and defines the manifest, each request, each reply,
/// and each input and output type the crate takes.
#[test]
fn the_schema_defines_every_form() {
    let text = std::fs::read_to_string(docs().join("programs.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["$ref"], "#/$defs/manifest");
    let defs = schema["$defs"].as_object().unwrap();
    let mut wanted = vec![
        "manifest".to_string(),
        "init_request".into(),
        "step_request".into(),
        "init_reply".into(),
        "step_reply".into(),
        "error_reply".into(),
        "input".into(),
        "output".into(),
    ];
    wanted.extend(
        ["start", "message", "timer", "suspect", "heartbeat", "leave", "restore"].map(|t| format!("input_{t}")),
    );
    wanted.extend(
        ["send", "decide", "set_timer", "cancel_timer", "lead", "persist", "handing_over"]
            .map(|t| format!("output_{t}")),
    );
    for name in wanted {
        assert!(defs.contains_key(&name), "$defs lacks {name}");
    }
    // Every $ref points at a definition.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.clone());
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(&schema, &mut all);
    for r in all {
        let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{r}"));
        assert!(defs.contains_key(name), "{r} points nowhere");
    }
}
