//! The verify tile reads a packet's signatures where the parse tile's descriptor says,
//! without parsing the packet again: a payload no parser accepts verifies when its
//! descriptor points at a good signature, a descriptor pointing elsewhere gives a bad
//! verdict, and a fragment without a consistent descriptor gives a bad verdict and is
//! counted. The verify tile passes the payload on without the descriptor.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wirespeed_disco::{Ctx, Input, Metrics, Pipeline, Policy, Tile, TileSpec};
use wirespeed_ed25519::Mode;
use wirespeed_sigverify::desc::TxnDesc;
use wirespeed_sigverify::gen::{generate, Expect};
use wirespeed_sigverify::solana::parse;
use wirespeed_sigverify::tiles::{Verify, BAD_SIG, MAX_PACKET, VALID, VERDICT_MASK};
use wirespeed_tango::{link, Meta};

/// Publishes its fragments (ticket i + 1), then finishes.
struct Feed(std::vec::IntoIter<Vec<u8>>, u64);

impl Tile for Feed {
    fn name(&self) -> String {
        "feed".into()
    }
    fn on_fragment(&mut self, _: &mut Ctx, _: usize, _: &Meta, _: &[u8]) {}
    fn on_idle(&mut self, ctx: &mut Ctx) -> bool {
        match self.0.next() {
            Some(f) => {
                self.1 += 1;
                ctx.publish(0, &f, self.1, 0, 0);
            }
            None => ctx.finish(),
        }
        true
    }
}

type Seen = Arc<Mutex<Vec<(u64, u16, Vec<u8>)>>>;

/// Keeps (ticket, verdict, payload) of every fragment.
struct Collect(Seen);

impl Tile for Collect {
    fn name(&self) -> String {
        "collect".into()
    }
    fn on_fragment(&mut self, _: &mut Ctx, _: usize, meta: &Meta, payload: &[u8]) {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        seen.push((meta.sig, meta.ctl & VERDICT_MASK, payload.to_vec()));
    }
}

fn with_desc(payload: &[u8], d: &TxnDesc) -> Vec<u8> {
    let mut f = payload.to_vec();
    f.extend_from_slice(&d.encode());
    f
}

#[test]
fn verify_reads_the_descriptor_and_never_parses_again() {
    let g = generate(1, 0.0, 0.0, 11).remove(0);
    assert_eq!(g.expect, Expect::Valid);
    let tx = parse(&g.bytes).expect("generated packets parse");
    let d = TxnDesc::of_transaction(&g.bytes, &tx).expect("views into the packet");
    // Five bytes no parser accepts (a compact-u16 longer than 3 bytes) before the
    // transaction, and the descriptor moved past them.
    let mut shifted = vec![0xff; 5];
    shifted.extend_from_slice(&g.bytes);
    assert!(parse(&shifted).is_err());
    let moved = TxnDesc {
        sig_off: d.sig_off + 5,
        key_off: d.key_off + 5,
        msg_off: d.msg_off + 5,
        ..d
    };
    // The same packet with the signature taken from the message: a bad signature.
    let wrong = TxnDesc {
        sig_off: d.msg_off,
        ..d
    };
    let fragments = vec![
        with_desc(&g.bytes, &d),
        with_desc(&shifted, &moved),
        with_desc(&g.bytes, &wrong),
        vec![1, 2, 3],
        g.bytes.clone(),
    ];
    let n = fragments.len();

    let dir = std::env::temp_dir().join(format!("ws-verify-tile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let metrics = Metrics::create(&dir.join("m"), &["feed", "verify0", "collect"])
        .unwrap_or_else(|e| panic!("{e}"));
    let (p_in, mut c_in) = link(64, MAX_PACKET + 8, 1).unwrap_or_else(|e| panic!("{e}"));
    let (p_out, mut c_out) = link(64, MAX_PACKET, 1).unwrap_or_else(|e| panic!("{e}"));
    let seen: Seen = Arc::default();
    let spec = |tile: Box<dyn Tile>, inputs, outputs| TileSpec {
        tile,
        inputs,
        outputs,
        thread: 0,
        core: None,
    };
    let take = |c: &mut Vec<_>| Input::all(c.pop().unwrap_or_else(|| panic!("a consumer")));
    let tiles = vec![
        spec(
            Box::new(Feed(fragments.into_iter(), 0)),
            vec![],
            vec![(p_in, Policy::Backpressure)],
        ),
        spec(
            Box::new(Verify::new(0, 8, Duration::ZERO, Mode::Strict)),
            vec![take(&mut c_in)],
            vec![(p_out, Policy::Backpressure)],
        ),
        spec(
            Box::new(Collect(seen.clone())),
            vec![take(&mut c_out)],
            vec![],
        ),
    ];
    Pipeline::new(tiles, metrics.clone())
        .run(&AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{e}"));

    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
    seen.sort_by_key(|s| s.0);
    let verdicts: Vec<(u64, u16)> = seen.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(
        verdicts,
        vec![
            (1, VALID),
            (2, VALID),
            (3, BAD_SIG),
            (4, BAD_SIG),
            (5, BAD_SIG)
        ],
        "one verdict per fragment, in {n}"
    );
    // Valid packets go on as they arrived, without the descriptor.
    assert_eq!(seen[0].2, g.bytes);
    assert_eq!(seen[1].2, shifted);
    let snap = metrics.snapshot().unwrap_or_else(|e| panic!("{e}"));
    let verify = &snap.tiles[1];
    let count = |k: &str| verify.custom.iter().find(|c| c.0 == k).map(|c| c.1);
    // `[1, 2, 3]` is shorter than a descriptor; the bare packet's last 8 bytes name
    // ranges it does not have.
    assert_eq!(count("bad_descriptor"), Some(2));
    assert!(count("batches").is_some_and(|b| b >= 1));
    let _ = std::fs::remove_dir_all(&dir);
}
