//! Checking and repairing a log (`wirespeed kvs check-aof FILE [--fix]`, the role of
//! `redis-check-aof`), and the side files that keep every byte a repair or a start-up
//! trim removes from the log.
//!
//! [`check`] reads a file without changing it (opened read-only) and reports what it is
//! ([`Kind`]), how many records are valid, and for a damaged log the first bad record,
//! the bytes after it and the valid records found after it ([`CheckReport`]).
//!
//! [`fix`] keeps the good prefix: the header and every record before the first bad
//! one. It never changes the original until the replacement is complete and on disk:
//! the new log is written to `<FILE>.fix-tmp` and synced, the rest of the file is copied
//! to `<FILE>.corrupt-<UTC time>` and synced, then the new log is renamed over FILE and
//! the directory synced. A torn tail is cut in place as the server cuts it at start
//! ([`trim_torn`]: the cut bytes copied to `<FILE>.torn-<UTC time>` and synced before
//! the file is shortened). A headerless log of the previous format gets the header (its
//! records kept). A foreign file, another version or a damaged header are refused
//! ([`FixError::Refused`]) and left unchanged.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::format::{classify, header, scan_records, Bad, Kind, Records, HEADER_LEN};

/// A torn tail cut from the log, and where its bytes went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornCut {
    /// Byte offset of the cut (the first bad record).
    pub offset: u64,
    /// Number of the record there (records before it + 1).
    pub record: u64,
    /// Bytes cut.
    pub bytes: u64,
    /// The cut bytes start with a partial record (else they are all zero).
    pub partial: bool,
    /// The side file holding the cut bytes.
    pub side: PathBuf,
}

impl fmt::Display for TornCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "torn tail at byte {} (record {}): cut {} bytes ({}); the cut bytes are in {}",
            self.offset,
            self.record,
            self.bytes,
            if self.partial {
                "1 partial record"
            } else {
                "zero bytes, no record"
            },
            self.side.display()
        )
    }
}

pub use wirespeed_util::fs::sync_dir;

/// `t` as a UTC timestamp, e.g. `20261125T140501Z`.
pub fn utc_stamp(t: SystemTime) -> String {
    wirespeed_util::time::Utc::at(t).compact()
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Copies bytes `[from, to)` of `src` to a new side file `<path>.<tag>-<UTC time>`
/// (`-2`, `-3`, ... appended if that name exists), synced with its directory entry.
pub fn save_side(src: &File, path: &Path, tag: &str, from: u64, to: u64) -> io::Result<PathBuf> {
    let stamp = utc_stamp(SystemTime::now());
    let mut n = 1u32;
    let (side, mut out) = loop {
        let name = if n == 1 {
            format!(".{tag}-{stamp}")
        } else {
            format!(".{tag}-{stamp}-{n}")
        };
        let side = with_suffix(path, &name);
        match OpenOptions::new().write(true).create_new(true).open(&side) {
            Ok(f) => break (side, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    };
    copy_range(src, from, to, &mut out)?;
    out.sync_all()?;
    sync_dir(&side)?;
    Ok(side)
}

/// Copies bytes `[from, to)` of `src` to `out`; an error if the file is shorter.
fn copy_range(src: &File, from: u64, to: u64, out: &mut File) -> io::Result<()> {
    let mut r = src;
    r.seek(SeekFrom::Start(from))?;
    let copied = io::copy(&mut r.take(to - from), out)?;
    if copied != to - from {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the file shrank while it was copied",
        ));
    }
    Ok(())
}

/// Cuts the torn tail `bad` from the log `file` at `path`: its bytes are copied to
/// `<path>.torn-<UTC time>` and synced first, then the file is shortened and synced.
pub fn trim_torn(file: &File, path: &Path, bad: &Bad) -> io::Result<TornCut> {
    let end = bad.offset + bad.rest;
    let side = save_side(file, path, "torn", bad.offset, end)?;
    file.set_len(bad.offset)?;
    file.sync_all()?;
    Ok(TornCut {
        offset: bad.offset,
        record: bad.record,
        bytes: bad.rest,
        partial: bad.problem.incomplete(),
        side,
    })
}

/// What [`check`] found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// What the file is.
    pub kind: Kind,
    /// Its size in bytes.
    pub total: u64,
    /// Where its records start (16, or 0 for a headerless log).
    pub start: u64,
    /// Its records (for a log of this version or a headerless one).
    pub records: Option<Records>,
}

impl CheckReport {
    /// True when the file is a whole log of this version (or empty: a new log).
    pub fn whole(&self) -> bool {
        match self.kind {
            Kind::Empty => true,
            Kind::Current => self.records.as_ref().is_some_and(|r| r.bad.is_none()),
            _ => false,
        }
    }

    /// The first bad record, if records were read and one is bad.
    pub fn bad(&self) -> Option<&Bad> {
        self.records.as_ref().and_then(|r| r.bad.as_ref())
    }

    /// The report, a line each: format, valid records, the first bad record and what
    /// follows it, the verdict.
    pub fn lines(&self, path: &Path) -> Vec<String> {
        let file = path.display();
        let mut out = vec![format!("{file}: {}, {} bytes", self.kind, self.total)];
        if let Some(r) = &self.records {
            out.push(format!(
                "valid records: {} (bytes {} to {})",
                r.records, self.start, r.good_end
            ));
        }
        if let Some(b) = self.bad() {
            out.push(format!(
                "first bad record: record {} at byte {}: {}",
                b.record, b.offset, b.problem
            ));
            let found = match b.after.first {
                Some(at) => format!(
                    "{} valid records found after it by scanning forward (the first at byte {at})",
                    b.after.records
                ),
                None if b.zero_rest => "all zero, no valid record".to_string(),
                None => "no valid record found after it by scanning forward".to_string(),
            };
            let cut = if b.after.cut_short {
                " (the scan stopped at its work limit; there may be more)"
            } else {
                ""
            };
            out.push(format!(
                "from it to the end: {} bytes; {found}{cut}",
                b.rest
            ));
        }
        out.push(format!("verdict: {}", self.verdict(path)));
        out
    }

    /// One line: whole, or what is wrong and what the server and `--fix` do about it.
    pub fn verdict(&self, path: &Path) -> String {
        let fix = format!("`wirespeed kvs check-aof {} --fix`", path.display());
        match (&self.kind, self.bad()) {
            (Kind::Empty, _) => "empty, the server starts a new log here".into(),
            (Kind::Current, None) => "whole".into(),
            (Kind::Current, Some(b)) if b.torn() => format!(
                "torn tail: the server cuts its {} bytes at start (saved to a .torn- side file); {fix} does the same",
                b.rest
            ),
            (Kind::Current, Some(b)) => format!(
                "damaged, not a torn tail: the server refuses it; {fix} keeps the {} records before byte {} and moves the {} bytes after to a .corrupt- side file",
                b.record - 1,
                b.offset,
                b.rest
            ),
            (Kind::Headerless, _) => format!(
                "old format: the server refuses it; {fix} adds the header and keeps the valid records{}",
                if self.bad().is_some() {
                    " (the bytes after them go to a side file)"
                } else {
                    ""
                }
            ),
            (Kind::TornHeader, _) => {
                format!("header cut short, no records: the server completes it at start, as {fix} does")
            }
            (Kind::Version(_) | Kind::BadHeader, _) => {
                "not readable by this build: the server refuses it and --fix leaves it unchanged".into()
            }
            (Kind::Foreign(_), _) => {
                "not a wirespeed log: the server refuses it and --fix leaves it unchanged".into()
            }
        }
    }
}

/// Reads the file at `path` (opened read-only, never changed) and reports on it.
pub fn check(path: &Path) -> io::Result<CheckReport> {
    let file = File::open(path)?;
    check_file(&file)
}

fn check_file(file: &File) -> io::Result<CheckReport> {
    let meta = file.metadata()?;
    // A log is a regular file: a device reports 0 bytes (and would be called empty),
    // a directory its block size.
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (an append-only log is one)",
        ));
    }
    let total = meta.len();
    let kind = classify(file, total)?;
    let start = match kind {
        Kind::Current => HEADER_LEN,
        _ => 0,
    };
    let records = match kind {
        Kind::Current | Kind::Headerless => Some(scan_records(file, start, total, true, |_| {})?),
        _ => None,
    };
    Ok(CheckReport {
        kind,
        total,
        start,
        records,
    })
}

/// What [`fix`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// The log was whole (or empty): nothing changed.
    Nothing,
    /// A torn tail was cut in place.
    Trimmed(TornCut),
    /// A new log replaced the file: the header and the valid records before the first
    /// bad one.
    Rewritten {
        /// Records kept.
        records: u64,
        /// Bytes of the new log.
        bytes: u64,
        /// The side file holding the bytes after the kept records, and their count.
        side: Option<(PathBuf, u64)>,
        /// The file was a headerless log of the previous format.
        upgraded: bool,
    },
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fixed::Nothing => f.write_str("fixed: nothing to fix, the file is unchanged"),
            Fixed::Trimmed(t) => write!(f, "fixed: {t}"),
            Fixed::Rewritten {
                records,
                bytes,
                side,
                upgraded,
            } => {
                write!(
                    f,
                    "fixed: {}kept {records} records ({bytes} bytes with the header)",
                    if *upgraded { "header added, " } else { "" }
                )?;
                match side {
                    Some((p, n)) => write!(f, "; the {n} bytes after them are in {}", p.display()),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Why [`fix`] changed nothing.
#[derive(Debug)]
pub enum FixError {
    /// Reading, writing, syncing or renaming failed (the original is unchanged unless
    /// the final rename happened).
    Io(io::Error),
    /// Not a log this build can repair (foreign, another version, a damaged header).
    Refused(Kind),
}

impl From<io::Error> for FixError {
    fn from(e: io::Error) -> FixError {
        FixError::Io(e)
    }
}

impl fmt::Display for FixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixError::Io(e) => write!(f, "{e}"),
            FixError::Refused(k) => write!(f, "{k}; --fix changed nothing"),
        }
    }
}

impl std::error::Error for FixError {}

/// Checks the file at `path` and repairs it (see the module note); returns the report
/// of the file as it was and what was done.
pub fn fix(path: &Path) -> Result<(CheckReport, Fixed), FixError> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    let report = check_file(&file)?;
    let fixed = match (&report.kind, report.bad()) {
        (Kind::Empty, _) | (Kind::Current, None) => Fixed::Nothing,
        (Kind::Current, Some(b)) if b.torn() => Fixed::Trimmed(trim_torn(&file, path, b)?),
        (Kind::Current | Kind::Headerless | Kind::TornHeader, _) => {
            let (records, good_end) = match &report.records {
                Some(r) => (r.records, r.good_end),
                None => (0, 0),
            };
            let tag = match report.bad() {
                Some(b) if b.torn() => "torn",
                _ => "corrupt",
            };
            // A cut-short header holds nothing but a prefix of ours: nothing to keep.
            let side_from = if report.kind == Kind::TornHeader {
                report.total
            } else {
                good_end
            };
            let side = replace_with_prefix(
                &file,
                path,
                report.start,
                good_end,
                side_from,
                report.total,
                tag,
            )?;
            Fixed::Rewritten {
                records,
                bytes: HEADER_LEN + good_end - report.start,
                side,
                upgraded: report.kind == Kind::Headerless,
            }
        }
        (kind, _) => return Err(FixError::Refused(kind.clone())),
    };
    Ok((report, fixed))
}

/// Replaces the file at `path` by the header and bytes `[start, good_end)` of `src`,
/// after copying `[side_from, total)` to a side file: `<path>.fix-tmp` written and
/// synced, the side file written and synced, the rename, the directory synced.
fn replace_with_prefix(
    src: &File,
    path: &Path,
    start: u64,
    good_end: u64,
    side_from: u64,
    total: u64,
    tag: &str,
) -> io::Result<Option<(PathBuf, u64)>> {
    let tmp = with_suffix(path, ".fix-tmp");
    let built = (|| -> io::Result<()> {
        let mut out = File::create(&tmp)?;
        out.set_permissions(src.metadata()?.permissions())?;
        out.write_all(&header())?;
        copy_range(src, start, good_end, &mut out)?;
        out.sync_all()
    })();
    if let Err(e) = built {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let side = if side_from < total {
        match save_side(src, path, tag, side_from, total) {
            Ok(p) => Some((p, total - side_from)),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        }
    } else {
        None
    };
    std::fs::rename(&tmp, path)?;
    sync_dir(path)?;
    Ok(side)
}
