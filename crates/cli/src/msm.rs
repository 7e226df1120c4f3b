//! `wirespeed msm`: a BLS12-377 G1 multi-scalar multiplication of two arkworks files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use wirespeed_engine::msm::Prepared;
use wirespeed_engine::{Backend, Chosen, Op};
use wirespeed_msm::format::{self, FormatError, POINT_BYTES, SCALAR_BYTES};
use wirespeed_msm::{Affine, Scalar};

use crate::args::{all_cores, in_pool, parse_threads};
use crate::error::CliError;
use crate::files::read_counted;

/// Most elements an input file may hold (2^28).
pub const MAX_ELEMENTS: usize = 1 << 28;

/// Arguments of `wirespeed msm`.
#[derive(Args, Debug)]
#[command(after_help = "\
Files are arkworks 0.5 `serialize_uncompressed` of Vec<G1Affine> and Vec<Fr> (BLS12-377).
Points are validated (canonical, on the curve, in G1); the first bad element is named.
The result is the arkworks uncompressed encoding of the affine sum, in hex.")]
pub struct MsmArgs {
    /// Points file (Vec<G1Affine>)
    #[arg(long, value_name = "FILE")]
    pub points: PathBuf,

    /// Scalars file (Vec<Fr>)
    #[arg(long, value_name = "FILE")]
    pub scalars: PathBuf,

    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// Prepare the points first with K groups of precomputed multiples (1 to 64), then
    /// run the MSM on the prepared table; the preparation is timed apart (init_secs)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub precompute: Option<u16>,

    /// One JSON object: result (hex), n, secs (the MSM only, not loading), backend (where
    /// it ran), fallbacks (GPU runs answered on the CPU, reason -> count)
    #[arg(long)]
    pub json: bool,

    /// Where to run: auto (the GPU from 2^16 points when one is present), cpu or gpu
    #[arg(long, value_name = "BACKEND", default_value = "auto", value_parser = crate::gpu::parse_device)]
    pub backend: Backend,
}

fn malformed(path: &Path, e: FormatError) -> CliError {
    CliError::MalformedInput {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Reads and validates a points file.
pub fn load_points(path: &Path) -> Result<Vec<Affine>, CliError> {
    let bytes = read_counted(path, POINT_BYTES, MAX_ELEMENTS)?;
    format::decode_points(&bytes).map_err(|e| malformed(path, e))
}

/// Reads and validates a scalars file.
pub fn load_scalars(path: &Path) -> Result<Vec<Scalar>, CliError> {
    let bytes = read_counted(path, SCALAR_BYTES, MAX_ELEMENTS)?;
    format::decode_scalars(&bytes).map_err(|e| malformed(path, e))
}

/// Hex of the arkworks encoding of a point.
pub fn point_hex(p: &Affine) -> String {
    format::encode_point(p)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `wirespeed msm`.
pub fn run(args: &MsmArgs) -> Result<(), CliError> {
    let threads = args.threads.unwrap_or_else(all_cores);
    let (points, scalars) = in_pool(threads, || {
        Ok::<_, CliError>((load_points(&args.points)?, load_scalars(&args.scalars)?))
    })
    .map_err(CliError::ThreadPool)??;
    // Two files that do not pair up are malformed input (exit 2), as a malformed file
    // is.
    if points.len() != scalars.len() {
        return Err(CliError::MalformedInput {
            path: args.scalars.clone(),
            message: format!(
                "holds {} scalars but '{}' holds {} points",
                scalars.len(),
                args.points.display(),
                points.len()
            ),
        });
    }
    let where_ = args
        .backend
        .select(Op::Msm, points.len())
        .map_err(CliError::Gpu)?;
    // The engine runs the job where it was chosen: the CPU with its lanes, or the GPU
    // as asked (under `auto`, a failed GPU run is answered on the CPU and counted).
    let on = match where_ {
        Chosen::Cpu(l) => Backend::Cpu(l),
        Chosen::Gpu(_) => args.backend,
    };
    let fell_back = wirespeed_engine::fallbacks().total();
    let (result, secs, init) = in_pool(threads, || match (args.precompute, where_) {
        (None, Chosen::Cpu(_)) => {
            let t = Instant::now();
            let r = wirespeed_engine::msm::msm(on, &points, &scalars)
                .map_err(|e| CliError::Invalid(e.to_string()));
            (r, t.elapsed().as_secs_f64(), None)
        }
        (k, _) => {
            // Prepared once (the CPU's table of K groups, or the points on the device
            // with K - 1 shifted copies), then the MSM.
            let t = Instant::now();
            let pre = Prepared::new(on, &points, k.map_or(1, usize::from));
            let init = (
                t.elapsed().as_secs_f64(),
                pre.as_ref().ok().and_then(Prepared::table_bytes),
            );
            let t = Instant::now();
            let r = pre.and_then(|p| p.msm(&scalars)).map_err(|e| match where_ {
                Chosen::Cpu(_) => CliError::Invalid(e.to_string()),
                Chosen::Gpu(_) => CliError::Gpu(e),
            });
            (r, t.elapsed().as_secs_f64(), k.map(|_| init))
        }
    })
    .map_err(CliError::ThreadPool)?;
    let result = result?;
    // Where the answer was computed: the chosen device, or the CPU after a fallback.
    let ran_on = if wirespeed_engine::fallbacks().total() > fell_back {
        "cpu"
    } else {
        where_.name()
    };
    let hex = point_hex(&result.to_affine());
    let mut out = std::io::stdout().lock();
    crate::fallback::report();
    if args.json {
        let mut v = serde_json::json!({
            "result": hex, "n": points.len(), "secs": secs, "backend": ran_on,
            "fallbacks": crate::fallback::json(),
        });
        if let Some((init_secs, bytes)) = init {
            v["init_secs"] = init_secs.into();
            if let Some(b) = bytes {
                v["table_bytes"] = b.into();
            }
        }
        writeln!(out, "{v}")
    } else {
        writeln!(out, "{hex}").and_then(|_| {
            match where_ {
                Chosen::Gpu(g) => {
                    writeln!(out, "n = {}, GPU ({}), {secs:.3} s", points.len(), g.name)?
                }
                Chosen::Cpu(_) => {
                    writeln!(out, "n = {}, {threads} threads, {secs:.3} s", points.len())?
                }
            }
            match init {
                Some((s, Some(b))) => writeln!(out, "precomputation: {s:.3} s, {b} bytes"),
                Some((s, None)) => writeln!(out, "precomputation (device): {s:.3} s"),
                None => Ok(()),
            }
        })
    }
    .map_err(CliError::Stdout)
}
