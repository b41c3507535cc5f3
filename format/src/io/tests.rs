#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// A temporary file of `n` bytes (byte i = i mod 251) and a layer over it
/// as Data.db and Index.db; the file lives as long as the returned guard.
fn layer(n: usize, opts: IoOptions) -> (tempfile::TempDir, IoLayer, PathBuf, Vec<u8>) {
    let dir = crate::test_support::scratch("io");
    let p = dir.path().join(format!("f-{:?}-{}", opts.mode, opts.unit));
    let bytes: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &bytes).unwrap();
    let mut paths = HashMap::new();
    paths.insert(Component::Data, p.clone());
    paths.insert(Component::Index, p.clone());
    (dir, IoLayer::with_options(paths, opts), p, bytes)
}

fn data(l: &IoLayer) -> ComponentIo {
    *l.stats().get(Component::Data)
}

/// The reads a scan of `len` bytes issues: blocks of at most `block`
/// bytes, each read in pieces of at most `max_io`.
fn scan_pieces(len: usize, block: usize, max_io: u64) -> u64 {
    (0..len)
        .step_by(block)
        .map(|o| ((len - o).min(block) as u64).div_ceil(max_io))
        .sum()
}

#[test]
fn point_reads_are_aligned_and_coalesced() {
    for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
        let opts = IoOptions {
            mode,
            max_io: 16 * 1024,
            ..IoOptions::default()
        };
        let (_dir, l, p, bytes) = layer(100_000, opts);
        let r = match l.read(Component::Data, 5000, 100, ReadKind::Point) {
            Err(e) if mode == IoMode::Direct => {
                eprintln!("O_DIRECT not available here: {e}");
                continue;
            }
            r => r.unwrap(),
        };
        assert_eq!(r, &bytes[5000..5100]);
        assert_eq!((data(&l).reads, data(&l).bytes), (1, 4096), "{mode:?}");
        // Straddling a unit boundary: two units, one read.
        l.begin_operation();
        let r = l.read(Component::Data, 8000, 200, ReadKind::Point).unwrap();
        assert_eq!(r, &bytes[8000..8200]);
        assert_eq!((data(&l).reads, data(&l).bytes), (2, 4096 + 8192));
        // 40 000 bytes from 4096: 10 units = 40 960 bytes in 16 KiB pieces.
        l.begin_operation();
        let before = data(&l);
        l.read(Component::Data, 4096, 40_000, ReadKind::Point)
            .unwrap();
        let d = data(&l);
        assert_eq!(
            (d.reads - before.reads, d.bytes - before.bytes),
            (3, 40_960)
        );
        // The next request starting in the kept last unit reads only what follows.
        let before = data(&l);
        let r = l
            .read(Component::Data, 44_000, 2000, ReadKind::Point)
            .unwrap();
        assert_eq!(r, &bytes[44_000..46_000]);
        let d = data(&l);
        assert_eq!((d.reads - before.reads, d.bytes - before.bytes), (1, 4096));
        // ... within one operation only.
        l.begin_operation();
        let before = data(&l);
        l.read(Component::Data, 44_000, 10, ReadKind::Point)
            .unwrap();
        assert_eq!(data(&l).reads - before.reads, 1);
        // The end of the file: clipped, not past it.
        let before = data(&l);
        let r = l
            .read(Component::Data, 99_990, 10, ReadKind::Point)
            .unwrap();
        assert_eq!(r, &bytes[99_990..]);
        assert_eq!(data(&l).bytes - before.bytes, 100_000 - 98_304);
        assert!(l
            .read(Component::Data, 99_990, 11, ReadKind::Point)
            .is_err());
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn backward_point_reads_keep_the_first_unit() {
    let (_dir, l, p, bytes) = layer(100_000, IoOptions::default());
    // [50 000, 60 000): units 12..=14 (12 288 bytes).
    let r = l
        .read(Component::Data, 50_000, 10_000, ReadKind::Point)
        .unwrap();
    assert_eq!(r, &bytes[50_000..60_000]);
    assert_eq!(data(&l).bytes, 12_288);
    // The range just below, ending inside the kept first unit (49 152..):
    // only the units before it are read.
    let before = data(&l);
    let r = l
        .read(Component::Data, 41_000, 9_000, ReadKind::Point)
        .unwrap();
    assert_eq!(r, &bytes[41_000..50_000]);
    let d = data(&l);
    assert_eq!((d.reads - before.reads, d.bytes - before.bytes), (1, 8192));
    // Entirely inside the kept first unit (40 960..45 056): nothing read.
    let before = data(&l);
    let r = l
        .read(Component::Data, 41_500, 100, ReadKind::Point)
        .unwrap();
    assert_eq!(r, &bytes[41_500..41_600]);
    assert_eq!(data(&l).reads, before.reads);
    // Not across operations.
    l.begin_operation();
    let before = data(&l);
    l.read(Component::Data, 40_000, 1_000, ReadKind::Point)
        .unwrap();
    assert_eq!(data(&l).bytes - before.bytes, 8192);
    let _ = std::fs::remove_file(p);
}

#[test]
fn point_reads_inside_the_read_ahead_window_are_free() {
    let opts = IoOptions {
        read_ahead: 64 * 1024,
        ..IoOptions::default()
    };
    let (_dir, l, p, bytes) = layer(200_000, opts);
    l.read(Component::Data, 1000, 10, ReadKind::Scan).unwrap();
    let before = data(&l);
    let r = l
        .read(Component::Data, 30_000, 5_000, ReadKind::Point)
        .unwrap();
    assert_eq!(r, &bytes[30_000..35_000]);
    assert_eq!(data(&l), before);
    // Past the window: a point read.
    l.read(Component::Data, 70_000, 10, ReadKind::Point)
        .unwrap();
    assert_eq!(data(&l).reads, before.reads + 1);
    let _ = std::fs::remove_file(p);
}

#[test]
fn scans_read_ahead() {
    let opts = IoOptions {
        read_ahead: 256 * 1024,
        ..IoOptions::default()
    };
    let (_dir, l, p, bytes) = layer(600_000, opts);
    let mut got = Vec::new();
    let mut off = 0;
    while off < bytes.len() {
        let n = (bytes.len() - off).min(10_000);
        got.extend(
            l.read(Component::Data, off as u64, n, ReadKind::Scan)
                .unwrap(),
        );
        off += n;
    }
    assert_eq!(got, bytes);
    // Windows of 256 KiB: [0,256K) [256K,512K) [512K,600000), 128 KiB reads.
    let d = data(&l);
    assert_eq!((d.reads, d.bytes), (2 + 2 + 1, 600_000));
    // Point reads never read ahead.
    l.begin_operation();
    l.read(Component::Data, 0, 10, ReadKind::Point).unwrap();
    assert_eq!(data(&l).bytes, 600_000 + 4096);
    let _ = std::fs::remove_file(p);
}

#[test]
fn zero_copy_scans_lend_every_byte_once_in_every_mode() {
    for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
        let opts = IoOptions {
            mode,
            max_io: 64 * 1024,
            ..IoOptions::default()
        };
        let (_dir, l, p, bytes) = layer(600_001, opts);
        for (start, block) in [(0u64, 256 * 1024usize), (4096, 100_000), (0, 1 << 20)] {
            l.begin_operation();
            let before = data(&l);
            let mut got = Vec::new();
            let mut offsets = Vec::new();
            let r = l.scan(
                Component::Data,
                start,
                bytes.len() as u64,
                block,
                |at, b| {
                    offsets.push(at);
                    assert!(b.len() <= block);
                    got.extend_from_slice(b);
                    Ok(())
                },
            );
            match r {
                Err(e) if mode == IoMode::Direct => {
                    eprintln!("O_DIRECT not available here: {e}");
                    break;
                }
                r => r.unwrap(),
            }
            assert_eq!(got, &bytes[start as usize..], "{mode:?} {start} {block}");
            let expected: Vec<u64> = (start..bytes.len() as u64).step_by(block).collect();
            assert_eq!(offsets, expected);
            // Reads of at most max_io, each block whole pieces; every byte once.
            let d = data(&l);
            let len = bytes.len() - start as usize;
            let pieces = scan_pieces(len, block, 64 * 1024);
            assert_eq!(
                (d.reads - before.reads, d.bytes - before.bytes),
                (pieces, len as u64),
                "{mode:?} {start} {block}"
            );
        }
        // Past the end: an error before any read; an error from `f` stops the scan.
        let before = data(&l);
        assert!(l
            .scan(Component::Data, 0, bytes.len() as u64 + 1, 4096, |_, _| Ok(
                ()
            ))
            .is_err());
        assert_eq!(data(&l), before);
        let mut calls = 0;
        let stop = l.scan(Component::Data, 0, bytes.len() as u64, 4096, |at, _| {
            calls += 1;
            if at >= 8192 {
                Err(Error::new(ErrorKind::Unsupported("stop".into()), "test"))
            } else {
                Ok(())
            }
        });
        if mode != IoMode::Direct || stop.is_err() {
            assert!(stop.is_err(), "{mode:?}");
            assert_eq!(calls, 3, "{mode:?}");
        }
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn parts_scans_lend_each_range_in_order_and_count_like_scans() {
    for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
        let opts = IoOptions {
            mode,
            max_io: 64 * 1024,
            ..IoOptions::default()
        };
        let (_dir, l, p, bytes) = layer(600_001, opts);
        let len = bytes.len() as u64;
        let block = 100_000usize;
        let cuts = [0u64, 4096, 250_000, 250_001, len];
        let parts: Vec<_> = cuts
            .windows(2)
            .map(|w| (w[0]..w[1], (Vec::new(), Vec::new())))
            .collect();
        l.begin_operation();
        let before = data(&l);
        let r = l.scan_parts(Component::Data, parts, block, |(got, at), pos, b| {
            assert!(b.len() <= block);
            at.push(pos);
            got.extend_from_slice(b);
            Ok(())
        });
        let done = match r {
            Err(e) if mode == IoMode::Direct => {
                eprintln!("O_DIRECT not available here: {e}");
                continue;
            }
            r => r.unwrap(),
        };
        assert_eq!(done.len(), 4);
        let mut pieces = 0u64;
        for (w, (got, at)) in cuts.windows(2).zip(&done) {
            let (s, e) = (w[0] as usize, w[1] as usize);
            assert_eq!(got, &bytes[s..e], "{mode:?} {s}..{e}");
            assert_eq!(at, &(w[0]..w[1]).step_by(block).collect::<Vec<_>>());
            pieces += scan_pieces(e - s, block, 64 * 1024);
        }
        let d = data(&l);
        assert_eq!(
            (d.reads - before.reads, d.bytes - before.bytes),
            (pieces, len),
            "{mode:?}"
        );
        // Past the end: an error before any read. An error from `f`
        // comes back, the first in range order.
        let before = data(&l);
        let bad = vec![(0..10, ()), (10..len + 1, ())];
        assert!(l
            .scan_parts(Component::Data, bad, 4096, |_, _, _| Ok(()))
            .is_err());
        assert_eq!(data(&l), before);
        let two = vec![(0..8192, ()), (8192..len, ())];
        let stop = l.scan_parts(Component::Data, two, 4096, |_, at, _| {
            if at == 4096 || at == 16384 {
                Err(Error::new(
                    ErrorKind::Unsupported(format!("stop {at}")),
                    "test",
                ))
            } else {
                Ok(())
            }
        });
        let e = stop.unwrap_err().to_string();
        assert!(e.contains("stop 4096"), "{mode:?}: {e}");
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn mapped_whole_components_equal_and_count_like_read_all() {
    for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
        let opts = IoOptions {
            mode,
            ..IoOptions::default()
        };
        let (_dir, l, p, bytes) = layer(300_001, opts);
        let read = match l.read_all(Component::Data) {
            Err(e) if mode == IoMode::Direct => {
                eprintln!("O_DIRECT not available here: {e}");
                continue;
            }
            r => r.unwrap(),
        };
        let after_read = data(&l);
        l.begin_operation();
        let mapped = l.map_all(Component::Data).unwrap();
        assert_eq!(&mapped[..], &bytes[..], "{mode:?}");
        assert_eq!(read, bytes);
        let d = data(&l);
        assert_eq!(
            (d.reads - after_read.reads, d.bytes - after_read.bytes),
            (after_read.reads, after_read.bytes),
            "{mode:?}"
        );
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn index_cache_hits_misses_evictions() {
    let opts = IoOptions {
        index_cache_bytes: 3 * (4096 + 64),
        ..IoOptions::default()
    };
    let (_dir, l, p, bytes) = layer(50_000, opts);
    let idx = |l: &IoLayer| *l.stats().get(Component::Index);
    // Two pages, one read.
    assert_eq!(
        l.read_cached(Component::Index, 4000, 200).unwrap(),
        &bytes[4000..4200]
    );
    let s = idx(&l);
    assert_eq!(
        (s.reads, s.bytes, s.cache_misses, s.cache_hits),
        (1, 8192, 2, 0)
    );
    // Warm: no read.
    l.begin_operation();
    assert_eq!(
        l.read_cached(Component::Index, 4100, 10).unwrap(),
        &bytes[4100..4110]
    );
    let s = idx(&l);
    assert_eq!((s.reads, s.cache_hits), (1, 1));
    // Two more pages: one eviction (capacity 3 pages).
    l.read_cached(Component::Index, 24_000, 1000).unwrap();
    let s = idx(&l);
    assert_eq!((s.reads, s.cache_misses, s.cache_evictions), (2, 4, 1));
    // Objects share the cache.
    assert!(l.cached_object::<u32>(Component::Index, 1, 7, 0).is_none());
    l.cache_object(Component::Index, 1, 7, 0, Rc::new(5u32), 8);
    assert_eq!(
        *l.cached_object::<u32>(Component::Index, 1, 7, 0).unwrap(),
        5
    );
    let _ = std::fs::remove_file(p);

    // Disabled: nothing kept across operations, nothing counted.
    let (_dir, l, p, _) = layer(
        50_000,
        IoOptions {
            index_cache_bytes: 0,
            ..IoOptions::default()
        },
    );
    l.read_cached(Component::Index, 0, 10).unwrap();
    l.read_cached(Component::Index, 20, 10).unwrap();
    assert_eq!(idx(&l).reads, 1);
    l.begin_operation();
    l.read_cached(Component::Index, 20, 10).unwrap();
    let s = idx(&l);
    assert_eq!((s.reads, s.cache_hits, s.cache_misses), (2, 0, 0));
    let _ = std::fs::remove_file(p);
}

#[test]
fn option_checks() {
    assert!(IoOptions::default().checked().is_ok());
    let bad = IoOptions {
        unit: 1000,
        ..IoOptions::default()
    };
    assert!(bad.checked().unwrap_err().contains("--io-unit"));
    let bad = IoOptions {
        unit: 256,
        ..IoOptions::default()
    };
    assert!(bad.checked().is_err());
    let bad = IoOptions {
        max_io: 100,
        ..IoOptions::default()
    };
    assert!(bad.checked().unwrap_err().contains("--max-io"));
    let o = IoOptions {
        max_io: 10_000,
        ..IoOptions::default()
    }
    .checked()
    .unwrap();
    assert_eq!(o.max_io, 8192);
}

#[test]
fn object_storage_inputs_take_larger_reads_unless_the_user_set_them() {
    let d = IoOptions::default();
    let r = d.for_object_storage();
    assert_eq!(
        (r.unit, r.max_io, r.read_ahead),
        (1 << 20, 8 << 20, 8 << 20)
    );
    assert_eq!(r.index_cache_bytes, d.index_cache_bytes);
    // Flags the user gave (no override left) hold for URLs too.
    let user = IoOptions {
        unit: 8192,
        remote: RemoteIo {
            unit_and_max_io: None,
            ..RemoteIo::DEFAULT
        },
        ..d
    };
    let r = user.for_object_storage();
    assert_eq!((r.unit, r.max_io, r.read_ahead), (8192, d.max_io, 8 << 20));
    let same = IoOptions {
        remote: RemoteIo::SAME_AS_LOCAL,
        ..d
    };
    assert_eq!(same.for_object_storage(), same);
    // A layer over URLs uses them (files open lazily: nothing is fetched),
    // one over local paths keeps the local values.
    let url = HashMap::from([(Component::Data, PathBuf::from("s3://b/k/nb-1-big-Data.db"))]);
    assert_eq!(IoLayer::with_options(url, d).options().unit, 1 << 20);
    let (_dir, l, p, _) = layer(10, d);
    assert_eq!(l.options().unit, 4096);
    let _ = std::fs::remove_file(p);
}
