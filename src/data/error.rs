//! The one error type of the data layer: every variant names the file it is about.

use std::path::Path;

use super::libsvm::LibsvmError;

/// Why data could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// An operating-system error on a file or directory.
    #[error("{path}: {reason}")]
    Io {
        /// The file or directory.
        path: String,
        /// What the system said (part of the message, so not also a `source()`).
        reason: std::io::Error,
    },
    /// A shard, manifest or dataset that is malformed, truncated or corrupted.
    #[error("{path}: {message}")]
    Invalid {
        /// The file or directory.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// Malformed LIBSVM text (`file:line:column: what`).
    #[error(transparent)]
    Text(#[from] LibsvmError),
}

impl DataError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, reason: std::io::Error) -> Self {
        DataError::Io {
            path: path.display().to_string(),
            reason,
        }
    }

    /// `path` is malformed, for the reason in `message`.
    pub fn invalid(path: &Path, message: impl Into<String>) -> Self {
        DataError::Invalid {
            path: path.display().to_string(),
            message: message.into(),
        }
    }
}

/// An input path as messages name it: `<stdin>` for `-` (standard input, which has no path).
pub fn name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}
