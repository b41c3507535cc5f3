//! Nanoseconds per value of the scalar renderers that `dump-data` spends
//! most of its time in (Scylla's `getString` form, JSON-escaped), on values
//! like those of the bench table (`bench/make-bench-data.sh`):
//!
//! ```sh
//! cargo run --release -p sstkit-commands --example render_values
//! ```
use sstkit_commands::render::{render_json, Form};
use sstkit_format::types::{CqlType, Native};
use std::time::Instant;
fn main() {
    let cases: Vec<(&str, CqlType, Vec<u8>)> = vec![
        (
            "bigint",
            CqlType::Native(Native::Bigint),
            158643997223270i64.to_be_bytes().to_vec(),
        ),
        (
            "int",
            CqlType::Native(Native::Int),
            (-49500139i32).to_be_bytes().to_vec(),
        ),
        (
            "double",
            CqlType::Native(Native::Double),
            706160.9061533872f64.to_be_bytes().to_vec(),
        ),
        ("bool", CqlType::Native(Native::Boolean), vec![1]),
        ("uuid", CqlType::Native(Native::Uuid), (0u8..16).collect()),
        (
            "timestamp",
            CqlType::Native(Native::Timestamp),
            1652890680000i64.to_be_bytes().to_vec(),
        ),
        ("blob45", CqlType::Native(Native::Blob), (0u8..45).collect()),
        (
            "text40",
            CqlType::Native(Native::Text),
            b"000000001:bravo:bravo india papa whiskey".to_vec(),
        ),
        (
            "list3int",
            CqlType::Frozen(Box::new(CqlType::List(Box::new(CqlType::Native(
                Native::Int,
            ))))),
            {
                let mut v = vec![0, 0, 0, 3];
                for x in [78i32, 88, 16] {
                    v.extend([0, 0, 0, 4]);
                    v.extend(x.to_be_bytes());
                }
                v
            },
        ),
    ];
    let n = 2_000_000;
    println!("ns per value over {n} renders (type, time, text)");
    let mut out = String::with_capacity(1 << 20);
    let mut scratch = String::new();
    for (name, ty, b) in &cases {
        let t = Instant::now();
        for _ in 0..n {
            out.clear();
            render_json(ty, b, Form::Str, &mut out, &mut scratch);
            std::hint::black_box(&out);
        }
        println!(
            "{name:10} {:6.1} ns  {}",
            t.elapsed().as_nanos() as f64 / n as f64,
            out
        );
    }
}
