//! The corruption suite: a seeded generator derives damaged copies of the
//! fixtures (bit flips in compressed and uncompressed Data.db, truncations,
//! zeroed ranges, garbage lengths in Index/Summary/Statistics/CompressionInfo,
//! two partitions swapped, missing components) and runs the binary on each:
//!
//! * never a panic (exit 101) or a crash; exit codes in {0, 1, 3};
//! * never a hang: every run is killed after [`DEADLINE`] (a failure);
//! * bounded memory: every run has a 1 GiB address-space limit (`ulimit -v`),
//!   far below what a length read from a damaged file could ask for;
//! * `validate-checksums` flags (exit 1) every Data.db damage (CRC.db,
//!   compressed chunk CRCs and Digest cover every byte);
//! * `scrub --mode skip` salvages every partition that does not overlap the
//!   damaged bytes (in uncompressed coordinates: a damaged compressed chunk
//!   damages its whole uncompressed range), identical to the undamaged dump;
//! * swapped partitions: `scrub --mode segregate` keeps both (one in the
//!   segregated output), `validate` flags the order.
//!
//! Each case works on its own copy in a temporary directory. The seed is
//! fixed (override with `SSTKIT_CORRUPTION_SEED`), so failures reproduce.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use sstkit_format::compression::CompressionInfo;
use sstkit_format::data::{Fragment, ScanReader};
use sstkit_format::digest::ChecksumAlgo;
use sstkit_format::{Component, Sstable};

use crate::util::{repo, scratch_dir, Scratch};

/// Longest a single run may take (debug build, 2 cores shared).
const DEADLINE: Duration = Duration::from_secs(30);

/// A 10-line xorshift64* PRNG.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// One run's result.
pub(crate) struct RunOut {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
}

/// Run the binary with a deadline and a 1 GiB address-space limit.
/// The clustered rows of a dump-data document, json (`clustering-row`
/// elements) or sstabledump (`"type": "row"`).
fn clustered_rows(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.iter().map(clustered_rows).sum(),
        Value::Object(o) => {
            let here = matches!(
                o.get("type").and_then(Value::as_str),
                Some("row" | "clustering-row")
            );
            usize::from(here) + o.values().map(clustered_rows).sum::<usize>()
        }
        _ => 0,
    }
}

pub(crate) fn run_limited(args: &[&str]) -> Result<RunOut, String> {
    run_limited_to(1 << 20, args)
}

/// Run the binary with a deadline and an address-space limit of `kib` KiB.
pub(crate) fn run_limited_to(kib: u64, args: &[&str]) -> Result<RunOut, String> {
    let bin = env!("CARGO_BIN_EXE_sstkit");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kib} 2>/dev/null; exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = so.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = se.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                let stdout = t_out.join().unwrap_or_default();
                let stderr = t_err.join().unwrap_or_default();
                use std::os::unix::process::ExitStatusExt;
                let code = st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
                return Ok(RunOut {
                    code,
                    stdout,
                    stderr,
                    elapsed: start.elapsed(),
                });
            }
            Ok(None) if start.elapsed() > DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "timed out after {DEADLINE:?}: sstkit {}",
                    args.join(" ")
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("wait: {e}")),
        }
    }
}

/// A fixture's undamaged facts.
struct Baseline {
    dir: PathBuf,
    /// Data.db file name.
    data_name: String,
    compressed: Option<CompressionInfo>,
    /// CRC.db chunk size of an uncompressed Data.db.
    crc_chunk: Option<u64>,
    /// (key hex, uncompressed start, end) per partition, in file order.
    partitions: Vec<(String, u64, u64)>,
    /// Salvaged partition JSON (without the sstable path) by key hex.
    dump: BTreeMap<String, Value>,
}

fn key_of(v: &Value) -> String {
    v["key"]["raw"].as_str().unwrap_or_default().to_string()
}

/// Parse salvaged NDJSON: key hex -> partition (sstable path removed).
pub(crate) fn parse_salvage(text: &str) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Ok(mut v) = serde_json::from_str::<Value>(l) {
            if let Some(o) = v.as_object_mut() {
                o.remove("sstable");
            }
            m.insert(key_of(&v), v);
        }
    }
    m
}

/// A fresh directory holding a copy of every file of `src`.
fn copy_case(src: &Path, tag: &str) -> Scratch {
    let dir = scratch_dir("corruption", tag);
    for e in std::fs::read_dir(src).expect("fixture dir").flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_file() && name.contains("-big-") {
            std::fs::copy(&p, dir.join(&name)).expect("copy");
        }
    }
    dir
}

fn component_path(dir: &Path, data_name: &str, suffix: &str) -> PathBuf {
    dir.join(data_name.replace("Data.db", suffix))
}

fn baseline(fixture: &str) -> Baseline {
    let dir = repo().join("fixtures/cassandra").join(fixture);
    let data = crate::util::data_files(&dir)
        .into_iter()
        .next()
        .expect("Data.db");
    let data_name = data.file_name().unwrap().to_string_lossy().into_owned();
    let sst = Sstable::open_path(&data).expect("open");
    let st = sst.statistics().expect("stats");
    let header = st.header.expect("header");
    let crc_chunk = sst.has(Component::Crc).then(|| {
        let b = sst.read_component(Component::Crc).unwrap();
        u32::from_be_bytes(b[..4].try_into().unwrap()) as u64
    });
    let compressed = sst.has(Component::CompressionInfo).then(|| {
        let b = sst.read_component(Component::CompressionInfo).unwrap();
        CompressionInfo::parse(&b, &sst.features()).unwrap()
    });
    let mut r = ScanReader::new(&sst, &header).expect("reader");
    let mut partitions = Vec::new();
    let mut cur: Option<(String, u64)> = None;
    while let Some(f) = r.next_fragment().expect("fixture decodes") {
        match f {
            Fragment::PartitionStart { key, position, .. } => {
                cur = Some((sstkit_commands::output::hex(key), position.0))
            }
            Fragment::PartitionEnd { position } => {
                if let Some((k, s)) = cur.take() {
                    partitions.push((k, s, position.0 + 1));
                }
            }
            _ => {}
        }
    }
    // The reference dump: scrub --mode skip on an undamaged copy.
    let case = copy_case(&dir, "baseline");
    let out = case.join("out");
    let r = run_limited(&[
        "scrub",
        "--mode",
        "skip",
        "--salvage-format",
        "ndjson",
        "--output-dir",
        out.to_str().unwrap(),
        case.to_str().unwrap(),
    ])
    .expect("baseline scrub");
    assert_eq!(r.code, 0, "baseline scrub of {fixture}: {}", r.stderr);
    let stem = data_name.trim_end_matches("-Data.db");
    let text = std::fs::read_to_string(out.join(format!("{stem}-salvaged.ndjson"))).unwrap();
    let dump = parse_salvage(&text);
    assert_eq!(dump.len(), partitions.len(), "{fixture}: baseline salvage");
    // The salvage equals dump-data --output ndjson.
    let d = crate::util::sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]);
    assert_eq!(
        parse_salvage(&d.stdout),
        dump,
        "{fixture}: salvage != dump-data"
    );
    Baseline {
        dir,
        data_name,
        compressed,
        crc_chunk,
        partitions,
        dump,
    }
}

/// What a case damaged.
#[derive(Debug, Clone)]
enum Damage {
    /// Data.db bytes changed in the file range (checksummed).
    DataBytes {
        range: std::ops::Range<u64>,
        what: String,
    },
    /// Data.db truncated at this length.
    Truncate(u64),
    /// Bytes of another component changed.
    Component { suffix: &'static str, what: String },
    /// Two adjacent partitions swapped (uncompressed files).
    Swap(usize),
    /// A component removed.
    Missing(&'static str),
}

/// The uncompressed byte range a Data.db file-range damage destroys.
fn uncompressed_damage(
    b: &Baseline,
    range: &std::ops::Range<u64>,
    data_file_len: u64,
) -> std::ops::Range<u64> {
    match &b.compressed {
        // A CRC.db chunk whose checksum fails is lost whole.
        None => match b.crc_chunk.filter(|c| *c > 0) {
            Some(c) => range.start / c * c..range.end.div_ceil(c) * c,
            None => range.clone(),
        },
        Some(ci) => {
            let l = ci.chunk_length as u64;
            let offs = &ci.chunk_offsets;
            let chunk_at = |off: u64| offs.partition_point(|&o| o <= off).saturating_sub(1) as u64;
            let first = chunk_at(range.start);
            let last = chunk_at(
                range
                    .end
                    .saturating_sub(1)
                    .min(data_file_len.saturating_sub(1)),
            );
            first * l..((last + 1) * l).min(ci.data_length)
        }
    }
}

fn run_case(
    b: &Baseline,
    damage: &Damage,
    rng_seed: u64,
    stats: &Mutex<Stats>,
) -> Result<(), String> {
    let tag = match damage {
        Damage::DataBytes { .. } => "data",
        Damage::Truncate(_) => "trunc",
        Damage::Component { suffix, .. } => suffix,
        Damage::Swap(_) => "swap",
        Damage::Missing(s) => s,
    };
    let dir = copy_case(&b.dir, &tag.replace('.', "_"));
    let data = dir.join(&b.data_name);
    let data_len = std::fs::metadata(&data).map(|m| m.len()).unwrap_or(0);
    let mut rng = Rng(rng_seed | 1);
    // Apply the damage; compute the uncompressed range it destroys.
    let mut lost: Option<std::ops::Range<u64>> = None;
    let mut checksummed = false;
    let mut swapped: Option<(String, String)> = None;
    match damage {
        Damage::DataBytes { range, what } => {
            let mut bytes = std::fs::read(&data).unwrap();
            let before = bytes.clone();
            for i in range.clone() {
                let i = i as usize;
                if what == "bit flip" {
                    bytes[i] ^= 1 << rng.below(8);
                } else {
                    bytes[i] = 0;
                }
            }
            if bytes == before {
                return Ok(()); // zeroing zeros changes nothing
            }
            std::fs::write(&data, &bytes).unwrap();
            lost = Some(uncompressed_damage(b, range, data_len));
            checksummed = true;
        }
        Damage::Truncate(t) => {
            let f = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
            f.set_len(*t).unwrap();
            let start = match &b.compressed {
                None => uncompressed_damage(b, &(*t..t + 1), data_len).start,
                Some(_) => uncompressed_damage(b, &(*t..t + 1), data_len).start,
            };
            lost = Some(start..u64::MAX);
            checksummed = true;
        }
        Damage::Component { suffix, what } => {
            let p = component_path(&dir, &b.data_name, suffix);
            let mut bytes = std::fs::read(&p).unwrap();
            if bytes.len() >= 8 && what == "garbage length" {
                let at = rng.below(bytes.len() as u64 - 4) as usize;
                let garbage: [u8; 4] = match rng.below(3) {
                    0 => [0xff; 4],
                    1 => [0x7f, 0xff, 0xff, 0xff],
                    _ => (rng.next() as u32).to_be_bytes(),
                };
                bytes[at..at + 4].copy_from_slice(&garbage);
                std::fs::write(&p, &bytes).unwrap();
            }
        }
        Damage::Swap(i) => {
            let (ka, s, m) = b.partitions[*i].clone();
            let (kb, _, e) = b.partitions[i + 1].clone();
            let mut bytes = std::fs::read(&data).unwrap();
            let (s, m, e) = (s as usize, m as usize, e as usize);
            let mut swapped_bytes = bytes[m..e].to_vec();
            swapped_bytes.extend_from_slice(&bytes[s..m]);
            bytes[s..e].copy_from_slice(&swapped_bytes);
            std::fs::write(&data, &bytes).unwrap();
            // As a writer that put them out of order would: checksums of the
            // bytes as written (scrub never salvages bytes whose checksum
            // fails, so a swap under stale checksums is damage, not order).
            if let Some(c) = b.crc_chunk.filter(|c| *c > 0) {
                let mut sums = (c as u32).to_be_bytes().to_vec();
                for chunk in bytes.chunks(c as usize) {
                    sums.extend_from_slice(&ChecksumAlgo::Crc32.checksum(chunk).to_be_bytes());
                }
                std::fs::write(component_path(&dir, &b.data_name, "CRC.db"), sums).unwrap();
                let _ = std::fs::remove_file(component_path(&dir, &b.data_name, "Digest.crc32"));
            }
            swapped = Some((ka, kb));
        }
        Damage::Missing(suffix) => {
            let p = component_path(&dir, &b.data_name, suffix);
            let _ = std::fs::remove_file(p);
        }
    }
    let d = dir.to_str().unwrap().to_string();
    let out_scratch = scratch_dir("corruption", &format!("{tag}-out"));
    let out_dir = out_scratch.join("out");
    let out = out_dir.to_str().unwrap().to_string();
    let check = |r: &RunOut, what: &str| -> Result<(), String> {
        if !matches!(r.code, 0 | 1 | 3) {
            return Err(format!(
                "{what} on {damage:?}: exit {} (101 = panic){}\n{}",
                r.code,
                if r.code == 134 || r.code == 137 {
                    " (abort: allocation over the limit?)"
                } else {
                    ""
                },
                r.stderr.lines().take(5).collect::<Vec<_>>().join("\n")
            ));
        }
        Ok(())
    };
    let mut runs = Vec::new();
    // validate (no panic, bounded).
    let v = run_limited(&["validate", "-o", "json", &d])?;
    check(&v, "validate")?;
    runs.push(("validate", v.code, v.elapsed));
    // dump-data stops at the damage with well-formed JSON: a row that
    // fails to decode half-way is taken back, the partition closed. Both
    // JSON writers render rows as they are decoded; they must print the
    // same rows (a row written half-way by one of them would still leave
    // sstabledump's output well-formed, but one row too many).
    let mut rows = Vec::new();
    for format in ["json", "sstabledump"] {
        let dd = run_limited(&["dump-data", "-o", format, &d])?;
        check(&dd, "dump-data")?;
        runs.push(("dump-data", dd.code, dd.elapsed));
        // sstabledump prints nothing for an sstable it cannot open (no
        // document to start), as Cassandra's tool does.
        if format == "sstabledump" && dd.code == 3 && dd.stdout.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&dd.stdout) {
            Ok(v) => rows.push((format, clustered_rows(&v))),
            Err(e) => {
                return Err(format!(
                    "dump-data -o {format} on {damage:?}: output is not one JSON document ({e}), exit {}",
                    dd.code
                ))
            }
        }
    }
    if let [(_, a), (_, b)] = rows[..] {
        if a != b {
            return Err(format!(
                "dump-data on {damage:?}: {a} clustered rows in json, {b} in sstabledump"
            ));
        }
    }
    // validate-checksums flags checksummed damage.
    let vc = run_limited(&["validate-checksums", &d])?;
    check(&vc, "validate-checksums")?;
    runs.push(("validate-checksums", vc.code, vc.elapsed));
    if checksummed && vc.code != 1 {
        return Err(format!(
            "validate-checksums did not flag {damage:?} (exit {}): {}",
            vc.code,
            vc.stdout.chars().take(400).collect::<String>()
        ));
    }
    // scrub --mode skip salvages what the damage did not touch.
    let mode = if swapped.is_some() {
        "segregate"
    } else {
        "skip"
    };
    let s = run_limited(&[
        "scrub",
        "--mode",
        mode,
        "--salvage-format",
        "ndjson",
        "--output-dir",
        &out,
        "-o",
        "json",
        &d,
    ])?;
    check(&s, "scrub")?;
    runs.push(("scrub", s.code, s.elapsed));
    let stem = b.data_name.trim_end_matches("-Data.db");
    let salvaged = std::fs::read_to_string(out_dir.join(format!("{stem}-salvaged.ndjson")))
        .map(|t| parse_salvage(&t))
        .unwrap_or_default();
    let segregated = std::fs::read_to_string(out_dir.join(format!("{stem}-segregated.ndjson")))
        .map(|t| parse_salvage(&t))
        .unwrap_or_default();
    let expect_full = matches!(
        damage,
        Damage::Component {
            suffix: "Index.db" | "Summary.db" | "Filter.db",
            ..
        } | Damage::Missing("Index.db" | "Summary.db" | "Filter.db")
    );
    let mut expected = 0usize;
    let mut found = 0usize;
    if s.code == 3 && (expect_full || lost.is_some()) {
        return Err(format!("scrub could not read {damage:?}: {}", s.stderr));
    }
    if let Some((ka, kb)) = &swapped {
        // Both partitions kept: one in order, one segregated.
        for k in [ka, kb] {
            let got = salvaged.get(k).or_else(|| segregated.get(k));
            if got != b.dump.get(k) {
                return Err(format!("swap: partition {k} not salvaged identically"));
            }
        }
        if v.code != 1 {
            return Err("validate did not flag swapped partitions".into());
        }
        expected = b.partitions.len();
        found = salvaged.len() + segregated.len();
    } else if lost.is_some() || expect_full {
        for (k, st, en) in &b.partitions {
            let overlaps = lost.as_ref().is_some_and(|r| *st < r.end && r.start < *en);
            if overlaps {
                continue;
            }
            expected += 1;
            match salvaged.get(k) {
                Some(v) if Some(v) == b.dump.get(k) => found += 1,
                Some(_) => {
                    return Err(format!(
                        "{damage:?}: partition {k} ({st}..{en}, lost {lost:?}) salvaged with other content"
                    ))
                }
                None => {
                    return Err(format!(
                        "{damage:?}: partition {k} ({st}..{en}) does not overlap the damage {lost:?} \
                         but was not salvaged (scrub exit {})",
                        s.code
                    ))
                }
            }
        }
    }
    let mut st = stats.lock().unwrap();
    st.cases += 1;
    st.partitions_expected += expected as u64;
    st.partitions_salvaged += found as u64;
    for (what, code, el) in runs {
        *st.exits.entry(format!("{what}:{code}")).or_insert(0) += 1;
        if el > st.slowest.0 {
            st.slowest = (el, format!("{what} {damage:?}"));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Stats {
    cases: u64,
    partitions_expected: u64,
    partitions_salvaged: u64,
    exits: BTreeMap<String, u64>,
    slowest: (Duration, String),
}

/// The cases for one fixture.
fn cases(
    b: &Baseline,
    rng: &mut Rng,
    flips: usize,
    truncs: usize,
    zeros: usize,
) -> Vec<(Damage, u64)> {
    let data_len = std::fs::metadata(b.dir.join(&b.data_name)).unwrap().len();
    let mut v = Vec::new();
    for _ in 0..flips {
        let at = rng.below(data_len);
        v.push((
            Damage::DataBytes {
                range: at..at + 1,
                what: "bit flip".into(),
            },
            rng.next(),
        ));
    }
    for _ in 0..truncs {
        v.push((Damage::Truncate(rng.below(data_len)), rng.next()));
    }
    for _ in 0..zeros {
        let at = rng.below(data_len);
        let n = 1 + rng.below(64);
        v.push((
            Damage::DataBytes {
                range: at..(at + n).min(data_len),
                what: "zeroed".into(),
            },
            rng.next(),
        ));
    }
    let mut comps = vec!["Index.db", "Summary.db", "Statistics.db"];
    if b.compressed.is_some() {
        comps.push("CompressionInfo.db");
    }
    for c in &comps {
        for _ in 0..4 {
            v.push((
                Damage::Component {
                    suffix: c,
                    what: "garbage length".into(),
                },
                rng.next(),
            ));
        }
    }
    if b.compressed.is_none() && b.partitions.len() > 2 {
        let i = rng.below(b.partitions.len() as u64 - 1) as usize;
        v.push((Damage::Swap(i), rng.next()));
    }
    for c in [
        "Index.db",
        "Summary.db",
        "Filter.db",
        "Statistics.db",
        "CompressionInfo.db",
    ] {
        v.push((Damage::Missing(c), rng.next()));
    }
    v
}

#[test]
fn corruption_suite() {
    let seed: u64 = std::env::var("SSTKIT_CORRUPTION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2024);
    let started = Instant::now();
    let mut rng = Rng(seed);
    let fixtures = [
        ("nb_clustering_nocompress", 24, 10, 8),
        ("nb_clustering_lz4_4k", 24, 10, 8),
        ("oa_range_tombstones", 10, 5, 5),
        ("nb_wide", 8, 4, 4),
        ("oa_collections", 8, 4, 4),
    ];
    let mut all = Vec::new();
    let mut bases = Vec::new();
    for (f, flips, truncs, zeros) in fixtures {
        bases.push(baseline(f));
        let b = bases.last().unwrap();
        for c in cases(b, &mut rng, flips, truncs, zeros) {
            all.push((bases.len() - 1, c));
        }
    }
    let stats = Mutex::new(Stats::default());
    let failures = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, AtOrd::SeqCst);
                let Some((bi, (damage, seed))) = all.get(i) else {
                    break;
                };
                if let Err(e) = run_case(&bases[*bi], damage, *seed, &stats) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("[{}] {e}", bases[*bi].data_name));
                }
            });
        }
    });
    let st = stats.into_inner().unwrap();
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "corruption suite: seed {seed:#x}, {} cases generated, {} ran, {} failed, {:.1}s; \
         partitions expected {} salvaged {}; exits {:?}; slowest run {:.2}s ({})",
        all.len(),
        st.cases,
        failures.len(),
        started.elapsed().as_secs_f64(),
        st.partitions_expected,
        st.partitions_salvaged,
        st.exits,
        st.slowest.0.as_secs_f64(),
        st.slowest.1
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
