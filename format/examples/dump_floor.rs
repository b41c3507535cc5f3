//! The floor under a dump on one core: Data.db decompressed through the
//! reader's own source (LZ4 and the chunk checks, nothing decoded), and
//! as many output bytes as the dump writes, written to stdout in 64 KiB
//! writes (nothing rendered). A dump cannot beat their sum per core
//! (bench/README.md, "Against Cassandra's `sstabledump`, and the floor"):
//! `cargo run --release -p sstkit-format --example dump_floor -- DATA.db OUTPUT_BYTES > /dev/null`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use sstkit_format::data::DataSource;
use sstkit_format::Sstable;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(p), Some(Ok(out))) = (args.first(), args.get(1).map(|n| n.parse::<u64>())) else {
        eprintln!("usage: dump_floor DATA.db OUTPUT_BYTES");
        return ExitCode::from(2);
    };
    match run(Path::new(p), out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dump_floor: {e}");
            ExitCode::from(3)
        }
    }
}

/// Every uncompressed byte of Data.db through the source, once.
fn decompress(p: &Path) -> Result<(u64, Duration), Box<dyn std::error::Error>> {
    let sst = Sstable::open_path(p)?;
    let t = Instant::now();
    let mut src = DataSource::open(&sst)?;
    let mut seen = 0u64;
    loop {
        // False at the end: what is left is loaded all the same.
        src.fill(1 << 16)?;
        let n = src.window().len() as u64;
        if n == 0 {
            break;
        }
        seen += n;
        src.advance(n)?;
    }
    Ok((seen, t.elapsed()))
}

fn run(p: &Path, out: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut best: Option<(Duration, Duration)> = None;
    let mut len = 0;
    let buf = vec![b'x'; 1 << 16];
    // The best of 5: the page cache warm, the machine's noise left out.
    for _ in 0..5 {
        let (n, d) = decompress(p)?;
        len = n;
        let mut stdout = std::io::stdout().lock();
        let t = Instant::now();
        let mut left = out;
        while left > 0 {
            let k = left.min(buf.len() as u64) as usize;
            stdout.write_all(&buf[..k])?;
            left -= k as u64;
        }
        stdout.flush()?;
        let w = t.elapsed();
        best = Some(match best {
            Some((bd, bw)) => (bd.min(d), bw.min(w)),
            None => (d, w),
        });
    }
    let (d, w) = best.unwrap_or_default();
    eprintln!(
        "{}: {len} bytes decompressed in {:.3} s; {out} bytes written in {:.3} s; floor per core {:.3} s",
        p.display(),
        d.as_secs_f64(),
        w.as_secs_f64(),
        (d + w).as_secs_f64()
    );
    Ok(())
}
