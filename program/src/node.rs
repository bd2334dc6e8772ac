//! [`ProgramNode`]: one node of a program's election, an
//! [`Algorithm`] whose steps the program answers. Its state is the
//! program's JSON state as canonical text, so that two nodes in the same
//! state are equal and hash alike (the checker stores states so).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ringleader_core::protocol::program::{failure, kind_of, split};
use ringleader_core::protocol::{
    AlgoError, Algorithm, Effect, Input, MAX_TERM, Msg, NodeContext, Outbox, Port, TimerId,
};
use serde_json::{Value, json};

use crate::Program;
use crate::wire::{self, Output, Reply};

/// The state name of a node whose program failed.
pub const FAILED: &str = "failed";

/// One node of a program's election.
#[derive(Clone)]
pub struct ProgramNode {
    prog: Arc<Program>,
    id: u64,
    ports: u32,
    state: Arc<str>,
    name: &'static str,
    failed: Failed,
    steps: u64,
}

/// Whether the node's program failed, and whether it said so yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Failed {
    No,
    /// Its `init` failed: the first step pushes [`Effect::Fail`] with this text.
    Pending(&'static str),
    /// It pushed [`Effect::Fail`]: it takes no further step.
    Reported,
}

impl std::fmt::Debug for ProgramNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramNode")
            .field("program", &self.prog.name())
            .field("id", &self.id)
            .field("state", &self.state)
            .field("name", &self.name)
            .field("failed", &self.failed)
            .finish()
    }
}

impl PartialEq for ProgramNode {
    /// The same state text, state name and failure (never the program's handle).
    fn eq(&self, other: &Self) -> bool {
        self.state == other.state && self.name == other.name && self.failed == other.failed
    }
}

impl Eq for ProgramNode {}

impl Hash for ProgramNode {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.state.hash(h);
        self.name.hash(h);
        self.failed.hash(h);
    }
}

impl ProgramNode {
    /// The node `c` describes, its state the program's answer to `init`
    /// (a node whose `init` fails fails at its first step).
    pub fn new(prog: Arc<Program>, c: &NodeContext) -> ProgramNode {
        let mut node = ProgramNode {
            prog,
            id: c.id,
            ports: c.ports,
            state: Arc::from("null"),
            name: FAILED,
            failed: Failed::No,
            steps: 0,
        };
        match node.prog.ask(&wire::init_request(c), true, c.ports) {
            Ok(reply) => {
                node.state = Arc::clone(&reply.state);
                node.name = reply.name;
            }
            Err(what) => {
                node.prog.count_failure();
                node.failed = Failed::Pending(failure(&node.failure_text("init", &what)));
            }
        }
        node
    }

    /// The program's state, as canonical JSON text.
    pub fn state_text(&self) -> &str {
        &self.state
    }

    /// Has its program failed?
    pub fn failed(&self) -> bool {
        self.failed != Failed::No
    }

    /// `program NAME, id ID, step N (INPUT): WHAT`.
    fn failure_text(&self, input: &str, what: &str) -> String {
        format!("program {}, id {}, step {} ({input}): {what}", self.prog.name(), self.id, self.steps)
    }

    fn fail(&mut self, input: &str, what: &str, out: &mut Outbox) {
        self.prog.count_failure();
        out.push(Effect::Fail { why: failure(&self.failure_text(input, what)) });
        self.failed = Failed::Reported;
        self.name = FAILED;
    }

    /// The input as the program gets it; `None`: an input protocol 1 does not
    /// carry (a store's reply, a timer the manifest does not name).
    fn input_json(&self, input: Input<'_>) -> Result<Option<Value>, AlgoError> {
        Ok(Some(match input {
            Input::Start => json!({"type": "start"}),
            Input::Message { port, msg } => {
                if port >= self.ports {
                    return Err(AlgoError::BadPort { port });
                }
                let (index, values) = self.check_message(&msg)?;
                wire::message_input(self.prog.manifest(), port, index, values)
            }
            Input::Timer(t) => match self.prog.timer_name(t) {
                Some(name) => json!({"type": "timer", "timer": name}),
                None => return Ok(None),
            },
            Input::Suspect { port, suspected } => json!({"type": "suspect", "port": port, "suspected": suspected}),
            Input::Heartbeat { port, term, leading } => {
                json!({"type": "heartbeat", "port": port, "term": term, "leading": leading})
            }
            Input::Leave { suspected } => json!({"type": "leave", "suspected": suspected}),
            Input::Restore(s) => json!({"type": "restore", "term": s.term, "vote": s.vote}),
            Input::StoreReply(_) => return Ok(None),
        }))
    }

    /// A message from the network: this program's, of a declared kind, as
    /// that kind travels, its fields in range. Anything else is refused
    /// (a message from the network must not fail the node).
    fn check_message(&self, msg: &Msg) -> Result<(usize, [u64; 4]), AlgoError> {
        let name = self.prog.manifest().name.as_str();
        let Some((kind, values, notice)) = wire::msg_fields(msg) else {
            return Err(AlgoError::Invalid(format!("program {name} does not use {} messages", msg.kind_name())));
        };
        let (tag, index) = split(kind);
        let kinds = &self.prog.manifest().messages;
        if tag != self.prog.tag() || index >= kinds.len() {
            return Err(AlgoError::Invalid(format!("program {name} has no message kind {kind} (another program's?)")));
        }
        let k = &kinds[index];
        if k.notification != notice {
            return Err(AlgoError::Invalid(format!(
                "program {name}'s {} messages travel as {}",
                k.name,
                if k.notification { "notifications" } else { "election traffic" }
            )));
        }
        for (i, &v) in values.iter().enumerate() {
            let field = k.fields.get(i).map_or("an undeclared field", |f| f.as_str());
            let max = if i < k.fields.len() { MAX_TERM } else { 0 };
            if v > max {
                return Err(AlgoError::Invalid(format!(
                    "program {name}'s {} message: {field} is {v}, at most {max}",
                    k.name
                )));
            }
        }
        Ok((index, values))
    }

    /// The input in words, for failure texts: "message election (id 9) on port 1".
    fn input_words(&self, input: Input<'_>) -> String {
        match input {
            Input::Start => "start".into(),
            Input::Message { port, msg } => format!("message {} on port {port}", msg.in_words()),
            Input::Timer(t) => format!("timer {}", self.prog.timer_name(t).unwrap_or("?")),
            Input::Suspect { port, suspected: true } => format!("suspicion of port {port}"),
            Input::Suspect { port, suspected: false } => format!("port {port} heard from again"),
            Input::Heartbeat { port, term, .. } => format!("heartbeat on port {port} (term {term})"),
            Input::Leave { .. } => "leave".into(),
            Input::Restore(s) => format!("restore (term {})", s.term),
            Input::StoreReply(_) => "store reply".into(),
        }
    }

    /// The effects of a checked reply at this node: `Err` names the output
    /// field that does not fit the node (a port it does not have: a reply
    /// from the memo was checked at a node with other ports).
    fn effects(&self, reply: &Reply) -> Result<Vec<Effect>, String> {
        wire::check_ports(reply, self.ports)?;
        let tag = self.prog.tag();
        let kinds = &self.prog.manifest().messages;
        reply
            .out
            .iter()
            .map(|o| {
                Ok(match *o {
                    Output::Send { port, kind, fields: [a, b, c, d] } => {
                        let kind_id = kind_of(tag, kind);
                        let msg = if kinds[kind].notification {
                            Msg::ProgramNotice { kind: kind_id, a, b, c, d }
                        } else {
                            Msg::Program { kind: kind_id, a, b, c, d }
                        };
                        Effect::Send { port: port as Port, msg }
                    }
                    Output::Decide(d) => Effect::Decide(d),
                    Output::SetTimer { slot, after_ms } => Effect::SetTimer { timer: slot, after_ms },
                    Output::CancelTimer { slot } => Effect::CancelTimer { timer: slot },
                    Output::Lead(l) => Effect::Lead(l),
                    Output::Persist(s) => Effect::Persist(s),
                    Output::HandingOver => Effect::HandingOver,
                })
            })
            .collect()
    }
}

impl Algorithm for ProgramNode {
    fn step(&mut self, input: Input<'_>, out: &mut Outbox) -> Result<(), AlgoError> {
        match self.failed {
            Failed::Reported => return Ok(()),
            Failed::Pending(why) => {
                out.push(Effect::Fail { why });
                self.failed = Failed::Reported;
                return Ok(());
            }
            Failed::No => {}
        }
        let Some(json) = self.input_json(input)? else { return Ok(()) };
        self.steps += 1;
        let request = wire::step_request(&self.state, &json);
        let reply = self.prog.ask(&request, false, self.ports);
        match reply.and_then(|r| self.effects(&r).map(|e| (r, e))) {
            Ok((reply, effects)) => {
                self.state = Arc::clone(&reply.state);
                self.name = reply.name;
                for e in effects {
                    out.push(e);
                }
            }
            Err(what) => {
                let words = self.input_words(input);
                self.fail(&words, &what, out);
            }
        }
        Ok(())
    }

    fn state(&self) -> &'static str {
        if self.failed() { FAILED } else { self.name }
    }

    fn watched(&self, _port: Port) -> bool {
        true
    }

    fn suspects(&self, _port: Port) -> bool {
        false
    }

    fn timer_name(&self, timer: TimerId) -> Option<&'static str> {
        self.prog.timer_name(timer)
    }

    fn held(&self) -> usize {
        0
    }

    fn only_refreshes(&self, _port: Port, _msg: &Msg) -> bool {
        false
    }
}
