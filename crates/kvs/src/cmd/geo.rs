//! The geo family: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE,
//! GEORADIUS and GEORADIUSBYMEMBER (with STORE / STOREDIST) and their `_RO` forms.
//!
//! A geo index is an ordinary sorted set whose scores are Redis's 52-bit geohashes (see
//! `hash`), so ZRANGE WITHSCORES shows Redis's numbers, ZADD or a set written by Redis
//! answers GEOPOS the same, and the zset code does the storing: GEOADD turns its
//! triples into the ZADD Redis would run (NX, XX and CH passed on) and runs the ZADD
//! handler, which logs it. Replies follow Redis 7: distances with four decimals (C's
//! `%.4f`), coordinates with up to 17 (`%.17Lf` less trailing zeros; RESP3 doubles),
//! every error text and the order in which errors are found.
//!
//! A search scans the score ranges of the centre's cell and its eight neighbours at the
//! step the radius calls for, in Redis's order, keeps the points inside the circle or
//! box (a bound without trigonometry first drops most of those certainly outside; the
//! exact test is Redis's), stops early with COUNT ... ANY, and orders them by distance
//! as Redis's sorts do (see `order`), so equal distances come out in Redis's order too.
//! The STORE forms replace the destination with a sorted set of the results (their
//! geohashes, or with STOREDIST their distances in the unit asked), logged as the
//! destination's deletion and a ZADD; no result deletes it. Keyspace events: `zadd`
//! for GEOADD, `georadiusstore` / `geosearchstore` for a stored result, `del` when none
//! was.

mod hash;
mod order;

use hash::{Search, Shape};

use super::zsets::{add_on, log_zadd};
use super::{eq, parse_i64, Ctx, SYNTAX, WRONGTYPE};
use crate::cmd::strings::parse_float;
use crate::resp::{Proto, Writer};
use crate::value::{Value, ZSet};

const NOT_FLOAT: &str = "ERR value is not a valid float";
const NOT_MEMBER: &str = "ERR could not decode requested zset member";
const BAD_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";

/// Metres in one `unit` (m, km, ft, mi, any case).
fn unit(a: &[u8]) -> Result<f64, &'static str> {
    match crate::cmd::lower(a).as_str() {
        "m" => Ok(1.0),
        "km" => Ok(1000.0),
        "ft" => Ok(0.3048),
        "mi" => Ok(1609.34),
        _ => Err(BAD_UNIT),
    }
}

/// A number argument as Redis reads one (`strtod`, refusing NaN and what `strtod`
/// reports out of range): [`parse_float`] less an overflow to infinity and an underflow
/// to zero. (Hexadecimal floats, which `strtod` also reads, are refused, as the shared
/// parser refuses them for every command.)
fn double(a: &[u8]) -> Option<f64> {
    let v = parse_float(a)?;
    let mantissa = a
        .split(|&c| c == b'e' || c == b'E')
        .next()
        .unwrap_or_default();
    let overflow = v.is_infinite() && a.iter().any(u8::is_ascii_digit);
    let underflow = v == 0.0 && mantissa.iter().any(|c| (b'1'..=b'9').contains(c));
    (!overflow && !underflow).then_some(v)
}

/// A longitude and latitude argument pair, within the storable ranges.
fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), String> {
    let (Some(x), Some(y)) = (double(lon), double(lat)) else {
        return Err(NOT_FLOAT.into());
    };
    if !(hash::LON_MIN..=hash::LON_MAX).contains(&x)
        || !(hash::LAT_MIN..=hash::LAT_MAX).contains(&y)
    {
        return Err(format!("ERR invalid longitude,latitude pair {x:.6},{y:.6}"));
    }
    Ok((x, y))
}

/// C's `%.4f`, as distances are replied.
fn fixed4(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    format!("{v:.4}")
}

/// A coordinate as Redis replies it: `%.17Lf` without trailing zeros (and `0` for -0).
fn human(v: f64) -> String {
    if !v.is_finite() {
        return fixed4(v);
    }
    let mut s = format!("{v:.17}");
    if s.contains('.') {
        s.truncate(s.trim_end_matches('0').trim_end_matches('.').len());
    }
    if s == "-0" {
        s = "0".into();
    }
    s
}

fn reply_coord(w: &mut Writer, v: f64) {
    let s = human(v);
    if w.proto() == Proto::Resp3 {
        w.raw(format!(",{s}\r\n").as_bytes());
    } else {
        w.bulk(s.as_bytes());
    }
}

/// GEOADD key [NX | XX] [CH] longitude latitude member [...]: the ZADD of the members'
/// geohashes.
pub fn geoadd(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (mut nx, mut xx, mut i) = (false, false, 2);
    while i < args.len() {
        if eq(args[i], "nx") {
            nx = true;
        } else if eq(args[i], "xx") {
            xx = true;
        } else if !eq(args[i], "ch") {
            break;
        }
        i += 1;
    }
    let triples = &args[i..];
    if !triples.len().is_multiple_of(3) || (nx && xx) {
        return w.error(SYNTAX);
    }
    let mut scores = Vec::with_capacity(triples.len() / 3);
    for t in triples.chunks(3) {
        match lon_lat(t[0], t[1]) {
            Ok((lon, lat)) => scores.push(hash::score_of(lon, lat).unwrap_or(0).to_string()),
            Err(e) => return w.error(&e),
        }
    }
    let mut zadd: Vec<&[u8]> = Vec::with_capacity(i + 2 * scores.len());
    zadd.push(b"zadd");
    zadd.extend_from_slice(&args[1..i]);
    for (s, t) in scores.iter().zip(triples.chunks(3)) {
        zadd.push(s.as_bytes());
        zadd.push(t[2]);
    }
    super::zsets::zadd(ctx, &zadd, w);
}

/// The scores of `members` in the sorted set at `key` (None: no key).
fn scores_of(
    ctx: &mut Ctx,
    key: &[u8],
    members: &[&[u8]],
) -> Result<Option<Vec<Option<f64>>>, &'static str> {
    crate::cmd::read::<ZSet, _>(ctx, key, |z| members.iter().map(|m| z.score(m)).collect())
}

/// The scores of GEOPOS's and GEOHASH's members (`args[2..]`; all None without the
/// key), or the error already written.
fn member_scores(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) -> Option<Vec<Option<f64>>> {
    let members = &args[2..];
    match scores_of(ctx, args[1], members) {
        Ok(s) => Some(s.unwrap_or_else(|| vec![None; members.len()])),
        Err(e) => {
            w.error(e);
            None
        }
    }
}

/// GEOPOS key [member ...].
pub fn geopos(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(scores) = member_scores(ctx, args, w) else {
        return;
    };
    w.array(scores.len());
    for s in scores {
        match s {
            Some(s) => {
                let (lon, lat) = hash::position(s);
                w.array(2);
                reply_coord(w, lon);
                reply_coord(w, lat);
            }
            None => w.null_array(),
        }
    }
}

/// GEOHASH key [member ...]: standard 11-character geohashes.
pub fn geohash(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(scores) = member_scores(ctx, args, w) else {
        return;
    };
    w.array(scores.len());
    for s in scores {
        match s {
            Some(s) => w.bulk(&hash::geohash_string(s)),
            None => w.null(),
        }
    }
}

/// GEODIST key member1 member2 [M | KM | FT | MI].
pub fn geodist(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let to_meters = match args.len() {
        4 => 1.0,
        5 => match unit(args[4]) {
            Ok(u) => u,
            Err(e) => return w.error(e),
        },
        _ => return w.error(SYNTAX),
    };
    match scores_of(ctx, args[1], &args[2..4]) {
        Err(e) => w.error(e),
        Ok(Some(s)) => match (s[0], s[1]) {
            (Some(a), Some(b)) => {
                let ((lon1, lat1), (lon2, lat2)) = (hash::position(a), hash::position(b));
                let d = hash::distance(lon1, lat1, lon2, lat2) / to_meters;
                w.bulk(fixed4(d).as_bytes());
            }
            _ => w.null(),
        },
        Ok(None) => w.null(),
    }
}

/// Which search command runs.
#[derive(Clone, Copy)]
struct Form {
    /// GEORADIUS: the centre's coordinates after the key.
    coords: bool,
    /// GEORADIUSBYMEMBER: a member after the key.
    member: bool,
    /// The `_RO` forms: no STORE.
    read_only: bool,
    /// GEOSEARCH / GEOSEARCHSTORE: FROM... and BY... options.
    search: bool,
    /// GEOSEARCHSTORE: destination first.
    store: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// A parsed search.
struct Query<'a> {
    area: Search,
    dist: bool,
    hash: bool,
    coord: bool,
    sort: Sort,
    any: bool,
    /// 0: no limit.
    count: usize,
    store: Option<&'a [u8]>,
    store_dist: bool,
}

/// A point found (its member borrowed from the sorted set).
#[derive(Clone, Copy)]
struct Point<'z> {
    member: &'z [u8],
    score: f64,
    lon: f64,
    lat: f64,
    dist: f64,
}

/// `radius unit`.
fn radius_arg(r: &[u8], u: &[u8]) -> Result<(f64, f64), String> {
    let r = double(r).ok_or("ERR need numeric radius")?;
    if r < 0.0 {
        return Err("ERR radius cannot be negative".into());
    }
    Ok((r, unit(u)?))
}

/// `width height unit`.
fn box_arg(a: &[&[u8]]) -> Result<(f64, f64, f64), String> {
    let w = double(a[0]).ok_or("ERR need numeric width")?;
    let h = double(a[1]).ok_or("ERR need numeric height")?;
    if h < 0.0 || w < 0.0 {
        return Err("ERR height or width cannot be negative".into());
    }
    Ok((w, h, unit(a[2])?))
}

/// The position of `member` in `z`.
fn member_at(z: &ZSet, member: &[u8]) -> Result<(f64, f64), String> {
    z.score(member)
        .map(hash::position)
        .ok_or_else(|| NOT_MEMBER.into())
}

/// Parses a search's arguments in Redis's order, looking members up in `z` (None: the
/// key is absent, and members are not looked up); the first error found is the reply.
fn parse<'a>(args: &[&'a [u8]], form: Form, z: Option<&ZSet>) -> Result<Query<'a>, String> {
    let mut q = Query {
        area: Search {
            lon: 0.0,
            lat: 0.0,
            shape: Shape::Radius(0.0),
            to_meters: 0.0,
        },
        dist: false,
        hash: false,
        coord: false,
        sort: Sort::None,
        any: false,
        count: 0,
        store: None,
        store_dist: false,
    };
    let base = if form.coords {
        (q.area.lon, q.area.lat) = lon_lat(args[2], args[3])?;
        let (r, u) = radius_arg(args[4], args[5])?;
        (q.area.shape, q.area.to_meters) = (Shape::Radius(r), u);
        6
    } else if form.member {
        if let Some(z) = z {
            (q.area.lon, q.area.lat) = member_at(z, args[2])?;
            let (r, u) = radius_arg(args[3], args[4])?;
            (q.area.shape, q.area.to_meters) = (Shape::Radius(r), u);
        }
        5
    } else if form.store {
        q.store = Some(args[1]);
        3
    } else {
        2
    };
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) =
        (false, false, false, false);
    let stores = !form.read_only && !form.search;
    let mut i = base;
    while i < args.len() {
        let (a, after) = (args[i], args.len() - i - 1);
        if eq(a, "withdist") {
            q.dist = true;
        } else if eq(a, "withhash") {
            q.hash = true;
        } else if eq(a, "withcoord") {
            q.coord = true;
        } else if eq(a, "any") {
            q.any = true;
        } else if eq(a, "asc") {
            q.sort = Sort::Asc;
        } else if eq(a, "desc") {
            q.sort = Sort::Desc;
        } else if eq(a, "count") && after >= 1 {
            // As string2ll: no sign but '-', no leading zeros ("-0" included).
            let n = parse_i64(args[i + 1])
                .filter(|_| !args[i + 1].starts_with(b"-0"))
                .ok_or(super::NOT_INT)?;
            if n <= 0 {
                return Err("ERR COUNT must be > 0".into());
            }
            q.count = usize::try_from(n).unwrap_or(usize::MAX);
            i += 1;
        } else if (eq(a, "store") || eq(a, "storedist")) && after >= 1 && stores {
            q.store = Some(args[i + 1]);
            q.store_dist = eq(a, "storedist");
            i += 1;
        } else if eq(a, "storedist") && form.search && form.store {
            q.store_dist = true;
        } else if eq(a, "frommember") && after >= 1 && form.search && !from_lonlat {
            if let Some(z) = z {
                (q.area.lon, q.area.lat) = member_at(z, args[i + 1])?;
            }
            from_member = true;
            i += 1;
        } else if eq(a, "fromlonlat") && after >= 2 && form.search && !from_member {
            (q.area.lon, q.area.lat) = lon_lat(args[i + 1], args[i + 2])?;
            from_lonlat = true;
            i += 2;
        } else if eq(a, "byradius") && after >= 2 && form.search && !by_box {
            let (r, u) = radius_arg(args[i + 1], args[i + 2])?;
            (q.area.shape, q.area.to_meters) = (Shape::Radius(r), u);
            by_radius = true;
            i += 2;
        } else if eq(a, "bybox") && after >= 3 && form.search && !by_radius {
            let (bw, bh, u) = box_arg(&args[i + 1..i + 4])?;
            (q.area.shape, q.area.to_meters) = (Shape::Box(bw, bh), u);
            by_box = true;
            i += 3;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if q.store.is_some() && (q.dist || q.hash || q.coord) {
        let what = if form.store {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        ));
    }
    let name = String::from_utf8_lossy(args[0]);
    if form.search && !(from_member || from_lonlat) {
        return Err(format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        ));
    }
    if form.search && !(by_radius || by_box) {
        return Err(format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        ));
    }
    if q.any && q.count == 0 {
        return Err("ERR the ANY argument requires COUNT argument".into());
    }
    if q.count != 0 && q.sort == Sort::None && !q.any {
        // The nearest COUNT: sorted, nearest first.
        q.sort = Sort::Asc;
    }
    Ok(q)
}

/// The points of `z` in the search area, in scan order (at most COUNT with ANY).
fn scan<'z>(z: &'z ZSet, q: &Query) -> Vec<Point<'z>> {
    let cells = q.area.cells();
    let far = q.area.far_test();
    let limit = if q.any { q.count } else { 0 };
    let full = |found: &Vec<Point>| limit != 0 && found.len() >= limit;
    let mut found = Vec::new();
    let mut last = 0;
    for (i, cell) in cells.iter().enumerate() {
        // A huge radius can make neighbours the same cell: each is scanned once.
        if *cell == hash::Cell::default() || (last != 0 && cells[last] == *cell) {
            continue;
        }
        if full(&found) {
            break;
        }
        let (min, max) = cell.scores();
        for (m, score) in z.iter_from(min) {
            // Scores are never NaN.
            if score >= max {
                break;
            }
            let (lon, lat) = hash::position(score);
            if far.far(lon, lat) {
                continue;
            }
            if let Some(dist) = q.area.contains(lon, lat) {
                found.push(Point {
                    member: m,
                    score,
                    lon,
                    lat,
                    dist,
                });
            }
            if full(&found) {
                break;
            }
        }
        last = i;
    }
    found
}

/// The points to reply or store, in order.
fn ordered<'z>(found: Vec<Point<'z>>, q: &Query) -> Vec<Point<'z>> {
    let n = found.len();
    let take = if q.count == 0 { n } else { n.min(q.count) };
    let mut idx: Vec<usize> = (0..n).collect();
    let sign = match q.sort {
        Sort::None => 0,
        Sort::Asc => 1,
        Sort::Desc => -1,
    };
    if sign != 0 {
        let cmp = |i: usize, j: usize| sign * order::compare(found[i].dist, found[j].dist);
        if take == n {
            order::merge_sort(&mut idx, &cmp);
        } else if take > 0 {
            order::partial_sort(&mut idx, &cmp, (0, take - 1));
        }
    }
    idx.iter().take(take).map(|&i| found[i]).collect()
}

/// GEORADIUS / GEORADIUS_RO key longitude latitude radius unit [options].
pub fn georadius(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let read_only = eq(args[0], "georadius_ro");
    search(
        ctx,
        args,
        w,
        Form {
            coords: true,
            member: false,
            read_only,
            search: false,
            store: false,
        },
    );
}

/// GEORADIUSBYMEMBER / GEORADIUSBYMEMBER_RO key member radius unit [options].
pub fn georadiusbymember(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let read_only = eq(args[0], "georadiusbymember_ro");
    search(
        ctx,
        args,
        w,
        Form {
            coords: false,
            member: true,
            read_only,
            search: false,
            store: false,
        },
    );
}

/// GEOSEARCH key FROMMEMBER member | FROMLONLAT lon lat, BYRADIUS r unit | BYBOX w h
/// unit, [ASC | DESC] [COUNT n [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH].
pub fn geosearch(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    search(
        ctx,
        args,
        w,
        Form {
            coords: false,
            member: false,
            read_only: true,
            search: true,
            store: false,
        },
    );
}

/// GEOSEARCHSTORE destination source ... [STOREDIST].
pub fn geosearchstore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    search(
        ctx,
        args,
        w,
        Form {
            coords: false,
            member: false,
            read_only: false,
            search: true,
            store: true,
        },
    );
}

fn search(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer, form: Form) {
    let src = args[if form.store { 2 } else { 1 }];
    if form.store {
        ctx.keys.lock_keys([args[1], src].into_iter());
    } else if !form.read_only {
        // Every argument that may be the destination, locked with the source up front.
        let dsts = args
            .windows(2)
            .filter(|p| eq(p[0], "store") || eq(p[0], "storedist"));
        ctx.keys
            .lock_keys(std::iter::once(src).chain(dsts.map(|p| p[1])));
    }
    let now = ctx.now;
    let z = match ctx.keys.get(src, now).map(|e| &e.value) {
        None => None,
        Some(Value::ZSet(z)) => Some(&**z),
        Some(_) => return w.error(WRONGTYPE),
    };
    let q = match parse(args, form, z) {
        Ok(q) => q,
        Err(e) => return w.error(&e),
    };
    let points = ordered(z.map(|z| scan(z, &q)).unwrap_or_default(), &q);
    let to_meters = q.area.to_meters;
    if let Some(dst) = q.store {
        let items: Vec<(Vec<u8>, f64)> = points
            .iter()
            .map(|p| {
                let score = if q.store_dist {
                    p.dist / to_meters
                } else {
                    p.score
                };
                (p.member.to_vec(), score)
            })
            .collect();
        return store(ctx, dst, &items, w);
    }
    let extras = usize::from(q.dist) + usize::from(q.hash) + usize::from(q.coord);
    w.array(points.len());
    for p in &points {
        if extras > 0 {
            w.array(extras + 1);
        }
        w.bulk(p.member);
        if q.dist {
            w.bulk(fixed4(p.dist / to_meters).as_bytes());
        }
        if q.hash {
            w.int(p.score as i64);
        }
        if q.coord {
            w.array(2);
            reply_coord(w, p.lon);
            reply_coord(w, p.lat);
        }
    }
}

/// Replaces `dst` with a sorted set of `items` (deletes it when there is none); replies
/// the number stored.
fn store(ctx: &mut Ctx, dst: &[u8], items: &[(Vec<u8>, f64)], w: &mut Writer) {
    let now = ctx.now;
    if ctx.keys.contains(dst, now) {
        ctx.keys.remove(dst);
        ctx.log_del(dst);
    }
    if !items.is_empty() {
        let refs: Vec<(f64, &[u8])> = items.iter().map(|(m, s)| (*s, &m[..])).collect();
        let _ = add_on(ctx.keys.store(dst), dst, &refs, now);
        log_zadd(ctx, dst, items);
    }
    w.int(items.len() as i64);
}

/// The key positions of GEORADIUS and GEORADIUSBYMEMBER (`name`) in `args` (with the
/// name): the source, then what Redis's key specifications find: the argument after
/// the first STORE and after the first STOREDIST, each searched for from the argument
/// after the unit to the second last.
pub fn radius_keys(name: &str, args: &[&[u8]]) -> Vec<usize> {
    let from = if name == "georadius" { 6 } else { 5 };
    let mut keys = vec![1];
    for word in ["store", "storedist"] {
        if let Some(i) = (from..args.len().saturating_sub(1)).find(|&i| eq(args[i], word)) {
            keys.push(i + 1);
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_redis_prints_them() {
        assert_eq!(fixed4(166274.15156960033), "166274.1516");
        assert_eq!(fixed4(0.0), "0.0000");
        assert_eq!(fixed4(0.00005), "0.0001");
        assert_eq!(fixed4(f64::NAN), "nan");
        assert_eq!(human(13.361389338970184), "13.36138933897018433");
        assert_eq!(human(180.0), "180");
        assert_eq!(human(-0.0), "0");
        assert_eq!(human(0.5), "0.5");
        assert_eq!(human(-179.99999731779099), "-179.99999731779098511");
    }

    #[test]
    fn units_and_arguments() {
        assert_eq!(unit(b"KM"), Ok(1000.0));
        assert_eq!(unit(b"mi"), Ok(1609.34));
        assert_eq!(unit(b"yd"), Err(BAD_UNIT));
        assert_eq!(
            lon_lat(b"200", b"1"),
            Err("ERR invalid longitude,latitude pair 200.000000,1.000000".into())
        );
        assert_eq!(lon_lat(b"nan", b"1"), Err(NOT_FLOAT.into()));
        assert_eq!(lon_lat(b"-180", b"85.05112878"), Ok((-180.0, 85.05112878)));
        assert_eq!(
            radius_arg(b"-1", b"m"),
            Err("ERR radius cannot be negative".into())
        );
        assert_eq!(radius_arg(b"inf", b"ft"), Ok((f64::INFINITY, 0.3048)));
        // strtod's range errors.
        assert_eq!(double(b"1e400"), None);
        assert_eq!(double(b"-1e-400"), None);
        assert_eq!(double(b"0e-400"), Some(0.0));
        assert_eq!(double(b"1e-310"), Some(1e-310));
        assert_eq!(double(b"-Infinity"), Some(f64::NEG_INFINITY));
    }

    #[test]
    fn store_keys_are_found_as_redis_finds_them() {
        let a = |s: &'static str| s.split(' ').map(str::as_bytes).collect::<Vec<_>>();
        assert_eq!(
            radius_keys("georadius", &a("georadius k 1 1 1 km")),
            vec![1]
        );
        assert_eq!(
            radius_keys("georadius", &a("georadius k 1 1 1 km store d")),
            vec![1, 7]
        );
        assert_eq!(
            radius_keys("georadius", &a("georadius k 1 1 1 km STORE d storedist e")),
            vec![1, 7, 9]
        );
        assert_eq!(
            radius_keys("georadius", &a("georadius k 1 1 1 km withdist store")),
            vec![1]
        );
        assert_eq!(
            radius_keys(
                "georadiusbymember",
                &a("georadiusbymember k m 1 km storedist d")
            ),
            vec![1, 6]
        );
        assert_eq!(
            radius_keys("georadiusbymember", &a("georadiusbymember k")),
            vec![1]
        );
    }
}
