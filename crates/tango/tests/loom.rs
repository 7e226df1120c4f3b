//! Model checks of the ordering rules (run with `RUSTFLAGS="--cfg loom" cargo test -p
//! wirespeed-tango --test loom --release`): every interleaving loom explores, within a
//! preemption bound, keeps FIFO order, never loses or duplicates a value to a reliable
//! consumer, and never hands any consumer a torn fragment.
#![cfg(loom)]

use loom::thread;
use wirespeed_tango::{link, spin, spsc, Recv};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

#[test]
fn spsc_delivers_in_order_exactly_once() {
    model(|| {
        let (mut tx, mut rx) = spsc::channel::<usize>(2).unwrap_or_else(|e| panic!("{e}"));
        let h = thread::spawn(move || {
            for i in 0..3 {
                let mut v = i;
                while let Err(back) = tx.try_send(v) {
                    v = back;
                    spin();
                }
            }
        });
        let mut got = Vec::new();
        while got.len() < 3 {
            match rx.try_recv() {
                Some(v) => got.push(v),
                None => spin(),
            }
        }
        h.join().unwrap_or_else(|_| panic!("producer"));
        assert_eq!(got, [0, 1, 2]);
    });
}

#[test]
fn a_reliable_consumer_gets_every_payload_intact() {
    model(|| {
        let (mut p, mut cs) = link(2, 8, 1).unwrap_or_else(|e| panic!("{e}"));
        let mut c = cs.pop().unwrap_or_else(|| panic!("consumer"));
        let h = thread::spawn(move || {
            for i in 1..=3u64 {
                while p.try_publish(&i.to_le_bytes(), i, 0, 0).is_err() {
                    spin();
                }
            }
        });
        let mut buf = Vec::new();
        let mut next = 1u64;
        while next <= 3 {
            match c.poll(&mut buf) {
                Recv::Frag(m) => {
                    assert_eq!(m.seq, next);
                    assert_eq!(m.sig, next);
                    assert_eq!(buf, next.to_le_bytes());
                    next += 1;
                }
                Recv::Empty => spin(),
                Recv::Overrun { lost } => panic!("a reliable consumer lost {lost}"),
            }
        }
        h.join().unwrap_or_else(|_| panic!("producer"));
    });
}

#[test]
fn an_unreliable_reader_never_sees_a_torn_fragment() {
    model(|| {
        let (mut p, _) = link(2, 8, 0).unwrap_or_else(|e| panic!("{e}"));
        let mut mon = p.unreliable();
        let h = thread::spawn(move || {
            for i in 1..=3u64 {
                while p.try_publish(&i.to_le_bytes(), i, 0, 0).is_err() {
                    spin();
                }
            }
        });
        let mut buf = Vec::new();
        let mut last = 0;
        for _ in 0..4 {
            match mon.poll(&mut buf) {
                Recv::Frag(m) => {
                    assert!(m.seq > last, "in order");
                    last = m.seq;
                    assert_eq!(m.sig, m.seq, "fields of one fragment");
                    assert_eq!(buf, m.seq.to_le_bytes(), "payload of that fragment");
                }
                Recv::Empty | Recv::Overrun { .. } => spin(),
            }
        }
        h.join().unwrap_or_else(|_| panic!("producer"));
    });
}
