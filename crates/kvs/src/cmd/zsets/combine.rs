//! ZUNION, ZINTER, ZDIFF, ZINTERCARD and the STORE forms: weighted inputs combined by an
//! aggregate.

use super::*;

/// ZUNION / ZINTER / ZDIFF numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM | MIN |
/// MAX] [WITHSCORES], and the STORE forms (destination first, no WITHSCORES). Plain
/// sets count as members scored 1. ZDIFF takes neither WEIGHTS nor AGGREGATE.
pub fn zcombine(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = crate::cmd::lower(args[0]);
    let store = name.ends_with("store");
    let card = name == "zintercard";
    let op = if card {
        "inter"
    } else {
        &name[1..name.len() - if store { 5 } else { 0 }]
    };
    let (dst, first) = if store { (Some(args[1]), 2) } else { (None, 1) };
    let n = match parse_i64(args[first]) {
        Some(n) if n > 0 => n as usize,
        Some(_) => {
            return w.error(&format!(
                "ERR at least 1 input key is needed for '{name}' command"
            ))
        }
        None => return w.error(NOT_INT),
    };
    if args.len() < first + 1 + n {
        return w.error(SYNTAX);
    }
    let keys = &args[first + 1..first + 1 + n];
    let mut weights = vec![1.0; n];
    let (mut agg, mut scores) = (0u8, false); // 0 sum, 1 min, 2 max
    let mut limit = 0usize;
    let mut i = first + 1 + n;
    while i < args.len() {
        if card && eq(args[i], "limit") && i + 1 < args.len() {
            match parse_i64(args[i + 1]) {
                Some(l) if l >= 0 => limit = l as usize,
                _ => return w.error("ERR LIMIT can't be negative"),
            }
            i += 2;
        } else if card {
            return w.error(SYNTAX);
        } else if op != "diff" && eq(args[i], "weights") && i + n < args.len() {
            for (j, wt) in weights.iter_mut().enumerate() {
                match parse_float(args[i + 1 + j]) {
                    Some(v) => *wt = v,
                    None => return w.error("ERR weight value is not a float"),
                }
            }
            i += 1 + n;
        } else if op != "diff" && eq(args[i], "aggregate") && i + 1 < args.len() {
            agg = match crate::cmd::lower(args[i + 1]).as_str() {
                "sum" => 0,
                "min" => 1,
                "max" => 2,
                _ => return w.error(SYNTAX),
            };
            i += 2;
        } else if !store && eq(args[i], "withscores") {
            scores = true;
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
    }
    let mut all: Vec<&[u8]> = keys.to_vec();
    all.extend(dst);
    ctx.keys.lock_keys(all.iter().copied());
    let mut inputs: Vec<Vec<(Vec<u8>, f64)>> = Vec::with_capacity(n);
    for k in keys {
        let items = match ctx.keys.get(k, ctx.now).map(|e| &e.value) {
            None => Vec::new(),
            Some(Value::ZSet(z)) => z.iter().map(|(m, s)| (m.to_vec(), s)).collect(),
            Some(Value::Set(s)) => s.iter().map(|m| (m.to_vec(), 1.0)).collect(),
            Some(_) => return w.error(WRONGTYPE),
        };
        inputs.push(items);
    }
    let mut result = combine(&inputs, &weights, agg, op);
    if card {
        let n = result.len();
        return w.int(if limit > 0 { n.min(limit) } else { n } as i64);
    }
    result.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let Some(dst) = dst else {
        return reply_members(w, &result, scores);
    };
    let now = ctx.now;
    ctx.keys.remove(dst);
    ctx.log_del(dst);
    if !result.is_empty() {
        let refs: Vec<(f64, &[u8])> = result.iter().map(|(m, s)| (*s, &m[..])).collect();
        let _ = add_on(ctx.keys.store(dst), dst, &refs, now);
        log_zadd(ctx, dst, &result);
    }
    w.int(result.len() as i64);
}

/// Union, intersection or difference of weighted inputs (a NaN from inf * 0 or
/// inf - inf counts as 0, as in Redis).
pub(crate) fn combine(
    inputs: &[Vec<(Vec<u8>, f64)>],
    weights: &[f64],
    agg: u8,
    op: &str,
) -> Vec<(Vec<u8>, f64)> {
    let fix = |v: f64| if v.is_nan() { 0.0 } else { v };
    if op == "diff" {
        let others: std::collections::HashSet<&[u8]> = inputs[1..]
            .iter()
            .flat_map(|i| i.iter().map(|(m, _)| &m[..]))
            .collect();
        return inputs[0]
            .iter()
            .filter(|(m, _)| !others.contains(&m[..]))
            .cloned()
            .collect();
    }
    let mut acc: std::collections::HashMap<&[u8], (f64, usize)> = std::collections::HashMap::new();
    for (items, wt) in inputs.iter().zip(weights) {
        for (m, s) in items {
            let v = fix(s * wt);
            acc.entry(m)
                .and_modify(|(cur, seen)| {
                    *cur = match agg {
                        0 => fix(*cur + v),
                        1 => cur.min(v),
                        _ => cur.max(v),
                    };
                    *seen += 1;
                })
                .or_insert((v, 1));
        }
    }
    acc.into_iter()
        .filter(|(_, (_, seen))| op != "inter" || *seen == inputs.len())
        .map(|(m, (s, _))| (m.to_vec(), s))
        .collect()
}
