//! Store failures: SDK errors kept as typed sources, which of them are
//! "unavailable" (503), and single-item conditional writes.

use crate::error::Error;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};

/// Failures talking to DynamoDB. SDK errors stay typed sources.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("DynamoDB {op} failed")]
    Sdk {
        op: &'static str,
        /// Throttled, timed out, unreachable or a 5xx: worth a retry later.
        unavailable: bool,
        /// Throttled: DynamoDB answered, and refused for load alone.
        throttled: bool,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("could not build the DynamoDB {op} request")]
    Build {
        op: &'static str,
        #[source]
        source: aws_sdk_dynamodb::error::BuildError,
    },
    #[error("item {key} is malformed: {problem}")]
    Malformed { key: String, problem: String },
    #[error("DynamoDB {op} cancelled the transaction for a reason that is not retryable: {codes}")]
    Rejected { op: &'static str, codes: String },
}

impl StoreError {
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Sdk { unavailable, .. } => *unavailable,
            _ => false,
        }
    }

    /// Whether DynamoDB answered and throttled the request (a key or a
    /// table past its limit), as opposed to a timeout, an unreachable
    /// store or a 5xx.
    pub fn is_throttled(&self) -> bool {
        matches!(
            self,
            Self::Sdk {
                throttled: true,
                ..
            }
        )
    }
}

/// The error codes of a request DynamoDB throttled.
const THROTTLED_CODES: &[&str] = &[
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
];

pub(super) const UNAVAILABLE_CODES: &[&str] = &[
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
    // A plain write that met a transaction on its item: nothing was decided,
    // so it is retryable (the SDK does not retry it itself).
    "TransactionConflictException",
];

pub(super) fn sdk_error<E, R>(op: &'static str, err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    let unavailable = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(ctx) => ctx
            .err()
            .code()
            .is_some_and(|c| UNAVAILABLE_CODES.contains(&c)),
        _ => false,
    };
    let throttled = matches!(&err, SdkError::ServiceError(ctx)
        if ctx.err().code().is_some_and(|c| THROTTLED_CODES.contains(&c)));
    StoreError::Sdk {
        op,
        unavailable,
        throttled,
        source: Box::new(err),
    }
}

pub(super) fn build_error(
    op: &'static str,
) -> impl FnOnce(aws_sdk_dynamodb::error::BuildError) -> StoreError {
    move |source| StoreError::Build { op, source }
}

/// Ok(true) if a conditional single-item write happened, Ok(false) if its
/// condition failed.
pub(super) fn conditional<T, E, R>(
    result: Result<T, SdkError<E, R>>,
    op: &'static str,
) -> Result<bool, Error>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(true),
        Err(SdkError::ServiceError(ctx))
            if ctx.err().code() == Some("ConditionalCheckFailedException") =>
        {
            Ok(false)
        }
        Err(e) => Err(sdk_error(op, e).into()),
    }
}

/// Whether a single-item write failed on its condition (and on nothing else).
pub(super) fn is_condition_failure<E, R>(err: &SdkError<E, R>) -> bool
where
    E: ProvideErrorMetadata,
{
    matches!(err, SdkError::ServiceError(ctx) if ctx.err().code() == Some("ConditionalCheckFailedException"))
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        if e.is_unavailable() {
            // Kept out of the body; the 503's log line names its cause.
            tracing::warn!(error = %crate::error::chain(&e), "store unavailable");
            Error::StoreUnavailable
        } else {
            Error::Store(Box::new(e))
        }
    }
}
