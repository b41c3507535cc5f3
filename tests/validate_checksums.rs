//! validate-checksums: every fixture and every intact corpus sstable is
//! valid; the corpus `integrity_check` sets and damaged copies of fixtures
//! report exactly what was damaged, with the partitions it touches.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::metadata::{corpus_sstables, CORRUPT_SETS};
use crate::util::{corpus, fixture_cases, fixtures, sstkit};

/// A scratch directory under the system temp dir, removed on drop.
struct Scratch(crate::util::Scratch);

impl Scratch {
    fn new(name: &str) -> Scratch {
        Scratch(crate::util::scratch_dir("vc", name))
    }

    /// Copy every component of the sstable(s) in `dir` (writable copies).
    fn copy_from(&self, dir: &Path) {
        for e in std::fs::read_dir(dir).expect("read fixture dir").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.contains("-big-") || name.contains("-bti-") {
                let to = self.0.join(&name);
                std::fs::copy(e.path(), &to).expect("copy");
                let mut perm = std::fs::metadata(&to).expect("stat").permissions();
                #[allow(clippy::permissions_set_readonly_false)]
                perm.set_readonly(false);
                std::fs::set_permissions(&to, perm).expect("chmod");
            }
        }
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

/// Run validate-checksums (JSON); the exit code and the per-sstable payloads.
fn validate(args: &[&str]) -> (i32, Value, String) {
    let mut a = vec!["validate-checksums"];
    a.extend_from_slice(args);
    let r = sstkit(&a);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    (r.code, v["sstables"].clone(), r.stderr)
}

fn only(v: &Value) -> &Value {
    let m = v.as_object().expect("sstables object");
    assert_eq!(m.len(), 1, "{v}");
    m.values().next().expect("one sstable")
}

fn findings(s: &Value) -> Vec<Value> {
    s["findings"].as_array().expect("findings").clone()
}

fn classes(s: &Value) -> Vec<String> {
    findings(s)
        .iter()
        .map(|f| f["class"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Index.db entries of the sstable: (raw key hex, uncompressed position).
fn index_entries(data: &str) -> Vec<(String, u64)> {
    let r = sstkit(["dump-index", "--output", "ndjson", data]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("ndjson line");
            (
                v["key"]["raw"].as_str().expect("raw").to_string(),
                v["pos"].as_u64().expect("pos"),
            )
        })
        .collect()
}

/// Raw keys of the partitions `[pos_i, pos_{i+1})` that meet `[start, end)`.
fn overlapping(entries: &[(String, u64)], data_len: u64, start: u64, end: u64) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (k, p)) in entries.iter().enumerate() {
        let e = entries.get(i + 1).map_or(data_len, |x| x.1);
        if *p < end && start < e {
            out.push(k.clone());
        }
    }
    out
}

fn partition_keys(f: &Value) -> Vec<String> {
    assert!(f.get("partitions_unresolved").is_none(), "{f}");
    f["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .map(|p| p["raw"].as_str().expect("raw").to_string())
        .collect()
}

fn range(f: &Value, field: &str) -> (u64, u64) {
    let r = f[field]
        .as_array()
        .unwrap_or_else(|| panic!("{field} in {f}"));
    (r[0].as_u64().expect("start"), r[1].as_u64().expect("end"))
}

#[test]
fn every_fixture_is_valid() {
    let cases = fixture_cases();
    assert!(
        !cases.is_empty(),
        "no fixtures under {}",
        fixtures().display()
    );
    for dir in cases {
        let d = dir.to_string_lossy().into_owned();
        let (code, ssts, stderr) = validate(&[&d]);
        assert_eq!(code, 0, "{d}: {ssts} {stderr}");
        for (path, s) in ssts.as_object().expect("sstables") {
            assert_eq!(s["has_checksums"], true, "{path}");
            assert_eq!(s["has_digest"], true, "{path}");
            assert_eq!(s["valid"], true, "{path}: {s}");
            assert!(findings(s).is_empty(), "{path}: {s}");
            assert!(s["chunks"].as_u64().expect("chunks") > 0);
            let len = std::fs::metadata(path).expect("Data.db").len();
            assert_eq!(
                s["bytes"].as_u64(),
                Some(len),
                "every byte of Data.db read once"
            );
        }
    }
}

#[test]
fn corpus_integrity_check_sets() {
    let Some(root) = corpus() else { return };
    let set = |name: &str| {
        root.join("scylladb")
            .join(name)
            .to_string_lossy()
            .into_owned()
    };
    // Bad chunks (CompressionInfo / CRC.db), with the partitions resolved from Index.db.
    for (name, chunk, file_range) in [
        (
            "3.x-lz4-integrity_check-invalid_checksums",
            2,
            (7851, 11846),
        ),
        (
            "3.x-uncompressed-integrity_check-invalid_checksums",
            1,
            (65536, 69881),
        ),
    ] {
        let (code, ssts, _) = validate(&[&set(name)]);
        assert_eq!(code, 1, "{name}");
        let s = only(&ssts);
        assert_eq!(s["valid"], false);
        let fs = findings(s);
        let bad: Vec<&Value> = fs.iter().filter(|f| f["class"] == "bad_chunk").collect();
        assert_eq!(bad.len(), 1, "{name}: {s}");
        let f = bad[0];
        assert_eq!(f["chunk"], chunk, "{name}");
        assert_eq!(range(f, "file_range"), file_range, "{name}");
        assert_eq!(f["component"], "Data.db");
        assert_eq!(f["algo"], "crc32");
        assert_ne!(f["stored"], f["computed"]);
        // The damage also breaks the whole-file digest.
        assert_eq!(classes(s), ["bad_chunk", "digest_mismatch"], "{name}");
        // Partitions: exactly those of Index.db that overlap the uncompressed range.
        let data = ssts
            .as_object()
            .expect("obj")
            .keys()
            .next()
            .expect("path")
            .clone();
        let entries = index_entries(&data);
        let (us, ue) = range(f, "uncompressed_range");
        let data_len = if name.contains("lz4") {
            21532
        } else {
            file_range.1
        };
        let want = overlapping(&entries, data_len, us, ue);
        assert!(!want.is_empty());
        assert_eq!(partition_keys(f), want, "{name}");
    }
    // A wrong digest only.
    for name in [
        "3.x-lz4-integrity_check-invalid_digest",
        "3.x-uncompressed-integrity_check-invalid_digest",
    ] {
        let (code, ssts, _) = validate(&["--output", "json", &set(name)]);
        assert_eq!(code, 1, "{name}");
        let s = only(&ssts);
        assert_eq!(classes(s), ["digest_mismatch"], "{name}: {s}");
        let f = &findings(s)[0];
        assert_eq!(
            (f["algo"].as_str(), f["component"].as_str()),
            (Some("crc32"), Some("Data.db"))
        );
        assert_eq!(s["valid"], false);
        assert!(s["chunks"].as_u64().expect("chunks") > 0);
    }
}

#[test]
fn every_intact_corpus_sstable_is_valid() {
    let Some(root) = corpus() else { return };
    let ssts: Vec<(String, PathBuf)> = corpus_sstables(&root)
        .into_iter()
        .filter(|(set, _)| !CORRUPT_SETS.contains(&set.as_str()))
        .collect();
    assert!(ssts.len() > 150, "found {}", ssts.len());
    let mut failures = Vec::new();
    let mut chunks = 0;
    for batch in ssts.chunks(64) {
        let mut args = vec!["validate-checksums".to_string()];
        args.extend(batch.iter().map(|(_, p)| p.to_string_lossy().into_owned()));
        let r = sstkit(&args);
        if r.code != 0 || r.stderr.contains("panicked") {
            failures.push(format!("exit {}: {}", r.code, r.stderr.trim()));
        }
        let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
        for (set, p) in batch {
            let s = &v["sstables"][p.to_string_lossy().as_ref()];
            let errors: Vec<&Value> = s["findings"].as_array().map_or(vec![], |a| {
                a.iter().filter(|f| f["severity"] == "error").collect()
            });
            if s.is_null() || s["valid"] == false || !errors.is_empty() {
                failures.push(format!("{set}: {}: {s}", p.display()));
            }
            chunks += s["chunks"].as_u64().unwrap_or(0);
        }
    }
    eprintln!(
        "{} intact corpus sstables valid ({chunks} chunks)",
        ssts.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Chunk `k`'s file range and uncompressed range in a compressed fixture.
fn compressed_chunk(data: &str, k: usize) -> ((u64, u64), (u64, u64), u64) {
    let r = sstkit(["dump-compression-info", data]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("json");
    let ci = &v["sstables"][data];
    let offs: Vec<u64> = ci["offsets"]
        .as_array()
        .expect("offsets")
        .iter()
        .map(|o| o.as_u64().expect("u64"))
        .collect();
    let cl = ci["chunk_len"].as_u64().expect("chunk_len");
    let data_len = ci["data_len"].as_u64().expect("data_len");
    assert!(
        offs.len() > k + 1,
        "fixture needs more than {} chunks",
        k + 1
    );
    (
        (offs[k], offs[k + 1]),
        (k as u64 * cl, ((k as u64 + 1) * cl).min(data_len)),
        data_len,
    )
}

#[test]
fn flipped_byte_reports_exactly_that_chunk() {
    // Compressed (inline CRC32 after each chunk).
    let s = Scratch::new("flip-lz4");
    s.copy_from(&fixtures().join("nb_clustering"));
    let data = s.path("nb-1-big-Data.db");
    let k = 3;
    let ((fs, fe), (us, ue), data_len) = compressed_chunk(&data, k);
    let entries = index_entries(&data);
    let mut bytes = std::fs::read(&data).expect("read");
    bytes[((fs + fe) / 2) as usize] ^= 0x5a;
    std::fs::write(&data, &bytes).expect("write");
    let (code, ssts, _) = validate(&[&data]);
    assert_eq!(code, 1);
    let sst = only(&ssts);
    assert_eq!(classes(sst), ["bad_chunk", "digest_mismatch"], "{sst}");
    let f = &findings(sst)[0];
    assert_eq!(f["chunk"], k);
    assert_eq!(range(f, "file_range"), (fs, fe));
    assert_eq!(range(f, "uncompressed_range"), (us, ue));
    let want = overlapping(&entries, data_len, us, ue);
    assert!(!want.is_empty());
    assert_eq!(partition_keys(f), want);
    for p in f["partitions"].as_array().expect("partitions") {
        assert!(
            p["token"].is_string() && p["value"].is_string() && p["pos"].is_u64(),
            "{p}"
        );
    }

    // Uncompressed (CRC.db).
    let s = Scratch::new("flip-crc");
    s.copy_from(&fixtures().join("nb_clustering_nocompress"));
    let data = s.path("nb-1-big-Data.db");
    let crc = std::fs::read(s.path("nb-1-big-CRC.db")).expect("CRC.db");
    let cs = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]) as u64;
    let mut bytes = std::fs::read(&data).expect("read");
    let len = bytes.len() as u64;
    assert!(len > cs, "fixture needs two CRC chunks");
    let entries = index_entries(&data);
    let k = 1u64;
    bytes[(k * cs + 10) as usize] ^= 1;
    std::fs::write(&data, &bytes).expect("write");
    let (code, ssts, _) = validate(&["--output", "json", &data]);
    assert_eq!(code, 1);
    let sst = only(&ssts);
    assert_eq!(classes(sst), ["bad_chunk", "digest_mismatch"], "{sst}");
    let f = &findings(sst)[0];
    let end = ((k + 1) * cs).min(len);
    assert_eq!(
        (f["chunk"].as_u64(), range(f, "file_range")),
        (Some(k), (k * cs, end))
    );
    assert_eq!(range(f, "uncompressed_range"), (k * cs, end));
    assert_eq!(partition_keys(f), overlapping(&entries, len, k * cs, end));

    // NDJSON: one line per finding, then the summary; text: a table.
    let r = sstkit(["validate-checksums", "--output", "ndjson", &data]);
    assert_eq!(r.code, 1);
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    let types: Vec<&str> = lines
        .iter()
        .map(|l| l["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(types, ["finding", "finding", "summary"]);
    assert!(lines.iter().all(|l| l["sstable"] == data.as_str()));
    assert_eq!(
        (lines[2]["valid"].as_bool(), lines[2]["findings"].as_u64()),
        (Some(false), Some(2))
    );
    // One sequential pass (--threads 1) reports the same: splitting the pass
    // is tested on files cut into many parts in the format crate.
    let one = sstkit(["validate-checksums", "--threads", "1", &data]);
    let auto = sstkit(["validate-checksums", "--threads", "0", &data]);
    assert_eq!((one.code, &one.stdout), (1, &auto.stdout));
    let r = sstkit(["validate-checksums", "--output", "text", &data]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("bad_chunk") && r.stdout.contains("digest_mismatch"),
        "{}",
        r.stdout
    );
}

#[test]
fn truncated_data_is_a_finding_not_a_panic() {
    let s = Scratch::new("truncate");
    s.copy_from(&fixtures().join("nb_clustering"));
    let data = s.path("nb-1-big-Data.db");
    let k = 2;
    let ((fs, fe), (us, _), data_len) = compressed_chunk(&data, k);
    let entries = index_entries(&data);
    let bytes = std::fs::read(&data).expect("read");
    std::fs::write(&data, &bytes[..((fs + fe) / 2) as usize]).expect("truncate");
    let (code, ssts, stderr) = validate(&[&data]);
    assert_eq!(code, 1, "{stderr}");
    let sst = only(&ssts);
    assert_eq!(
        classes(sst),
        ["truncated_chunk", "chunks_out_of_range", "digest_mismatch"],
        "{sst}"
    );
    let fs_ = findings(sst);
    assert_eq!(fs_[0]["chunk"], k);
    assert_eq!(range(&fs_[0], "file_range"), (fs, fe));
    assert_eq!(fs_[1]["chunk"], k + 1);
    // Everything from chunk k on is lost: the partitions there are named.
    let mut named = partition_keys(&fs_[0]);
    named.extend(partition_keys(&fs_[1]));
    named.dedup();
    assert_eq!(named, overlapping(&entries, data_len, us, data_len));
    assert_eq!(sst["chunks"], k, "chunks before the cut were checked");

    // Uncompressed, cut mid-chunk: the CRC.db count no longer matches.
    let s = Scratch::new("truncate-crc");
    s.copy_from(&fixtures().join("nb_clustering_nocompress"));
    let data = s.path("nb-1-big-Data.db");
    let bytes = std::fs::read(&data).expect("read");
    std::fs::write(&data, &bytes[..bytes.len() / 3]).expect("truncate");
    let (code, ssts, _) = validate(&[&data]);
    assert_eq!(code, 1);
    let c = classes(only(&ssts));
    assert!(
        c.contains(&"crc_count_mismatch".to_string())
            && c.last().map(String::as_str) == Some("digest_mismatch"),
        "{c:?}"
    );

    // Data.db gone: unreadable (exit 3), the error names the file.
    std::fs::remove_file(&data).expect("rm");
    let r = sstkit(["validate-checksums", &data]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains(&data), "{}", r.stderr);
}

#[test]
fn corrupt_metadata_and_missing_components() {
    let s = Scratch::new("meta");
    s.copy_from(&fixtures().join("nb_clustering"));
    let data = s.path("nb-1-big-Data.db");
    // Garbage CompressionInfo.db: a finding naming it; the digest is still checked.
    std::fs::write(s.path("nb-1-big-CompressionInfo.db"), [0u8, 0xff, 1, 2, 3]).expect("write");
    let (code, ssts, _) = validate(&[&data]);
    assert_eq!(code, 1);
    let sst = only(&ssts);
    assert_eq!(classes(sst), ["corrupt_metadata"], "{sst}");
    let f = &findings(sst)[0];
    assert_eq!(f["component"], "CompressionInfo.db");
    assert!(
        f["message"]
            .as_str()
            .expect("msg")
            .contains("CompressionInfo.db"),
        "{f}"
    );
    // Digest listed in the TOC but absent.
    std::fs::remove_file(s.path("nb-1-big-Digest.crc32")).expect("rm");
    let (_, ssts, _) = validate(&[&data]);
    assert_eq!(
        classes(only(&ssts)),
        ["corrupt_metadata", "missing_component"]
    );
    assert_eq!(only(&ssts)["has_digest"], false);
    // No checksum components at all: `valid` is omitted, warnings only, exit 0.
    std::fs::remove_file(s.path("nb-1-big-CompressionInfo.db")).expect("rm");
    let toc = std::fs::read_to_string(s.path("nb-1-big-TOC.txt")).expect("toc");
    let toc: String = toc
        .lines()
        .filter(|l| !l.starts_with("CompressionInfo") && !l.starts_with("Digest"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(s.path("nb-1-big-TOC.txt"), toc).expect("toc");
    let (code, ssts, _) = validate(&[&data]);
    let sst = only(&ssts);
    assert_eq!(code, 0, "{sst}");
    assert_eq!(sst["has_checksums"], false);
    assert!(sst.get("valid").is_none(), "{sst}");
    assert_eq!(classes(sst), ["missing_checksums", "missing_digest"]);
}

/// The pre-2.1 `Digest.sha1` (sha1sum output) is checked as a real SHA-1:
/// the corpus's `jb` sstable, renamed to a version sstkit opens (only
/// Data.db, CRC.db and the digest are read; `jb` CRC.db holds CRC32s, like `mc`).
#[test]
fn old_sha1_digest() {
    let Some(root) = corpus() else { return };
    let src = root.join("cassandra/legacy_jb_Keyspace1-Standard1");
    if !src.is_dir() {
        eprintln!("skipping: {} is absent", src.display());
        return;
    }
    let s = Scratch::new("sha1");
    for c in ["Data.db", "CRC.db", "Digest.sha1"] {
        std::fs::copy(
            src.join(format!("Keyspace1-Standard1-jb-0-{c}")),
            s.0.join(format!("mc-1-big-{c}")),
        )
        .expect("copy");
    }
    std::fs::write(
        s.path("mc-1-big-TOC.txt"),
        "Data.db\nCRC.db\nDigest.sha1\nTOC.txt\n",
    )
    .expect("toc");
    let data = s.path("mc-1-big-Data.db");
    let (code, ssts, _) = validate(&[&data]);
    assert_eq!(code, 0, "{ssts}");
    assert_eq!(only(&ssts)["valid"], true);
    // One flipped byte: the chunk (CRC.db) and the SHA-1 both fail.
    let mut bytes = std::fs::read(&data).expect("read");
    bytes[100] ^= 1;
    let mut perm = std::fs::metadata(&data).expect("stat").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&data, perm).expect("chmod");
    std::fs::write(&data, &bytes).expect("write");
    let (code, ssts, _) = validate(&[&data]);
    assert_eq!(code, 1);
    let fs = findings(only(&ssts));
    assert_eq!(
        (fs[0]["class"].as_str(), fs[0]["algo"].as_str()),
        (Some("bad_chunk"), Some("crc32"))
    );
    assert_eq!(
        (fs[1]["class"].as_str(), fs[1]["algo"].as_str()),
        (Some("digest_mismatch"), Some("sha1"))
    );
    assert_eq!(fs[1]["computed"].as_str().map(str::len), Some(40));
}
