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
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions {
            mode: IoMode::Pread,
            unit: 4096,
            max_io: 128 * 1024,
            read_ahead: 1024 * 1024,
            index_cache_bytes: 8 * 1024 * 1024,
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

    pub(super) fn align_down(&self, x: u64) -> u64 {
        x - x % self.unit
    }

    pub(super) fn align_up(&self, x: u64) -> u64 {
        x.div_ceil(self.unit).saturating_mul(self.unit)
    }
}
