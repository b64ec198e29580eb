//! The scenario loader as `backoffsim check` drives it: any text in, a `Scenario` or an
//! error value out. A panic, a hang or a crash is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Lossy rather than skipped: invalid UTF-8 is refused before the loader in the CLI, so
    // the bytes around it are what is worth exploring.
    let source = String::from_utf8_lossy(data);
    if let Ok(scenario) = backoffsim::scenario::load_str("fuzz.toml", &source) {
        // What `check` prints after a successful load.
        let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
        let line = format!(
            "{} {} {} {} {}",
            scenario.name,
            names.join(", "),
            scenario.jobs() / u64::from(scenario.replications),
            scenario.replications,
            scenario.horizon
        );
        std::hint::black_box(line);
    }
});
