// SPDX-License-Identifier: MIT
//! quanta and minstant behind `extern "C"` functions, so that the C++ harness
//! (../peers.cc) times them in the same loop, the same process and the same
//! run as abseil and libfastclock.
//!
//! Each function is one call across the language boundary, as a call of
//! libfastclock or abseil is a call into a library: the crates' own reads are
//! inlined into these wrappers.  Nothing here allocates or panics on the hot
//! path.

use std::sync::OnceLock;

static QUANTA: OnceLock<quanta::Clock> = OnceLock::new();
static ANCHOR: OnceLock<minstant::Anchor> = OnceLock::new();

fn quanta_clock() -> &'static quanta::Clock {
    QUANTA.get_or_init(quanta::Clock::new)
}

/// Calibrates quanta (its `Clock::new` spins up to 200 ms against
/// CLOCK_MONOTONIC) and anchors minstant on the wall clock, as a program
/// using them would at start-up; returns the time it took in ns.
#[no_mangle]
pub extern "C" fn peers_init() -> u64 {
    let t0 = std::time::Instant::now();
    quanta_clock();
    ANCHOR.get_or_init(minstant::Anchor::new);
    t0.elapsed().as_nanos() as u64
}

/// quanta's `Clock::now()`: the counter scaled to its reference clock.  The
/// `Instant` hides its value; its one field is the scaled count in ns on
/// CLOCK_MONOTONIC's epoch (quanta's calibration sets `ref_time` from
/// `clock_gettime(CLOCK_MONOTONIC)`), read here through a same-size
/// transmute so that it can be compared with the kernel's clock.
#[no_mangle]
pub extern "C" fn peers_quanta_now() -> u64 {
    let i = quanta_clock().now();
    // SAFETY: quanta::Instant is a struct of one u64 (checked by transmute's
    // size check at compile time).
    unsafe { std::mem::transmute::<quanta::Instant, u64>(i) }
}

/// quanta's `Clock::raw()`: the counter, unscaled.
#[no_mangle]
pub extern "C" fn peers_quanta_raw() -> u64 {
    quanta_clock().raw()
}

/// minstant's `Instant::now()`: the counter less an anchor count; the
/// value only means something through `as_unix_nanos` or a difference.
#[no_mangle]
pub extern "C" fn peers_minstant_now() -> u64 {
    let i = minstant::Instant::now();
    // SAFETY: minstant::Instant is a struct of one u64.
    unsafe { std::mem::transmute::<minstant::Instant, u64>(i) }
}

/// minstant's `Instant::now().as_unix_nanos(&anchor)`: what a program that
/// wants the wall clock from minstant calls; CLOCK_REALTIME's scale.
#[no_mangle]
pub extern "C" fn peers_minstant_unix_ns() -> u64 {
    let anchor = ANCHOR.get_or_init(minstant::Anchor::new);
    minstant::Instant::now().as_unix_nanos(anchor)
}

/// Whether minstant found a TSC it trusts (else it reads the wall clock).
#[no_mangle]
pub extern "C" fn peers_minstant_tsc() -> i32 {
    minstant::is_tsc_available() as i32
}
