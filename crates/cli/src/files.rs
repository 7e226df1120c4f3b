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

/// Replaces `path` with `bytes` atomically: writes `path` + ".tmp" beside it, syncs it,
/// renames it over `path`, then syncs the directory (where the platform allows), so a
/// crash leaves the old file or the new one, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let out = |p: &Path| {
        let p = p.to_path_buf();
        move |source| CliError::Output { path: p, source }
    };
    let mut f = std::fs::File::create(&tmp).map_err(out(&tmp))?;
    f.write_all(bytes).map_err(out(&tmp))?;
    f.sync_all().map_err(out(&tmp))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(out(path))?;
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        // Directory sync makes the rename durable; not every platform opens directories.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
