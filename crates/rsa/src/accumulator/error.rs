//! [`AccumulatorError`]: one variant per failure a caller can act on.

use std::fmt;

use super::{MAX_MEMBERS, MAX_MODULUS_BITS, MIN_MODULUS_BITS, PRIME_BITS};

/// Why an accumulator operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccumulatorError {
    /// The modulus is not of 1024 to 4096 bits.
    ModulusSize {
        /// Its size.
        bits: usize,
    },
    /// The modulus is even.
    EvenModulus,
    /// The base is unusable (why).
    BadBase(&'static str),
    /// The accumulator value is 0, 1, n - 1, or not below the modulus.
    ValueOutOfRange,
    /// A member prime is not an odd 256-bit number (index in the list given).
    BadMember {
        /// Position in the list.
        index: usize,
    },
    /// More members than [`MAX_MEMBERS`].
    TooManyMembers {
        /// How many there would be.
        count: usize,
    },
    /// The element (index in the batch) is already a member, or repeats an earlier one
    /// of the same batch; nothing was added.
    AlreadyMember {
        /// Position in the batch.
        index: usize,
    },
    /// The element (index in the list given; 0 for a single element) is not a member.
    NotMember {
        /// Position in the list.
        index: usize,
    },
    /// The witness is not below the modulus.
    WitnessOutOfRange,
    /// The witness does not verify.
    WitnessRejected,
    /// The trapdoor's factors are not the factors of this accumulator's modulus.
    TrapdoorMismatch,
    /// The factors cannot form a trapdoor (why).
    BadTrapdoor(&'static str),
    /// The element's prime divides lambda(n): it has no inverse there (probability about
    /// 2^-250 for a hashed prime).
    NotInvertible,
    /// A trapdoor result failed its check (the factors are not primes, or a fault);
    /// nothing was changed.
    CheckFailed,
}

impl fmt::Display for AccumulatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccumulatorError::ModulusSize { bits } => write!(
                f,
                "{bits}-bit modulus not supported ({MIN_MODULUS_BITS} to {MAX_MODULUS_BITS} bits)"
            ),
            AccumulatorError::EvenModulus => f.write_str("the modulus is even"),
            AccumulatorError::BadBase(why) => write!(f, "bad base: {why}"),
            AccumulatorError::ValueOutOfRange => {
                f.write_str("accumulator value is 0, 1, n - 1 or not below the modulus n")
            }
            AccumulatorError::BadMember { index } => {
                write!(f, "member {index} is not an odd {PRIME_BITS}-bit prime")
            }
            AccumulatorError::TooManyMembers { count } => {
                write!(f, "{count} members; at most {MAX_MEMBERS} are supported")
            }
            AccumulatorError::AlreadyMember { index } => {
                write!(f, "element {index} is already a member")
            }
            AccumulatorError::NotMember { index } => write!(f, "element {index} is not a member"),
            AccumulatorError::WitnessOutOfRange => f.write_str("witness not below the modulus"),
            AccumulatorError::WitnessRejected => f.write_str("witness does not verify"),
            AccumulatorError::TrapdoorMismatch => {
                f.write_str("the trapdoor's factors are not those of this modulus")
            }
            AccumulatorError::BadTrapdoor(why) => write!(f, "bad trapdoor: {why}"),
            AccumulatorError::NotInvertible => {
                f.write_str("the element's prime divides lambda(n); it cannot be removed")
            }
            AccumulatorError::CheckFailed => {
                f.write_str("trapdoor result failed its check; nothing was changed")
            }
        }
    }
}

impl std::error::Error for AccumulatorError {}
