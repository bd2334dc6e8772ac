//! How the controller's calls to its nodes fail, as types: a call's own
//! failure carries the gRPC code the node answered (or says it did not
//! answer in time), so a caller decides on the code (`NotFound`: the node
//! does not hold the election; `Unimplemented`: an older node), never on
//! the text. The texts are what the records and logs show.

use std::future::Future;
use std::time::Duration;

use tonic::Code;

/// A call to a node that failed: the node answered with a gRPC code, or did
/// not answer in time. What the caller does depends on which, so it is a
/// type, not text to search.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CallError {
    /// The node refused: its code and message.
    #[error("{0:?}: {1}")]
    Refused(Code, String),
    /// No answer within the RPC timeout (ms).
    #[error("no answer within {0} ms")]
    Silent(u128),
}

impl CallError {
    /// The node's refusal `status`.
    pub(crate) fn refused(status: &tonic::Status) -> Self {
        CallError::Refused(status.code(), status.message().to_string())
    }

    /// `call`'s answer within `timeout`, its failure a [`CallError`].
    pub(crate) async fn within<T>(
        timeout: Duration,
        call: impl Future<Output = Result<T, tonic::Status>>,
    ) -> Result<T, CallError> {
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(status)) => Err(CallError::refused(&status)),
            Err(_) => Err(CallError::Silent(timeout.as_millis())),
        }
    }

    /// The node answered with `code`.
    pub(crate) fn is(&self, code: Code) -> bool {
        matches!(self, CallError::Refused(c, _) if *c == code)
    }

    /// The node answered that it does not hold the election.
    pub(crate) fn not_found(&self) -> bool {
        self.is(Code::NotFound)
    }
}

/// A call to one named node that failed, and what the call was for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NodeFailure {
    /// An Agent call (`what`: `Prepare`, `Start`, `Status`, ...) failed.
    #[error("{what} on {node} ({address}) failed: {error}")]
    Call {
        /// The call, e.g. `Prepare`.
        what: &'static str,
        /// The node's name.
        node: String,
        /// The node's address.
        address: String,
        /// How it failed.
        error: CallError,
    },
    /// The faults a node should hold did not reach it.
    #[error("faults on {node} ({address}) not applied: {error}")]
    Faults {
        /// The node's name.
        node: String,
        /// The node's address.
        address: String,
        /// How the push failed.
        error: CallError,
    },
    /// The task that made the call ended without an answer (it panicked or
    /// was cancelled).
    #[error("{what} task failed: {reason}")]
    Task {
        /// The call, e.g. `Prepare`.
        what: &'static str,
        /// What the runtime said.
        reason: String,
    },
}

/// Calls to several nodes of which some failed: the first three (in the
/// order of their texts) and how many more.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}", first.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("; "), more_text(*more))]
pub(crate) struct Failures {
    /// The first three failures.
    pub(crate) first: Vec<NodeFailure>,
    /// How many more failed.
    pub(crate) more: usize,
}

fn more_text(more: usize) -> String {
    if more > 0 { format!(" (and {more} more)") } else { String::new() }
}

/// How many failures a [`Failures`] names.
const NAMED: usize = 3;

impl Failures {
    /// `Ok` without failures, else the first three (sorted by text) and how many more.
    pub(crate) fn check(mut failures: Vec<NodeFailure>) -> Result<(), Failures> {
        if failures.is_empty() {
            return Ok(());
        }
        failures.sort_by_cached_key(NodeFailure::to_string);
        let more = failures.len().saturating_sub(NAMED);
        failures.truncate(NAMED);
        Err(Failures { first: failures, more })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's refusal is told apart by its code, not by searching its text: NotFound says the
    /// node does not hold the election, whatever the message; other codes and silence do not.
    #[test]
    fn a_call_error_is_known_by_its_code() {
        assert!(CallError::Refused(Code::NotFound, "no election e1".into()).not_found());
        assert!(!CallError::Refused(Code::Unavailable, "NotFound in the text".into()).not_found());
        assert!(!CallError::Silent(500).not_found());
        assert!(CallError::Refused(Code::Unimplemented, "".into()).is(Code::Unimplemented));
        assert_eq!(CallError::Silent(500).to_string(), "no answer within 500 ms");
        assert_eq!(CallError::Refused(Code::NotFound, "gone".into()).to_string(), "NotFound: gone");
    }

    /// Failures of calls to several nodes name the first three by their text, sorted, then
    /// count the rest; each keeps its code for the caller to decide on.
    #[test]
    fn failures_name_three_sorted_and_count_the_rest() {
        let call = |node: &str, error| NodeFailure::Call {
            what: "Prepare",
            node: node.into(),
            address: format!("http://{node}:7000"),
            error,
        };
        assert_eq!(Failures::check(Vec::new()), Ok(()));
        let failures = ["n4", "n2", "n1", "n3"].map(|n| call(n, CallError::Silent(100))).to_vec();
        let e = Failures::check(failures).unwrap_err();
        assert_eq!(e.more, 1);
        assert_eq!(
            e.to_string(),
            "Prepare on n1 (http://n1:7000) failed: no answer within 100 ms; \
             Prepare on n2 (http://n2:7000) failed: no answer within 100 ms; \
             Prepare on n3 (http://n3:7000) failed: no answer within 100 ms (and 1 more)"
        );
        let one = Failures::check(vec![call("n1", CallError::Refused(Code::NotFound, "gone".into()))]).unwrap_err();
        assert_eq!(one.to_string(), "Prepare on n1 (http://n1:7000) failed: NotFound: gone");
        assert!(matches!(&one.first[0], NodeFailure::Call { error, .. } if error.not_found()));
    }
}
