//! Modes and options: how files are read (`--io-mode`, `--io-unit`,
//! `--max-io`, `--read-ahead`, `--index-cache-size`) and why a read is made.

/// Why a read is made; recorded in the stats (scan reads may use read-ahead,
/// point reads never do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// Loading a whole metadata component.
    Metadata,
    /// Sequential scan.
    Scan,
    /// Point lookup (bounded read).
    Point,
}

/// How files are read (`--io-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoMode {
    /// Positioned reads (`pread`).
    #[default]
    Pread,
    /// Memory-mapped files.
    Mmap,
    /// `O_DIRECT` reads into aligned buffers (Linux).
    Direct,
}

/// IO settings (the `--io-*` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoOptions {
    /// How files are read.
    pub mode: IoMode,
    /// Read unit: reads are aligned to it and sized in multiples of it
    /// (a power of two, 512 B ..= 1 MiB).
    pub unit: u64,
    /// Largest single physical read (a multiple of `unit`).
    pub max_io: u64,
    /// Read-ahead window of sequential scans (0: none).
    pub read_ahead: u64,
    /// Capacity of the index cache in bytes (0: no cache across operations).
    pub index_cache_bytes: u64,
    /// What replaces `unit`, `max_io` and `read_ahead` when the sstable is
    /// in object storage (see [`IoOptions::for_object_storage`]).
    pub remote: RemoteIo,
}

/// IO settings for object storage inputs that differ from local ones: a GET
/// costs a round trip of milliseconds whatever its size up to a few MB, a
/// local read microseconds, so remote reads are fewer and larger. `None`
/// keeps the local value (the user set that flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteIo {
    /// `(unit, max_io)`: a pair, so that a user's `--io-unit` or `--max-io`
    /// never meets a default of the other that contradicts it.
    pub unit_and_max_io: Option<(u64, u64)>,
    /// Read-ahead window of scans.
    pub read_ahead: Option<u64>,
}

impl RemoteIo {
    /// The object storage defaults: 1 MiB units, 8 MiB reads and windows.
    pub const DEFAULT: RemoteIo = RemoteIo {
        unit_and_max_io: Some((1 << 20, 8 << 20)),
        read_ahead: Some(8 << 20),
    };

    /// No override: object storage reads as local files do.
    pub const SAME_AS_LOCAL: RemoteIo = RemoteIo {
        unit_and_max_io: None,
        read_ahead: None,
    };
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions {
            mode: IoMode::Pread,
            unit: 4096,
            max_io: 128 * 1024,
            read_ahead: 1024 * 1024,
            index_cache_bytes: 8 * 1024 * 1024,
            remote: RemoteIo::DEFAULT,
        }
    }
}

impl IoOptions {
    /// Smallest accepted unit.
    pub const MIN_UNIT: u64 = 512;
    /// Largest accepted unit.
    pub const MAX_UNIT: u64 = 1 << 20;

    /// Check the settings: `unit` a power of two in 512 B ..= 1 MiB, `max_io`
    /// at least one unit (rounded down to a multiple of it). The message
    /// names the flag at fault.
    pub fn checked(mut self) -> std::result::Result<IoOptions, String> {
        if !self.unit.is_power_of_two() || !(Self::MIN_UNIT..=Self::MAX_UNIT).contains(&self.unit) {
            return Err(format!(
                "--io-unit {}: must be a power of two from 512 B to 1 MiB",
                self.unit
            ));
        }
        if self.max_io < self.unit {
            return Err(format!(
                "--max-io {}: must be at least the IO unit ({})",
                self.max_io, self.unit
            ));
        }
        self.max_io -= self.max_io % self.unit;
        Ok(self)
    }

    /// The options for an sstable in object storage: `remote`'s values
    /// replace the local ones they are set for.
    pub fn for_object_storage(self) -> IoOptions {
        let (unit, max_io) = self
            .remote
            .unit_and_max_io
            .unwrap_or((self.unit, self.max_io));
        IoOptions {
            unit,
            max_io,
            read_ahead: self.remote.read_ahead.unwrap_or(self.read_ahead),
            ..self
        }
    }

    pub(super) fn align_down(&self, x: u64) -> u64 {
        x - x % self.unit
    }

    pub(super) fn align_up(&self, x: u64) -> u64 {
        x.div_ceil(self.unit).saturating_mul(self.unit)
    }
}
