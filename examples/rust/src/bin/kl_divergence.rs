//! On a GPU: kl_divergence (q, p f32[N] -> kl f32) fused and unfused from
//! the artifact build.rs made, against a float64 sum on the CPU.
//!     cargo run --offline --release -- [N]
use fuserun::{Arg, Device, Elem};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(1 << 20);
    let mut seed = 12345u64;
    let mut uniform = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        0.1 + 0.9 * ((seed >> 40) as f32 / (1u64 << 24) as f32)
    };
    let q: Vec<f32> = (0..n).map(|_| uniform()).collect();
    let p: Vec<f32> = (0..n).map(|_| uniform()).collect();
    let want: f64 = q.iter().zip(&p).map(|(&a, &b)| a as f64 * ((a as f64).ln() - (b as f64).ln())).sum();

    let dev = Device::open(0)?;
    let art = dev.load(fuserun::kl_divergence_manifest())?;
    let (qd, pd, kl) = (dev.upload(&q)?, dev.upload(&p)?, dev.alloc(4)?);
    for variant in ["fused", "unfused"] {
        let mut call = art.prepare(variant, &[n as i64])?;
        call.run(&[Arg::Tensor(&qd, Elem::F32), Arg::Tensor(&pd, Elem::F32), Arg::Tensor(&kl, Elem::F32)])?;
        let mut got = [0f32];
        kl.read(&mut got)?;
        let rel = (got[0] as f64 - want).abs() / want.abs().max(1e-30);
        println!("kl_divergence {variant:8} N={n}: {} (float64 {want:.6}, relative error {rel:.2e})", got[0]);
        if rel > 1e-4 {
            return Err(format!("{variant}: relative error {rel:.2e} over 1e-4").into());
        }
    }
    Ok(())
}
