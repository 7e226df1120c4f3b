//! File helpers shared by the subcommands: reads bounded before allocating, writes that
//! name the file in their error.

use std::path::Path;

use crate::error::CliError;

/// Reads a file of at most `max` bytes; a larger one is refused (exit 2) before reading.
pub fn read_bounded_bytes(path: &Path, max: usize) -> Result<Vec<u8>, CliError> {
    let open = |source| CliError::Open {
        path: path.to_path_buf(),
        source,
    };
    let len = std::fs::metadata(path).map_err(open)?.len();
    if len > max as u64 {
        return Err(CliError::MalformedInput {
            path: path.to_path_buf(),
            message: format!("file has {len} bytes; at most {max} are accepted"),
        });
    }
    std::fs::read(path).map_err(open)
}

/// Reads a UTF-8 text file of at most `max` bytes.
pub fn read_bounded_text(path: &Path, max: usize) -> Result<String, CliError> {
    String::from_utf8(read_bounded_bytes(path, max)?).map_err(|_| CliError::MalformedInput {
        path: path.to_path_buf(),
        message: "not UTF-8 text".into(),
    })
}

/// Writes `bytes` to `path` (replacing it).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|source| CliError::Output {
        path: path.to_path_buf(),
        source,
    })
}
