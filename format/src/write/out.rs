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
/// Whole chunks go to `Chunks`, which compresses, checksums and writes
/// them in order: on a worker thread when more than one CPU is available
/// (batches of chunks in a bounded ring of recycled buffers, so memory stays
/// flat), else in this thread. The bytes written are the same either way.
#[derive(Debug)]
pub struct DataOut {
    chunk_length: usize,
    /// Uncompressed bytes handed over together: one chunk in this thread,
    /// several for the worker (fewer hand-overs).
    batch_length: usize,
    /// Uncompressed bytes not yet handed over.
    buf: Vec<u8>,
    /// Uncompressed bytes written so far.
    position: u64,
    /// Whole chunks handed over so far.
    sent: u64,
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

/// Uncompressed bytes of the buffers in flight to the worker at most;
/// above [`MAX_WORKER_CHUNK`] per chunk the work stays in this thread.
const WORKER_BYTES: usize = 8 << 20;
/// Buffers in flight, at most.
const WORKER_MAX_BUFFERS: usize = 8;
/// The largest chunk handed to a worker (two buffers of it in flight).
const MAX_WORKER_CHUNK: usize = WORKER_BYTES / 2;
/// Uncompressed bytes per hand-over to the worker (whole chunks, at least one).
const WORKER_BATCH: usize = 256 << 10;
/// Workers of [`ChunkWork::Auto`] at once in the process, at most (fewer on
/// fewer CPUs): writers beyond them, such as many outputs of one split, work
/// in their own thread.
const MAX_AUTO_WORKERS: usize = 4;

/// Workers of [`ChunkWork::Auto`] running now.
static AUTO_WORKERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One of the [`MAX_AUTO_WORKERS`] places, given back on drop.
#[derive(Debug)]
struct AutoSlot;

impl AutoSlot {
    fn take() -> Option<AutoSlot> {
        use std::sync::atomic::Ordering::SeqCst;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let max = (cpus - 1).min(MAX_AUTO_WORKERS);
        AUTO_WORKERS
            .fetch_update(SeqCst, SeqCst, |n| (n < max).then_some(n + 1))
            .ok()
            .map(|_| AutoSlot)
    }
}

impl Drop for AutoSlot {
    fn drop(&mut self) {
        AUTO_WORKERS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Where `DataOut` runs the chunk work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkWork {
    /// On a worker thread when more than one CPU is available, fewer than
    /// `min(CPUs - 1, 4)` such workers run and a chunk is at most 4 MiB;
    /// else in the calling thread.
    Auto,
    /// Always in the calling thread.
    Inline,
    /// On a worker thread whatever the CPUs, when a chunk is at most 4 MiB.
    Thread,
}

impl DataOut {
    /// Create `path` (truncating) for Data.db.
    pub fn create(
        path: &std::path::Path,
        compression: Compression,
        chunk_length: u32,
        work: ChunkWork,
    ) -> Result<DataOut> {
        let file = super::pending::create(path).map_err(|e| io_err(e, path))?;
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
            written_back: 0,
        };
        let slot = match work {
            _ if chunk_length > MAX_WORKER_CHUNK => None,
            ChunkWork::Auto => AutoSlot::take().map(Some),
            ChunkWork::Inline => None,
            ChunkWork::Thread => Some(None),
        };
        let (sink, batch_length) = if let Some(slot) = slot {
            let batch_length = (WORKER_BATCH / chunk_length).max(1) * chunk_length;
            let buffers = (WORKER_BYTES / batch_length).clamp(2, WORKER_MAX_BUFFERS);
            let w = Worker::spawn(chunks, buffers, slot)?;
            (Sink::Worker(w), batch_length)
        } else {
            (Sink::Inline(Box::new(chunks)), chunk_length)
        };
        Ok(DataOut {
            chunk_length,
            batch_length,
            buf: Vec::with_capacity(batch_length),
            position: 0,
            sent: 0,
            max_chunk_bytes,
            sink,
        })
    }

    /// Uncompressed position (what Index.db points to).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Whole chunks written to `DataOut` so far.
    fn whole_chunks(&self) -> u64 {
        self.position / self.chunk_length as u64
    }

    /// Bytes on disk of the whole chunks written so far (waits for the
    /// worker to write them).
    pub fn file_len(&mut self) -> Result<u64> {
        self.hand_over()?;
        match &mut self.sink {
            Sink::Inline(c) => Ok(c.file_len),
            Sink::Worker(w) => w.file_len_after(self.sent),
        }
    }

    /// `file_len() >= n`, without waiting for the worker when the chunks
    /// it wrote and an upper bound of the others decide it.
    pub fn file_len_at_least(&mut self, n: u64) -> Result<bool> {
        if let Sink::Worker(w) = &self.sink {
            let (done, len) = w.progress();
            let pending = self.whole_chunks().saturating_sub(done);
            if len >= n {
                return Ok(true);
            }
            if len.saturating_add(pending.saturating_mul(self.max_chunk_bytes)) < n {
                return Ok(false);
            }
        }
        Ok(self.file_len()? >= n)
    }

    /// Append uncompressed bytes.
    pub fn write(&mut self, mut b: &[u8]) -> Result<()> {
        self.position += b.len() as u64;
        while !b.is_empty() {
            let room = self.batch_length - self.buf.len();
            let n = room.min(b.len());
            self.buf.extend_from_slice(&b[..n]);
            b = &b[n..];
            if self.buf.len() == self.batch_length {
                self.hand_over()?;
            }
        }
        Ok(())
    }

    /// Stop the worker thread, if any, and free its buffers: the rest is
    /// written in the calling thread (for an output that gets little more).
    pub fn park(&mut self) -> Result<()> {
        self.hand_over()?;
        if let Sink::Worker(w) = &mut self.sink {
            let chunks = w.stop()?;
            self.sink = Sink::Inline(Box::new(chunks));
            self.batch_length = self.chunk_length;
            self.buf.shrink_to(self.chunk_length);
        }
        Ok(())
    }

    /// Hand the whole chunks of `buf` over; a partial chunk stays.
    fn hand_over(&mut self) -> Result<()> {
        let whole = self.buf.len() / self.chunk_length * self.chunk_length;
        if whole == 0 {
            return Ok(());
        }
        match &mut self.sink {
            Sink::Inline(c) => {
                for chunk in self.buf[..whole].chunks(self.chunk_length) {
                    c.put_chunk(chunk)?;
                }
                self.buf.drain(..whole);
            }
            Sink::Worker(w) => {
                let mut next = w.buffer(self.batch_length)?;
                next.extend_from_slice(&self.buf[whole..]);
                self.buf.truncate(whole);
                let full = std::mem::replace(&mut self.buf, next);
                w.send(full)?;
            }
        }
        self.sent += (whole / self.chunk_length) as u64;
        Ok(())
    }

    /// Flush the last chunk, write and sync the file; return the checksum
    /// component.
    pub fn finish(mut self, features: &crate::Features) -> Result<DataSummary> {
        self.hand_over()?;
        let last = std::mem::take(&mut self.buf);
        let chunks = match self.sink {
            Sink::Inline(mut c) => {
                if !last.is_empty() {
                    c.put_chunk(&last)?;
                }
                c.close()?;
                *c
            }
            Sink::Worker(mut w) => {
                if !last.is_empty() {
                    w.send(last)?;
                }
                let mut c = w.stop()?;
                c.close()?;
                c
            }
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
    /// Bytes already handed to the kernel's writeback.
    written_back: u64,
}

/// Data.db bytes between two requests to start writing them to disk, so
/// that the sync at the end has little left to wait for.
const WRITEBACK_STEP: u64 = 8 << 20;

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
        self.start_writeback();
        Ok(())
    }

    /// Ask the kernel to start writing what reached the file since the last
    /// request, without waiting for it (`sync_file_range`); errors show at
    /// the final sync.
    fn start_writeback(&mut self) {
        let in_file = self.file_len - self.file.buffer().len() as u64;
        if in_file - self.written_back < WRITEBACK_STEP {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let (Ok(from), Ok(len)) = (
                i64::try_from(self.written_back),
                i64::try_from(in_file - self.written_back),
            ) else {
                return;
            };
            // SAFETY: a plain system call on a file descriptor this BufWriter
            // owns and keeps open; it touches no memory of ours.
            unsafe {
                libc::sync_file_range(
                    self.file.get_ref().as_raw_fd(),
                    from,
                    len,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.written_back = in_file;
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
    /// Given back once the thread is joined (`None` for `ChunkWork::Thread`).
    _slot: Option<AutoSlot>,
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
    fn spawn(mut chunks: Chunks, buffers: usize, slot: Option<AutoSlot>) -> Result<Worker> {
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
                        let mut n = 0;
                        for chunk in buf.chunks(chunks.chunk_length) {
                            chunks.put_chunk(chunk)?;
                            n += 1;
                        }
                        let len = chunks.file_len;
                        p.update(|s| {
                            s.chunks += n;
                            s.file_len = len;
                        });
                        // Never blocks: no more than `buffers` exist.
                        let _ = back.send(buf);
                    }
                    if p.abandoned.load(std::sync::atomic::Ordering::Relaxed) {
                        return Err(stopped(&chunks.path));
                    }
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
            _slot: slot,
        })
    }

    /// An empty buffer to fill: a recycled one, a new one while fewer than
    /// `buffers` exist, else the next the worker gives back.
    fn buffer(&mut self, capacity: usize) -> Result<Vec<u8>> {
        let mut b = match self.recycled.try_recv() {
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

    /// Bytes written once `chunks` chunks are; the worker's error if it
    /// stopped before.
    fn file_len_after(&mut self, chunks: u64) -> Result<u64> {
        let mut s = self.progress.lock();
        while s.chunks < chunks && !s.stopped {
            s.waiting = true;
            s = self
                .progress
                .changed
                .wait(s)
                .unwrap_or_else(|p| p.into_inner());
        }
        let (done, len) = (s.chunks, s.file_len);
        drop(s);
        if done < chunks {
            return Err(self.failure());
        }
        Ok(len)
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

    /// Send no more; wait until every chunk is written (to the file's
    /// buffer) and the thread has ended.
    fn stop(&mut self) -> Result<Chunks> {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Half compressible, half random bytes.
    fn data(n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 2048 < 1024 {
                    (i % 7) as u8
                } else {
                    (x >> 56) as u8
                }
            })
            .collect()
    }

    fn features() -> crate::Features {
        crate::version::Version::parse("oa").unwrap().features()
    }

    struct Written {
        summary: DataSummary,
        bytes: Vec<u8>,
        /// `file_len()` after each write.
        lens: Vec<u64>,
    }

    /// Write `d` in uneven pieces, checking `file_len_at_least` against
    /// `file_len` on the way.
    /// `park` after `park_at` writes, when given.
    fn write(
        path: &std::path::Path,
        c: &Compression,
        chunk: u32,
        work: ChunkWork,
        d: &[u8],
        park_at: Option<usize>,
    ) -> Written {
        let mut out = DataOut::create(path, c.clone(), chunk, work).unwrap();
        let mut lens = Vec::new();
        let mut rest = d;
        let mut i = 0;
        while !rest.is_empty() {
            let n = (1 + i * 7919 % 20_000).min(rest.len());
            out.write(&rest[..n]).unwrap();
            rest = &rest[n..];
            i += 1;
            if park_at == Some(i) {
                out.park().unwrap();
            }
            let probe = (i as u64 * 4099) % (d.len() as u64 + 1);
            let at_least = out.file_len_at_least(probe).unwrap();
            let len = out.file_len().unwrap();
            assert_eq!(at_least, len >= probe, "{c:?} {work:?} at write {i}");
            lens.push(len);
        }
        let summary = out.finish(&features()).unwrap();
        Written {
            summary,
            bytes: std::fs::read(path).unwrap(),
            lens,
        }
    }

    /// The worker writes exactly what the calling thread writes: Data.db,
    /// the chunk table or CRC.db, the digest, and the same `file_len`
    /// along the way.
    #[test]
    fn worker_writes_the_same_bytes() {
        let scratch = crate::test_support::scratch("dataout");
        let dir = scratch.path();
        let d = data(1_500_000);
        for c in [
            Compression::Lz4,
            Compression::None,
            Compression::Snappy,
            Compression::Deflate,
            Compression::Zstd(Some(1)),
        ] {
            for chunk in [1024, 16384, 1 << 20] {
                let a = write(&dir.join("inline"), &c, chunk, ChunkWork::Inline, &d, None);
                let b = write(&dir.join("thread"), &c, chunk, ChunkWork::Thread, &d, None);
                let parked = write(
                    &dir.join("parked"),
                    &c,
                    chunk,
                    ChunkWork::Thread,
                    &d,
                    Some(40),
                );
                assert!(a.bytes == b.bytes, "{c:?} {chunk}: Data.db differs");
                assert!(
                    a.bytes == parked.bytes,
                    "{c:?} {chunk}: parked Data.db differs"
                );
                assert_eq!(a.lens, b.lens, "{c:?} {chunk}");
                assert_eq!(a.lens, parked.lens, "{c:?} {chunk}");
                assert_eq!(a.summary.file_length, a.bytes.len() as u64);
                assert_eq!(a.summary.digest, crc32fast::hash(&a.bytes));
                let (sa, sb) = (&a.summary, &b.summary);
                assert_eq!(
                    (sa.data_length, sa.file_length, sa.digest, sa.chunks),
                    (sb.data_length, sb.file_length, sb.digest, sb.chunks),
                    "{c:?} {chunk}"
                );
                assert_eq!(sa.checksum_component, sb.checksum_component);
            }
        }
    }

    /// A write error in the worker (here ENOSPC) reaches the caller with
    /// the file and chunk, mid-stream, without hanging.
    #[test]
    fn worker_error_reaches_the_writer() {
        let full = std::path::Path::new("/dev/full");
        if !full.exists() {
            eprintln!("no /dev/full: skipped");
            return;
        }
        let d = data(4 << 20);
        for work in [ChunkWork::Thread, ChunkWork::Inline] {
            let mut out = DataOut::create(full, Compression::Lz4, 4096, work).unwrap();
            let err = d
                .chunks(1000)
                .find_map(|p| out.write(p).err())
                .expect("a write fails before the end");
            assert!(matches!(err.kind, ErrorKind::Io(..)), "{err}");
            assert_eq!(err.file.as_deref(), Some(full), "{err}");
            assert_eq!(err.component, Some(Component::Data), "{err}");
            assert!(err.chunk.is_some(), "{err}");
            assert!(err.to_string().contains("No space left"), "{err}");
            if work == ChunkWork::Thread {
                // The worker is gone: every later call fails too.
                assert!(out.write(&d[..(1 << 20)]).is_err());
            }
            drop(out);
        }
    }
}
