//! The parse tile's descriptor of a packet: where its signatures, signer keys and
//! signed message lie, so the verify tiles read them without parsing the packet again
//! (Firedancer's `fd_txn_m_t` carries the parsed `fd_txn_t` after the payload the same
//! way).
//!
//! On the parse -> verify link a fragment is `payload || descriptor`: the packet as it
//! arrived, then [`DESC_LEN`] bytes, four little-endian u16s: the signature count, the
//! offset of the first signature, the offset of the first signer key and the offset of
//! the message (which runs to the end of the payload). Signature `i` is the 64 bytes at
//! `sig_off + 64 i`, its key the 32 at `key_off + 32 i`. A raw record is one signature:
//! `pk(32) || sig(64) || msg` has key at 0, signature at 32, message at 96.
//!
//! [`TxnDesc::split`] checks every range the descriptor names against the payload before
//! anything is read, so a fragment that does not carry a consistent descriptor is
//! refused (`None`), never read out of bounds; the verify tile gives such a packet a bad
//! verdict and counts it.

use wirespeed_ed25519::Item;

use crate::solana::{Transaction, PUBKEY_LEN, SIGNATURE_LEN};

/// Bytes of a descriptor after the payload.
pub const DESC_LEN: usize = 8;

/// Most signatures a descriptor names: a packet of at most
/// [`crate::tiles::MAX_PACKET`] bytes cannot hold more (each takes 64 bytes of
/// signature and 32 of key).
pub const MAX_SIGS: usize = crate::tiles::MAX_PACKET / (SIGNATURE_LEN + PUBKEY_LEN);

/// Where a packet's signatures, signer keys and message lie (byte offsets into the
/// payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnDesc {
    /// Signatures, and as many signer keys (at least 1).
    pub sig_count: u16,
    /// Offset of the first signature.
    pub sig_off: u16,
    /// Offset of the first signer key.
    pub key_off: u16,
    /// Offset of the signed message (to the end of the payload).
    pub msg_off: u16,
}

impl TxnDesc {
    /// A raw record `pk(32) || sig(64) || msg`.
    pub const RAW: TxnDesc = TxnDesc {
        sig_count: 1,
        sig_off: PUBKEY_LEN as u16,
        key_off: 0,
        msg_off: (PUBKEY_LEN + SIGNATURE_LEN) as u16,
    };

    /// The descriptor of `tx`, parsed from `packet` (its views point into `packet`).
    /// None if they do not (a transaction parsed from other bytes) or an offset does not
    /// fit 16 bits.
    pub fn of_transaction(packet: &[u8], tx: &Transaction<'_>) -> Option<TxnDesc> {
        let base = packet.as_ptr() as usize;
        let off = |p: *const u8| {
            let o = (p as usize).checked_sub(base)?;
            if o > packet.len() {
                return None;
            }
            u16::try_from(o).ok()
        };
        let d = TxnDesc {
            sig_count: u16::try_from(tx.signatures.len()).ok()?,
            sig_off: off(tx.signatures.as_ptr().cast())?,
            key_off: off(tx.signers.as_ptr().cast())?,
            msg_off: off(tx.message.as_ptr())?,
        };
        d.fits(packet.len()).then_some(d)
    }

    /// The descriptor as it follows the payload.
    pub fn encode(&self) -> [u8; DESC_LEN] {
        let mut b = [0u8; DESC_LEN];
        for (i, v) in [self.sig_count, self.sig_off, self.key_off, self.msg_off]
            .into_iter()
            .enumerate()
        {
            b[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// Splits a fragment into its payload and descriptor. None when the fragment is
    /// shorter than a descriptor, names no signature or more than [`MAX_SIGS`], or names
    /// a range outside the payload.
    pub fn split(fragment: &[u8]) -> Option<(&[u8], TxnDesc)> {
        let at = fragment.len().checked_sub(DESC_LEN)?;
        let (payload, d) = fragment.split_at(at);
        let word = |i: usize| u16::from_le_bytes([d[2 * i], d[2 * i + 1]]);
        let desc = TxnDesc {
            sig_count: word(0),
            sig_off: word(1),
            key_off: word(2),
            msg_off: word(3),
        };
        desc.fits(payload.len()).then_some((payload, desc))
    }

    /// Whether every range named lies within a payload of `len` bytes.
    fn fits(&self, len: usize) -> bool {
        let n = usize::from(self.sig_count);
        (1..=MAX_SIGS).contains(&n)
            && usize::from(self.sig_off) + n * SIGNATURE_LEN <= len
            && usize::from(self.key_off) + n * PUBKEY_LEN <= len
            && usize::from(self.msg_off) <= len
    }

    /// One verifier item per signature of `payload` (a payload [`TxnDesc::split`]
    /// returned with this descriptor; for another, ranges that do not fit are left out).
    pub fn items<'a>(&self, payload: &'a [u8]) -> impl Iterator<Item = Item<'a>> + 'a {
        let d = *self;
        let msg = payload.get(usize::from(d.msg_off)..).unwrap_or(&[]);
        (0..usize::from(d.sig_count)).filter_map(move |i| {
            let s = usize::from(d.sig_off) + i * SIGNATURE_LEN;
            let k = usize::from(d.key_off) + i * PUBKEY_LEN;
            Some(Item {
                sig: payload.get(s..s + SIGNATURE_LEN)?,
                pk: payload.get(k..k + PUBKEY_LEN)?,
                msg,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solana::parse;

    fn fragment(payload: &[u8], d: &TxnDesc) -> Vec<u8> {
        let mut f = payload.to_vec();
        f.extend_from_slice(&d.encode());
        f
    }

    #[test]
    fn descriptor_items_equal_the_parsers_for_every_generated_packet() {
        for g in crate::gen::generate(400, 0.1, 0.1, 3) {
            let tx = parse(&g.bytes).expect("generated packets parse");
            let d = TxnDesc::of_transaction(&g.bytes, &tx).expect("views into the packet");
            let f = fragment(&g.bytes, &d);
            let (payload, back) = TxnDesc::split(&f).expect("a consistent descriptor");
            assert_eq!(payload, &g.bytes[..]);
            assert_eq!(back, d);
            let got: Vec<Item<'_>> = back.items(payload).collect();
            let want: Vec<Item<'_>> = tx.items().collect();
            assert_eq!(got.len(), want.len());
            for (a, b) in got.iter().zip(&want) {
                assert_eq!((a.pk, a.sig, a.msg), (b.pk, b.sig, b.msg));
            }
        }
    }

    #[test]
    fn raw_record_descriptor() {
        let p = crate::tiles::raw_packet(&[1; 32], &[2; 64], b"hello");
        let f = fragment(&p, &TxnDesc::RAW);
        let (payload, d) = TxnDesc::split(&f).expect("fits");
        let items: Vec<Item<'_>> = d.items(payload).collect();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].pk, &[1; 32]);
        assert_eq!(items[0].sig, &[2; 64]);
        assert_eq!(items[0].msg, b"hello");
    }

    #[test]
    fn inconsistent_descriptors_are_refused() {
        let p = crate::tiles::raw_packet(&[1; 32], &[2; 64], b"");
        assert_eq!(TxnDesc::split(&p[..DESC_LEN - 1]), None, "shorter than one");
        let bad = [
            TxnDesc {
                sig_count: 0,
                ..TxnDesc::RAW
            },
            TxnDesc {
                sig_count: 2,
                ..TxnDesc::RAW
            },
            TxnDesc {
                sig_off: 33,
                ..TxnDesc::RAW
            },
            TxnDesc {
                key_off: 65,
                ..TxnDesc::RAW
            },
            TxnDesc {
                msg_off: 97,
                ..TxnDesc::RAW
            },
            TxnDesc {
                sig_count: u16::MAX,
                sig_off: u16::MAX,
                key_off: u16::MAX,
                msg_off: u16::MAX,
            },
        ];
        for d in bad {
            assert_eq!(TxnDesc::split(&fragment(&p, &d)), None, "{d:?}");
        }
        assert!(TxnDesc::split(&fragment(&p, &TxnDesc::RAW)).is_some());
        // Views that do not point into the packet give no descriptor.
        let g = &crate::gen::generate(1, 0.0, 0.0, 5)[0];
        let copy = g.bytes.clone();
        let tx = parse(&copy).expect("parses");
        assert_eq!(TxnDesc::of_transaction(&g.bytes, &tx), None);
    }
}
