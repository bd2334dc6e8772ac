//! The wire of protocol 1: the requests this side writes (`init`, `step`
//! with an input) and the replies it reads, checked field by field. A
//! reply's fault is told as ``reply field `out[2].port`: ...``, the `<what>`
//! of a failure text (docs/programs.md).

use std::sync::Arc;

use ringleader_core::protocol::{
    Compass, Decision, Leadership, MAX_TERM, Msg, NodeContext, Role, Stable, program::MAX_FIELDS,
};
use serde_json::{Map, Value, json};

use crate::manifest::{Manifest, is_name, what};

/// Most outputs one reply may carry.
pub(crate) const MAX_OUTPUTS: usize = 1_024;
/// Longest delay a timer may be set for, ms (an hour).
pub(crate) const MAX_AFTER_MS: u64 = 3_600_000;
/// Largest integer a field, id or term may hold: 2^53 − 1.
pub(crate) const MAX_INT: u64 = MAX_TERM;
/// Longest text of a program's `{"error": ...}` kept in the failure text.
const MAX_ERROR_CHARS: usize = 500;

/// A checked reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reply {
    /// The new state, as canonical JSON text (keys sorted).
    pub(crate) state: Arc<str>,
    /// The state's name as shown.
    pub(crate) name: &'static str,
    /// The outputs, in order.
    pub(crate) out: Vec<Output>,
}

/// One output of a reply, checked against the manifest (ports are checked
/// against the node by the node).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// Send a message of kind `kind` (its index) with `fields` (`a` to `d`).
    Send {
        port: u64,
        kind: usize,
        fields: [u64; MAX_FIELDS],
    },
    Decide(Decision),
    SetTimer {
        slot: u32,
        after_ms: u64,
    },
    CancelTimer {
        slot: u32,
    },
    Lead(Leadership),
    Persist(Stable),
    HandingOver,
}

/// The `init` request of the node `c` describes.
pub(crate) fn init_request(c: &NodeContext) -> String {
    let ports: Vec<Value> = (0..c.ports)
        .map(|p| {
            let info = c.port_info.get(p as usize).copied().unwrap_or_default();
            let mut port = json!({"port": p, "neighbour": info.neighbour});
            let label = match info.label {
                Compass::None => None,
                Compass::North => Some("north"),
                Compass::East => Some("east"),
                Compass::South => Some("south"),
                Compass::West => Some("west"),
            };
            if let Some(label) = label {
                port["label"] = json!(label);
            }
            port
        })
        .collect();
    let options: Map<String, Value> = c.options.0.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let n = if c.n == 0 { Value::Null } else { json!(c.n) };
    let node = json!({
        "id": c.id,
        "n": n,
        "rule": c.rule.as_str(),
        "coin": c.coin & MAX_INT,
        "ports": ports,
        "options": options,
    });
    json!({"op": "init", "node": node}).to_string()
}

/// The `step` request for `state` (canonical JSON) and `input` (JSON).
pub(crate) fn step_request(state: &str, input: &Value) -> String {
    format!("{{\"op\":\"step\",\"state\":{state},\"input\":{input}}}")
}

/// The JSON of a message input: `{"type":"message","port":1,"kind":"election","fields":{"id":7}}`.
pub(crate) fn message_input(m: &Manifest, port: u32, kind: usize, values: [u64; MAX_FIELDS]) -> Value {
    let k = &m.messages[kind];
    let fields: Map<String, Value> = k.fields.iter().zip(values).map(|(f, v)| (f.clone(), json!(v))).collect();
    json!({"type": "message", "port": port, "kind": k.name, "fields": fields})
}

/// The fields of a program's message: `a` to `d`.
pub(crate) fn msg_fields(msg: &Msg) -> Option<(u32, [u64; MAX_FIELDS], bool)> {
    match *msg {
        Msg::Program { kind, a, b, c, d } => Some((kind, [a, b, c, d], false)),
        Msg::ProgramNotice { kind, a, b, c, d } => Some((kind, [a, b, c, d], true)),
        _ => None,
    }
}

fn bad(field: &str, why: impl std::fmt::Display) -> String {
    format!("reply field `{field}`: {why}")
}

/// Refuse any key of `map` not in `known`, naming it as a field of `at`.
fn known_keys(map: &Map<String, Value>, at: &str, known: &[&str]) -> Result<(), String> {
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let field = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
            return Err(bad(&field, format!("unknown key; known: {}", known.join(", "))));
        }
    }
    Ok(())
}

fn int(v: Option<&Value>, field: &str, max: u64) -> Result<u64, String> {
    match v {
        None => Err(bad(field, "missing")),
        Some(v) => match v.as_u64() {
            Some(x) if x <= max => Ok(x),
            _ => Err(bad(field, format!("{} is not an integer from 0 to {max}", short(v)))),
        },
    }
}

fn opt_int(v: Option<&Value>, field: &str) -> Result<Option<u64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        v => int(v, field, MAX_INT).map(Some),
    }
}

fn string<'a>(v: Option<&'a Value>, field: &str) -> Result<&'a str, String> {
    match v {
        None => Err(bad(field, "missing")),
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(bad(field, format!("{} is not a string", what(v)))),
    }
}

/// `v` in at most 40 characters, for a refusal.
fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 40 { text } else { format!("{}...", text.chars().take(40).collect::<String>()) }
}

/// Check one reply line: an `init` reply (`init`: no outputs) or a `step`
/// reply. `names` interns the state's name.
pub(crate) fn parse_reply(
    m: &Manifest,
    line: &str,
    init: bool,
    names: &dyn Fn(&str) -> &'static str,
) -> Result<Reply, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("reply is not JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err(format!("reply is {}, not a JSON object", what(&value)));
    };
    if let Some(error) = map.get("error") {
        let text = match error {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let text: String = text.chars().take(MAX_ERROR_CHARS).collect();
        return Err(format!("the program said: {text}"));
    }
    known_keys(&map, "", if init { &["state", "name"] } else { &["state", "name", "out"] })?;
    let state = match map.get("state") {
        None => return Err(bad("state", "missing (a reply gives the node's new state)")),
        Some(s) => Arc::from(s.to_string()),
    };
    let name = match map.get("name") {
        None => names("running"),
        Some(Value::String(s)) if state_name(s) => names(s),
        Some(Value::String(s)) => {
            return Err(bad(
                "name",
                format!(
                    "`{}` is not a state name: a lower-case letter, then up to 31 lower-case letters, digits, `_` or `-`",
                    s.chars().take(40).collect::<String>()
                ),
            ));
        }
        Some(v) => return Err(bad("name", format!("{} is not a string", what(v)))),
    };
    let out = match map.get("out") {
        None => Vec::new(),
        Some(Value::Array(items)) if items.len() > MAX_OUTPUTS => {
            return Err(bad("out", format!("{} outputs: a reply carries at most {MAX_OUTPUTS}", items.len())));
        }
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, o)| output(m, o, &format!("out[{i}]"))).collect::<Result<_, _>>()?
        }
        Some(v) => return Err(bad("out", format!("{} is not an array of outputs", what(v)))),
    };
    Ok(Reply { state, name, out })
}

/// Refuse a reply that sends on a port beyond `ports` (the node's port count).
pub(crate) fn check_ports(reply: &Reply, ports: u32) -> Result<(), String> {
    for (i, o) in reply.out.iter().enumerate() {
        if let Output::Send { port, .. } = *o
            && port >= u64::from(ports)
        {
            return Err(bad(&format!("out[{i}].port"), format!("{port} is not a port of this node (it has {ports})")));
        }
    }
    Ok(())
}

fn state_name(s: &str) -> bool {
    is_name(s, 31, |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
}

const OUTPUT_TYPES: &str = "send, decide, set_timer, cancel_timer, lead, persist, handing_over";

fn output(m: &Manifest, v: &Value, at: &str) -> Result<Output, String> {
    let Value::Object(o) = v else {
        return Err(bad(at, format!("{} is not an output object", what(v))));
    };
    let field = |key: &str| format!("{at}.{key}");
    let ty = string(o.get("type"), &field("type"))?;
    let timer = |key: &str| -> Result<u32, String> {
        let name = string(o.get(key), &field(key))?;
        m.timer_slot(name).map(|s| s as u32).ok_or_else(|| {
            let known = if m.timers.is_empty() { "the manifest names none".into() } else { m.timers.join(", ") };
            bad(&field(key), format!("`{name}` is not a timer of the manifest ({known})"))
        })
    };
    match ty {
        "send" => {
            known_keys(o, at, &["type", "port", "kind", "fields"])?;
            let port = int(o.get("port"), &field("port"), u64::from(u32::MAX))?;
            let name = string(o.get("kind"), &field("kind"))?;
            let Some(kind) = m.kind_index(name) else {
                let known: Vec<&str> = m.messages.iter().map(|k| k.name.as_str()).collect();
                return Err(bad(
                    &field("kind"),
                    format!("`{name}` is not a message kind of the manifest ({})", known.join(", ")),
                ));
            };
            let mut fields = [0; MAX_FIELDS];
            match o.get("fields") {
                None => {}
                Some(Value::Object(f)) => {
                    let declared = &m.messages[kind].fields;
                    for (key, value) in f {
                        let at = format!("{at}.fields.{key}");
                        let Some(i) = declared.iter().position(|d| d == key) else {
                            let known = if declared.is_empty() { "it has none".into() } else { declared.join(", ") };
                            return Err(bad(&at, format!("`{name}` messages have no field `{key}` ({known})")));
                        };
                        fields[i] = int(Some(value), &at, MAX_INT)?;
                    }
                }
                Some(v) => return Err(bad(&field("fields"), format!("{} is not an object of fields", what(v)))),
            }
            Ok(Output::Send { port, kind, fields })
        }
        "decide" => {
            known_keys(o, at, &["type", "role", "leader"])?;
            let role = match string(o.get("role"), &field("role"))? {
                "leader" => Role::Leader,
                "follower" => Role::Follower,
                other => return Err(bad(&field("role"), format!("`{other}` is not \"leader\" or \"follower\""))),
            };
            Ok(Output::Decide(Decision { role, leader: int(o.get("leader"), &field("leader"), MAX_INT)? }))
        }
        "set_timer" => {
            known_keys(o, at, &["type", "timer", "after_ms"])?;
            let slot = timer("timer")?;
            Ok(Output::SetTimer { slot, after_ms: int(o.get("after_ms"), &field("after_ms"), MAX_AFTER_MS)? })
        }
        "cancel_timer" => {
            known_keys(o, at, &["type", "timer"])?;
            Ok(Output::CancelTimer { slot: timer("timer")? })
        }
        "lead" => {
            known_keys(o, at, &["type", "term", "leader"])?;
            let term = int(o.get("term"), &field("term"), MAX_INT)?;
            if !o.contains_key("leader") {
                return Err(bad(&field("leader"), "missing (an id, or null while no leader is known)"));
            }
            Ok(Output::Lead(Leadership { term, leader: opt_int(o.get("leader"), &field("leader"))? }))
        }
        "persist" => {
            known_keys(o, at, &["type", "term", "vote"])?;
            let term = int(o.get("term"), &field("term"), MAX_INT)?;
            if !o.contains_key("vote") {
                return Err(bad(&field("vote"), "missing (an id, or null for no vote)"));
            }
            Ok(Output::Persist(Stable { term, vote: opt_int(o.get("vote"), &field("vote"))? }))
        }
        "handing_over" => {
            known_keys(o, at, &["type"])?;
            Ok(Output::HandingOver)
        }
        other => Err(bad(
            &field("type"),
            format!("`{}` is not an output type ({OUTPUT_TYPES})", other.chars().take(40).collect::<String>()),
        )),
    }
}

/// A request read back, for the tests (the docs' examples, round trips).
#[cfg(test)]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Init(Value),
    Step { state: Value, input: Value },
}

/// Read a request and check it as this side writes them: `init` with the
/// node's facts, or `step` with a state and an input of the manifest.
#[cfg(test)]
pub(crate) fn parse_request(m: &Manifest, line: &str) -> Result<Request, String> {
    let Value::Object(r) = serde_json::from_str::<Value>(line).map_err(|e| e.to_string())? else {
        return Err("not an object".into());
    };
    match r.get("op").and_then(Value::as_str) {
        Some("init") => {
            known_keys(&r, "", &["op", "node"])?;
            let Some(Value::Object(node)) = r.get("node") else { return Err("node: not an object".into()) };
            known_keys(node, "node", &["id", "n", "rule", "coin", "ports", "options"])?;
            int(node.get("id"), "node.id", MAX_INT)?;
            opt_int(node.get("n"), "node.n")?;
            int(node.get("coin"), "node.coin", MAX_INT)?;
            if !matches!(string(node.get("rule"), "node.rule")?, "max" | "min") {
                return Err("node.rule".into());
            }
            let Some(Value::Array(ports)) = node.get("ports") else { return Err("node.ports".into()) };
            for (i, p) in ports.iter().enumerate() {
                let Value::Object(p) = p else { return Err(format!("node.ports[{i}]")) };
                known_keys(p, &format!("node.ports[{i}]"), &["port", "neighbour", "label"])?;
                int(p.get("port"), "port", u64::from(u32::MAX))?;
                int(p.get("neighbour"), "neighbour", MAX_INT)?;
            }
            Ok(Request::Init(Value::Object(node.clone())))
        }
        Some("step") => {
            known_keys(&r, "", &["op", "state", "input"])?;
            let state = r.get("state").cloned().ok_or("state missing")?;
            let input = r.get("input").cloned().ok_or("input missing")?;
            parse_input(m, &input)?;
            Ok(Request::Step { state, input })
        }
        _ => Err("op is not init or step".into()),
    }
}

/// Check an input as this side writes them.
#[cfg(test)]
pub(crate) fn parse_input(m: &Manifest, v: &Value) -> Result<(), String> {
    let Value::Object(i) = v else { return Err("input: not an object".into()) };
    let keys: &[&str] = match string(i.get("type"), "input.type")? {
        "start" => &["type"],
        "message" => {
            let kind = string(i.get("kind"), "input.kind")?;
            let k = m.kind_index(kind).ok_or("input.kind")?;
            int(i.get("port"), "input.port", u64::from(u32::MAX))?;
            let Some(Value::Object(f)) = i.get("fields") else { return Err("input.fields".into()) };
            let declared: Vec<&String> = m.messages[k].fields.iter().collect();
            if f.keys().collect::<Vec<_>>() != { declared.clone().tap_sorted() } {
                return Err("input.fields: not the declared fields".into());
            }
            &["type", "port", "kind", "fields"]
        }
        "timer" => {
            m.timer_slot(string(i.get("timer"), "input.timer")?).ok_or("input.timer")?;
            &["type", "timer"]
        }
        "suspect" => &["type", "port", "suspected"],
        "heartbeat" => &["type", "port", "term", "leading"],
        "leave" => &["type", "suspected"],
        "restore" => {
            int(i.get("term"), "input.term", MAX_INT)?;
            opt_int(i.get("vote"), "input.vote")?;
            &["type", "term", "vote"]
        }
        other => return Err(format!("input.type: {other}")),
    };
    known_keys(i, "input", keys)?;
    for key in keys.iter().skip(1) {
        if !i.contains_key(*key) {
            return Err(format!("input.{key} missing"));
        }
    }
    Ok(())
}

#[cfg(test)]
trait TapSorted {
    fn tap_sorted(self) -> Self;
}

#[cfg(test)]
impl<T: Ord> TapSorted for Vec<T> {
    fn tap_sorted(mut self) -> Self {
        self.sort();
        self
    }
}
