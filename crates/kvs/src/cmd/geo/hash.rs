//! The geohash arithmetic behind the geo commands, computed as Redis computes it so that
//! scores, positions, distances and the cells a search visits are the same bit for bit.
//!
//! - A position is a pair of cell numbers of `step` bits each (26 for a stored point):
//!   the latitude's offset in `[-85.05112878, 85.05112878]` and the longitude's in
//!   `[-180, 180]`, each scaled to `2^step` and truncated. The two are interleaved, the
//!   latitude on the even bits and the longitude on the odd ones, so a stored point is a
//!   52-bit integer, kept as the sorted-set score (exact in an f64).
//! - Decoding gives the cell's centre, clamped to the ranges. A score that is not such
//!   an integer (a sorted set written by ZADD) is first converted as x86-64 converts a
//!   double to `uint64_t` (`cvttsd2si`, with its `0x8000000000000000` for values out of
//!   range), so that GEOPOS on any score answers what Redis answers on that machine.
//! - A search (see [`Search::cells`]) picks a step from the radius, encodes the centre
//!   at that step and takes the cell with its eight neighbours (moving along one
//!   coordinate is an add or subtract on that coordinate's bits alone), minus the
//!   neighbours the bounding box of the shape does not reach. A cell at step `s` is the
//!   score range `[bits << (52 - 2s), (bits + 1) << (52 - 2s))`. Before the exact test,
//!   [`Far`] drops the points a bound without trigonometry puts certainly outside.
//! - Distances use the haversine formula with Redis's earth radius, 6372797.560856 m
//!   (or, for two points on one meridian, the arc between their latitudes); a box holds
//!   a point when its north-south distance to the centre's parallel and its east-west
//!   distance along its own parallel are both within half the box's sides.
//!
//! Every operation is in f64 in Redis's order of operations, and the trigonometric
//! functions are the platform's libm, as Redis's are.

use std::f64::consts::PI;

/// The step (bits per coordinate) of a stored point.
pub const STEP_MAX: u8 = 26;
/// Latitudes Redis can store (the Web Mercator limits).
pub const LAT_MIN: f64 = -85.05112878;
/// See [`LAT_MIN`].
pub const LAT_MAX: f64 = 85.05112878;
/// Longitudes.
pub const LON_MIN: f64 = -180.0;
/// See [`LON_MIN`].
pub const LON_MAX: f64 = 180.0;
/// The earth's radius in metres, Redis's (its quadratic mean for WGS-84).
pub const EARTH_RADIUS: f64 = 6372797.560856;
/// The Mercator projection's half-width in metres, which the step estimate starts from.
const MERCATOR_MAX: f64 = 20037726.37;
/// Degrees to radians.
const D_R: f64 = PI / 180.0;

const EVEN: u64 = 0x5555_5555_5555_5555;
const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;

/// A cell: its interleaved bits and its step. The zero cell (both 0) stands for "none"
/// in a search's list of neighbours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub bits: u64,
    pub step: u8,
}

impl Cell {
    fn is_none(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The score range `[min, max)` of the points inside the cell.
    pub fn scores(&self) -> (f64, f64) {
        let shift = 52 - 2 * u32::from(self.step.min(26));
        let min = self.bits << shift;
        let max = self.bits.wrapping_add(1) << shift;
        (min as f64, max as f64)
    }
}

/// A span of one coordinate.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub min: f64,
    pub max: f64,
}

/// The spans a cell covers.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    pub lon: Span,
    pub lat: Span,
}

/// The ranges of stored points.
const LON: Span = Span {
    min: LON_MIN,
    max: LON_MAX,
};
const LAT: Span = Span {
    min: LAT_MIN,
    max: LAT_MAX,
};
/// The latitude range of the standard geohash (GEOHASH's strings).
const LAT_STANDARD: Span = Span {
    min: -90.0,
    max: 90.0,
};

/// Spreads the 32 bits of `v` to the even bits of the result.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & EVEN
}

/// Gathers the even bits of `v` into the low 32 bits of the result.
fn gather(v: u64) -> u64 {
    let mut x = v & EVEN;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x >> 4)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x >> 8)) & 0x0000_ffff_0000_ffff;
    (x | (x >> 16)) & 0x0000_0000_ffff_ffff
}

/// C's `(uint64_t)x` for a double as gcc compiles it on x86-64: values below 2^63
/// (and NaN) through `cvttsd2si`, the others less 2^63 with the top bit flipped back; a
/// value `cvttsd2si` cannot convert gives `0x8000000000000000`.
pub fn c_u64(x: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    fn cvt(x: f64) -> u64 {
        if x.is_nan() || !(-TWO63..TWO63).contains(&x) {
            1 << 63
        } else {
            x as i64 as u64
        }
    }
    if x.is_nan() || x < TWO63 {
        cvt(x)
    } else {
        cvt(x - TWO63) ^ (1 << 63)
    }
}

/// The cell of (`lon`, `lat`) at `step` within the spans; None outside them (or outside
/// the storable ranges).
fn encode_in(lon_span: Span, lat_span: Span, lon: f64, lat: f64, step: u8) -> Option<Cell> {
    if step == 0 || step > 32 {
        return None;
    }
    let outside = |v: f64, s: Span| !(s.min..=s.max).contains(&v);
    if outside(lon, LON) || outside(lat, LAT) || outside(lon, lon_span) || outside(lat, lat_span) {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_off = (lat - lat_span.min) / (lat_span.max - lat_span.min) * scale;
    let lon_off = (lon - lon_span.min) / (lon_span.max - lon_span.min) * scale;
    // C converts the offsets to uint32_t: truncation (the offsets are at most 2^32).
    let (y, x) = (lat_off as u64 as u32, lon_off as u64 as u32);
    Some(Cell {
        bits: spread(y) | (spread(x) << 1),
        step,
    })
}

/// The cell of a storable position at `step` (None when it is not storable).
pub fn encode(lon: f64, lat: f64, step: u8) -> Option<Cell> {
    encode_in(LON, LAT, lon, lat, step)
}

/// The score GEOADD stores for a storable position.
pub fn score_of(lon: f64, lat: f64) -> Option<u64> {
    encode(lon, lat, STEP_MAX).map(|c| c.bits)
}

/// The spans of `cell` within the given coordinate spans.
fn decode_in(lon_span: Span, lat_span: Span, cell: Cell) -> Option<Area> {
    if cell.is_none() {
        return None;
    }
    let both = gather(cell.bits) | (gather(cell.bits >> 1) << 32);
    let (ilat, ilon) = (both as u32, (both >> 32) as u32);
    let cells = (1u64 << cell.step.min(63)) as f64;
    let span = |s: Span, i: u32| Span {
        // The upper edge of the last cell wraps as C's 32-bit `i + 1` does.
        min: s.min + (f64::from(i) / cells) * (s.max - s.min),
        max: s.min + (f64::from(i.wrapping_add(1)) / cells) * (s.max - s.min),
    };
    Some(Area {
        lon: span(lon_span, ilon),
        lat: span(lat_span, ilat),
    })
}

/// The spans of a cell of stored points.
pub fn decode(cell: Cell) -> Option<Area> {
    decode_in(LON, LAT, cell)
}

/// The position (longitude, latitude) a score stands for: the centre of its cell,
/// clamped to the storable ranges.
pub fn position(score: f64) -> (f64, f64) {
    let cell = Cell {
        bits: c_u64(score),
        step: STEP_MAX,
    };
    // A step-26 cell always decodes.
    let a = decode(cell).unwrap_or(Area { lon: LON, lat: LAT });
    let lon = ((a.lon.min + a.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((a.lat.min + a.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The 11-character standard geohash of a score's position (GEOHASH): re-encoded with
/// the latitude span [-90, 90]; the eleventh character stands for bits the score does
/// not have and is always `0`.
pub fn geohash_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = position(score);
    let bits = encode_in(LON, LAT_STANDARD, lon, lat, STEP_MAX).map_or(0, |c| c.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

/// Moves a cell one step east (`d > 0`) or west (`d < 0`) on its longitude bits.
fn move_lon(c: Cell, d: i8) -> Cell {
    if d == 0 {
        return c;
    }
    let shift = 64 - 2 * u32::from(c.step);
    let (mut x, y) = (c.bits & ODD, c.bits & EVEN);
    let fill = EVEN >> shift;
    x = if d > 0 {
        x.wrapping_add(fill + 1)
    } else {
        (x | fill).wrapping_sub(fill + 1)
    };
    Cell {
        bits: (x & (ODD >> shift)) | y,
        step: c.step,
    }
}

/// Moves a cell one step north (`d > 0`) or south (`d < 0`) on its latitude bits.
fn move_lat(c: Cell, d: i8) -> Cell {
    if d == 0 {
        return c;
    }
    let shift = 64 - 2 * u32::from(c.step);
    let (x, mut y) = (c.bits & ODD, c.bits & EVEN);
    let fill = ODD >> shift;
    y = if d > 0 {
        y.wrapping_add(fill + 1)
    } else {
        (y | fill).wrapping_sub(fill + 1)
    };
    Cell {
        bits: x | (y & (EVEN >> shift)),
        step: c.step,
    }
}

/// A cell's neighbours in the order a search visits them: north, south, east, west,
/// north-east, north-west, south-east, south-west.
fn neighbours(c: Cell) -> [Cell; 8] {
    [
        move_lat(c, 1),
        move_lat(c, -1),
        move_lon(c, 1),
        move_lon(c, -1),
        move_lat(move_lon(c, 1), 1),
        move_lat(move_lon(c, -1), 1),
        move_lat(move_lon(c, 1), -1),
        move_lat(move_lon(c, -1), -1),
    ]
}

/// The step whose cells are about as large as a search of `meters` around latitude
/// `lat` needs (coarser towards the poles).
fn steps_for(meters: f64, lat: f64) -> u8 {
    if meters == 0.0 {
        return STEP_MAX;
    }
    let (mut m, mut step) = (meters, 1i32);
    // Doubling reaches the bound (or infinity) in at most about 1100 rounds.
    while m < MERCATOR_MAX {
        m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, i32::from(STEP_MAX)) as u8
}

/// What a search looks in: a circle (radius) or a box (width, height), in the unit of
/// `to_meters`, around a centre.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    Radius(f64),
    Box(f64, f64),
}

/// A search area: where, what, and the metres in one unit.
#[derive(Clone, Copy, Debug)]
pub struct Search {
    pub lon: f64,
    pub lat: f64,
    pub shape: Shape,
    pub to_meters: f64,
}

impl Search {
    /// The bounding box (min lon, min lat, max lon, max lat): wider on the side of the
    /// pole, where a parallel is shorter.
    fn bounds(&self) -> [f64; 4] {
        let (half_h, half_w) = match self.shape {
            Shape::Radius(r) => (self.to_meters * r, self.to_meters * r),
            Shape::Box(w, h) => (self.to_meters * (h / 2.0), self.to_meters * (w / 2.0)),
        };
        let lat_delta = half_h / EARTH_RADIUS / D_R;
        let top = half_w / EARTH_RADIUS / ((self.lat + lat_delta) * D_R).cos() / D_R;
        let bottom = half_w / EARTH_RADIUS / ((self.lat - lat_delta) * D_R).cos() / D_R;
        let lon_delta = if self.lat < 0.0 { bottom } else { top };
        [
            self.lon - lon_delta,
            self.lat - lat_delta,
            self.lon + lon_delta,
            self.lat + lat_delta,
        ]
    }

    /// The cells to scan, in Redis's order (the centre's cell, then its neighbours);
    /// a neighbour the bounding box does not reach is the zero cell.
    pub fn cells(&self) -> [Cell; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let meters = match self.shape {
            Shape::Radius(r) => r,
            Shape::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
        } * self.to_meters;
        let mut step = steps_for(meters, self.lat);
        let at = |step| encode(self.lon, self.lat, step).unwrap_or(Cell { bits: 0, step });
        let mut cell = at(step);
        let mut near = neighbours(cell);
        // When a neighbour on one side does not reach the bounding box's edge, one step
        // coarser.
        let reach = |c: Cell| decode(c);
        let short = match (
            reach(near[0]),
            reach(near[1]),
            reach(near[2]),
            reach(near[3]),
        ) {
            (Some(n), Some(s), Some(e), Some(w)) => {
                n.lat.max < max_lat
                    || s.lat.min > min_lat
                    || e.lon.max < max_lon
                    || w.lon.min > min_lon
            }
            _ => false,
        };
        if step > 1 && short {
            step -= 1;
            cell = at(step);
            near = neighbours(cell);
        }
        if step >= 2 {
            if let Some(a) = decode(cell) {
                let none = Cell::default();
                let drop = |near: &mut [Cell; 8], idx: [usize; 3]| {
                    idx.iter().for_each(|&i| near[i] = none)
                };
                if a.lat.min < min_lat {
                    drop(&mut near, [1, 7, 6]);
                }
                if a.lat.max > max_lat {
                    drop(&mut near, [0, 4, 5]);
                }
                if a.lon.min < min_lon {
                    drop(&mut near, [3, 7, 5]);
                }
                if a.lon.max > max_lon {
                    drop(&mut near, [2, 6, 4]);
                }
            }
        }
        let mut all = [cell; 9];
        all[1..].copy_from_slice(&near);
        all
    }

    /// The bounds of [`Far`]. A point is at least its latitude difference (times the
    /// radius) from the centre, and for a circle at least `2R asin(k sin(dlon / 2))` with
    /// `k` the square root of the cosines of the two latitudes (a box's east-west test
    /// measures along the point's parallel: `k` is that latitude's cosine); the
    /// latitudes a point can have once it passes the first test bound `k` from below,
    /// which gives the largest longitude difference. Every bound is widened by a part in
    /// 10^7 and a millimetre.
    pub fn far_test(&self) -> Far {
        let (ns, ew) = match self.shape {
            Shape::Radius(r) => (r * self.to_meters, r * self.to_meters),
            Shape::Box(w, h) => (h * self.to_meters / 2.0, w * self.to_meters / 2.0),
        };
        let widen = |m: f64| m * (1.0 + 1e-7) + 1e-3;
        let lat = self.lat * D_R;
        let lat_band = widen(ns) / EARTH_RADIUS;
        let (lo, hi) = (
            (lat - lat_band).max(LAT_MIN * D_R),
            (lat + lat_band).min(LAT_MAX * D_R),
        );
        let cos_min = lo.cos().min(hi.cos()) * (1.0 - 1e-9);
        let k = match self.shape {
            Shape::Radius(_) => (lat.cos() * cos_min).sqrt(),
            Shape::Box(..) => cos_min,
        };
        let s = (widen(ew) / (2.0 * EARTH_RADIUS)).min(PI / 2.0).sin();
        let lon_band = if k > 0.0 && s < k {
            2.0 * (s / k).asin() * (1.0 + 1e-9) + 1e-12
        } else {
            f64::INFINITY
        };
        Far {
            lon: self.lon,
            lat,
            lat_band,
            lon_band,
        }
    }

    /// The distance from the centre to (`lon`, `lat`) in metres when the point is in the
    /// shape.
    pub fn contains(&self, lon: f64, lat: f64) -> Option<f64> {
        match self.shape {
            Shape::Radius(r) => {
                let d = distance(self.lon, self.lat, lon, lat);
                (d <= r * self.to_meters).then_some(d)
            }
            Shape::Box(w, h) => {
                let (w, h) = (w * self.to_meters, h * self.to_meters);
                // North-south first: the cheaper test.
                if lat_distance(lat, self.lat) > h / 2.0
                    || distance(lon, lat, self.lon, lat) > w / 2.0
                {
                    return None;
                }
                Some(distance(self.lon, self.lat, lon, lat))
            }
        }
    }
}

/// A quick test that a point is certainly outside a search's shape, made once per
/// search (see [`Search::far_test`]).
#[derive(Clone, Copy, Debug)]
pub struct Far {
    /// The centre's longitude (degrees) and latitude (radians).
    lon: f64,
    lat: f64,
    /// Latitude and longitude differences (radians) beyond which every point is outside.
    lat_band: f64,
    lon_band: f64,
}

impl Far {
    /// True when the point at (`lon`, `lat`) is outside the shape: its distance to the
    /// centre's latitude, or its longitude difference, is beyond what the shape allows by
    /// a margin far larger than any rounding, so the exact test would say so too. A
    /// point more than 90 degrees of longitude away is left to the exact test (near the
    /// antipode the haversine can round to NaN, which Redis counts as inside).
    pub fn far(&self, lon: f64, lat: f64) -> bool {
        let mut d = (lon - self.lon).abs();
        if d > 180.0 {
            d = 360.0 - d;
        }
        d <= 90.0 && ((lat * D_R - self.lat).abs() > self.lat_band || d * D_R > self.lon_band)
    }
}

/// The distance in metres between two latitudes along a meridian.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS * (lat2 * D_R - lat1 * D_R).abs()
}

/// The great-circle distance in metres between two positions (haversine; along the
/// meridian when the longitudes' half difference has a sine of 0, as in Redis).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lon1r, lon2r) = (lon1 * D_R, lon2 * D_R);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (lat1 * D_R, lat2 * D_R);
    let u = ((lat2r - lat1r) / 2.0).sin();
    2.0 * EARTH_RADIUS * (u * u + lat1r.cos() * lat2r.cos() * v * v).sqrt().asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_redis_geohashes() {
        // GEOADD's scores as Redis 7 stores them.
        for (lon, lat, score) in [
            (13.361389, 38.115556, 3479099956230698u64),
            (15.087269, 37.502669, 3479447370796909),
            (-73.9454966, 40.747533, 1791875804419201),
            (-74.0131604, 40.7126674, 1791873972053020),
            (-73.7858139, 40.6428986, 1791895905559723),
        ] {
            assert_eq!(score_of(lon, lat), Some(score), "{lon} {lat}");
        }
        assert_eq!(score_of(180.1, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
        assert_eq!(score_of(f64::NAN, 0.0), None);
    }

    #[test]
    fn positions_and_geohash_strings_match_redis() {
        let (lon, lat) = position(3479099956230698.0);
        assert_eq!(format!("{lon:.17}"), "13.36138933897018433");
        assert_eq!(format!("{lat:.17}"), "38.11555639549629859");
        assert_eq!(&geohash_string(3479099956230698.0), b"sqc8b49rny0");
        // Scores GEOADD never writes decode as x86-64 converts them (checked against
        // Redis 7): -1 is all ones, 1e300 and +inf convert to 0, -inf to the top bit.
        let top = position(-1.0);
        assert_eq!(
            (top.0, format!("{:.16}", top.1)),
            (180.0, "85.0511287799999991".into())
        );
        assert_eq!(position(1e300), position(0.0));
        assert_eq!(position(f64::INFINITY), position(0.0));
        assert_eq!(position(f64::NEG_INFINITY).0, 180.0);
        assert_eq!(&geohash_string(-1.0), b"bp05b5048p0");
        assert_eq!(&geohash_string(0.0), b"00bh0hbj200");
        assert_eq!(c_u64(-1.0), u64::MAX);
        assert_eq!(c_u64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(c_u64(1.5), 1);
        assert_eq!(c_u64(1.8e19), 18_000_000_000_000_000_000);
    }

    #[test]
    fn encode_then_decode_lands_in_the_cell() {
        let mut seed = 0x1234_5678u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let (cell_lon, cell_lat) = (360.0 / (1u64 << 26) as f64, 170.1 / (1u64 << 26) as f64);
        for _ in 0..10_000 {
            let lon = -180.0 + 360.0 * next();
            let lat = LAT_MIN + (LAT_MAX - LAT_MIN) * next();
            let score = score_of(lon, lat).unwrap();
            assert!(score < 1 << 52);
            let (x, y) = position(score as f64);
            assert!((x - lon).abs() <= cell_lon / 2.0 + 1e-12, "{lon} {x}");
            assert!((y - lat).abs() <= cell_lat / 2.0 + 1e-12, "{lat} {y}");
            // Encoding the decoded position gives the same cell.
            assert_eq!(score_of(x, y), Some(score));
        }
    }

    #[test]
    fn neighbours_move_one_cell() {
        let c = encode(13.361389, 38.115556, 10).unwrap();
        let [n, s, e, w, ne, nw, se, sw] = neighbours(c);
        assert_eq!(move_lon(e, -1), c);
        assert_eq!(move_lon(w, 1), c);
        assert_eq!(move_lat(n, -1), c);
        assert_eq!(move_lat(s, 1), c);
        assert_eq!((move_lat(e, 1), move_lat(w, 1)), (ne, nw));
        assert_eq!((move_lat(e, -1), move_lat(w, -1)), (se, sw));
        let (a, b) = (decode(c).unwrap(), decode(e).unwrap());
        assert_eq!(a.lon.max, b.lon.min);
        assert_eq!(a.lat.min, b.lat.min);
        let north = decode(n).unwrap();
        assert!((north.lat.min - a.lat.max).abs() < 1e-12);
        // The cell's score range holds the scores of the points inside it.
        let (min, max) = c.scores();
        let s = score_of(13.361389, 38.115556).unwrap() as f64;
        assert!(min <= s && s < max);
    }

    #[test]
    fn distances_use_redis_radius() {
        let (p, c) = (position(3479099956230698.0), position(3479447370796909.0));
        let d = distance(p.0, p.1, c.0, c.1);
        assert_eq!(format!("{d:.4}"), "166274.1516");
        assert_eq!(distance(p.0, p.1, p.0, p.1), 0.0);
        // On one meridian the distance is the arc between the latitudes (Redis 7 gives
        // 258.53217147242827 km here, the haversine 258.5321714724282).
        let d = distance(180.0, 12.323181863776725, 180.0, 9.998802005124354) / 1000.0;
        assert_eq!(d.to_string(), "258.5321714724283");
        // A quarter of the equator.
        let q = distance(0.0, 0.0, 90.0, 0.0);
        assert!((q - EARTH_RADIUS * PI / 2.0).abs() < 1e-6);
    }

    #[test]
    fn the_quick_test_only_drops_points_outside() {
        let mut seed = 99u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut dropped, mut tried) = (0, 0);
        for round in 0..2000 {
            let lon = -180.0 + 360.0 * next();
            let lat = LAT_MIN + (LAT_MAX - LAT_MIN) * next();
            let size = [0.0, 1.0, 100.0, 1e4, 1e6, 1e7][round % 6] * next();
            let shape = if round % 2 == 0 {
                Shape::Radius(size)
            } else {
                Shape::Box(size, size * 2.0 * next())
            };
            let s = Search {
                lon,
                lat,
                shape,
                to_meters: 1.0,
            };
            let far = s.far_test();
            for _ in 0..200 {
                // Points near the centre, many near the shape's edge.
                let spread = (size / 50_000.0).max(1e-6) * 2.0 * next();
                let plon = (lon + spread * (2.0 * next() - 1.0)).clamp(LON_MIN, LON_MAX);
                let plat = (lat + spread * (2.0 * next() - 1.0)).clamp(LAT_MIN, LAT_MAX);
                tried += 1;
                if far.far(plon, plat) {
                    dropped += 1;
                    assert!(s.contains(plon, plat).is_none(), "{s:?} {plon} {plat}");
                }
            }
        }
        assert!(dropped > tried / 10, "{dropped} of {tried}");
    }

    #[test]
    fn search_cells_follow_the_radius() {
        let near = Search {
            lon: 15.0,
            lat: 37.0,
            shape: Shape::Radius(200.0),
            to_meters: 1000.0,
        };
        let cells = near.cells();
        assert!(cells.iter().all(|c| c.step == 0 || c.step == cells[0].step));
        assert!((4..=8).contains(&cells[0].step), "{}", cells[0].step);
        // A huge or infinite radius falls back to the coarsest step; zero to the finest.
        for r in [f64::INFINITY, 5e7, 1e300] {
            let huge = Search {
                shape: Shape::Radius(r),
                ..near
            };
            assert_eq!(huge.cells()[0].step, 1);
        }
        let zero = Search {
            shape: Shape::Radius(0.0),
            ..near
        };
        assert_eq!(zero.cells()[0].step, 26);
        let tiny = Search {
            shape: Shape::Box(1e-300, 0.0),
            ..near
        };
        assert_eq!(tiny.cells()[0].step, 26);
        // Points on the search's edge.
        let b = Search {
            shape: Shape::Box(2.0, 2.0),
            to_meters: 1000.0,
            ..near
        };
        assert!(b.contains(15.0, 37.0).is_some());
        assert!(b.contains(15.0, 37.02).is_none());
        assert!(near.contains(15.0, 38.9).is_none());
        assert!(near.contains(15.0, 38.7).is_some());
    }
}
