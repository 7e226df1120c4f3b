//! Files replaced whole or not at all: the new contents go to a temporary file beside the
//! old one, are synced, renamed over it, and the directory is synced, so a crash or a
//! full disk leaves the old file or the new one, never a mix, and never a half-written
//! file under the real name.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Syncs the directory that holds `path`, so that an entry created, renamed or removed
/// there is on disk.
pub fn sync_dir(path: &Path) -> io::Result<()> {
    File::open(parent(path))?.sync_all()
}

/// The directory that holds `path` (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A temporary name beside `path`, unique to this process and call:
/// `.NAME.tmp-PID-N` (hidden, so a listing of the directory does not show it as data).
pub fn temp_beside(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    parent(path).join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Replaces the file at `path` with what `write` writes: into a temporary file beside it
/// (with the old file's permissions, where there is one), synced, renamed over `path`,
/// then the directory synced. On any error the temporary file is removed and `path` is
/// as it was.
pub fn replace_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temp_beside(path);
    let done = (|| {
        let mut f = File::create(&tmp)?;
        if let Ok(m) = std::fs::metadata(path) {
            f.set_permissions(m.permissions())?;
        }
        write(&mut f)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        sync_dir(path)
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Replaces the file at `path` with `bytes` ([`replace_with`]).
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(path, |f| f.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("wirespeed-util-fs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_and_leaves_nothing_beside() {
        let d = dir("replace");
        let p = d.join("f.txt");
        replace(&p, b"one").expect("create");
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        replace(&p, b"two, longer").expect("replace");
        assert_eq!(std::fs::read(&p).expect("read"), b"two, longer");
        assert_eq!(entries(&d), ["f.txt"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temporary() {
        let d = dir("fail");
        let p = d.join("f.txt");
        replace(&p, b"old").expect("create");
        let e = replace_with(&p, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .expect_err("the writer failed");
        assert_eq!(e.to_string(), "disk full");
        assert_eq!(std::fs::read(&p).expect("read"), b"old");
        assert_eq!(entries(&d), ["f.txt"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_permissions_of_the_file_it_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("mode");
        let p = d.join("f.conf");
        replace(&p, b"a").expect("create");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        replace(&p, b"b").expect("replace");
        let mode = std::fs::metadata(&p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let d = dir("missing");
        let p = d.join("no/such/dir/f");
        assert!(replace(&p, b"x").is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bare_names_live_in_the_current_directory() {
        assert_eq!(parent(Path::new("f")), Path::new("."));
        assert!(temp_beside(Path::new("f")).starts_with("."));
        assert_ne!(temp_beside(Path::new("f")), temp_beside(Path::new("f")));
    }
}
