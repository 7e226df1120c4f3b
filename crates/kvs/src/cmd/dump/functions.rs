//! FUNCTION DUMP and FUNCTION RESTORE payloads: each library as Redis's function
//! opcode (245) and its code as an RDB string, then the RDB version and the CRC-64, as
//! Redis writes them (so libraries move between Redis 7 and this server both ways).

use super::decode::Reader;
use super::{crc64, encode, MAX_VERSION};

/// Redis's RDB opcode of a function library (RDB_OPCODE_FUNCTION2).
const FUNCTION: u8 = 245;
/// The opcode of Redis 7.0's release candidates, which Redis no longer loads.
const FUNCTION_PRE_GA: u8 = 246;
/// The RDB version written: Redis 7.0's, the first with functions.
const VERSION: u16 = 10;

/// The payload of FUNCTION DUMP for the libraries' codes.
pub fn function_payload<'a>(codes: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(FUNCTION);
        encode::string(&mut out, code);
    }
    out.extend_from_slice(&VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The libraries' codes in a FUNCTION RESTORE payload, or Redis's error.
pub fn function_codes(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    const FOOTER: &str = "ERR DUMP payload version or checksum are wrong";
    let body_len = payload.len().checked_sub(10).ok_or(FOOTER)?;
    let footer = &payload[body_len..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..].try_into().map_err(|_| FOOTER)?);
    if version > MAX_VERSION || crc64(&payload[..body_len + 2]) != crc {
        return Err(FOOTER.into());
    }
    let mut r = Reader::new(&payload[..body_len]);
    let mut codes = Vec::new();
    while r.left() > 0 {
        match r.take(1).map(|b| b[0]) {
            Ok(FUNCTION) => {}
            Ok(FUNCTION_PRE_GA) => return Err("ERR Pre-GA function format not supported".into()),
            Ok(_) => return Err("ERR given type is not a function".into()),
            Err(_) => return Err("ERR can not read data type".into()),
        }
        let code = r
            .string()
            .map_err(|_| "ERR Failed loading library payload".to_string())?;
        codes.push(code);
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_bad_ones_are_refused() {
        let long = format!("#!lua name=big\n{}", "-- x\n".repeat(100));
        let codes: Vec<&[u8]> = vec![b"#!lua name=a\nreturn 1", long.as_bytes()];
        let p = function_payload(codes.iter().copied());
        let back = function_codes(&p).unwrap();
        assert_eq!(back, codes.iter().map(|c| c.to_vec()).collect::<Vec<_>>());
        assert_eq!(
            function_codes(&function_payload(std::iter::empty()))
                .unwrap()
                .len(),
            0
        );
        let mut bad = p.clone();
        bad[3] ^= 1;
        assert!(function_codes(&bad).unwrap_err().contains("checksum"));
        assert!(function_codes(b"bad_payload").is_err());
        // A value's payload (a string) is not a function.
        let s = crate::cmd::dump::serialize(&crate::value::Value::Str(b"x".to_vec()));
        assert_eq!(
            function_codes(&s).unwrap_err(),
            "ERR given type is not a function"
        );
    }
}
