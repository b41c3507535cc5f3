#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::descriptor::Descriptor;
use crate::test_support as corpus;
use proptest::prelude::*;
use std::path::Path;

/// An sstable on disk: `files` are (suffix, bytes); TOC.txt lists them.
fn write_sst(dir: &Path, version: &str, files: &[(&str, Vec<u8>)]) -> Sstable {
    let mut toc = String::new();
    for (suffix, bytes) in files {
        std::fs::write(dir.join(format!("{version}-1-big-{suffix}")), bytes).unwrap();
        toc.push_str(suffix);
        toc.push('\n');
    }
    toc.push_str("TOC.txt\n");
    std::fs::write(dir.join(format!("{version}-1-big-TOC.txt")), toc).unwrap();
    let (d, _) = Descriptor::from_path(&dir.join(format!("{version}-1-big-Data.db"))).unwrap();
    Sstable::open(d).unwrap()
}

fn sample(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A compressed Data.db (payloads are arbitrary bytes: nothing is
/// decompressed) and its CompressionInfo.db.
struct Compressed {
    data: Vec<u8>,
    info: Vec<u8>,
    offsets: Vec<u64>,
    payloads: Vec<Vec<u8>>,
}

fn compressed(version: &str, chunk_len: u32, data_len: u64, sizes: &[usize]) -> Compressed {
    let algo = ChecksumAlgo::for_chunks(&crate::Version::parse(version).unwrap().features());
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    let mut payloads = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        offsets.push(data.len() as u64);
        let p = sample(n, i as u32 + 7);
        data.extend_from_slice(&p);
        data.extend_from_slice(&algo.checksum(&p).to_be_bytes());
        payloads.push(p);
    }
    let mut info = Vec::new();
    let class = b"LZ4Compressor";
    info.extend_from_slice(&(class.len() as u16).to_be_bytes());
    info.extend_from_slice(class);
    info.extend_from_slice(&0i32.to_be_bytes());
    info.extend_from_slice(&chunk_len.to_be_bytes());
    if crate::Version::parse(version)
        .unwrap()
        .features()
        .max_compressed_length
    {
        info.extend_from_slice(&i32::MAX.to_be_bytes());
    }
    info.extend_from_slice(&data_len.to_be_bytes());
    info.extend_from_slice(&(offsets.len() as i32).to_be_bytes());
    for o in &offsets {
        info.extend_from_slice(&o.to_be_bytes());
    }
    Compressed {
        data,
        info,
        offsets,
        payloads,
    }
}

fn crc_db(chunk: u32, data: &[u8], algo: ChecksumAlgo) -> Vec<u8> {
    let mut b = (chunk as i32).to_be_bytes().to_vec();
    for c in data.chunks(chunk as usize) {
        b.extend_from_slice(&algo.checksum(c).to_be_bytes());
    }
    b
}

fn run_with(
    sst: &Sstable,
    block: u64,
    threads: usize,
    min_part: u64,
) -> (ChecksumReport, Vec<ChecksumFinding>) {
    let mut v = Vec::new();
    let opts = ValidateOptions {
        block,
        threads,
        min_part,
    };
    let r = validate_checksums_with(sst, opts, |f| v.push(f)).unwrap();
    (r, v)
}

/// The pass on one thread; and, cut into parts as small as the chunks
/// allow, on 2, 3 and 7 threads, which must give the same report and
/// findings in the same order.
fn run(sst: &Sstable, block: u64) -> (ChecksumReport, Vec<ChecksumFinding>) {
    let serial = run_with(sst, block, 1, DEFAULT_MIN_PART);
    for threads in [2, 3, 7] {
        let split = run_with(sst, block, threads, 1);
        assert_eq!(split, serial, "{threads} threads, block {block}");
    }
    serial
}

/// Parts start where chunks start, cover the file in order, and there
/// are as many as asked when there are enough chunks.
#[test]
fn parts_start_at_chunks() {
    let t = corpus::scratch("checksums");
    let (sst, c) = nb_compressed(t.path());
    let info = CompressionInfo::parse(&c.info, &sst.features()).unwrap();
    let len = c.data.len() as u64;
    let layout = Layout::compressed(info, len, &mut Vec::new());
    for n in 1..10 {
        let parts = layout.parts(len, n);
        assert!(!parts.is_empty() && parts.len() <= n);
        assert_eq!(parts[0], (0..parts[0].0.end, 0));
        assert_eq!(parts.last().unwrap().0.end, len);
        for w in parts.windows(2) {
            assert_eq!(w[0].0.end, w[1].0.start);
            assert_eq!(c.offsets[w[1].1 as usize], w[1].0.start, "{parts:?}");
        }
        // Six chunks of varied sizes cut at equal byte targets: at
        // most six parts, and as many as asked up to three.
        assert!(
            parts.len() >= n.min(3) && parts.len() <= n.min(6),
            "{n}: {parts:?}"
        );
    }
    let crc = Layout::Crc {
        crc: CrcFile::parse(&crc_db(1000, &[7u8; 5500], ChecksumAlgo::Crc32)).unwrap(),
        checked: 6,
    };
    assert_eq!(
        crc.parts(5500, 3),
        vec![(0..1000, 0), (1000..3000, 1), (3000..5500, 3)]
    );
    assert_eq!(
        Layout::Plain.parts(3 << 12, 3),
        vec![(0..4096, 0), (4096..8192, 0), (8192..12288, 0)]
    );
}

const BLOCKS: &[u64] = &[1, 3, 4, 5, 7, 100, 1000, 1003, 4096, DEFAULT_BLOCK];

/// Six chunks of 1000 uncompressed bytes, payloads of varied sizes (one empty).
fn nb_compressed(dir: &Path) -> (Sstable, Compressed) {
    let c = compressed("nb", 1024, 5500, &[700, 1100, 0, 998, 300, 1]);
    let digest = ChecksumAlgo::Crc32
        .checksum(&c.data)
        .to_string()
        .into_bytes();
    let sst = write_sst(
        dir,
        "nb",
        &[
            ("Data.db", c.data.clone()),
            ("CompressionInfo.db", c.info.clone()),
            ("Digest.crc32", digest),
        ],
    );
    (sst, c)
}

#[test]
fn compressed_valid_at_every_read_size() {
    let t = corpus::scratch("checksums");
    let (sst, c) = nb_compressed(t.path());
    for &b in BLOCKS {
        let (r, f) = run(&sst, b);
        assert!(f.is_empty(), "block {b}: {f:?}");
        assert!(r.valid() && r.has_checksums && r.has_digest && r.compressed);
        assert_eq!(r.chunks_checked, 6);
        assert_eq!(r.digest_scope, Some(DigestScope::WholeFile));
        assert_eq!(r.file_len, c.data.len() as u64);
        assert_eq!(r.data_len, 5500);
    }
    // Every byte goes through the IO layer, once.
    sst.io.begin_operation();
    let before = sst.io.stats().get(Component::Data).bytes;
    let r = validate_checksums(&sst, |_| {}).unwrap();
    let io = sst.io.stats();
    assert_eq!(io.get(Component::Data).bytes - before, c.data.len() as u64);
    assert_eq!(r.bytes_read, c.data.len() as u64);
}

#[test]
fn compressed_flipped_bytes_name_the_chunk() {
    let t = corpus::scratch("checksums");
    let (_, c) = nb_compressed(t.path());
    for k in [0usize, 1, 3, 5] {
        // A payload byte, then a checksum byte.
        let start = c.offsets[k] as usize;
        let end = c.offsets.get(k + 1).map_or(c.data.len(), |&o| o as usize);
        for at in [start, end - 1] {
            let mut data = c.data.clone();
            data[at] ^= 0x10;
            let stored_digest = ChecksumAlgo::Crc32.checksum(&c.data);
            let t2 = corpus::scratch("checksums");
            let sst = write_sst(
                t2.path(),
                "nb",
                &[
                    ("Data.db", data.clone()),
                    ("CompressionInfo.db", c.info.clone()),
                    ("Digest.crc32", stored_digest.to_string().into_bytes()),
                ],
            );
            for &b in BLOCKS {
                let (r, f) = run(&sst, b);
                assert_eq!(f.len(), 2, "chunk {k} byte {at} block {b}: {f:?}");
                match &f[0] {
                    ChecksumFinding::BadChunk {
                        index,
                        file_range,
                        uncompressed_range,
                        source,
                        ..
                    } => {
                        assert_eq!(*index, k as u64);
                        assert_eq!(*file_range, start as u64..end as u64);
                        assert_eq!(
                            *uncompressed_range,
                            k as u64 * 1024..((k as u64 + 1) * 1024).min(5500)
                        );
                        assert_eq!(*source, Component::Data);
                    }
                    other => panic!("{other:?}"),
                }
                assert_eq!(
                    f[1],
                    ChecksumFinding::DigestMismatch {
                        algo: DigestAlgo::Checksum(ChecksumAlgo::Crc32),
                        stored: DigestValue::Checksum(stored_digest),
                        computed: DigestValue::Checksum(ChecksumAlgo::Crc32.checksum(&data)),
                    }
                );
                assert!(!r.valid());
                assert_eq!((r.bad_chunks, r.chunks_checked, r.errors), (1, 6, 2));
            }
        }
    }
}

#[test]
fn truncated_compressed_data_is_a_finding() {
    let t = corpus::scratch("checksums");
    let (_, c) = nb_compressed(t.path());
    let digest = ChecksumAlgo::Crc32
        .checksum(&c.data)
        .to_string()
        .into_bytes();
    for len in 0..c.data.len() {
        let t2 = corpus::scratch("checksums");
        let sst = write_sst(
            t2.path(),
            "nb",
            &[
                ("Data.db", c.data[..len].to_vec()),
                ("CompressionInfo.db", c.info.clone()),
                ("Digest.crc32", digest.clone()),
            ],
        );
        let (r, f) = run(&sst, 333);
        assert!(!r.valid(), "len {len}");
        assert!(
            matches!(f.last(), Some(ChecksumFinding::DigestMismatch { .. })),
            "len {len}: {f:?}"
        );
        // The chunk holding the cut is truncated, the ones after it out of range.
        let cut = c.offsets.partition_point(|&o| o < len as u64);
        let truncated = f
            .iter()
            .any(|x| matches!(x, ChecksumFinding::TruncatedChunk { .. }));
        let oor = f.iter().find_map(|x| match x {
            ChecksumFinding::ChunksOutOfRange { first, count, .. } => Some((*first, *count)),
            _ => None,
        });
        assert_eq!(
            oor.map(|o| o.0 + o.1),
            (cut < 6).then_some(6),
            "len {len}: {f:?}"
        );
        assert_eq!(oor.map(|o| o.0), (cut < 6).then_some(cut as u64));
        // Cutting exactly at a chunk start leaves no partial chunk. The
        // last chunk runs to the end of the file: cut, it is truncated
        // only without room for its checksum, else it mismatches.
        let at_boundary = c.offsets.contains(&(len as u64)) || len == 0;
        let last = c.offsets[5] as usize;
        let bad_last = len >= last + 4;
        assert_eq!(truncated, !at_boundary && !bad_last, "len {len}: {f:?}");
        let bad: Vec<u64> = f
            .iter()
            .filter_map(|x| match x {
                ChecksumFinding::BadChunk { index, .. } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(
            bad,
            if bad_last { vec![5] } else { vec![] },
            "len {len}: {f:?}"
        );
        assert_eq!(r.chunks_checked, cut as u64 - u64::from(truncated));
    }
}

#[test]
fn crc_db_valid_bad_and_truncated() {
    let data = sample(10_000, 3);
    for (v, algo, digest_name) in [
        ("nb", ChecksumAlgo::Crc32, "Digest.crc32"),
        ("la", ChecksumAlgo::Adler32, "Digest.adler32"),
        ("ka", ChecksumAlgo::Adler32, "Digest.sha1"),
    ] {
        let digest = algo.checksum(&data).to_string().into_bytes();
        let t = corpus::scratch("checksums");
        let crc = crc_db(1024, &data, algo);
        let sst = write_sst(
            t.path(),
            v,
            &[
                ("Data.db", data.clone()),
                ("CRC.db", crc.clone()),
                (digest_name, digest.clone()),
            ],
        );
        for &b in BLOCKS {
            let (r, f) = run(&sst, b);
            assert!(f.is_empty() && r.valid(), "{v} block {b}: {f:?}");
            assert_eq!((r.chunks_checked, r.compressed), (10, false));
            assert_eq!(r.chunk_algo, Some(algo));
        }
        // A flipped byte in chunk 4.
        let mut bad = data.clone();
        bad[4 * 1024 + 17] ^= 1;
        let t = corpus::scratch("checksums");
        let sst = write_sst(
            t.path(),
            v,
            &[
                ("Data.db", bad.clone()),
                ("CRC.db", crc.clone()),
                (digest_name, digest.clone()),
            ],
        );
        for &b in BLOCKS {
            let (_, f) = run(&sst, b);
            assert_eq!(f.len(), 2, "{f:?}");
            assert!(matches!(
                &f[0],
                ChecksumFinding::BadChunk { index: 4, file_range, uncompressed_range, source: Component::Crc, .. }
                    if *file_range == (4096..5120) && *uncompressed_range == (4096..5120)
            ));
            assert!(matches!(f[1], ChecksumFinding::DigestMismatch { .. }));
        }
        // Truncated mid-chunk: the partial chunk mismatches, the count is wrong.
        let t = corpus::scratch("checksums");
        let sst = write_sst(
            t.path(),
            v,
            &[
                ("Data.db", data[..5000].to_vec()),
                ("CRC.db", crc.clone()),
                (digest_name, digest),
            ],
        );
        let (r, f) = run(&sst, 4096);
        assert!(!r.valid());
        assert!(matches!(
            f[0],
            ChecksumFinding::CrcCountMismatch {
                stored: 10,
                expected: 5,
                chunk_size: 1024,
                file_len: 5000
            }
        ));
        assert!(
            matches!(f[1], ChecksumFinding::BadChunk { index: 4, .. }),
            "{f:?}"
        );
        assert!(matches!(f[2], ChecksumFinding::DigestMismatch { .. }));
    }
}

#[test]
fn legacy_payload_only_digest_and_sha1_digests() {
    // ka/la compressed: a digest over the payloads only is accepted.
    let c = compressed("la", 1024, 3000, &[500, 600, 700]);
    let payloads: Vec<u8> = c.payloads.concat();
    let t = corpus::scratch("checksums");
    let sst = write_sst(
        t.path(),
        "la",
        &[
            ("Data.db", c.data.clone()),
            ("CompressionInfo.db", c.info.clone()),
            (
                "Digest.adler32",
                ChecksumAlgo::Adler32
                    .checksum(&payloads)
                    .to_string()
                    .into_bytes(),
            ),
        ],
    );
    for &b in BLOCKS {
        let (r, f) = run(&sst, b);
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(r.digest_scope, Some(DigestScope::PayloadsOnly));
        assert_eq!(r.chunk_algo, Some(ChecksumAlgo::Adler32));
    }
    // Pre-2.1 Digest.sha1: sha1sum output.
    let data = sample(5000, 9);
    let hex = sha1_smol::Sha1::from(&data).digest().to_string();
    for (text, ok) in [
        (format!("{hex}  nb-1-big-Data.db"), true),
        (hex.clone(), true),
        (format!("{}0  x", &hex[..39]), false),
    ] {
        let t = corpus::scratch("checksums");
        let sst = write_sst(
            t.path(),
            "nb",
            &[
                ("Data.db", data.clone()),
                ("CRC.db", crc_db(4096, &data, ChecksumAlgo::Crc32)),
                ("Digest.sha1", text.into_bytes()),
            ],
        );
        let (r, f) = run(&sst, 1000);
        assert_eq!(r.digest_algo, Some(DigestAlgo::Sha1));
        assert_eq!(r.valid(), ok, "{f:?}");
        if !ok {
            assert!(matches!(
                &f[..],
                [ChecksumFinding::DigestMismatch { algo: DigestAlgo::Sha1, computed, .. }]
                    if computed.to_string() == hex
            ));
        }
    }
}

#[test]
fn missing_and_corrupt_metadata() {
    let data = sample(3000, 1);
    let crc = crc_db(1024, &data, ChecksumAlgo::Crc32);
    let digest = ChecksumAlgo::Crc32.checksum(&data).to_string().into_bytes();
    // No checksums, no digest: warnings only.
    let t = corpus::scratch("checksums");
    let sst = write_sst(t.path(), "nb", &[("Data.db", data.clone())]);
    let (r, f) = run(&sst, 100);
    assert_eq!(
        f,
        vec![
            ChecksumFinding::MissingChecksums,
            ChecksumFinding::MissingDigest
        ]
    );
    assert!(r.valid() && !r.has_checksums && !r.has_digest);
    assert_eq!((r.warnings, r.errors), (2, 0));
    // Undecodable CRC.db and CompressionInfo.db: findings; the digest is still checked.
    for (name, bytes) in [
        ("CRC.db", vec![0, 0, 4]),
        ("CRC.db", vec![0x80, 0, 0, 0]),
        ("CompressionInfo.db", vec![0, 0xff, b'x']),
        // A chunk count far beyond the file: no allocation by it.
        ("CompressionInfo.db", {
            let mut c = compressed("nb", 1024, 3000, &[10]).info;
            let n = c.len();
            c[n - 12..n - 8].copy_from_slice(&i32::MAX.to_be_bytes());
            c
        }),
    ] {
        let t = corpus::scratch("checksums");
        let sst = write_sst(
            t.path(),
            "nb",
            &[
                ("Data.db", data.clone()),
                (name, bytes),
                ("Digest.crc32", digest.clone()),
            ],
        );
        let (r, f) = run(&sst, 100);
        assert!(!r.valid() && r.has_checksums && r.has_digest);
        assert!(
            matches!(&f[..], [ChecksumFinding::CorruptMetadata { component, error }]
                if component.suffix() == name && error.file.is_some()),
            "{name}: {f:?}"
        );
        assert_eq!(r.digest_scope, Some(DigestScope::WholeFile));
    }
    // Corrupt digest text; digest listed but absent.
    let t = corpus::scratch("checksums");
    let sst = write_sst(
        t.path(),
        "nb",
        &[
            ("Data.db", data.clone()),
            ("CRC.db", crc.clone()),
            ("Digest.crc32", b"12x".to_vec()),
        ],
    );
    let (r, f) = run(&sst, 100);
    assert!(matches!(
        &f[..],
        [ChecksumFinding::CorruptMetadata {
            component: Component::Digest,
            ..
        }]
    ));
    assert_eq!(r.chunks_checked, 3);
    std::fs::remove_file(t.path().join("nb-1-big-Digest.crc32")).unwrap();
    let (r, f) = run(&sst, 100);
    assert_eq!(
        f,
        vec![ChecksumFinding::MissingComponent {
            component: Component::Digest
        }]
    );
    assert!(!r.valid() && !r.has_digest);
    // Data.db absent: an error, not a finding.
    std::fs::remove_file(t.path().join("nb-1-big-Data.db")).unwrap();
    let e = validate_checksums(&sst, |_| {}).unwrap_err();
    assert!(e.is_io(), "{e}");
}

#[test]
fn uncovered_bytes_and_empty_files() {
    // Chunk table starting at offset 10.
    let c = compressed("nb", 1024, 100, &[50]);
    let mut data = vec![0u8; 10];
    data.extend_from_slice(&c.data);
    let mut info = c.info.clone();
    let n = info.len();
    info[n - 8..].copy_from_slice(&10u64.to_be_bytes());
    let t = corpus::scratch("checksums");
    let sst = write_sst(
        t.path(),
        "nb",
        &[("Data.db", data.clone()), ("CompressionInfo.db", info)],
    );
    let (r, f) = run(&sst, 7);
    assert_eq!(
        f,
        vec![
            ChecksumFinding::UncoveredBytes { file_range: 0..10 },
            ChecksumFinding::MissingDigest
        ]
    );
    assert_eq!(r.chunks_checked, 1);
    // Empty Data.db, empty chunk table.
    let c = compressed("nb", 1024, 0, &[]);
    let t = corpus::scratch("checksums");
    let sst = write_sst(
        t.path(),
        "nb",
        &[
            ("Data.db", vec![]),
            ("CompressionInfo.db", c.info),
            ("Digest.crc32", b"0".to_vec()),
        ],
    );
    let (r, f) = run(&sst, 7);
    assert!(f.is_empty() && r.valid(), "{f:?}");
}

#[test]
fn display_names_location() {
    let f = ChecksumFinding::BadChunk {
        index: 3,
        file_range: 0x100..0x200,
        uncompressed_range: 0..1,
        stored: 1,
        computed: 2,
        algo: ChecksumAlgo::Crc32,
        source: Component::Crc,
    };
    assert_eq!(
        f.to_string(),
        "Data.db+0x100..0x200: chunk 3: crc32 checksum mismatch (stored 0x00000001, computed \
         0x00000002) (checksum from CRC.db)"
    );
    assert_eq!(f.class(), "bad_chunk");
    assert!(f.is_error() && !ChecksumFinding::MissingDigest.is_error());
    assert_eq!(DigestValue::Sha1([0xab; 20]).to_string(), "ab".repeat(20));
}

proptest! {
    // Each case writes sstables to disk: fewer cases than the default.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn adler32_combine_matches_direct(a in proptest::collection::vec(any::<u8>(), 0..300),
                                      b in proptest::collection::vec(any::<u8>(), 0..70000)) {
        let whole: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
        let (x, y) = (ChecksumAlgo::Adler32.checksum(&a), ChecksumAlgo::Adler32.checksum(&b));
        prop_assert_eq!(adler32_combine(x, y, b.len() as u64), ChecksumAlgo::Adler32.checksum(&whole));
    }

    #[test]
    fn crc32_combine_matches_direct(a in proptest::collection::vec(any::<u8>(), 0..300),
                                    b in proptest::collection::vec(any::<u8>(), 0..70000)) {
        let whole: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
        let (x, y) = (ChecksumAlgo::Crc32.checksum(&a), ChecksumAlgo::Crc32.checksum(&b));
        let mut c = Crc32Combiner::new();
        for _ in 0..2 {
            prop_assert_eq!(c.combine(x, y, b.len() as u64), ChecksumAlgo::Crc32.checksum(&whole));
        }
    }

    #[test]
    fn damaged_metadata_and_data_never_panic(info in proptest::collection::vec(any::<u8>(), 0..80),
                                             crc in proptest::collection::vec(any::<u8>(), 0..40),
                                             cut in 0usize..3000, flip in 0usize..3000) {
        let c = compressed("nb", 1024, 2500, &[900, 1000, 400]);
        let mut data = c.data.clone();
        if let Some(x) = data.get_mut(flip) { *x ^= 0x55; }
        data.truncate(cut);
        let mut mutated = c.info.clone();
        for (i, b) in info.iter().enumerate().take(8) {
            let at = (*b as usize * 7 + i) % mutated.len();
            mutated[at] ^= *b;
        }
        let t = corpus::scratch("checksums");
        for (name, bytes) in [("CompressionInfo.db", info.clone()), ("CompressionInfo.db", mutated), ("CRC.db", crc.clone())] {
            let sst = write_sst(t.path(), "nb", &[("Data.db", data.clone()), (name, bytes), ("Digest.crc32", b"1".to_vec())]);
            let (r, found) = run_with(&sst, 512, 1, DEFAULT_MIN_PART);
            prop_assert!(r.bytes_read == data.len() as u64);
            prop_assert_eq!(run_with(&sst, 512, 3, 1), (r, found));
            let _ = std::fs::remove_file(t.path().join(format!("nb-1-big-{name}")));
        }
    }
}

/// Every corpus sstable sstkit can open: valid, except in the sets that
/// are corrupt on purpose; the integrity_check sets fail as described.
#[test]
fn corpus_sstables() {
    let files = corpus::files(|c| c == "Data.db");
    if files.is_empty() {
        return;
    }
    let (mut valid, mut corrupt_invalid, mut chunks) = (0, 0, 0);
    let mut scopes = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    let mut failed = std::collections::BTreeSet::new();
    for f in &files {
        let Ok(sst) = Sstable::open(f.desc.clone()) else {
            continue;
        };
        let mut found = Vec::new();
        let r = match validate_checksums(&sst, |x| found.push(x)) {
            Ok(r) => r,
            // bigsummary: Data.db is not in the TOC.
            Err(e) if f.is_corrupt() => {
                eprintln!("corrupt set {}: {e}", f.path.display());
                failed.insert(corpus::short_name(f));
                continue;
            }
            Err(e) => {
                failures.push(format!("{}: {e}", f.path.display()));
                continue;
            }
        };
        chunks += r.chunks_checked;
        *scopes.entry(format!("{:?}", r.digest_scope)).or_insert(0) += 1;
        let classes: Vec<&str> = found
            .iter()
            .filter(|x| x.is_error())
            .map(|x| x.class())
            .collect();
        let set = f.set.rsplit('/').next().unwrap_or("");
        if set.ends_with("invalid_checksums") {
            assert!(classes.contains(&"bad_chunk"), "{set}: {classes:?}");
        }
        if set.ends_with("invalid_digest") {
            assert_eq!(classes, ["digest_mismatch"], "{set}");
        }
        if r.valid() {
            valid += 1;
        } else if f.is_corrupt() {
            eprintln!("corrupt set {}: {classes:?}", f.path.display());
            corrupt_invalid += 1;
            failed.insert(corpus::short_name(f));
        } else {
            failures.push(format!("{}: {found:?}", f.path.display()));
        }
    }
    eprintln!(
        "validate_checksums: {valid} valid ({chunks} chunks), {corrupt_invalid} invalid in \
         corrupt sets, of {}; digest scopes {scopes:?}",
        files.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    // The files MANIFEST.md marks corrupt whose checksums or digest must not
    // pass (bigsummary: Data.db is absent by design).
    corpus::check_failures(
        "validate_checksums",
        &files,
        &failed,
        &[
            "3.x-lz4-integrity_check-invalid_checksums/me-1-big-Data.db",
            "3.x-lz4-integrity_check-invalid_digest/me-1-big-Data.db",
            "3.x-uncompressed-integrity_check-invalid_checksums/me-1-big-Data.db",
            "3.x-uncompressed-integrity_check-invalid_digest/me-1-big-Data.db",
            "bad_column_name/la-58-big-Data.db",
            "bigsummary/la-76-big-Data.db",
            "broken_close_tombstone/mc-122-big-Data.db",
            "broken_end_composite/la-76-big-Data.db",
            "broken_open_tombstone/mc-122-big-Data.db",
            "broken_ranges/la-2-big-Data.db",
            "broken_start_composite/la-76-big-Data.db",
            "compression-premature-eof/mc-1-big-Data.db",
            "invalid_boundary/mc-33-big-Data.db",
            "mismatched_timestamp/mc-122-big-Data.db",
            "static_with_clustering/la-58-big-Data.db",
        ],
    );
}
