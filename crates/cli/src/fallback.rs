//! The engine's GPU-to-CPU fallback counts (`wirespeed_engine::fallbacks`, counted by
//! reason for the whole process), as the commands that can fall back (`verify`, `msm`,
//! `rsa batch-sign` under `--backend auto|gpu`) show them: a `fallbacks` JSON object
//! (reason -> count) and, when any call fell back, one line on standard error:
//! `gpu unavailable: fell back to cpu for N calls (reason)`.
//!
//! `auto` without a usable GPU is the CPU's choice, not a fallback (the engine's rule):
//! the counts stay at zero and the command's `backend` field says where it ran.

use serde_json::{Map, Value};
use wirespeed_engine::{fallbacks, Reason};

/// The counts by reason name, every reason present (zeros included).
pub fn json() -> Value {
    let f = fallbacks();
    let mut m = Map::new();
    for r in Reason::ALL {
        let n = match r {
            Reason::NoDevice => f.no_device,
            Reason::OutOfMemory => f.out_of_memory,
            Reason::Unsupported => f.unsupported,
            Reason::Failed => f.failed,
        };
        m.insert(r.name().to_string(), n.into());
    }
    Value::Object(m)
}

/// True when some call fell back.
pub fn any() -> bool {
    fallbacks().total() > 0
}

/// The line for standard error, when some call fell back: the total and each reason
/// that occurred (with its count when there are several).
pub fn line() -> Option<String> {
    let f = fallbacks();
    let total = f.total();
    if total == 0 {
        return None;
    }
    let counts = [
        ("no_device", f.no_device),
        ("out_of_memory", f.out_of_memory),
        ("unsupported", f.unsupported),
        ("failed", f.failed),
    ];
    let seen: Vec<(&str, u64)> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    let why = match seen.as_slice() {
        [(name, _)] => (*name).to_string(),
        many => many
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let calls = if total == 1 { "call" } else { "calls" };
    Some(format!(
        "gpu unavailable: fell back to cpu for {total} {calls} ({why})"
    ))
}

/// Prints [`line`] on standard error when some call fell back.
pub fn report() {
    if let Some(l) = line() {
        eprintln!("{l}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_is_a_numeric_field() {
        let v = json();
        let obj = v.as_object().expect("object");
        assert_eq!(obj.len(), Reason::ALL.len());
        for r in Reason::ALL {
            assert!(obj[r.name()].is_u64(), "{v}");
        }
        assert_eq!(line().is_some(), any());
    }
}
