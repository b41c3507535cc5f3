//! [`ordered`]: work units done on several threads, their results taken
//! on the calling thread in unit order.
//!
//! The threads are scoped ([`std::thread::scope`]) and the results come
//! back through a bounded channel ([`std::sync::mpsc::sync_channel`]).
//! A thread takes a unit only while it is fewer than a window of units
//! ahead of the one taken last, so what is held (results waiting for an
//! earlier one) stays bounded whatever the input's size.

use std::collections::BTreeMap;
use std::sync::mpsc::sync_channel;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Results held at most, per thread: one being made, one waiting.
const AHEAD_PER_THREAD: usize = 2;

/// Which units are handed out and which were taken.
struct Gate {
    /// The next unit to hand out.
    next: usize,
    /// Units taken so far (the next one `take` wants).
    taken: usize,
    /// No more units: `take` said stop, or it returned.
    stop: bool,
}

/// Do units `0..count` with `work` on `threads` threads and hand their
/// results to `take` on this thread, in unit order; `take` returns false
/// to stop (the threads finish the unit they are in and take no other).
///
/// Each thread makes its own state with `init` (a handle on the input,
/// which need not be shareable) and gives it to `done` when it ends. With
/// one thread (or one unit) everything runs on this thread, in order, with
/// nothing spawned.
pub fn ordered<S, T: Send>(
    count: usize,
    threads: usize,
    init: &(dyn Fn() -> S + Sync),
    work: &(dyn Fn(&mut S, usize) -> T + Sync),
    done: &(dyn Fn(S) + Sync),
    take: &mut dyn FnMut(usize, T) -> bool,
) {
    ordered_scoped(
        count,
        threads,
        &|units| {
            let mut s = init();
            units(&mut |i| work(&mut s, i));
            done(s);
        },
        take,
    );
}

/// A thread's work: unit `i` into its result.
pub type Work<'a, T> = dyn FnMut(usize) -> T + 'a;

/// What a thread hands its [`Work`] to: it does units until there are
/// none left for the thread.
pub type Units<'a, T> = dyn FnMut(&mut Work<'_, T>) + 'a;

/// [`ordered`] for a thread state that borrows from itself (a lookup over
/// the thread's own handle on an sstable): each thread runs `thread`,
/// which sets up its state and calls the function it is given once with
/// its `work`; that function does units until there are none left for
/// the thread.
pub fn ordered_scoped<T: Send>(
    count: usize,
    threads: usize,
    thread: &(dyn Fn(&mut Units<'_, T>) + Sync),
    take: &mut dyn FnMut(usize, T) -> bool,
) {
    if threads <= 1 || count <= 1 {
        thread(&mut |work| {
            for i in 0..count {
                let r = work(i);
                if !take(i, r) {
                    break;
                }
            }
        });
        return;
    }
    let threads = threads.min(count);
    let window = threads * AHEAD_PER_THREAD;
    let gate = Mutex::new(Gate {
        next: 0,
        taken: 0,
        stop: false,
    });
    let moved = Condvar::new();
    // A poisoned lock means a worker panicked; the scope re-raises that
    // panic when it joins, so the state is still usable until then.
    let lock = || -> MutexGuard<'_, Gate> { gate.lock().unwrap_or_else(|e| e.into_inner()) };
    let (tx, rx) = sync_channel::<(usize, T)>(window);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (lock, moved) = (&lock, &moved);
            scope.spawn(move || {
                thread(&mut |work| loop {
                    let i = {
                        let mut g = lock();
                        while !g.stop && g.next < count && g.next >= g.taken + window {
                            g = moved.wait(g).unwrap_or_else(|e| e.into_inner());
                        }
                        if g.stop || g.next >= count {
                            break;
                        }
                        g.next += 1;
                        g.next - 1
                    };
                    if tx.send((i, work(i))).is_err() {
                        break;
                    }
                });
            });
        }
        drop(tx);
        let mut held: BTreeMap<usize, T> = BTreeMap::new();
        let mut want = 0;
        while want < count {
            let Some(r) = held.remove(&want) else {
                match rx.recv() {
                    Ok((i, r)) => {
                        held.insert(i, r);
                        continue;
                    }
                    // Every thread ended early: one panicked (the scope says so).
                    Err(_) => break,
                }
            };
            let go = take(want, r);
            want += 1;
            {
                let mut g = lock();
                g.taken = want;
                g.stop |= !go;
            }
            moved.notify_all();
            if !go {
                break;
            }
        }
        lock().stop = true;
        moved.notify_all();
        // Threads blocked sending see the channel closed.
        drop(rx);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_come_in_unit_order_whatever_the_threads() {
        for threads in [1, 2, 3, 8] {
            let mut got = Vec::new();
            ordered(
                50,
                threads,
                &|| 0u32,
                &|s, i| {
                    *s += 1;
                    // Later units finish first on some threads.
                    std::thread::sleep(std::time::Duration::from_micros(
                        ((50 - i) % 7) as u64 * 50,
                    ));
                    i * 10
                },
                &|_| {},
                &mut |i, r| {
                    assert_eq!(r, i * 10);
                    got.push(i);
                    true
                },
            );
            assert_eq!(got, (0..50).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn a_stop_ends_the_work_within_the_window() {
        let worked = AtomicUsize::new(0);
        let states = AtomicUsize::new(0);
        let mut taken = 0;
        ordered(
            1000,
            2,
            &|| (),
            &|_, _| {
                worked.fetch_add(1, Ordering::SeqCst);
            },
            &|_| {
                states.fetch_add(1, Ordering::SeqCst);
            },
            &mut |i, _| {
                taken += 1;
                i < 4
            },
        );
        assert_eq!(taken, 5);
        // Units 0..=4 taken, at most a window (4) beyond the last taken.
        assert!(worked.load(Ordering::SeqCst) <= 5 + 2 * AHEAD_PER_THREAD);
        // Each thread gave its state back.
        assert_eq!(states.load(Ordering::SeqCst), 2);
    }
}
