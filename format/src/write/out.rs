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
#[derive(Debug)]
pub struct DataOut {
    file: std::io::BufWriter<std::fs::File>,
    path: std::path::PathBuf,
    compression: Compression,
    chunk_length: usize,
    /// Uncompressed bytes not yet flushed as a chunk.
    buf: Vec<u8>,
    scratch: Vec<u8>,
    /// Uncompressed bytes handed over so far.
    position: u64,
    /// Bytes written to the file so far.
    file_len: u64,
    chunk_offsets: Vec<u64>,
    chunk_crcs: Vec<u32>,
    digest: crc32fast::Hasher,
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

impl DataOut {
    /// Create `path` (truncating) for Data.db.
    pub fn create(
        path: &std::path::Path,
        compression: Compression,
        chunk_length: u32,
    ) -> Result<DataOut> {
        let file = std::fs::File::create(path).map_err(|e| io_err(e, path))?;
        let chunk_length = if compression == Compression::None {
            CRC_CHUNK_SIZE
        } else {
            chunk_length as usize
        };
        Ok(DataOut {
            file: std::io::BufWriter::with_capacity(1 << 16, file),
            path: path.to_path_buf(),
            compression,
            chunk_length,
            buf: Vec::with_capacity(chunk_length),
            scratch: Vec::new(),
            position: 0,
            file_len: 0,
            chunk_offsets: Vec::new(),
            chunk_crcs: Vec::new(),
            digest: crc32fast::Hasher::new(),
        })
    }

    /// Uncompressed position (what Index.db points to).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Bytes on disk so far (flushed chunks only).
    pub fn file_len(&self) -> u64 {
        self.file_len
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

    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.file.write_all(b).map_err(|e| io_err(e, &self.path))?;
        self.digest.update(b);
        self.file_len += b.len() as u64;
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        if self.compression == Compression::None {
            self.chunk_crcs.push(crc32fast::hash(&buf));
            self.put(&buf)?;
        } else {
            let mut scratch = std::mem::take(&mut self.scratch);
            self.compression.compress(&buf, &mut scratch).map_err(|m| {
                Error::new(ErrorKind::BadValue(m), "compressing a chunk")
                    .in_component(Component::Data)
                    .in_file(&self.path)
            })?;
            self.chunk_offsets.push(self.file_len);
            let crc = crc32fast::hash(&scratch);
            self.put(&scratch)?;
            self.put(&crc.to_be_bytes())?;
            self.scratch = scratch;
        }
        self.buf = buf;
        self.buf.clear();
        Ok(())
    }

    /// Flush the last chunk and the file; return the checksum component.
    pub fn finish(mut self, features: &crate::Features) -> Result<DataSummary> {
        self.flush_chunk()?;
        self.file.flush().map_err(|e| io_err(e, &self.path))?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| io_err(e, &self.path))?;
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
                v.extend_from_slice(&self.position.to_be_bytes());
                v.extend_from_slice(&(self.chunk_offsets.len() as i32).to_be_bytes());
                for o in &self.chunk_offsets {
                    v.extend_from_slice(&o.to_be_bytes());
                }
                (Component::CompressionInfo, v)
            }
        };
        Ok(DataSummary {
            data_length: self.position,
            file_length: self.file_len,
            digest: self.digest.finalize(),
            chunks: self.chunk_offsets.len() as u64,
            checksum_component: comp,
        })
    }
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
