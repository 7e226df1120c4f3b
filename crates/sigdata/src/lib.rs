//! Signature records: the on-disk formats read by `wirespeed verify` and written by
//! `wirespeed gen sigs`, and the deterministic generator behind them.

#![warn(missing_docs)]

pub mod edge;
pub mod format;
pub mod gen;

/// One signature record. Lengths are whatever the input held; the verifier rejects a
/// signature that is not 64 bytes or a key that is not 32 bytes with `BadLength`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The message.
    pub msg: Vec<u8>,
    /// The signature R || S (64 bytes when well formed).
    pub sig: Vec<u8>,
    /// The public key (32 bytes when well formed).
    pub pk: Vec<u8>,
}

impl Record {
    /// A borrowed view for the verifier.
    pub fn item(&self) -> wirespeed_ed25519::Item<'_> {
        wirespeed_ed25519::Item {
            msg: &self.msg,
            sig: &self.sig,
            pk: &self.pk,
        }
    }
}

/// Borrowed views of many records, in order.
pub fn items(records: &[Record]) -> Vec<wirespeed_ed25519::Item<'_>> {
    records.iter().map(Record::item).collect()
}
