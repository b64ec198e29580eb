//! The catalogue: every metric the worlds write. A metric is an [`Entry`]: its id, a
//! human title, its unit, which way is better, a one-line doc, and the models that
//! write it. Each world declares its own once, with `entries!`, in its `metrics.rs`,
//! and writes them through those declarations (`MetricValue::of`); [`CATALOGUE`] joins
//! the worlds' lists in the order of the list of models, which also makes [`ModelId`].
//! Plots and reports look metrics up here (title, which way is better, what a missing
//! value means) instead of guessing from their ids, and the headline flags say which
//! few metrics answer a model's question, so a sweep plot shows those first.
//!
//! An id may belong to more than one model with a different meaning (`timeouts` of a
//! TCP connection and of gRPC connection attempts; `calls` of OCC and of client calls),
//! so lookups take the models of the run when they are known.

use crate::metrics::MetricValue;

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// One metric, or a numbered family of them (`spread_attempt1`, `spread_attempt2`, …).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The id; for a numbered family the id without its number, ending before `{k}`
    /// (`spread_attempt{k}`).
    pub id: &'static str,
    /// Human title; `{k}` stands for a family member's number.
    pub title: &'static str,
    pub unit: &'static str,
    pub better: Option<Better>,
    pub doc: &'static str,
    /// Bookkeeping of the simulator rather than an answer (e.g. `events`): never plotted
    /// unless asked for by name.
    pub internal: bool,
    pub models: &'static [ModelId],
    /// The models for which this is a headline metric.
    pub headline: &'static [ModelId],
}

impl Entry {
    /// Whether `id` is this entry's id or a member of its numbered family; returns the
    /// member's number (empty for a plain id).
    pub fn matches<'a>(&self, id: &'a str) -> Option<&'a str> {
        match self.id.strip_suffix("{k}") {
            Some(prefix) => {
                let k = id.strip_prefix(prefix)?;
                (!k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())).then_some(k)
            }
            None => (self.id == id).then_some(""),
        }
    }

    /// Whether this is a numbered family rather than one metric.
    pub fn is_family(&self) -> bool {
        self.id.ends_with("{k}")
    }

    /// The id of member `k` of a numbered family.
    pub fn member(&self, k: usize) -> String {
        let prefix = self.id.strip_suffix("{k}");
        let prefix = prefix.unwrap_or_else(|| panic!("{} is not a numbered family", self.id));
        format!("{prefix}{k}")
    }

    pub fn is_headline_for(&self, models: &[ModelId]) -> bool {
        self.headline.iter().any(|m| models.contains(m))
    }
}

use Better::{Higher, Lower};

/// Which way a metric is better, as the entries write it: lower, higher, neither.
pub const L: Option<Better> = Some(Lower);
pub const H: Option<Better> = Some(Higher);
pub const N: Option<Better> = None;

/// Declares a world's entries, each a `static` named for its id, and `ALL`, the list of
/// them in the order written. An entry reads `NAME: "id", "Title", "unit", better, kind,
/// "doc";` where `better` is `L`, `H` or `N` and `kind` is `headline`, `plain` or
/// `internal`, followed by `+ Model` for each further model that writes it.
macro_rules! entries {
    (model: $model:ident; $(
        $name:ident: $id:literal, $title:literal, $unit:literal, $better:ident, $kind:ident $(+ $also:ident)*,
            $doc:literal;
    )*) => {
        use $crate::worlds::catalogue::{Entry, ModelId};
        $(
            pub static $name: Entry = Entry {
                id: $id,
                title: $title,
                unit: $unit,
                better: $crate::worlds::catalogue::$better,
                doc: $doc,
                internal: $crate::worlds::catalogue::entries!(@internal $kind),
                models: &[ModelId::$model $(, ModelId::$also)*],
                headline: $crate::worlds::catalogue::entries!(@headline $kind, $model $(, $also)*),
            };
        )*
        /// In catalogue order.
        pub static ALL: &[&Entry] = &[$(&$name),*];
    };
    (@internal internal) => { true };
    (@internal $kind:ident) => { false };
    (@headline headline, $($m:ident),*) => { &[$(ModelId::$m),*] };
    (@headline $kind:ident, $($m:ident),*) => { &[] };
}
pub(crate) use entries;

macro_rules! model_ids {
    ($($variant:ident($field:ident: $config:ty)),* $(,)?) => {
        /// The simulation models, as a scenario's `model` names them: one per line of the
        /// list of models, in its order, named by its section.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum ModelId {
            $($variant),*
        }

        impl ModelId {
            pub const ALL: [ModelId; [$(stringify!($variant)),*].len()] = [$(ModelId::$variant),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(ModelId::$variant => stringify!($field)),*
                }
            }

            pub fn from_name(name: &str) -> Option<ModelId> {
                ModelId::ALL.into_iter().find(|m| m.name() == name)
            }
        }
    };
}
super::for_each_model!(model_ids);

/// What a world writes through its entries; the id and the unit are the entry's.
impl MetricValue {
    /// The value of `entry`'s metric: its id and unit are the entry's.
    pub fn of(entry: &'static Entry, value: f64) -> Self {
        MetricValue::maybe_of(entry, Some(value))
    }

    pub fn maybe_of(entry: &'static Entry, value: Option<f64>) -> Self {
        debug_assert!(!entry.is_family(), "{} is a numbered family: name its member", entry.id);
        MetricValue { name: entry.id.to_string(), unit: entry.unit, value }
    }

    /// Member `k` of `entry`'s numbered family (`spread_attempt3` for k = 3).
    pub fn numbered(entry: &'static Entry, k: usize, value: Option<f64>) -> Self {
        MetricValue { name: entry.member(k), unit: entry.unit, value }
    }
}

/// The entry among `list` of the give-up reason `slug` (`request-limit`), its id
/// `prefix` and the slug in snake case. Every reason a policy can give has one (tested
/// against `GiveUpReason` in the calls and jobs lists), so a miss is a bug.
pub(crate) fn by_reason(list: &'static [&'static Entry], prefix: &str, slug: &str) -> &'static Entry {
    let found = list.iter().find(|e| e.id.strip_prefix(prefix).is_some_and(|r| r == slug.replace('-', "_")));
    found.unwrap_or_else(|| panic!("no entry {prefix}{slug}"))
}

/// Every metric the models write to `summary.csv`, as one list of the worlds' lists.
/// Where two models share an id, the first entry is the one an id-only lookup finds.
pub struct Catalogue(&'static [&'static [&'static Entry]]);

impl Catalogue {
    pub fn iter(&self) -> impl Clone + Iterator<Item = &'static Entry> {
        self.0.iter().flat_map(|list| list.iter().copied())
    }
}

macro_rules! catalogue {
    ($($variant:ident($field:ident: $config:ty)),* $(,)?) => {
        /// Each world's list in the order of the list of models: the order the metrics
        /// listing, the manifest and the sweep plots show them in.
        pub static CATALOGUE: Catalogue = Catalogue(&[$(super::$field::metrics::ALL),*]);
    };
}
super::for_each_model!(catalogue);

/// What it means that a metric has no value in any replication, where that is an answer
/// rather than a gap: "did not recover within the horizon".
pub fn absent_means(id: &str) -> Option<&'static str> {
    match id {
        "time_to_recover" => Some("did not recover within the horizon in any replication"),
        "alert_delay" => Some("the alert never fired"),
        "time_to_abort" => Some("no connection gave up"),
        "added_latency" | "completion_time_incident" => Some("no job was delivered during the incident"),
        // A quantile needs that share of the channels back: p99 is missing when more than
        // 1 % never reconnected (`quantile_of` in the gRPC world).
        "reconnect_p50" | "reconnect_p99" | "reconnect_all" => {
            Some("too few channels reconnected before the horizon for this share (or none did)")
        }
        "reconnect_after_up_p50" | "reconnect_after_up_p99" | "reconnect_after_up_all" => {
            Some("too few channels reconnected after the server came back, before the horizon (or none did)")
        }
        "time_to_success" | "time_to_success_p99" | "time_to_success_max" => {
            Some("no call succeeded before the horizon")
        }
        "time_to_giveup" => Some("no call gave up"),
        // Bursts are measured over the bins with the server up at both ends.
        "peak_attempt_rate" | "peak_to_mean" | "cv" => Some("the server was up for no whole bin before the horizon"),
        _ if id.starts_with("spread_attempt") => Some("too few channels made this attempt before the horizon"),
        _ if id.starts_with("convergence_time_change") => {
            Some("the estimate did not converge after the change before the horizon")
        }
        _ if id.starts_with("recovery_lag_blackout") => {
            Some("no connection recovered from the blackout before the horizon")
        }
        _ => None,
    }
}

/// Why `id` has no value: [`absent_means`] where the catalogue knows, else the plain fact.
pub fn no_value(id: &str) -> &'static str {
    absent_means(id).unwrap_or("no replication had a value for it before the horizon")
}

/// The entry of `id`: among the entries of `models` first, then any.
pub fn find(id: &str, models: &[ModelId]) -> Option<&'static Entry> {
    let mut any = CATALOGUE.iter().filter(|e| e.matches(id).is_some());
    let first = any.clone().next();
    any.find(|e| e.models.iter().any(|m| models.contains(m))).or(first)
}

/// The human title of `id` (`Recovery lag after blackout 1`), or the id itself when
/// the catalogue does not know it.
pub fn title(id: &str, models: &[ModelId]) -> String {
    CATALOGUE
        .iter()
        .filter_map(|e| Some((e, e.matches(id)?)))
        .find(|(e, _)| e.models.iter().any(|m| models.contains(m)))
        .or_else(|| CATALOGUE.iter().find_map(|e| Some((e, e.matches(id)?))))
        .map(|(e, k)| e.title.replace("{k}", k))
        .unwrap_or_else(|| id.to_string())
}

/// Which way `id` is better, `None` when neither (or unknown).
pub fn better(id: &str, models: &[ModelId]) -> Option<Better> {
    find(id, models).and_then(|e| e.better)
}

/// `Peak attempt rate (`peak_attempt_rate`, attempts/s), lower is better`: a metric as
/// a heading names it, in Markdown.
pub fn heading(id: &str, unit: &str, models: &[ModelId]) -> String {
    let unit = if unit.is_empty() { String::new() } else { format!(", {unit}") };
    let better = match better(id, models) {
        Some(Lower) => ", lower is better",
        Some(Higher) => ", higher is better",
        None => "",
    };
    let title = title(id, models);
    if title == id { format!("`{id}`{unit}{better}") } else { format!("{title} (`{id}`{unit}){better}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::retry::GiveUpReason;
    use crate::model::retry::outcome::Outcome;
    use crate::worlds::{calls, grpc, jobs, occ, tcp};

    #[test]
    fn numbered_families_match_only_their_prefix_and_a_number() {
        assert_eq!(title("recovery_lag_blackout2", &[ModelId::Tcp]), "Recovery lag after blackout 2");
        assert_eq!(title("spread_attempt12", &[]), "Spread of attempt 12");
        assert!(find("recovery_lag_blackout", &[]).is_none());
        assert!(find("recovery_lag_blackoutx", &[]).is_none());
        assert_eq!(title("no_such_metric", &[]), "no_such_metric");
    }

    #[test]
    fn a_shared_id_takes_the_meaning_of_the_runs_model() {
        assert_eq!(title("timeouts", &[ModelId::Tcp]), "Retransmission timeouts");
        assert_eq!(title("timeouts", &[ModelId::Grpc]), "Connect timeouts");
        assert_eq!(title("calls", &[ModelId::Occ]), "Calls to the store");
        assert_eq!(title("calls", &[ModelId::Calls]), "Calls");
        assert!(find("calls", &[ModelId::Occ]).is_some_and(|e| e.is_headline_for(&[ModelId::Occ])));
        assert!(find("calls", &[ModelId::Calls]).is_some_and(|e| !e.is_headline_for(&[ModelId::Calls])));
        // The calls model's count of calls is its workload, not a cost.
        assert_eq!(better("calls", &[ModelId::Occ]), Some(Better::Lower));
        assert_eq!(better("calls", &[ModelId::Calls]), None);
    }

    #[test]
    fn no_id_is_listed_twice_for_a_model_and_every_entry_is_complete() {
        let all: Vec<&Entry> = CATALOGUE.iter().collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if a.id == b.id {
                    assert!(!a.models.iter().any(|m| b.models.contains(m)), "{} twice", a.id);
                }
            }
            assert!(!a.title.is_empty() && !a.doc.is_empty() && !a.models.is_empty(), "{}", a.id);
            assert!(a.headline.iter().all(|m| a.models.contains(m)), "{}", a.id);
            assert!(!a.internal || a.headline.is_empty(), "{} is internal and a headline", a.id);
        }
    }

    #[test]
    fn every_model_has_headline_metrics() {
        for m in ModelId::ALL {
            assert!(CATALOGUE.iter().any(|e| e.is_headline_for(&[m])), "{}", m.name());
        }
    }

    #[test]
    fn headings_name_title_id_unit_and_direction() {
        assert_eq!(
            heading("peak_attempt_rate", "attempts/s", &[ModelId::Grpc]),
            "Peak attempt rate (`peak_attempt_rate`, attempts/s), lower is better"
        );
        assert_eq!(heading("rtt_samples", "count", &[ModelId::Tcp]), "RTT samples (`rtt_samples`, count)");
        assert_eq!(heading("mystery", "", &[]), "`mystery`");
    }

    /// Every id the shipped scenarios wrote (the committed `results/*/summary.csv`) has
    /// an entry of its model, with the unit the run wrote.
    #[test]
    fn every_metric_in_the_shipped_results_has_an_entry_of_its_model() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
        let mut checked = 0;
        for dir in std::fs::read_dir(&root).expect("results/ is committed").map(|d| d.unwrap().path()) {
            let Ok(manifest) = std::fs::read_to_string(dir.join("manifest.json")) else { continue };
            let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
            let model = manifest["variants"][0]["parameters"]["model"].as_str().and_then(ModelId::from_name);
            let model = model.unwrap_or_else(|| panic!("{}: no known model", dir.display()));
            let mut csv = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
            let h = csv.headers().unwrap().clone();
            let col = |n: &str| h.iter().position(|c| c == n).unwrap();
            let (metric, unit) = (col("metric"), col("unit"));
            for row in csv.records() {
                let row = row.unwrap();
                let e = find(&row[metric], &[model]);
                let e = e.unwrap_or_else(|| panic!("{}: `{}` is not in the catalogue", dir.display(), &row[metric]));
                assert!(
                    e.models.contains(&model),
                    "{}: `{}` has no {} entry",
                    dir.display(),
                    &row[metric],
                    model.name()
                );
                assert_eq!(e.unit, &row[unit], "{}: unit of `{}`", dir.display(), &row[metric]);
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} rows checked");
    }

    #[test]
    fn absent_values_are_explained_only_for_metrics_the_catalogue_has() {
        for id in ["time_to_recover", "alert_delay", "time_to_abort", "added_latency", "completion_time_incident"] {
            assert!(absent_means(id).is_some(), "{id}");
            assert!(CATALOGUE.iter().any(|e| e.id == id), "{id} is not in the catalogue");
        }
        assert_eq!(absent_means("success_rate"), None);
        for id in [
            "reconnect_p50",
            "reconnect_after_up_all",
            "time_to_success_p99",
            "spread_attempt3",
            "recovery_lag_blackout1",
        ] {
            assert!(absent_means(id).is_some(), "{id}");
            assert!(find(id, &[]).is_some(), "{id} is not in the catalogue");
        }
    }

    /// A world emits a metric through its entry (`MetricValue::of`), so an id it writes
    /// has one; what remains to check is that the lists are the catalogue and that the
    /// ids made at run time (numbered members, give-up reasons) find their entries.
    #[test]
    fn each_world_lists_its_own_entries_and_the_catalogue_holds_each_once() {
        let lists = [
            (ModelId::Tcp, tcp::metrics::ALL),
            (ModelId::Grpc, grpc::metrics::ALL),
            (ModelId::Occ, occ::metrics::ALL),
            (ModelId::Calls, calls::metrics::ALL),
            (ModelId::Jobs, jobs::metrics::ALL),
        ];
        let mut models: Vec<ModelId> = lists.iter().map(|(m, _)| *m).collect();
        models.sort();
        assert_eq!(models, ModelId::ALL);
        for (model, list) in lists {
            assert!(list.iter().all(|e| e.models[0] == model), "{}", model.name());
        }
        let all: Vec<&Entry> = CATALOGUE.iter().collect();
        assert_eq!(all.len(), lists.iter().map(|(_, l)| l.len()).sum::<usize>());
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|b| !std::ptr::eq(*a, *b)), "{} listed twice", a.id);
        }
    }

    #[test]
    fn a_numbered_member_is_found_under_its_family_with_its_unit() {
        use crate::metrics::MetricValue;
        let v = MetricValue::numbered(&grpc::metrics::SPREAD_ATTEMPT, 3, None);
        assert_eq!((v.name.as_str(), v.unit), ("spread_attempt3", "s"));
        assert!(find(&v.name, &[ModelId::Grpc]).is_some_and(|e| std::ptr::eq(e, &grpc::metrics::SPREAD_ATTEMPT)));
        let v = MetricValue::numbered(&jobs::metrics::DELIVERED_BY_PROVIDER, 12, Some(0.5));
        assert_eq!(v.name, "delivered_by_provider12");
        assert!(
            find(&v.name, &[ModelId::Jobs]).is_some_and(|e| std::ptr::eq(e, &jobs::metrics::DELIVERED_BY_PROVIDER))
        );
        let v = MetricValue::of(&tcp::metrics::TIMEOUTS, 2.0);
        assert_eq!((v.name.as_str(), v.unit, v.value), ("timeouts", "count", Some(2.0)));
    }

    /// `GiveUpReason::slug` names the reason; the calls world writes `gave_up_<slug>` and
    /// the jobs world `dead_lettered_<slug>` for every reason its policy can give (jobs
    /// are never refused as not idempotent).
    #[test]
    fn every_give_up_reason_has_an_entry_in_the_calls_and_jobs_worlds() {
        let o = Outcome::Refused;
        for r in [
            GiveUpReason::AttemptsExhausted { attempts: 1 },
            GiveUpReason::Deadline,
            GiveUpReason::Permanent(o),
            GiveUpReason::NotIdempotent(o),
            GiveUpReason::QuotaEmpty,
            GiveUpReason::Throttled,
            GiveUpReason::BudgetEmpty,
            GiveUpReason::RequestLimit { retries: 1 },
        ] {
            let e = calls::metrics::gave_up(r.slug());
            assert_eq!(e.id, format!("gave_up_{}", r.slug().replace('-', "_")));
            assert_eq!((e.models, e.unit), (&[ModelId::Calls][..], "fraction"));
            if !matches!(r, GiveUpReason::NotIdempotent(_)) {
                let e = jobs::metrics::dead_lettered(r.slug());
                assert_eq!(e.id, format!("dead_lettered_{}", r.slug().replace('-', "_")));
                assert_eq!((e.models, e.unit), (&[ModelId::Jobs][..], "fraction"));
            }
        }
    }
}
