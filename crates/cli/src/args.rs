//! Value parsers shared by the subcommands. Each error message is one line naming the
//! accepted values.

use std::num::NonZeroUsize;

use wirespeed_ed25519::Mode;
use wirespeed_engine::{Backend, Lanes};

use crate::gpu::parse_with_lanes;
use wirespeed_sigdata::format::Format;

/// Most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 4096;

/// `--mode strict|zip215|cofactored-strict|libsodium`.
pub fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse::<Mode>().map_err(|e| e.to_string())
}

/// `--backend` of `verify`: auto, cpu, gpu, or a CPU lane backend (serial, avx2, ifma,
/// ifma4).
pub fn parse_backend(s: &str) -> Result<Backend, String> {
    parse_with_lanes(s, &[Lanes::Serial, Lanes::Avx2, Lanes::Ifma, Lanes::Ifma4])
}

/// `--format bin|jsonl`.
pub fn parse_format(s: &str) -> Result<Format, String> {
    s.parse::<Format>().map_err(|e| e.to_string())
}

/// `--threads N` with 1 <= N <= [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a thread count (expected 1 to {MAX_THREADS})"
        )),
    }
}

/// The default worker count: every core the process may use.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Runs `f` inside a rayon pool of `threads` workers.
pub fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(pool.install(f))
}

/// A count with thousands separators: 1234567 -> "1,234,567".
pub use wirespeed_util::digits::group_digits;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(1234567), "1,234,567");
    }

    #[test]
    fn names_parse() {
        assert_eq!(parse_backend("avx2"), Ok(Backend::Cpu(Lanes::Avx2)));
        assert_eq!(parse_backend("ifma"), Ok(Backend::Cpu(Lanes::Ifma)));
        assert_eq!(parse_backend("ifma4"), Ok(Backend::Cpu(Lanes::Ifma4)));
        assert_eq!(parse_backend("cpu"), Ok(Backend::Cpu(Lanes::Auto)));
        assert_eq!(parse_backend("gpu"), Ok(Backend::Gpu));
        assert_eq!(parse_backend("auto"), Ok(Backend::Auto));
        assert!(parse_backend("cuda").is_err());
        assert_eq!(parse_mode("zip215"), Ok(Mode::Zip215));
        assert!(parse_mode("loose").is_err());
        assert_eq!(parse_threads("3"), Ok(3));
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("-1").is_err());
        assert!(parse_threads("100000").is_err());
    }
}
