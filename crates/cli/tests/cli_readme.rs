//! The README's usage examples say what the binary prints: the sample counts of its
//! `gen sigs` / `verify` example (read from the README itself, so a change to either
//! side fails here) and `monitor --json` needing `--once`.

mod common;

use common::{repo_root, temp, wirespeed};

/// The `# count=.. valid=.. invalid=..` comment under the README's `verify` example.
fn readme_counts() -> (String, String) {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let gen = lines
        .iter()
        .find(|l| l.starts_with("wirespeed gen sigs "))
        .expect("the README's gen sigs example")
        .split('#')
        .next()
        .expect("command")
        .trim()
        .to_string();
    let counts = lines
        .iter()
        .find(|l| l.starts_with("# count="))
        .expect("the README's verify summary")
        .trim_start_matches("# ")
        .to_string();
    (gen, counts)
}

#[test]
fn the_verify_example_prints_the_counts_the_readme_shows() {
    let (gen, counts) = readme_counts();
    // The counts part only: secs and per_sec vary.
    let want: String = counts
        .split_whitespace()
        .filter(|f| {
            ["count=", "valid=", "invalid="]
                .iter()
                .any(|k| f.starts_with(k))
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(want.split(' ').count(), 3, "{counts}");
    let out = temp("readme", "sigs.bin");
    let out_s = out.to_str().expect("utf-8");
    let mut args: Vec<&str> = gen.split_whitespace().skip(1).collect();
    let at = args.iter().position(|a| *a == "--out").expect("--out") + 1;
    args[at] = out_s;
    let o = wirespeed(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = wirespeed(&["verify", out_s, "--mode", "strict"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = String::from_utf8_lossy(&o.stdout);
    assert!(
        got.starts_with(&format!("{want} secs=")),
        "README: {want}; got: {got}"
    );
    let _ = std::fs::remove_file(&out);
}

#[test]
fn monitor_json_needs_once_as_the_readme_says() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    assert!(readme.contains("--json needs --once"), "the README says it");
    let o = wirespeed(&["monitor", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--once"), "{err}");
}

/// The figures in `text`: numbers with a unit (`µs`, `us`, `ms`, `ns`, `s`, `/s`, `x`,
/// `%`) and numbers with thousands separators, as written (`18.4 µs`, `0.76x`,
/// `6673/s`, `1,711,843`). Numbers inside words (`p50`, `v1.5`) and bare numbers (thread
/// counts, bit sizes, dates) are not figures.
fn figures(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let digit = |i: usize| c.get(i).is_some_and(|ch| ch.is_ascii_digit());
    let word = |i: usize| {
        c.get(i)
            .is_some_and(|ch| ch.is_alphanumeric() || *ch == '_')
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if !digit(i) {
            i += 1;
            continue;
        }
        let inside = i > 0 && (word(i - 1) || c[i - 1] == '.' || c[i - 1] == ',');
        let start = i;
        while digit(i) {
            i += 1;
        }
        if inside {
            continue;
        }
        let mut separated = false;
        while c.get(i) == Some(&',') && (1..=3).all(|k| digit(i + k)) && !digit(i + 4) {
            i += 4;
            separated = true;
        }
        if c.get(i) == Some(&'.') && digit(i + 1) {
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        let mut figure: String = c[start..i].iter().collect();
        let unit_at = |at: usize, unit: &str| {
            let u: Vec<char> = unit.chars().collect();
            c.get(at..at + u.len()) == Some(&u[..]) && (unit == "%" || !word(at + u.len()))
        };
        let spaced = if c.get(i) == Some(&' ') { i + 1 } else { i };
        if let Some(u) = ["/s", "x", "%"].into_iter().find(|u| unit_at(i, u)) {
            figure.push_str(u);
        } else if let Some(u) = ["µs", "us", "ms", "ns", "s"]
            .into_iter()
            .find(|u| unit_at(spaced, u))
        {
            figure.push_str(&format!(" {u}"));
        } else if !separated {
            continue;
        }
        out.push(figure);
    }
    out
}

/// A markdown table's separator row (`|---|---:|`).
fn is_separator(line: &str) -> bool {
    line.starts_with('|') && line.chars().all(|ch| "|-: ".contains(ch))
}

/// Whether `figure` occurs in `text` as a whole figure (not inside a longer number).
fn holds_figure(text: &str, figure: &str) -> bool {
    text.match_indices(figure).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let mut after = text[at + figure.len()..].chars();
        let (a1, a2) = (after.next(), after.next());
        let starts = !before.is_some_and(|b| b.is_alphanumeric() || b == '.' || b == ',');
        let ends = if figure.ends_with(|ch: char| ch.is_ascii_digit()) {
            // Not followed by a digit, nor by a separator and a digit.
            let digit = |c: Option<char>| c.is_some_and(|a| a.is_ascii_digit());
            let continues = digit(a1) || (matches!(a1, Some('.' | ',')) && digit(a2));
            !continues
        } else {
            figure.ends_with('%') || !a1.is_some_and(|a| a.is_alphanumeric())
        };
        starts && ends
    })
}

#[test]
fn headline_numbers_come_from_the_current_benchmark_figures() {
    // The extraction itself, on the kinds of cells the table holds.
    assert_eq!(
        figures("p50 18.4 µs; 0.76x, RSA-2048 6673/s, 1,711,843/s (2 threads, 2^20) +0.67% 2.347 s v1.5"),
        ["18.4 µs", "0.76x", "6673/s", "1,711,843/s", "0.67%", "2.347 s"]
    );
    assert!(holds_figure("a 1.45x b", "1.45x") && !holds_figure("a 11.45x b", "1.45x"));
    assert!(!holds_figure("155,306,000", "155,306") && !holds_figure("2.89 msec", "2.89 ms"));

    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let bench = std::fs::read_to_string(root.join("BENCHMARKS.md")).expect("BENCHMARKS.md");
    let current = bench
        .split("docs/benchmarks-history.md")
        .next()
        .expect("BENCHMARKS.md");
    assert!(
        current.len() < bench.len(),
        "BENCHMARKS.md links the history (docs/benchmarks-history.md) after its current figures"
    );
    let current = norm(current);

    let from = readme
        .find("## Headline numbers")
        .expect("the README's Headline numbers");
    let section = &readme[from..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let lines: Vec<&str> = section.lines().map(str::trim).collect();
    // Table rows, without the header (the line above a separator) and the separator.
    let rows: Vec<&str> = (0..lines.len())
        .filter(|&i| {
            lines[i].starts_with('|')
                && !is_separator(lines[i])
                && !lines.get(i + 1).is_some_and(|next| is_separator(next))
        })
        .map(|i| lines[i])
        .collect();
    assert!(
        rows.len() >= 10,
        "the Headline numbers table: {} rows",
        rows.len()
    );

    let mut checked = 0;
    let mut missing = Vec::new();
    for row in &rows {
        let what = row.split('|').nth(1).unwrap_or("").trim();
        if !(row.contains("| Zen 4 |") || row.contains("| Zen 5 |")) {
            missing.push(format!("{what}: no CPU family (Zen 4 or Zen 5)"));
        }
        for cell in row.split('|') {
            for figure in figures(&norm(cell)) {
                checked += 1;
                if !holds_figure(&current, &figure) {
                    missing.push(format!("{what}: {figure}"));
                }
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} figures found in the Headline numbers"
    );
    assert!(
        missing.is_empty(),
        "figures of the README's Headline numbers missing from BENCHMARKS.md's current \
         figures (before the history link):\n  {}",
        missing.join("\n  ")
    );
}
