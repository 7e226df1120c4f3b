//! Redis Cluster's key slot: CRC16/XMODEM (polynomial 0x1021, initial value 0) of the
//! key, or of its hash tag, modulo 16384. The hash tag is what lies between the first
//! `{` and the first `}` after it, when that is not empty; so `{user1000}.following`
//! and `{user1000}.followers` share a slot. Written once for the server (routing,
//! CLUSTER KEYSLOT) and for the clients that route by it (the load generator).

/// Slots of a Redis Cluster.
pub const SLOTS: usize = 16384;

/// CRC16/XMODEM, one byte at a time through a table built at compile time.
const TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
};

/// CRC16/XMODEM of `data`.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The hash tag of `key` (see the module docs), or the whole key when it has none.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The slot of `key`: CRC16/XMODEM of its hash tag, modulo 16384.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & (SLOTS as u16 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitwise definition the table must agree with.
    fn crc16_bitwise(data: &[u8]) -> u16 {
        let mut crc: u16 = 0;
        for &b in data {
            crc ^= (b as u16) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ 0x1021
                } else {
                    crc << 1
                };
            }
        }
        crc
    }

    #[test]
    fn key_slots_match_redis_cluster() {
        // The check value of CRC16/XMODEM, and `CLUSTER KEYSLOT` of Redis.
        assert_eq!(crc16(b"123456789"), 0x31c3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"key:000000000000"), 13053);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        // An empty tag is no tag; only the first `{` counts.
        assert_eq!(hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hash_tag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hash_tag(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hash_tag(b"{}x"), b"{}x");
        for key in [&b""[..], b"a", b"hello world", &[0xff; 40]] {
            assert_eq!(crc16(key), crc16_bitwise(key));
        }
    }
}
