//! Redis's glob patterns (KEYS, SCAN MATCH, CONFIG GET, PSUBSCRIBE, PUBSUB CHANNELS).

/// Redis-style glob: `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes.
pub fn glob(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0, 0);
    // Backtracking point for the last `*`: (pattern after it, string position).
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        let step = match pat.get(p) {
            Some(b'*') => {
                star = Some((p + 1, i));
                p += 1;
                continue;
            }
            Some(b'?') => Some(p + 1),
            Some(b'[') => class(pat, p, s[i]),
            Some(b'\\') if p + 1 < pat.len() => (pat[p + 1] == s[i]).then_some(p + 2),
            Some(&c) => (c == s[i]).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(np), _) => {
                p = np;
                i += 1;
            }
            (None, Some((sp, si))) => {
                p = sp;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            (None, None) => return false,
        }
    }
    pat[p.min(pat.len())..].iter().all(|&c| c == b'*')
}

/// A `[...]` class at `pat[p]` against `c`: the position after it when it matches.
fn class(pat: &[u8], p: usize, c: u8) -> Option<usize> {
    let mut j = p + 1;
    let negate = pat.get(j) == Some(&b'^');
    if negate {
        j += 1;
    }
    let mut hit = false;
    while j < pat.len() && pat[j] != b']' {
        if pat[j] == b'\\' && j + 1 < pat.len() {
            hit |= pat[j + 1] == c;
            j += 2;
        } else if j + 2 < pat.len() && pat[j + 1] == b'-' && pat[j + 2] != b']' {
            let (lo, hi) = (pat[j].min(pat[j + 2]), pat[j].max(pat[j + 2]));
            hit |= (lo..=hi).contains(&c);
            j += 3;
        } else {
            hit |= pat[j] == c;
            j += 1;
        }
    }
    (hit != negate).then_some((j + 1).min(pat.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_redis() {
        for (p, s, m) in [
            ("*", "anything", true),
            ("h?llo", "hello", true),
            ("h*llo", "heeeello", true),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "axb", false),
            ("*:*", "user:1", true),
            ("user:*", "usr:1", false),
            ("", "", true),
        ] {
            assert_eq!(glob(p.as_bytes(), s.as_bytes()), m, "{p} ~ {s}");
        }
    }
}
