//! Parses packets once: malformed ones counted and dropped, well-formed ones ticketed
//! and followed by their descriptor.

use super::*;

/// Parses packets: malformed ones are counted by reason and dropped; well-formed ones
/// get a ticket and a destination, and go on followed by their [`TxnDesc`] (and, with
/// [`Parse::dealing`], the verify tile that takes them).
#[derive(Debug)]
pub struct Parse {
    /// Destinations (sinks).
    pub dests: usize,
    pub(crate) ticket: u64,
    dealer: Option<Dealer>,
    /// The outgoing fragment: packet, then descriptor.
    frag: Vec<u8>,
}

impl Parse {
    /// A parse tile routing to `dests` destinations.
    pub fn new(dests: usize) -> Parse {
        Parse {
            dests: dests.clamp(1, MAX_DEST),
            ticket: 0,
            dealer: None,
            frag: Vec::with_capacity(MAX_PACKET + crate::desc::DESC_LEN),
        }
    }

    /// Names the verify tile of each packet in its control bits, by `dealer` (the
    /// verify tiles read theirs with `wirespeed_disco::Input::routed`).
    pub fn dealing(mut self, dealer: Dealer) -> Parse {
        self.dealer = Some(dealer);
        self
    }
}

impl Tile for Parse {
    fn name(&self) -> String {
        "parse".into()
    }

    fn on_start(&mut self, ctx: &mut Ctx) {
        declared(ctx.metrics().declare::<ParseCounter>());
    }

    fn on_fragment(&mut self, ctx: &mut Ctx, _: usize, meta: &Meta, packet: &[u8]) {
        let raw = meta.ctl & KIND_RAW != 0;
        let desc = if raw {
            if packet.len() < RAW_HEADER {
                ctx.metrics().count(ParseCounter::RawTooShort, 1);
                ctx.metrics().add(Counter::Rejected, 1);
                return;
            }
            TxnDesc::RAW
        } else {
            // `parse` accepts at most 1232 bytes and returns views into `packet`, so
            // every transaction it accepts has a descriptor; TooLong stands for the
            // impossible rest.
            match solana::parse(packet)
                .and_then(|t| TxnDesc::of_transaction(packet, &t).ok_or(ParseError::TooLong))
            {
                Ok(d) => d,
                Err(e) => {
                    ctx.metrics().count(ParseCounter::Malformed(e), 1);
                    ctx.metrics().add(Counter::Rejected, 1);
                    return;
                }
            }
        };
        // The first signer's key picks the destination.
        let key0 = packet.get(usize::from(desc.key_off)).copied().unwrap_or(0);
        self.ticket += 1;
        let dest = (key0 as usize % self.dests) as u16;
        let lane = self
            .dealer
            .as_mut()
            .map_or(0, |d| Dealer::lane_bits(d.next_lane()));
        let ctl = (meta.ctl & KIND_RAW) | dest << DEST_SHIFT | lane;
        self.frag.clear();
        self.frag.extend_from_slice(packet);
        self.frag.extend_from_slice(&desc.encode());
        ctx.publish(0, &self.frag, self.ticket, ctl, meta.tsorig);
    }
}
