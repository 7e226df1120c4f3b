//! The last of the CLI's test targets (cargo runs a package's integration tests in the
//! order of their names): one visible line counting the tests of this `cargo test` run
//! that were skipped because a real client or tool is missing (redis-server,
//! redis-sentinel, memcached, redis-py, python3, ...), by reason. In CI (`CI=true`) no
//! test may have been skipped.

mod common;

use std::collections::BTreeMap;
use std::io::Write;

#[test]
fn skipped_tests_are_counted_in_one_line() {
    let tally = common::skip_tally();
    let text = std::fs::read_to_string(&tally).unwrap_or_default();
    let _ = std::fs::remove_file(&tally);
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        *by_reason.entry(line).or_default() += 1;
    }
    let total: usize = by_reason.values().sum();
    if total > 0 {
        let reasons: Vec<String> = by_reason
            .iter()
            .map(|(why, n)| format!("{why} ({n})"))
            .collect();
        let _ = writeln!(
            std::io::stderr(),
            "skipped in this run: {total} test(s) of the CLI: {}",
            reasons.join("; ")
        );
    }
    assert!(
        !common::in_ci() || total == 0,
        "{total} test(s) skipped in CI: {text}"
    );
}
