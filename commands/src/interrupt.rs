//! SIGINT, SIGTERM and SIGHUP: remove the files being written
//! ([`sstkit_format::write::pending`]) and exit with the conventional
//! status, 128 plus the signal number (130 for SIGINT, 143 for SIGTERM).
//!
//! The signals are received on a thread of their own (`signal-hook`'s
//! iterator), where removing files and exiting are safe; the signal
//! handler itself only wakes that thread.

/// Install the handling; a failure to install leaves the default actions.
#[cfg(unix)]
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let n = sstkit_format::write::pending::abandon();
                if n > 0 {
                    // Straight to the descriptor: the main thread may hold stderr's lock.
                    let msg = format!(
                        "\nsstkit: interrupted; removed {n} unfinished output file{}\n",
                        if n == 1 { "" } else { "s" }
                    );
                    // SAFETY: writes a buffer this thread owns to descriptor 2.
                    unsafe {
                        libc::write(2, msg.as_ptr().cast(), msg.len());
                    }
                }
                std::process::exit(128 + sig);
            }
        });
    drop(spawned);
}

/// Install the handling (nothing to do without Unix signals).
#[cfg(not(unix))]
pub fn install() {}
