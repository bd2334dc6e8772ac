//! Why the controller refuses a request, and the `tonic::Status` each
//! refusal becomes: kept apart from the service so that every module that
//! checks a request (planning, sweeps, faults, conversions) can name the
//! field at fault without depending on the service.

use std::borrow::Cow;

use tonic::{Code, Status};

use crate::budget::OVER_BUDGET_FIELD;

/// A request refused before it ran, naming the field at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct RequestError {
    /// `InvalidArgument` or `FailedPrecondition`.
    pub code: Code,
    /// The request field at fault, e.g. `size`, `simulation.non_fifo` or `options.pre_vote`.
    pub field: Cow<'static, str>,
    /// What is wrong and what would be accepted.
    pub reason: String,
}

impl RequestError {
    pub(crate) fn invalid(field: impl Into<Cow<'static, str>>, reason: impl Into<String>) -> Self {
        RequestError { code: Code::InvalidArgument, field: field.into(), reason: reason.into() }
    }

    pub(crate) fn precondition(field: impl Into<Cow<'static, str>>, reason: impl Into<String>) -> Self {
        RequestError { code: Code::FailedPrecondition, field: field.into(), reason: reason.into() }
    }
}

/// The gRPC metadata key under which a refusal names its field, beside its
/// text: a client (the lab's pages) reads the field there, not from the
/// message.
pub const FIELD_METADATA: &str = "ringleader-field";

impl From<RequestError> for Status {
    fn from(e: RequestError) -> Self {
        naming(Status::new(e.code, e.to_string()), &e.field)
    }
}

/// `status`, naming `field` ([`FIELD_METADATA`]).
pub(crate) fn naming(mut status: Status, field: &str) -> Status {
    if let Ok(field) = field.parse() {
        status.metadata_mut().insert(FIELD_METADATA, field);
    }
    status
}

/// The field a refusal names ([`FIELD_METADATA`]); `None` for a status that names none.
pub fn field_of(status: &Status) -> Option<&str> {
    status.metadata().get(FIELD_METADATA).and_then(|v| v.to_str().ok())
}

impl From<ringleader_check::Refusal> for RequestError {
    fn from(r: ringleader_check::Refusal) -> Self {
        let code = if r.precondition { Code::FailedPrecondition } else { Code::InvalidArgument };
        RequestError { code, field: r.field.into(), reason: r.why }
    }
}

impl From<ConvertError> for RequestError {
    fn from(e: ConvertError) -> Self {
        let field = e.field();
        let reason = match e {
            ConvertError::UnknownEnum { value, .. } => format!("unknown value {value}"),
        };
        RequestError::invalid(field, reason)
    }
}

/// A protobuf field the domain cannot take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// An enum field holds a number the API does not define.
    #[error("{field}: unknown value {value}")]
    UnknownEnum {
        /// Field name, e.g. `id_order`.
        field: &'static str,
        /// The number received.
        value: i32,
    },
}

impl ConvertError {
    /// The field at fault.
    pub fn field(&self) -> &'static str {
        match self {
            ConvertError::UnknownEnum { field, .. } => field,
        }
    }
}

/// Why `StartElection` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// As many elections run as the controller takes (RESOURCE_EXHAUSTED).
    #[error(transparent)]
    Overloaded(#[from] Overloaded),
    /// The election history refuses writes (UNAVAILABLE): a full or failing disk.
    #[error(
        "the election history {0} (controller.history_path) refuses writes (disk full or failing); new elections \
         are refused until it takes them again, which the controller retries on its own"
    )]
    HistoryUnavailable(String),
    /// The election's memory estimate does not fit the budget beside the
    /// running ones (RESOURCE_EXHAUSTED).
    #[error(transparent)]
    OverBudget(#[from] crate::budget::OverBudget),
}

impl From<LaunchError> for Status {
    fn from(e: LaunchError) -> Status {
        match e {
            LaunchError::OverBudget(_) => naming(Status::resource_exhausted(e.to_string()), OVER_BUDGET_FIELD),
            LaunchError::Overloaded(_) => Status::resource_exhausted(e.to_string()),
            LaunchError::HistoryUnavailable(_) => Status::unavailable(e.to_string()),
        }
    }
}

/// `StartElection` refused: as many elections are running as the controller takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0} elections are running, the most this controller runs at once (controller.max_running_elections); try again when one has finished"
)]
pub struct Overloaded(pub usize);
