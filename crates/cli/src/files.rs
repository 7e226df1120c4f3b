//! File helpers shared by the subcommands: reads bounded before allocating (on
//! [`wirespeed_util::io`]), writes that name the file in their error.

use std::path::Path;

use wirespeed_util::io::BoundedReadError;

use crate::error::CliError;

/// Reads a file of at most `max` bytes; a larger one is refused (exit 2). The bound is
/// on the bytes actually read, not on the size the file system reports, so a device
/// (`/dev/zero`), a pipe or a file that grows while it is read is refused at `max + 1`
/// bytes too; a regular file whose reported size is over `max` is refused before any
/// read, and the reported size only sizes the buffer (never above `max`).
pub fn read_bounded_bytes(path: &Path, max: usize) -> Result<Vec<u8>, CliError> {
    wirespeed_util::io::read_file_bounded(path, max).map_err(|e| bounded_err(path, e))
}

/// A bounded read's failure as the CLI reports it, naming the file: a read error is
/// [`CliError::Open`], a size over the bound [`CliError::MalformedInput`].
pub fn bounded_err(path: &Path, e: BoundedReadError) -> CliError {
    match e {
        BoundedReadError::Io(source) => CliError::Open {
            path: path.to_path_buf(),
            source,
        },
        other => CliError::MalformedInput {
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    }
}

/// Reads a file that starts with a u64 little-endian count of `elem_bytes`-byte
/// elements (the arkworks `Vec` encoding): the count is read and bounded by `max_elems`
/// first, then at most the bytes it announces and one more, so the decoder sees a
/// trailing byte when there is one, and a file that never ends (a device, a pipe) costs
/// no more memory than a well-formed one of its announced count.
pub fn read_counted(path: &Path, elem_bytes: usize, max_elems: usize) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let open = |source| CliError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(open)?;
    let mut bytes = Vec::with_capacity(8);
    (&mut file).take(8).read_to_end(&mut bytes).map_err(open)?;
    let Ok(prefix) = <[u8; 8]>::try_from(bytes.as_slice()) else {
        // Shorter than the count: the decoder names what is missing.
        return Ok(bytes);
    };
    let n = u64::from_le_bytes(prefix);
    if n > max_elems as u64 {
        return Err(CliError::MalformedInput {
            path: path.to_path_buf(),
            message: format!("announces {n} elements; at most {max_elems} are accepted"),
        });
    }
    let body = n as usize * elem_bytes;
    bytes.reserve(body.min(file.metadata().map_or(0, |m| m.len()) as usize));
    file.take(body as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(open)?;
    Ok(bytes)
}

/// Reads a UTF-8 text file of at most `max` bytes.
pub fn read_bounded_text(path: &Path, max: usize) -> Result<String, CliError> {
    String::from_utf8(read_bounded_bytes(path, max)?).map_err(|_| CliError::MalformedInput {
        path: path.to_path_buf(),
        message: "not UTF-8 text".into(),
    })
}

/// Creates one directory (its parent must exist).
pub fn create_dir(path: &Path) -> Result<(), CliError> {
    std::fs::create_dir(path).map_err(|source| CliError::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path` (replacing it).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|source| CliError::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// Replaces `path` with `bytes` atomically (`wirespeed_util::fs::replace`: a temporary
/// file beside it, synced, renamed over it, the directory synced), so a crash leaves the
/// old file or the new one, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    wirespeed_util::fs::replace(path, bytes).map_err(|source| CliError::Output {
        path: path.to_path_buf(),
        source,
    })
}
