//! A run's facts, variants and their parameters, as its manifest states them.

use super::*;

/// A run's facts and variants as its manifest states them: the value read from
/// `manifest.json`, or the one a run is about to write, which it hands over to the
/// report with its results in memory instead of re-reading them. Variants are labelled
/// `label:name` when `label` is not empty.
pub fn of_manifest(manifest: &Value, dir: &Path, label: String) -> (RunInfo, Vec<VariantInfo>) {
    let prefix = |name: &str| {
        if label.is_empty() { name.to_string() } else { format!("{label}:{name}") }
    };
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let horizon = str_of(manifest, "horizon");
    let variants: Vec<VariantInfo> = manifest
        .get("variants")
        .and_then(Value::as_array)
        .map(|vs| vs.iter().map(|v| variant_info(v, &prefix)).collect())
        .unwrap_or_default();
    let run = RunInfo {
        label: label.clone(),
        dir: dir.to_path_buf(),
        scenario: str_of(manifest, "scenario"),
        description: str_of(manifest, "description"),
        seed: manifest.get("seed").and_then(Value::as_u64),
        replications: manifest.get("replications").and_then(Value::as_u64),
        horizon_s: SimDuration::parse(&horizon).ok().map(|d| d.as_secs_f64()),
        horizon,
        version: str_of(manifest, "backoffsim_version"),
        scenario_sha256: str_of(manifest, "scenario_sha256"),
    };
    (run, variants)
}

pub(super) fn variant_info(v: &Value, prefix: &dyn Fn(&str) -> String) -> VariantInfo {
    let params = v.get("parameters").cloned().unwrap_or(Value::Null);
    let mut flat = Vec::new();
    flatten("", &params, &mut flat);
    let base = facts_of(&params);
    let mut cells: Vec<CellInfo> = v
        .get("cells")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| CellInfo {
                    point: c
                        .get("sweep")
                        .and_then(Value::as_array)
                        .map(|p| p.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string)).collect())
                        .unwrap_or_default(),
                    facts: c.get("parameters").map(facts_of).unwrap_or_else(|| base.clone()),
                })
                .collect()
        })
        .unwrap_or_default();
    if cells.is_empty() {
        cells.push(CellInfo { point: Vec::new(), facts: base.clone() });
    }
    VariantInfo {
        name: prefix(v.get("name").and_then(Value::as_str).unwrap_or("?")),
        run: 0,
        description: v.get("description").and_then(Value::as_str).unwrap_or("").to_string(),
        params: flat,
        blackouts: base.blackouts,
        base_rtt: base.base_rtt,
        rtt_changes: base.rtt_changes,
        cells,
    }
}

/// The schedules in a manifest's resolved parameters.
pub(super) fn facts_of(params: &Value) -> CellFacts {
    let secs =
        |v: Option<&Value>| v.and_then(Value::as_str).and_then(|s| SimDuration::parse(s).ok()).map(|d| d.as_secs_f64());
    let list = |section: &str, key: &str| {
        params.get(section).and_then(|p| p.get(key)).and_then(Value::as_array).cloned().unwrap_or_default()
    };
    let span = |b: &Value, length: &str| {
        let at = secs(b.get("at"))?;
        Some((at, at + secs(b.get(length))?))
    };
    let blackouts = list("path", "blackout").iter().filter_map(|b| span(b, "duration")).collect();
    let rtt_changes =
        list("path", "rtt_change").iter().filter_map(|c| Some((secs(c.get("at"))?, secs(c.get("rtt"))?))).collect();
    let mut down: Vec<Down> = list("server", "restart")
        .iter()
        .filter_map(|r| span(r, "down"))
        .map(|(from, to)| Down { from, to, restart: true })
        .chain(list("server", "outage").iter().filter_map(|o| span(o, "duration")).map(|(from, to)| Down {
            from,
            to,
            restart: false,
        }))
        .filter(|d| d.to > d.from)
        .collect();
    down.sort_by(|a, b| a.from.total_cmp(&b.from));
    let calls = params.get("calls").filter(|_| params.get("model").and_then(Value::as_str) == Some("calls"));
    let calls_start = calls.map(|c| CallsStart {
        at: secs(c.get("start")).unwrap_or(0.0),
        spread: secs(c.get("start_spread")).unwrap_or(0.0),
        repeats: c.get("interval").is_some_and(|i| !i.is_null()),
    });
    let server = |key: &str| params.get("server").and_then(|s| s.get(key)).and_then(Value::as_str);
    let brownouts = list("server", "brownout")
        .iter()
        .filter_map(|b| {
            let (from, to) = span(b, "duration")?;
            let num = |k: &str| b.get(k).and_then(Value::as_f64);
            Some(Brownout { from, to, fail_fraction: num("fail_fraction"), slowdown: num("slowdown") })
        })
        .filter(|b| b.to > b.from)
        .collect();
    let provider_down = params
        .pointer("/jobs/provider/0/down")
        .and_then(Value::as_array)
        .map(|downs| downs.iter().filter_map(|d| span(d, "duration")).filter(|(a, b)| b > a).collect())
        .unwrap_or_default();
    CellFacts {
        blackouts,
        base_rtt: secs(params.get("path").and_then(|p| p.get("base_rtt"))),
        rtt_changes,
        down,
        down_silent: server("down_behavior") == Some("blackhole"),
        overload_drops: server("overload") == Some("drop"),
        calls_start,
        brownouts,
        provider_down,
        retry_share_alert: params.pointer("/calls/monitor/retry_share_alert").and_then(Value::as_f64),
    }
}

/// Flattens JSON to `a.b.c = value` pairs; array elements are keyed `a[0]`, an empty
/// array or object is one pair with the value `[]` / `{}`, and null reads `none`.
pub(super) fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let key = |k: &str| {
        if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten(&key(k), v, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, v) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Object(_) => out.push((prefix.to_string(), "{}".into())),
        Value::Array(_) => out.push((prefix.to_string(), "[]".into())),
        Value::Null => out.push((prefix.to_string(), "none".into())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}
