//! Checksum validation against plain reads of the same Data.db, in one
//! process and with the page cache warm, so the figures isolate the CRC
//! and the IO layer from process start-up. `bench/validate.sh` runs it:
//! `cargo run --release -p sstkit-format --example checksum_throughput -- DATA.db`.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use sstkit_format::checksums::{validate_checksums, DEFAULT_BLOCK};
use sstkit_format::{Component, Sstable};

fn main() -> ExitCode {
    let Some(p) = std::env::args().nth(1) else {
        eprintln!("usage: checksum_throughput DATA.db");
        return ExitCode::from(2);
    };
    match run(Path::new(&p)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("checksum_throughput: {e}");
            ExitCode::from(3)
        }
    }
}

fn mbps(len: u64, t: Duration) -> f64 {
    len as f64 / t.as_secs_f64() / 1e6
}

fn run(p: &Path) -> Result<(), Box<dyn std::error::Error>> {
    for _ in 0..5 {
        // read(2) into one reused 1 MiB buffer, like cat.
        let t = Instant::now();
        let mut f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mut buf = vec![0u8; 1 << 20];
        let mut len = 0u64;
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            len += n as u64;
        }
        let raw = t.elapsed();
        // The same scan through the IO layer, nothing computed.
        let sst = Sstable::open_path(p)?;
        let t = Instant::now();
        let mut seen = 0u64;
        sst.io
            .scan(Component::Data, 0, len, DEFAULT_BLOCK as usize, |_, b| {
                seen += b.len() as u64;
                Ok(())
            })?;
        if seen != len {
            return Err(format!("the IO layer scanned {seen} bytes of {len}").into());
        }
        let layer = t.elapsed();
        // The CRC alone, over bytes already in memory (1 MiB buffer).
        let t = Instant::now();
        let mut h = crc32fast::Hasher::new();
        let mut left = len;
        while left > 0 {
            let n = left.min(buf.len() as u64);
            h.update(&buf[..n as usize]);
            left -= n;
        }
        std::hint::black_box(h.finalize());
        let crc = t.elapsed();
        let sst = Sstable::open_path(p)?;
        let t = Instant::now();
        let r = validate_checksums(&sst, |_| {})?;
        let vc = t.elapsed();
        if r.bytes_read != len {
            return Err(format!("validate read {} bytes of {len}", r.bytes_read).into());
        }
        println!(
            "{len} bytes: read(2) {:.0} MB/s, IO layer scan {:.0} MB/s, CRC alone {:.0} MB/s, \
             validate {:.0} MB/s ({:.0}% of read(2), {:.0}% of the IO layer scan)",
            mbps(len, raw),
            mbps(len, layer),
            mbps(len, crc),
            mbps(len, vc),
            100.0 * raw.as_secs_f64() / vc.as_secs_f64(),
            100.0 * layer.as_secs_f64() / vc.as_secs_f64()
        );
    }
    Ok(())
}
