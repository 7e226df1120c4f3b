//! Reads bounded before they allocate: a file or stream of at most `max` bytes, refused
//! past that at `max + 1` bytes read, whatever size the file system reports (a device
//! such as `/dev/zero`, a pipe, or a file that grows while it is read costs at most
//! `max + 1` bytes of memory). A regular file whose reported size is over `max` is
//! refused before any read; the reported size only sizes the buffer, never above `max`.
//! A directory is refused as unreadable (an I/O error), not by its reported size.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// Why a bounded read failed.
#[derive(Debug)]
pub enum BoundedReadError {
    /// Opening or reading failed.
    Io(io::Error),
    /// The file system reports more than `max` bytes (nothing was read).
    ReportedTooLarge {
        /// The reported size.
        len: u64,
        /// The bound.
        max: usize,
    },
    /// More than `max` bytes could be read.
    TooLarge {
        /// The bound.
        max: usize,
    },
}

impl fmt::Display for BoundedReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundedReadError::Io(e) => write!(f, "{e}"),
            BoundedReadError::ReportedTooLarge { len, max } => {
                write!(f, "file has {len} bytes; at most {max} bytes are accepted")
            }
            BoundedReadError::TooLarge { max } => write!(
                f,
                "more than {max} bytes could be read (a device or pipe that does not end?); \
                 at most {max} bytes are accepted"
            ),
        }
    }
}

impl std::error::Error for BoundedReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BoundedReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads `reader` to its end, at most `max` bytes (`capacity` sizes the buffer first,
/// capped at `max`).
pub fn read_bounded(
    reader: impl Read,
    max: usize,
    capacity: usize,
) -> Result<Vec<u8>, BoundedReadError> {
    let mut bytes = Vec::with_capacity(capacity.min(max));
    reader
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(BoundedReadError::Io)?;
    if bytes.len() > max {
        return Err(BoundedReadError::TooLarge { max });
    }
    Ok(bytes)
}

/// Reads the file at `path`, at most `max` bytes (see the module note).
pub fn read_file_bounded(path: &Path, max: usize) -> Result<Vec<u8>, BoundedReadError> {
    let file = std::fs::File::open(path).map_err(BoundedReadError::Io)?;
    let meta = file.metadata().map_err(BoundedReadError::Io)?;
    if meta.is_dir() {
        // Opening a directory succeeds on Unix; say what reading it would say.
        return Err(BoundedReadError::Io(io::Error::new(
            io::ErrorKind::IsADirectory,
            "Is a directory",
        )));
    }
    let len = meta.len();
    if len > max as u64 {
        return Err(BoundedReadError::ReportedTooLarge { len, max });
    }
    read_bounded(file, max, len as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_cut_at_the_bound() {
        let data = [7u8; 100];
        assert_eq!(read_bounded(&data[..], 100, 0).ok(), Some(data.to_vec()));
        assert!(matches!(
            read_bounded(&data[..], 99, 1 << 30),
            Err(BoundedReadError::TooLarge { max: 99 })
        ));
        // An endless stream is refused after max + 1 bytes.
        assert!(matches!(
            read_bounded(io::repeat(0), 1000, 0),
            Err(BoundedReadError::TooLarge { max: 1000 })
        ));
    }

    #[test]
    fn files_are_refused_by_their_reported_size_or_what_is_read() {
        let dir = std::env::temp_dir().join(format!("wirespeed-util-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("ten");
        std::fs::write(&path, [1u8; 10]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_file_bounded(&path, 10).ok(), Some(vec![1u8; 10]));
        let err = read_file_bounded(&path, 9).err();
        assert!(matches!(
            err,
            Some(BoundedReadError::ReportedTooLarge { len: 10, max: 9 })
        ));
        assert_eq!(
            err.map(|e| e.to_string()).unwrap_or_default(),
            "file has 10 bytes; at most 9 bytes are accepted"
        );
        assert!(matches!(
            read_file_bounded(&dir.join("absent"), 9),
            Err(BoundedReadError::Io(_))
        ));
        // A directory is unreadable, whatever size it reports (4096 on ext4).
        assert!(matches!(
            read_file_bounded(&dir, 1),
            Err(BoundedReadError::Io(e)) if e.kind() == io::ErrorKind::IsADirectory
        ));
        #[cfg(target_os = "linux")]
        assert!(matches!(
            read_file_bounded(Path::new("/dev/zero"), 4096),
            Err(BoundedReadError::TooLarge { max: 4096 })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
