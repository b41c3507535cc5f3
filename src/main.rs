//! The `sstkit` binary: parse the command line, run the command, map the
//! outcome to an exit code (0 ok, 1 problems found, 2 usage, 3 unreadable
//! input). Everything else lives in the `sstkit-commands` and `sstkit-format`
//! crates.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use sstkit_commands::cli::Cli;

fn main() -> ExitCode {
    // Nothing but the CPU check may run before it: the rest of the program
    // is compiled for the build's CPU level (see `missing_cpu_feature`).
    if let Some(missing) = missing_cpu_feature() {
        cpu_too_old(missing);
        return ExitCode::from(3);
    }
    run()
}

#[cold]
#[inline(never)]
fn cpu_too_old(missing: &str) {
    eprintln!(
        "sstkit: this build assumes CPU features this CPU lacks (first missing: {missing}); \
         rebuild for any x86-64 CPU with RUSTFLAGS=\"-C target-cpu=x86-64\" \
         (see .cargo/config.toml)"
    );
}

#[inline(never)]
fn run() -> ExitCode {
    // clap prints usage errors itself and exits with 2.
    let cli = Cli::parse();
    let stdout = io::stdout();
    let result = if stdout.is_terminal() {
        // Line-buffered (Stdout's own behaviour) so interactive output appears promptly.
        let mut lock = stdout.lock();
        sstkit_commands::run(cli, &mut lock)
    } else {
        let mut w = BufWriter::with_capacity(256 * 1024, raw_stdout(&stdout));
        let r = sstkit_commands::run(cli, &mut w);
        match (r, w.flush()) {
            (Ok(_), Err(e)) => Err(sstkit_commands::CmdError::Output(e)),
            (r, _) => r,
        }
    };
    match result {
        Ok(o) => ExitCode::from(o.exit_code()),
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sstkit: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Standard output for a pipe or file, written with plain `write(2)`s:
/// `Stdout` is always line-buffered, which scans every block for its last
/// newline and copies the tail (~2% of a JSON dump). On Unix a duplicate of
/// the descriptor does without; elsewhere the locked `Stdout`.
#[cfg(unix)]
fn raw_stdout(stdout: &io::Stdout) -> Box<dyn Write + '_> {
    use std::os::fd::AsFd;
    match stdout.as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(stdout.lock()),
    }
}

#[cfg(not(unix))]
fn raw_stdout(stdout: &io::Stdout) -> Box<dyn Write + '_> {
    Box::new(stdout.lock())
}

/// The first x86-64 feature this binary was compiled to assume
/// (`.cargo/config.toml`: x86-64-v3) that the CPU (or the OS, for the AVX
/// registers) does not provide, if any. `main` calls it first, so an older
/// CPU gets a message rather than an illegal instruction. It reads CPUID
/// itself: `is_x86_feature_detected!` answers `true` without asking the CPU
/// for a feature the build enables. Kept out of line and free of anything
/// the compiler could vectorise (no allocation, no formatting), as `main`
/// and this function are compiled for the build's level too.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn missing_cpu_feature() -> Option<&'static str> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 CPU; leaves above the maximum are
    // not read (checked against leaf 0 and 0x8000_0000).
    let (max, ext_max) = unsafe { (__cpuid(0).eax, __cpuid(0x8000_0000).eax) };
    #[allow(unused_unsafe)]
    // SAFETY: as above.
    let (l1, l7, e1) = unsafe {
        (
            __cpuid(1).ecx,
            if max >= 7 { __cpuid_count(7, 0).ebx } else { 0 },
            if ext_max >= 0x8000_0001 {
                __cpuid(0x8000_0001).ecx
            } else {
                0
            },
        )
    };
    // XCR0 bits 1 and 2: the OS saves the SSE and AVX registers.
    let os_avx = l1 & (1 << 27) != 0 && {
        let (lo, _hi): (u32, u32);
        // SAFETY: XGETBV is available when CPUID.1:ECX.OSXSAVE (bit 27) is set.
        unsafe {
            std::arch::asm!("xgetbv", in("ecx") 0u32, out("eax") lo, out("edx") _hi,
                options(nomem, nostack, preserves_flags));
        }
        lo & 0b110 == 0b110
    };
    let have = |f: &str| match f {
        "sse3" => l1 & 1 != 0,
        "ssse3" => l1 & (1 << 9) != 0,
        "fma" => l1 & (1 << 12) != 0 && os_avx,
        "sse4.1" => l1 & (1 << 19) != 0,
        "sse4.2" => l1 & (1 << 20) != 0,
        "movbe" => l1 & (1 << 22) != 0,
        "popcnt" => l1 & (1 << 23) != 0,
        "avx" => l1 & (1 << 28) != 0 && os_avx,
        "f16c" => l1 & (1 << 29) != 0 && os_avx,
        "bmi1" => l7 & (1 << 3) != 0,
        "avx2" => l7 & (1 << 5) != 0 && os_avx,
        "bmi2" => l7 & (1 << 8) != 0,
        "lzcnt" => e1 & (1 << 5) != 0,
        _ => true,
    };
    macro_rules! check {
        ($($f:tt),*) => {$(
            if cfg!(target_feature = $f) && !have($f) {
                return Some($f);
            }
        )*};
    }
    check!(
        "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "bmi1", "bmi2", "fma",
        "lzcnt", "movbe", "f16c"
    );
    None
}

#[cfg(not(target_arch = "x86_64"))]
fn missing_cpu_feature() -> Option<&'static str> {
    None
}
