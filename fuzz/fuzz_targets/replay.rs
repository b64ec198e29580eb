//! `backoffsim rto replay`'s reader: any bytes in, rows out or an error value. The first
//! byte picks the estimator profile, as `--profile` does; the rest is the CSV.
#![no_main]

use backoffsim::model::rto::{RtoConfig, RtoProfile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, csv)) = data.split_first() else { return };
    let profile = if choice & 1 == 0 { RtoProfile::Rfc6298 } else { RtoProfile::Linux };
    let params = RtoConfig { profile, ..RtoConfig::default() }.resolve().expect("a profile's defaults resolve");
    let _ = backoffsim::replay::replay(csv, std::io::sink(), &params);
});
