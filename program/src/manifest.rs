//! `program.json`, the manifest: read from a JSON value field by field, so
//! that every wrong field is refused by its name
//! (``program.json: field `messages.election.fields[2]`: ...``), and a key
//! the manifest does not know is refused rather than ignored (a typo must
//! not pass silently).

use std::path::{Path, PathBuf};

use ringleader_core::protocol::Rule;
use ringleader_core::protocol::program::{MAX_FIELDS, MAX_KINDS};
use ringleader_core::spec::Assumptions;
use ringleader_core::topology::TopologyKind;
use serde_json::{Map, Value};

use crate::ProgramError;
use crate::formula::Formula;

/// The protocol versions this build speaks.
pub const PROTOCOLS: &[u64] = &[1];
/// Most timers a program names (slots 0..6; the failure detector owns 6 and 7).
pub const MAX_TIMERS: usize = 6;

/// Every topology a manifest may name, by its API name.
pub const TOPOLOGIES: &[TopologyKind] = &[
    TopologyKind::RingUni,
    TopologyKind::RingBi,
    TopologyKind::RingBiUnoriented,
    TopologyKind::Tree,
    TopologyKind::Mesh,
    TopologyKind::Complete,
    TopologyKind::Graph,
    TopologyKind::Torus,
    TopologyKind::Hypercube,
    TopologyKind::CompleteChordal,
];

/// A program's manifest, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The protocol version it speaks (1).
    pub protocol: u64,
    /// Its catalogue name, `^[a-z][a-z0-9-]{0,39}$`.
    pub name: String,
    /// Human title (the name when not given).
    pub title: String,
    /// Description ("" when not given).
    pub description: String,
    /// The command that runs it, in its directory.
    pub command: Vec<String>,
    /// Topologies it runs on; the first is the default.
    pub topologies: Vec<TopologyKind>,
    /// Which extremum it elects.
    pub rule: Rule,
    /// What it assumes of the network.
    pub assumptions: Assumptions,
    /// Its message kinds, in the sorted order of their names (a kind's
    /// index here is its index in [`ringleader_core::protocol::program::kind_of`]).
    pub messages: Vec<MessageKind>,
    /// Its timers' names; a timer's index is its slot.
    pub timers: Vec<String>,
    /// Its declared bound on all messages, if any.
    pub bound: Option<Formula>,
    /// The limits it asks for (each capped by the operator's [`crate::Limits`]).
    pub limits: RequestedLimits,
}

/// One message kind of a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageKind {
    /// Its name, `^[a-z][a-z0-9_]{0,31}$`.
    pub name: String,
    /// Its fields' names (0 to 4), carried as `a` to `d`.
    pub fields: Vec<String>,
    /// Counts as notification traffic (travels as `Msg::ProgramNotice`).
    pub notification: bool,
}

/// The limits a manifest asks for; `None`: the operator's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestedLimits {
    /// Wall-clock time per step, ms.
    pub step_ms: Option<u64>,
    /// Address space, MiB.
    pub memory_mib: Option<u64>,
    /// CPU time per process, s.
    pub cpu_s: Option<u64>,
    /// Longest reply line, bytes.
    pub line_bytes: Option<u64>,
}

impl Manifest {
    /// The index of the message kind named `name`.
    pub fn kind_index(&self, name: &str) -> Option<usize> {
        self.messages.iter().position(|k| k.name == name)
    }

    /// The slot of the timer named `name`.
    pub fn timer_slot(&self, name: &str) -> Option<usize> {
        self.timers.iter().position(|t| t == name)
    }

    /// Read the manifest at `path` (the name errors carry) from `text`.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, ProgramError> {
        let r = Reader { path: path.to_path_buf() };
        let value: Value = serde_json::from_str(text).map_err(|e| r.bad("", format!("not JSON: {e}")))?;
        let Value::Object(top) = value else {
            return Err(r.bad("", "not a JSON object"));
        };
        r.known_keys(
            &top,
            "",
            &[
                "$schema",
                "protocol",
                "name",
                "title",
                "description",
                "command",
                "topology",
                "rule",
                "assumptions",
                "messages",
                "timers",
                "bound",
                "limits",
            ],
        )?;
        let protocol = r.protocol(top.get("protocol"))?;
        let name = r.name(top.get("name"))?;
        let title = r.opt_text(&top, "title", 200)?.unwrap_or_else(|| name.clone());
        let description = r.opt_text(&top, "description", 4_000)?.unwrap_or_default();
        Ok(Manifest {
            protocol,
            command: r.command(top.get("command"))?,
            topologies: r.topologies(top.get("topology"))?,
            rule: r.rule(top.get("rule"))?,
            assumptions: r.assumptions(top.get("assumptions"))?,
            messages: r.messages(top.get("messages"))?,
            timers: r.timers(top.get("timers"))?,
            bound: r.bound(top.get("bound"))?,
            limits: r.limits(top.get("limits"))?,
            name,
            title,
            description,
        })
    }
}

/// Is `s` a name of `first` then up to `rest` of `more` (ASCII)?
pub(crate) fn is_name(s: &str, rest: usize, more: impl Fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= rest + 1 && b[0].is_ascii_lowercase() && b[1..].iter().all(|&c| more(c))
}

fn program_name(s: &str) -> bool {
    is_name(s, 39, |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

pub(crate) fn kind_name(s: &str) -> bool {
    is_name(s, 31, |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

/// What a JSON value is, in a word, for refusals.
pub(crate) fn what(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

struct Reader {
    path: PathBuf,
}

impl Reader {
    fn bad(&self, field: &str, reason: impl Into<String>) -> ProgramError {
        ProgramError::Manifest { path: self.path.clone(), field: field.to_string(), reason: reason.into() }
    }

    fn known_keys(&self, map: &Map<String, Value>, at: &str, known: &[&str]) -> Result<(), ProgramError> {
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let field = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                return Err(self.bad(&field, format!("unknown key; known: {}", known.join(", "))));
            }
        }
        Ok(())
    }

    fn protocol(&self, v: Option<&Value>) -> Result<u64, ProgramError> {
        let speaks = PROTOCOLS.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        match v {
            None => Err(self.bad("protocol", format!("missing; this build speaks protocol {speaks}"))),
            Some(v) => match v.as_u64() {
                Some(p) if PROTOCOLS.contains(&p) => Ok(p),
                _ => Err(self.bad("protocol", format!("{v} is not a protocol this build speaks ({speaks})"))),
            },
        }
    }

    fn name(&self, v: Option<&Value>) -> Result<String, ProgramError> {
        match v {
            None => Err(self.bad("name", "missing")),
            Some(Value::String(s)) if program_name(s) => Ok(s.clone()),
            Some(Value::String(s)) => Err(self.bad(
                "name",
                format!("`{s}` is not a name: a lower-case letter, then up to 39 lower-case letters, digits or `-`"),
            )),
            Some(v) => Err(self.bad("name", format!("{} is not a string", what(v)))),
        }
    }

    fn opt_text(&self, top: &Map<String, Value>, key: &str, max: usize) -> Result<Option<String>, ProgramError> {
        match top.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.len() <= max => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(self.bad(key, format!("longer than {max} bytes"))),
            Some(v) => Err(self.bad(key, format!("{} is not a string", what(v)))),
        }
    }

    fn command(&self, v: Option<&Value>) -> Result<Vec<String>, ProgramError> {
        let Some(v) = v else {
            return Err(self.bad("command", "missing: the program's argv, e.g. [\"python3\", \"main.py\"]"));
        };
        let Value::Array(items) = v else {
            return Err(self.bad("command", format!("{} is not an array of strings", what(v))));
        };
        if items.is_empty() {
            return Err(self.bad("command", "empty: it needs at least the program to run"));
        }
        if items.len() > 64 {
            return Err(self.bad("command", "more than 64 arguments"));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) if s.is_empty() && i == 0 => Err(self.bad("command[0]", "empty")),
                Value::String(s) if s.contains('\0') => Err(self.bad(&format!("command[{i}]"), "contains a NUL")),
                Value::String(s) => Ok(s.clone()),
                v => Err(self.bad(&format!("command[{i}]"), format!("{} is not a string", what(v)))),
            })
            .collect()
    }

    fn topology(&self, field: &str, v: &Value) -> Result<TopologyKind, ProgramError> {
        let names = TOPOLOGIES.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
        match v {
            Value::String(s) => TOPOLOGIES
                .iter()
                .find(|t| t.name() == s)
                .copied()
                .ok_or_else(|| self.bad(field, format!("`{s}` is not a topology; known: {names}"))),
            v => Err(self.bad(field, format!("{} is not a topology name ({names})", what(v)))),
        }
    }

    fn topologies(&self, v: Option<&Value>) -> Result<Vec<TopologyKind>, ProgramError> {
        match v {
            None => Err(self.bad("topology", "missing: a topology name or an array of them (the first the default)")),
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    return Err(self.bad("topology", "empty: name at least one topology"));
                }
                let mut kinds = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let t = self.topology(&format!("topology[{i}]"), item)?;
                    if kinds.contains(&t) {
                        return Err(self.bad(&format!("topology[{i}]"), format!("{} is named twice", t.name())));
                    }
                    kinds.push(t);
                }
                Ok(kinds)
            }
            Some(v) => Ok(vec![self.topology("topology", v)?]),
        }
    }

    fn rule(&self, v: Option<&Value>) -> Result<Rule, ProgramError> {
        match v {
            None => Err(self.bad("rule", "missing: \"max\" or \"min\"")),
            Some(Value::String(s)) if s == "max" => Ok(Rule::Max),
            Some(Value::String(s)) if s == "min" => Ok(Rule::Min),
            Some(v) => Err(self.bad("rule", format!("{v} is not \"max\" or \"min\""))),
        }
    }

    fn flag(&self, map: &Map<String, Value>, at: &str, key: &str) -> Result<bool, ProgramError> {
        match map.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.bad(&format!("{at}.{key}"), format!("{} is not true or false", what(v)))),
        }
    }

    fn assumptions(&self, v: Option<&Value>) -> Result<Assumptions, ProgramError> {
        let none = Assumptions { bidirectional: false, oriented: false, fifo: false };
        match v {
            None => Ok(none),
            Some(Value::Object(map)) => {
                self.known_keys(map, "assumptions", &["bidirectional", "oriented", "fifo"])?;
                Ok(Assumptions {
                    bidirectional: self.flag(map, "assumptions", "bidirectional")?,
                    oriented: self.flag(map, "assumptions", "oriented")?,
                    fifo: self.flag(map, "assumptions", "fifo")?,
                })
            }
            Some(v) => Err(self.bad("assumptions", format!("{} is not an object", what(v)))),
        }
    }

    fn messages(&self, v: Option<&Value>) -> Result<Vec<MessageKind>, ProgramError> {
        let map = match v {
            None => {
                return Err(
                    self.bad("messages", "missing: the message kinds, e.g. {\"election\": {\"fields\": [\"id\"]}}")
                );
            }
            Some(Value::Object(map)) => map,
            Some(v) => return Err(self.bad("messages", format!("{} is not an object of message kinds", what(v)))),
        };
        if map.is_empty() || map.len() > MAX_KINDS {
            return Err(self.bad("messages", format!("{} kinds: a program declares 1 to {MAX_KINDS}", map.len())));
        }
        // serde_json's map is sorted by key: the kinds' indices are the sorted order of their names.
        map.iter().map(|(name, kind)| self.kind(name, kind)).collect()
    }

    fn kind(&self, name: &str, v: &Value) -> Result<MessageKind, ProgramError> {
        let at = format!("messages.{name}");
        if !kind_name(name) {
            return Err(self.bad(
                &at,
                format!(
                    "`{name}` is not a kind name: a lower-case letter, then up to 31 lower-case letters, digits or `_`"
                ),
            ));
        }
        let Value::Object(map) = v else {
            return Err(self.bad(&at, format!("{} is not an object", what(v))));
        };
        self.known_keys(map, &at, &["fields", "notification"])?;
        let fields = match map.get("fields") {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                if items.len() > MAX_FIELDS {
                    return Err(self.bad(
                        &format!("{at}.fields"),
                        format!("{} fields: a kind carries at most {MAX_FIELDS}", items.len()),
                    ));
                }
                let mut fields: Vec<String> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let field = format!("{at}.fields[{i}]");
                    match item {
                        Value::String(s) if !kind_name(s) => {
                            return Err(self.bad(
                                &field,
                                format!("`{s}` is not a field name: a lower-case letter, then up to 31 lower-case letters, digits or `_`"),
                            ));
                        }
                        Value::String(s) if fields.contains(s) => {
                            return Err(self.bad(&field, format!("`{s}` is named twice")));
                        }
                        Value::String(s) => fields.push(s.clone()),
                        v => return Err(self.bad(&field, format!("{} is not a string", what(v)))),
                    }
                }
                fields
            }
            Some(v) => return Err(self.bad(&format!("{at}.fields"), format!("{} is not an array of names", what(v)))),
        };
        Ok(MessageKind { name: name.to_string(), fields, notification: self.flag(map, &at, "notification")? })
    }

    fn timers(&self, v: Option<&Value>) -> Result<Vec<String>, ProgramError> {
        let items = match v {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(v) => return Err(self.bad("timers", format!("{} is not an array of names", what(v)))),
        };
        if items.len() > MAX_TIMERS {
            return Err(self.bad("timers", format!("{} timers: a program names at most {MAX_TIMERS}", items.len())));
        }
        let mut timers: Vec<String> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = format!("timers[{i}]");
            match item {
                Value::String(s) if !kind_name(s) => {
                    return Err(self.bad(
                        &field,
                        format!("`{s}` is not a timer name: a lower-case letter, then up to 31 lower-case letters, digits or `_`"),
                    ));
                }
                Value::String(s) if timers.contains(s) => return Err(self.bad(&field, format!("`{s}` is named twice"))),
                Value::String(s) => timers.push(s.clone()),
                v => return Err(self.bad(&field, format!("{} is not a string", what(v)))),
            }
        }
        Ok(timers)
    }

    fn bound(&self, v: Option<&Value>) -> Result<Option<Formula>, ProgramError> {
        match v {
            None => Ok(None),
            Some(Value::String(s)) => Formula::parse(s).map(Some).map_err(|e| self.bad("bound", e.to_string())),
            Some(v) => {
                Err(self.bad("bound", format!("{} is not a formula (a string such as \"n*(n+1)/2 + n\")", what(v))))
            }
        }
    }

    fn limits(&self, v: Option<&Value>) -> Result<RequestedLimits, ProgramError> {
        let map = match v {
            None => return Ok(RequestedLimits::default()),
            Some(Value::Object(map)) => map,
            Some(v) => return Err(self.bad("limits", format!("{} is not an object", what(v)))),
        };
        self.known_keys(map, "limits", &["step_ms", "memory_mib", "cpu_s", "line_bytes"])?;
        let get = |key: &str| -> Result<Option<u64>, ProgramError> {
            match map.get(key) {
                None => Ok(None),
                Some(v) => match v.as_u64() {
                    Some(x) if x > 0 => Ok(Some(x)),
                    _ => Err(self.bad(&format!("limits.{key}"), format!("{v} is not a positive integer"))),
                },
            }
        };
        Ok(RequestedLimits {
            step_ms: get("step_ms")?,
            memory_mib: get("memory_mib")?,
            cpu_s: get("cpu_s")?,
            line_bytes: get("line_bytes")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
      "protocol": 1,
      "name": "chang-roberts-py",
      "title": "Chang-Roberts (Python)",
      "command": ["python3", "chang_roberts.py"],
      "topology": "RING_UNIDIRECTIONAL",
      "rule": "max",
      "assumptions": {"bidirectional": false, "oriented": true, "fifo": false},
      "messages": {
        "election": {"fields": ["id"]},
        "elected":  {"fields": ["id"], "notification": true}
      },
      "timers": ["timeout"],
      "bound": "n*(n+1)/2 + n"
    }"#;

    /// The design's example manifest reads whole: kinds sorted by name, defaults filled in.
    #[test]
    fn the_example_manifest_reads() {
        let m = Manifest::parse(Path::new("program.json"), GOOD).unwrap();
        assert_eq!(m.name, "chang-roberts-py");
        assert_eq!(m.topologies, vec![TopologyKind::RingUni]);
        assert_eq!(m.rule, Rule::Max);
        assert!(m.assumptions.oriented && !m.assumptions.fifo);
        assert_eq!(m.messages.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["elected", "election"]);
        assert!(m.messages[0].notification && !m.messages[1].notification);
        assert_eq!(m.kind_index("election"), Some(1));
        assert_eq!(m.timer_slot("timeout"), Some(0));
        assert_eq!(m.bound.as_ref().unwrap().eval(5, 5), 20);
        assert_eq!(m.description, "");
        assert_eq!(m.limits, RequestedLimits::default());
    }

    /// Every wrong field is refused by its name, with a reason saying what is wrong.
    #[test]
    fn bad_manifests_name_their_field() {
        let good: Value = serde_json::from_str(GOOD).unwrap();
        let cases: &[(&str, Value, &str, &str)] = &[
            ("protocol", serde_json::json!(2), "protocol", "this build speaks (1)"),
            ("name", serde_json::json!("Chang Roberts"), "name", "is not a name"),
            ("name", serde_json::json!(7), "name", "a number is not a string"),
            ("command", serde_json::json!([]), "command", "empty"),
            ("command", serde_json::json!(["python3", 3]), "command[1]", "a number is not a string"),
            ("topology", serde_json::json!("MOBIUS_STRIP"), "topology", "`MOBIUS_STRIP` is not a topology"),
            ("topology", serde_json::json!(["TREE", "RING"]), "topology[1]", "`RING` is not a topology"),
            ("topology", serde_json::json!(["TREE", "TREE"]), "topology[1]", "named twice"),
            ("rule", serde_json::json!("biggest"), "rule", "is not \"max\" or \"min\""),
            ("assumptions", serde_json::json!({"fifo": "yes"}), "assumptions.fifo", "a string is not true or false"),
            ("assumptions", serde_json::json!({"fast": true}), "assumptions.fast", "unknown key"),
            ("messages", serde_json::json!({}), "messages", "0 kinds"),
            (
                "messages",
                serde_json::json!({"election": {"fields": ["id", "hop", "Phase"]}}),
                "messages.election.fields[2]",
                "`Phase` is not a field name",
            ),
            (
                "messages",
                serde_json::json!({"election": {"fields": ["a", "b", "c", "d", "e"]}}),
                "messages.election.fields",
                "5 fields",
            ),
            (
                "messages",
                serde_json::json!({"election": {"fields": ["id", "id"]}}),
                "messages.election.fields[1]",
                "twice",
            ),
            ("messages", serde_json::json!({"Election": {}}), "messages.Election", "not a kind name"),
            ("messages", serde_json::json!({"election": {"field": ["id"]}}), "messages.election.field", "unknown key"),
            (
                "messages",
                serde_json::json!({"election": {"notification": 1}}),
                "messages.election.notification",
                "a number is not true or false",
            ),
            ("timers", serde_json::json!(["a", "b", "c", "d", "e", "f", "g"]), "timers", "7 timers"),
            ("timers", serde_json::json!(["ok", "Not ok"]), "timers[1]", "not a timer name"),
            ("bound", serde_json::json!("n * (n + 1"), "bound", "expected `)`"),
            ("bound", serde_json::json!(12), "bound", "a number is not a formula"),
            ("limits", serde_json::json!({"step_ms": 0}), "limits.step_ms", "not a positive integer"),
            ("limits", serde_json::json!({"stepms": 10}), "limits.stepms", "unknown key"),
            ("title", serde_json::json!(["x"]), "title", "an array is not a string"),
            ("colour", serde_json::json!("blue"), "colour", "unknown key"),
        ];
        for (key, value, field, words) in cases {
            let mut m = good.clone();
            m[*key] = value.clone();
            let e = Manifest::parse(Path::new("program.json"), &m.to_string()).expect_err(field);
            let ProgramError::Manifest { field: got, reason, .. } = &e else { panic!("{field}: {e}") };
            assert_eq!(got, field, "{e}");
            assert!(reason.contains(words), "{field}: {e}");
            assert!(e.to_string().starts_with(&format!("program.json: field `{field}`: ")), "{e}");
        }
        for missing in ["protocol", "name", "command", "topology", "rule", "messages"] {
            let mut m = good.clone();
            m.as_object_mut().unwrap().remove(missing);
            let e = Manifest::parse(Path::new("program.json"), &m.to_string()).expect_err(missing);
            assert!(e.to_string().contains(&format!("field `{missing}`: missing")), "{e}");
        }
        let e = Manifest::parse(Path::new("program.json"), "{\"protocol\": 1,").unwrap_err();
        assert!(e.to_string().starts_with("program.json: not JSON: "), "{e}");
    }
}
