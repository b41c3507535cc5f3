//! Data.db output: chunked compression with per-chunk CRC32 and the chunk
//! table of CompressionInfo.db, or plain bytes with CRC.db; the whole-file
//! CRC32 for Digest.crc32 either way (`shared/docs/sstable-format.md` §7, §8;
//! C\* `CompressedSequentialWriter.flushData`, `ChecksummedSequentialWriter`,
//! `CompressionMetadata.Writer`).

use std::io::Write;

use crate::compression::Compressor;
use crate::error::{Error, ErrorKind, Result};
use crate::Component;

/// How Data.db is compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compression {
    /// Uncompressed, with CRC.db.
    None,
    /// `LZ4Compressor`.
    Lz4,
    /// `SnappyCompressor`.
    Snappy,
    /// `DeflateCompressor`.
    Deflate,
    /// `ZstdCompressor`; `Some(level)` is written as its `compression_level`
    /// option, `None` uses Cassandra's default level 3 and writes no option.
    Zstd(Option<i32>),
}

impl Compression {
    /// Parse `none`, `lz4`, `snappy`, `deflate`, `zstd` or `zstd:LEVEL`
    /// (class names such as `LZ4Compressor` are accepted too).
    pub fn parse(s: &str) -> std::result::Result<Compression, String> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (
                n,
                Some(
                    l.parse::<i32>()
                        .map_err(|_| format!("bad zstd level {l:?}"))?,
                ),
            ),
            None => (s, None),
        };
        let c = match name.to_ascii_lowercase().as_str() {
            "none" | "off" => Compression::None,
            "lz4" | "lz4compressor" => Compression::Lz4,
            "snappy" | "snappycompressor" => Compression::Snappy,
            "deflate" | "deflatecompressor" => Compression::Deflate,
            "zstd" | "zstdcompressor" => Compression::Zstd(level),
            _ => {
                return Err(format!(
                    "unknown compression {s:?} (none, lz4, snappy, deflate, zstd[:LEVEL])"
                ))
            }
        };
        if level.is_some() && !matches!(c, Compression::Zstd(_)) {
            return Err(format!("only zstd takes a level: {s:?}"));
        }
        Ok(c)
    }

    /// The same compression as a source's CompressionInfo.db, when it is one
    /// sstkit writes.
    pub fn from_compressor(c: &Compressor, level: Option<i32>) -> Option<Compression> {
        Some(match c {
            Compressor::Lz4 => Compression::Lz4,
            Compressor::Snappy => Compression::Snappy,
            Compressor::Deflate => Compression::Deflate,
            Compressor::Zstd => Compression::Zstd(level),
            Compressor::Noop => Compression::None,
            _ => return None,
        })
    }

    /// Simple class name written in CompressionInfo.db.
    pub fn class_name(&self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            Compression::Lz4 => Some("LZ4Compressor"),
            Compression::Snappy => Some("SnappyCompressor"),
            Compression::Deflate => Some("DeflateCompressor"),
            Compression::Zstd(_) => Some("ZstdCompressor"),
        }
    }

    /// Short name for reports.
    pub fn name(&self) -> String {
        match self {
            Compression::None => "none".into(),
            Compression::Lz4 => "lz4".into(),
            Compression::Snappy => "snappy".into(),
            Compression::Deflate => "deflate".into(),
            Compression::Zstd(None) => "zstd".into(),
            Compression::Zstd(Some(l)) => format!("zstd:{l}"),
        }
    }

    fn compress(&self, input: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
        out.clear();
        match self {
            Compression::None => out.extend_from_slice(input),
            Compression::Lz4 => {
                out.extend_from_slice(&(input.len() as u32).to_le_bytes());
                out.extend_from_slice(&lz4_flex::block::compress(input));
            }
            Compression::Snappy => {
                let v = snap::raw::Encoder::new()
                    .compress_vec(input)
                    .map_err(|e| format!("Snappy: {e}"))?;
                out.extend_from_slice(&v);
            }
            Compression::Deflate => {
                let mut z = flate2::write::ZlibEncoder::new(
                    std::mem::take(out),
                    flate2::Compression::new(6),
                );
                z.write_all(input).map_err(|e| format!("Deflate: {e}"))?;
                *out = z.finish().map_err(|e| format!("Deflate: {e}"))?;
            }
            Compression::Zstd(level) => {
                let v = zstd::bulk::compress(input, level.unwrap_or(3))
                    .map_err(|e| format!("Zstd: {e}"))?;
                out.extend_from_slice(&v);
            }
        }
        Ok(())
    }
}

/// Streams Data.db to a file.
///
/// Whole chunks go to [`Chunks`], which compresses, checksums and writes
/// them in order: on a worker thread when more than one CPU is available
/// (a bounded ring of recycled chunk buffers, so memory stays flat), else
/// in this thread. The bytes written are the same either way.
#[derive(Debug)]
pub struct DataOut {
    chunk_length: usize,
    /// Uncompressed bytes not yet handed over as a chunk.
    buf: Vec<u8>,
    /// Uncompressed bytes handed over so far.
    position: u64,
    /// Whole chunks handed over so far.
    submitted: u64,
    /// Upper bound of one chunk's bytes on disk, checksum included.
    max_chunk_bytes: u64,
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    Inline(Box<Chunks>),
    Worker(Worker),
}

/// What Data.db became once finished.
#[derive(Debug, Clone)]
pub struct DataSummary {
    /// Uncompressed length.
    pub data_length: u64,
    /// Bytes on disk.
    pub file_length: u64,
    /// CRC32 of the whole file (Digest.crc32).
    pub digest: u32,
    /// Compressed chunks written (0 when uncompressed).
    pub chunks: u64,
    /// CompressionInfo.db bytes (compressed) or CRC.db bytes (uncompressed).
    pub checksum_component: (Component, Vec<u8>),
}

/// CRC.db chunk size: `SequentialWriter`'s default buffer (64 KiB), what
/// Cassandra writes for uncompressed tables.
pub const CRC_CHUNK_SIZE: usize = 65536;

/// Uncompressed bytes of the chunk buffers in flight to the worker at most;
/// above [`MAX_WORKER_CHUNK`] per chunk the work stays in this thread.
const WORKER_BYTES: usize = 8 << 20;
/// Chunk buffers in flight, at most.
const WORKER_MAX_BUFFERS: usize = 8;
/// The largest chunk handed to a worker (two buffers of it in flight).
const MAX_WORKER_CHUNK: usize = WORKER_BYTES / 2;

/// Where `DataOut` runs the chunk work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkWork {
    /// On a worker thread when more than one CPU is available and a chunk
    /// is at most 4 MiB; else in the calling thread.
    Auto,
    /// Always in the calling thread.
    Inline,
}

impl DataOut {
    /// Create `path` (truncating) for Data.db.
    pub fn create(
        path: &std::path::Path,
        compression: Compression,
        chunk_length: u32,
        work: ChunkWork,
    ) -> Result<DataOut> {
        let file = std::fs::File::create(path).map_err(|e| io_err(e, path))?;
        let chunk_length = if compression == Compression::None {
            CRC_CHUNK_SIZE
        } else {
            chunk_length as usize
        };
        let max_chunk_bytes = if compression == Compression::None {
            chunk_length as u64
        } else {
            // Generous for every codec's worst case (LZ4 n + n/255 + 16 and
            // a 4-byte length, Snappy 32 + n + n/6, zlib and zstd smaller),
            // plus the chunk CRC.
            (chunk_length + chunk_length / 2 + 1024 + 4) as u64
        };
        let chunks = Chunks {
            file: std::io::BufWriter::with_capacity(1 << 16, file),
            path: path.to_path_buf(),
            compression,
            chunk_length,
            scratch: Vec::new(),
            file_len: 0,
            chunk_offsets: Vec::new(),
            chunk_crcs: Vec::new(),
            digest: crc32fast::Hasher::new(),
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let sink = if work == ChunkWork::Auto && threads > 1 && chunk_length <= MAX_WORKER_CHUNK {
            let buffers = (WORKER_BYTES / chunk_length).clamp(2, WORKER_MAX_BUFFERS);
            Sink::Worker(Worker::spawn(chunks, buffers)?)
        } else {
            Sink::Inline(Box::new(chunks))
        };
        Ok(DataOut {
            chunk_length,
            buf: Vec::with_capacity(chunk_length),
            position: 0,
            submitted: 0,
            max_chunk_bytes,
            sink,
        })
    }

    /// Uncompressed position (what Index.db points to).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Bytes on disk of the whole chunks handed over so far (waits for the
    /// worker to write them).
    pub fn file_len(&self) -> u64 {
        match &self.sink {
            Sink::Inline(c) => c.file_len,
            Sink::Worker(w) => w.file_len_after(self.submitted),
        }
    }

    /// `file_len() >= n`, without waiting for the worker when the chunks
    /// written and an upper bound of those in flight decide it.
    pub fn file_len_at_least(&self, n: u64) -> bool {
        match &self.sink {
            Sink::Inline(c) => c.file_len >= n,
            Sink::Worker(w) => {
                let (done, len) = w.progress();
                let in_flight = self.submitted.saturating_sub(done);
                if len >= n {
                    true
                } else if len.saturating_add(in_flight.saturating_mul(self.max_chunk_bytes)) < n {
                    false
                } else {
                    w.file_len_after(self.submitted) >= n
                }
            }
        }
    }

    /// Append uncompressed bytes.
    pub fn write(&mut self, mut b: &[u8]) -> Result<()> {
        self.position += b.len() as u64;
        while !b.is_empty() {
            let room = self.chunk_length - self.buf.len();
            let n = room.min(b.len());
            self.buf.extend_from_slice(&b[..n]);
            b = &b[n..];
            if self.buf.len() == self.chunk_length {
                self.flush_chunk()?;
            }
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        match &mut self.sink {
            Sink::Inline(c) => {
                c.put_chunk(&self.buf)?;
                self.buf.clear();
            }
            Sink::Worker(w) => {
                let next = w.buffer(self.chunk_length)?;
                let full = std::mem::replace(&mut self.buf, next);
                w.send(full)?;
            }
        }
        self.submitted += 1;
        Ok(())
    }

    /// Flush the last chunk, write and sync the file; return the checksum
    /// component.
    pub fn finish(mut self, features: &crate::Features) -> Result<DataSummary> {
        self.flush_chunk()?;
        let chunks = match self.sink {
            Sink::Inline(mut c) => {
                c.close()?;
                *c
            }
            Sink::Worker(w) => w.finish()?,
        };
        Ok(chunks.summary(self.position, features))
    }
}

/// The chunk side of Data.db: compresses, checksums and writes whole chunks
/// in order, and keeps the chunk table and the whole-file CRC.
#[derive(Debug)]
struct Chunks {
    file: std::io::BufWriter<std::fs::File>,
    path: std::path::PathBuf,
    compression: Compression,
    chunk_length: usize,
    scratch: Vec<u8>,
    /// Bytes written to the file so far.
    file_len: u64,
    chunk_offsets: Vec<u64>,
    chunk_crcs: Vec<u32>,
    digest: crc32fast::Hasher,
}

impl Chunks {
    /// An error while writing the next chunk: its index and uncompressed
    /// start locate it.
    fn chunk_error(&self, e: Error) -> Error {
        let i = self.chunk_crcs.len().max(self.chunk_offsets.len()) as u64;
        let e = Error {
            offset: e.offset.or(Some(i * self.chunk_length as u64)),
            ..e
        };
        e.in_chunk(i)
            .in_component(Component::Data)
            .in_file(&self.path)
    }

    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.file
            .write_all(b)
            .map_err(|e| self.chunk_error(io_err(e, &self.path)))?;
        self.digest.update(b);
        self.file_len += b.len() as u64;
        Ok(())
    }

    fn put_chunk(&mut self, buf: &[u8]) -> Result<()> {
        if self.compression == Compression::None {
            self.put(buf)?;
            self.chunk_crcs.push(crc32fast::hash(buf));
        } else {
            let mut scratch = std::mem::take(&mut self.scratch);
            self.compression.compress(buf, &mut scratch).map_err(|m| {
                self.chunk_error(Error::new(ErrorKind::BadValue(m), "compressing a chunk"))
            })?;
            let crc = crc32fast::hash(&scratch);
            let start = self.file_len;
            self.put(&scratch)?;
            self.put(&crc.to_be_bytes())?;
            self.chunk_offsets.push(start);
            self.scratch = scratch;
        }
        Ok(())
    }

    /// Write what is buffered and sync the file.
    fn close(&mut self) -> Result<()> {
        self.file
            .flush()
            .map_err(|e| io_err(e, &self.path).in_component(Component::Data))?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| io_err(e, &self.path).in_component(Component::Data))
    }

    fn summary(&self, data_length: u64, features: &crate::Features) -> DataSummary {
        let comp = match self.compression.class_name() {
            None => {
                let mut v = Vec::with_capacity(4 + 4 * self.chunk_crcs.len());
                v.extend_from_slice(&(CRC_CHUNK_SIZE as u32).to_be_bytes());
                for c in &self.chunk_crcs {
                    v.extend_from_slice(&c.to_be_bytes());
                }
                (Component::Crc, v)
            }
            Some(class) => {
                let mut v = Vec::new();
                write_utf(&mut v, class);
                let options: Vec<(&str, String)> = match self.compression {
                    Compression::Zstd(Some(l)) => vec![("compression_level", l.to_string())],
                    _ => Vec::new(),
                };
                v.extend_from_slice(&(options.len() as i32).to_be_bytes());
                for (k, val) in &options {
                    write_utf(&mut v, k);
                    write_utf(&mut v, val);
                }
                v.extend_from_slice(&(self.chunk_length as i32).to_be_bytes());
                if features.max_compressed_length {
                    v.extend_from_slice(&i32::MAX.to_be_bytes());
                }
                v.extend_from_slice(&data_length.to_be_bytes());
                v.extend_from_slice(&(self.chunk_offsets.len() as i32).to_be_bytes());
                for o in &self.chunk_offsets {
                    v.extend_from_slice(&o.to_be_bytes());
                }
                (Component::CompressionInfo, v)
            }
        };
        DataSummary {
            data_length,
            file_length: self.file_len,
            digest: self.digest.clone().finalize(),
            chunks: self.chunk_offsets.len() as u64,
            checksum_component: comp,
        }
    }
}

/// The worker thread of a `DataOut` and the two bounded channels between
/// them: full chunk buffers go to it, emptied ones come back to be filled
/// again, so at most `buffers` exist.
#[derive(Debug)]
struct Worker {
    /// Full chunks to the worker; dropped to tell it the last one was sent.
    tx: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    /// Buffers the worker is done with.
    recycled: std::sync::mpsc::Receiver<Vec<u8>>,
    /// Buffers that may still be allocated.
    unmade: usize,
    progress: std::sync::Arc<Progress>,
    thread: Option<std::thread::JoinHandle<Result<Chunks>>>,
}

/// How far the worker got, for `file_len` (which waits on it).
#[derive(Debug, Default)]
struct Progress {
    state: std::sync::Mutex<State>,
    changed: std::sync::Condvar,
    /// Set when the writer is dropped unfinished: stop, write nothing more.
    abandoned: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    /// Chunks written.
    chunks: u64,
    /// Bytes written.
    file_len: u64,
    /// The worker has returned.
    stopped: bool,
    /// The main thread waits for a change.
    waiting: bool,
}

impl Progress {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding it leaves plain counters, still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        let mut s = self.lock();
        f(&mut s);
        if std::mem::take(&mut s.waiting) {
            self.changed.notify_all();
        }
    }
}

impl Worker {
    fn spawn(mut chunks: Chunks, buffers: usize) -> Result<Worker> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(buffers);
        let (back, recycled) = std::sync::mpsc::sync_channel::<Vec<u8>>(buffers);
        let progress = std::sync::Arc::new(Progress::default());
        let p = progress.clone();
        let path = chunks.path.clone();
        let thread = std::thread::Builder::new()
            .name("sstkit-data-out".into())
            .spawn(move || {
                let r = (|| {
                    for buf in rx {
                        if p.abandoned.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        chunks.put_chunk(&buf)?;
                        let len = chunks.file_len;
                        p.update(|s| {
                            s.chunks += 1;
                            s.file_len = len;
                        });
                        // Never blocks: no more than `buffers` exist.
                        let _ = back.send(buf);
                    }
                    if p.abandoned.load(std::sync::atomic::Ordering::Relaxed) {
                        return Err(stopped(&chunks.path));
                    }
                    chunks.close()?;
                    Ok(chunks)
                })();
                p.update(|s| s.stopped = true);
                r
            })
            .map_err(|e| io_err(e, &path))?;
        Ok(Worker {
            tx: Some(tx),
            recycled,
            unmade: buffers - 1,
            progress,
            thread: Some(thread),
        })
    }

    /// An empty buffer to fill: a recycled one, a new one while fewer than
    /// `buffers` exist, else the next the worker gives back.
    fn buffer(&mut self, capacity: usize) -> Result<Vec<u8>> {
        let b = match self.recycled.try_recv() {
            Ok(b) => b,
            Err(_) if self.unmade > 0 => {
                self.unmade -= 1;
                return Ok(Vec::with_capacity(capacity));
            }
            Err(_) => match self.recycled.recv() {
                Ok(b) => b,
                Err(_) => return Err(self.failure()),
            },
        };
        let mut b = b;
        b.clear();
        Ok(b)
    }

    fn send(&mut self, chunk: Vec<u8>) -> Result<()> {
        let sent = match &self.tx {
            Some(tx) => tx.send(chunk).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(self.failure())
        }
    }

    /// (chunks, bytes) written so far.
    fn progress(&self) -> (u64, u64) {
        let s = self.progress.lock();
        (s.chunks, s.file_len)
    }

    /// Bytes written once `chunks` chunks are (or the worker stopped).
    fn file_len_after(&self, chunks: u64) -> u64 {
        let mut s = self.progress.lock();
        while s.chunks < chunks && !s.stopped {
            s.waiting = true;
            s = self
                .progress
                .changed
                .wait(s)
                .unwrap_or_else(|p| p.into_inner());
        }
        s.file_len
    }

    /// The worker stopped: its error.
    fn failure(&mut self) -> Error {
        self.tx = None;
        match self.join() {
            Err(e) => e,
            Ok(c) => stopped(&c.path),
        }
    }

    fn join(&mut self) -> Result<Chunks> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::new(
                ErrorKind::BadValue("the Data.db writer thread panicked".into()),
                "writing",
            )
            .in_component(Component::Data)),
            None => Err(Error::new(
                ErrorKind::BadValue("Data.db writer already stopped by an earlier error".into()),
                "writing",
            )
            .in_component(Component::Data)),
        }
    }

    /// Send no more; wait until every chunk is written and the file synced.
    fn finish(mut self) -> Result<Chunks> {
        self.tx = None;
        self.join()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.progress
                .abandoned
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.tx = None;
            let _ = self.join();
        }
    }
}

fn stopped(path: &std::path::Path) -> Error {
    Error::new(
        ErrorKind::BadValue("Data.db writer stopped unfinished".into()),
        "writing",
    )
    .in_component(Component::Data)
    .in_file(path)
}

/// Java `DataOutput.writeUTF` for ASCII/UTF-8 text (u16 length + bytes).
pub fn write_utf(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// An I/O error while writing `path`.
pub fn io_err(e: std::io::Error, path: &std::path::Path) -> Error {
    Error::new(ErrorKind::Io(e.kind(), e.to_string()), "writing").in_file(path)
}
