//! Stand-alone driver for the Ed25519 benchmark (the same options as
//! `wirespeed bench ed25519`): `cargo run --release -p wirespeed-bench --example
//! bench_ed25519 -- --quick`.

use clap::Parser;
use wirespeed_bench::ed25519::{run, BenchArgs};

#[derive(Parser, Debug)]
#[command(about = "Ed25519 verification: wirespeed beside dalek, zebra, ring and OpenSSL")]
struct Cli {
    #[command(flatten)]
    args: BenchArgs,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli.args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
