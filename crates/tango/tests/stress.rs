//! Threads on different cores (where the machine has them): a producer and reliable
//! consumers pass hundreds of thousands of fragments of varying size, every one checked for order
//! and content; an unreliable monitor is overrun and still never sees a torn payload;
//! the SPSC queue passes a million values in order.

use std::thread;

use wirespeed_tango::{link, spsc, Recv};

/// Waiting in tests: yield, since there may be more threads than cores.
fn spin() {
    thread::yield_now();
}

/// Payload of fragment `seq`: 1 to 300 bytes derived from it.
fn payload(seq: u64, out: &mut Vec<u8>) {
    out.clear();
    let n = 1 + (seq.wrapping_mul(0x9e37_79b9) % 300) as usize;
    out.extend((0..n).map(|i| (seq as u8).wrapping_add(i as u8).wrapping_mul(31)));
}

#[test]
fn reliable_consumers_see_everything_and_a_monitor_sees_nothing_torn() {
    const N: u64 = 300_000;
    let (mut p, consumers) = link(256, 300, 2).unwrap_or_else(|e| panic!("{e}"));
    let mon = p.unreliable();
    thread::scope(|s| {
        s.spawn(move || {
            let mut buf = Vec::new();
            for seq in 1..=N {
                payload(seq, &mut buf);
                while p.try_publish(&buf, seq, (seq % 7) as u16, 0).is_err() {
                    spin();
                }
            }
        });
        for mut c in consumers {
            s.spawn(move || {
                let (mut buf, mut want) = (Vec::new(), Vec::new());
                let mut next = 1;
                while next <= N {
                    match c.poll(&mut buf) {
                        Recv::Frag(m) => {
                            assert_eq!((m.seq, m.sig, m.ctl), (next, next, (next % 7) as u16));
                            payload(next, &mut want);
                            assert_eq!(buf, want, "payload of {next}");
                            next += 1;
                        }
                        Recv::Empty => spin(),
                        Recv::Overrun { lost } => panic!("reliable consumer lost {lost}"),
                    }
                }
            });
        }
        let mut mon = mon;
        s.spawn(move || {
            let (mut buf, mut want) = (Vec::new(), Vec::new());
            let (mut seen, mut last) = (0u64, 0u64);
            while last < N {
                match mon.poll(&mut buf) {
                    Recv::Frag(m) => {
                        assert!(m.seq > last);
                        last = m.seq;
                        payload(m.seq, &mut want);
                        assert_eq!(buf, want, "monitor copy of {}", m.seq);
                        seen += 1;
                        // A slow reader: fall behind now and then.
                        if seen % 1000 == 0 {
                            thread::sleep(std::time::Duration::from_micros(500));
                        }
                    }
                    Recv::Empty => spin(),
                    Recv::Overrun { .. } => {}
                }
            }
            assert_eq!(
                seen + mon.overrun_count(),
                N,
                "every fragment seen or counted lost"
            );
        });
    });
}

#[test]
fn spsc_passes_a_million_in_order() {
    const N: u64 = 1_000_000;
    let (mut tx, mut rx) = spsc::channel::<u64>(1024).unwrap_or_else(|e| panic!("{e}"));
    thread::scope(|s| {
        s.spawn(move || {
            for i in 0..N {
                let mut v = i;
                while let Err(back) = tx.try_send(v) {
                    v = back;
                    spin();
                }
            }
        });
        s.spawn(move || {
            let mut next = 0;
            while next < N {
                match rx.try_recv() {
                    Some(v) => {
                        assert_eq!(v, next);
                        next += 1;
                    }
                    None => spin(),
                }
            }
        });
    });
}
