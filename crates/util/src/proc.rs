//! Readers of Linux's `/proc`, written once: a process's CPU time (`/proc/PID/stat`),
//! fields of `/proc/PID/status` (resident size, user id) and of `/proc/cpuinfo`.
//!
//! The parsers take the text and are tested on fixed samples on every platform; the
//! readers return an error or `None` where `/proc` is not there (not Linux, no such
//! process). Nothing here needs privileges.

use std::fmt;
use std::io;

/// Why a process's CPU time could not be read.
#[derive(Debug)]
pub enum CpuError {
    /// `/proc/PID/stat` could not be read (no such process, or not Linux).
    Read {
        /// The process.
        pid: u32,
        /// Why.
        source: io::Error,
    },
    /// Its contents were not as expected.
    Malformed(String),
}

impl fmt::Display for CpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuError::Read { pid, source } => write!(f, "cannot read /proc/{pid}/stat: {source}"),
            CpuError::Malformed(m) => write!(f, "malformed /proc/PID/stat: {m}"),
        }
    }
}

impl std::error::Error for CpuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CpuError::Read { source, .. } => Some(source),
            CpuError::Malformed(_) => None,
        }
    }
}

/// User and system CPU time of a process, in clock ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTicks {
    /// Field 14, `utime`.
    pub user: u64,
    /// Field 15, `stime`.
    pub system: u64,
}

/// Parses the contents of `/proc/PID/stat`. The command name (field 2) is in parentheses
/// and may itself contain spaces and parentheses, so the fields are counted from the
/// last `)`.
pub fn parse_proc_stat(stat: &str) -> Result<CpuTicks, CpuError> {
    let close = stat
        .rfind(')')
        .ok_or_else(|| CpuError::Malformed("no ')' closing the command name".into()))?;
    // Fields 3 (state) onwards.
    let fields: Vec<&str> = stat[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| -> Result<u64, CpuError> {
        let text = fields
            .get(n - 3)
            .ok_or_else(|| CpuError::Malformed(format!("field {n} is missing")))?;
        text.parse()
            .map_err(|_| CpuError::Malformed(format!("field {n} is '{text}', not a number")))
    };
    Ok(CpuTicks {
        user: field(14)?,
        system: field(15)?,
    })
}

/// Clock ticks per second of `/proc` times: the kernel's `AT_CLKTCK` (what
/// `sysconf(_SC_CLK_TCK)` returns), read from `/proc/self/auxv`; 100 where that fails.
pub fn clock_ticks_per_sec() -> u64 {
    const AT_CLKTCK: usize = 17;
    const WORD: usize = std::mem::size_of::<usize>();
    let Ok(auxv) = std::fs::read("/proc/self/auxv") else {
        return 100;
    };
    let word = |b: &[u8]| b.try_into().map(usize::from_ne_bytes).unwrap_or(0);
    auxv.chunks_exact(2 * WORD)
        .map(|pair| (word(&pair[..WORD]), word(&pair[WORD..])))
        .take_while(|&(key, _)| key != 0)
        .find(|&(key, _)| key == AT_CLKTCK)
        .map(|(_, ticks)| ticks as u64)
        .filter(|&t| t > 0)
        .unwrap_or(100)
}

/// User plus system CPU seconds process `pid` has used so far (Linux).
pub fn process_cpu_secs(pid: u32) -> Result<f64, CpuError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|source| CpuError::Read { pid, source })?;
    let t = parse_proc_stat(&stat)?;
    Ok((t.user + t.system) as f64 / clock_ticks_per_sec() as f64)
}

/// The value of field `name` in `/proc/PID/status` text ("VmRSS:\t  1234 kB" gives
/// "1234 kB"), trimmed; None when the field is absent.
pub fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key == name).then(|| value.trim())
    })
}

/// A size field of `/proc/PID/status` (such as `VmRSS` or `VmHWM`, written in kB) in
/// bytes.
pub fn status_bytes(status: &str, name: &str) -> Option<u64> {
    let value = status_field(status, name)?;
    let kb: u64 = value.split_whitespace().next()?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The text of `/proc/PID/status`, or `/proc/self/status` for `None`.
pub fn read_status(pid: Option<u32>) -> io::Result<String> {
    match pid {
        Some(pid) => std::fs::read_to_string(format!("/proc/{pid}/status")),
        None => std::fs::read_to_string("/proc/self/status"),
    }
}

/// Resident set size in bytes of process `pid` (this process for `None`); None where
/// `/proc` cannot tell.
pub fn rss_bytes(pid: Option<u32>) -> Option<u64> {
    status_bytes(&read_status(pid).ok()?, "VmRSS")
}

/// True when this process runs as root (real user id 0); false where `/proc` cannot
/// tell.
pub fn is_root() -> bool {
    read_status(None).is_ok_and(|s| {
        status_field(&s, "Uid").and_then(|v| v.split_whitespace().next()) == Some("0")
    })
}

/// The value of the first `name : value` line of `/proc/cpuinfo` text (for example
/// "cpu family" or "model name"), trimmed.
pub fn cpuinfo_field<'a>(cpuinfo: &'a str, name: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == name).then(|| value.trim())
    })
}

/// The text of `/proc/cpuinfo`.
pub fn read_cpuinfo() -> io::Result<String> {
    std::fs::read_to_string("/proc/cpuinfo")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_is_parsed_after_the_last_parenthesis() {
        // A command name with spaces and parentheses of its own.
        let stat = "4242 (my (odd) srv) x) S 1 4242 4242 0 -1 4194560 1234 0 5 0 \
                    731 229 0 0 20 0 4 0 12345 1000000 300 18446744073709551615\n";
        let t = parse_proc_stat(stat).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            t,
            CpuTicks {
                user: 731,
                system: 229
            }
        );
        let plain = "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 9";
        assert_eq!(
            parse_proc_stat(plain).map_err(|e| e.to_string()),
            Ok(CpuTicks { user: 5, system: 6 })
        );
    }

    #[test]
    fn malformed_proc_stat_is_a_typed_error() {
        for bad in [
            "",
            "1 init S 0 1",
            "1 (init) S 0 1 1 0 -1",
            "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 x 6 7",
        ] {
            assert!(
                matches!(parse_proc_stat(bad), Err(CpuError::Malformed(_))),
                "{bad:?}"
            );
        }
        assert!(matches!(
            process_cpu_secs(u32::MAX),
            Err(CpuError::Read { .. })
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_cpu_time_is_readable() {
        assert!(clock_ticks_per_sec() > 0);
        let secs = process_cpu_secs(std::process::id()).unwrap_or_else(|e| panic!("{e}"));
        assert!(secs.is_finite() && secs >= 0.0);
    }

    #[test]
    fn status_fields_are_found_by_name() {
        let status = "Name:\tredis\nUid:\t0\t0\t0\t0\nVmHWM:\t    2048 kB\nVmRSS:\t    1536 kB\n";
        assert_eq!(status_field(status, "Name"), Some("redis"));
        assert_eq!(status_field(status, "Uid"), Some("0\t0\t0\t0"));
        assert_eq!(status_field(status, "Vm"), None);
        assert_eq!(status_bytes(status, "VmRSS"), Some(1536 * 1024));
        assert_eq!(status_bytes(status, "VmHWM"), Some(2048 * 1024));
        assert_eq!(status_bytes(status, "Name"), None);
        assert_eq!(status_bytes(status, "VmSwap"), None);
    }

    #[test]
    fn cpuinfo_fields_are_found_by_name() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\
                    model name\t: AMD EPYC 9R14: 96-Core\nprocessor\t: 1\ncpu family\t: 26\n";
        assert_eq!(cpuinfo_field(text, "cpu family"), Some("25"));
        assert_eq!(
            cpuinfo_field(text, "model name"),
            Some("AMD EPYC 9R14: 96-Core")
        );
        assert_eq!(cpuinfo_field(text, "flags"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_status_is_readable() {
        let rss = rss_bytes(None).unwrap_or(0);
        assert!(rss > 0);
        assert_eq!(
            rss_bytes(Some(std::process::id())).map(|r| r > 0),
            Some(true)
        );
        assert_eq!(rss_bytes(Some(u32::MAX)), None);
        assert!(read_cpuinfo().is_ok());
    }
}
