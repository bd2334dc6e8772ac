//! Tracing: the span of each algorithm step and the metric labels of its messages.

use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue, global};

use super::{Election, Input, State};
use crate::observe::{self, kv};
use ringleader_core::algo::Msg;
use ringleader_core::shell::Output;

impl Election {
    /// The metric labels of a message of this election.
    pub(super) fn labels(&self, msg: Msg) -> [KeyValue; 3] {
        [kv("algorithm", self.setup.algorithm), kv("kind", msg.kind().name()), self.setup.node.clone()]
    }

    /// The span of the algorithm step that just ran (its effects still in the
    /// outbox), or `None` when the election is untraced or the step was only
    /// upkeep (heartbeats, lease renewals) that changed nothing.
    pub(super) fn step_span(
        &self,
        st: &State,
        began: Option<SystemTime>,
        input: Input,
        parent: Option<SpanContext>,
        sender: u32,
    ) -> Option<global::BoxedSpan> {
        let (root, began) = (self.setup.trace.as_ref()?, began?);
        let eventful = st.out.as_slice().iter().any(|o| match o {
            Output::Send { msg, .. } => !msg.kind().is_upkeep(),
            Output::Decided(_) | Output::Lead(_) | Output::BeliefEnded(_) | Output::Misstep(_) => true,
            Output::SetTimer { .. } | Output::Store(_) => false,
        });
        let (name, kind) = match input {
            Input::Message { msg, .. } if msg.kind().is_upkeep() && !eventful => return None,
            Input::Timer(_) | Input::Store if !eventful => return None,
            Input::Message { msg, .. } => (format!("receive {}", msg.kind().name()), SpanKind::Consumer),
            Input::Start => ("start".to_string(), SpanKind::Internal),
            Input::Restart => ("restart".to_string(), SpanKind::Internal),
            Input::Leave => ("leave".to_string(), SpanKind::Internal),
            Input::Timer(_) => ("timer".to_string(), SpanKind::Internal),
            Input::Store => ("store answer".to_string(), SpanKind::Internal),
        };
        let mut attributes = vec![
            kv("ringleader.election.id", self.setup.election_id.clone()),
            kv("ringleader.algorithm", self.setup.algorithm),
            KeyValue::new("ringleader.node", self.setup.node.value.clone()),
            kv("ringleader.position", i64::from(self.setup.position)),
        ];
        match input {
            Input::Message { port, msg, causal_time } => {
                attributes.push(kv("ringleader.message.kind", msg.kind().name()));
                attributes.push(kv("ringleader.message.sender", i64::from(sender)));
                attributes.push(kv("ringleader.port", i64::from(port)));
                attributes.push(kv("ringleader.causal_time", causal_time as i64));
                if let Some(stage) = msg.stage() {
                    attributes.push(kv("ringleader.stage", i64::from(stage)));
                }
            }
            Input::Timer(t) => {
                attributes.push(kv("ringleader.timer", i64::from(t)));
                attributes.push(kv("ringleader.causal_time", st.depth as i64));
            }
            Input::Start | Input::Restart | Input::Leave | Input::Store => {
                attributes.push(kv("ringleader.causal_time", st.depth as i64))
            }
        }
        let parent = Context::new().with_remote_span_context(parent.unwrap_or_else(|| root.clone()));
        let tracer = global::tracer(observe::NODE_SCOPE);
        Some(
            tracer
                .span_builder(name)
                .with_kind(kind)
                .with_start_time(began)
                .with_attributes(attributes)
                .start_with_context(&tracer, &parent),
        )
    }
}
