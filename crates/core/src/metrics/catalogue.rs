//! What a summary metric is: an [`Entry`] with its id, a human title, its unit, which
//! way is better, a one-line doc, and the models that write it; `entries!` declares a
//! world's entries. Each world declares its own in its `metrics.rs` and writes them
//! through those declarations; `worlds::catalogue` joins the worlds' lists into the one
//! catalogue that plots and reports look metrics up in, instead of guessing from their
//! ids. The headline flags say which few metrics answer a model's question, so a sweep
//! plot shows those rather than everything.
//!
//! An id may belong to more than one model with a different meaning (`timeouts` of a
//! TCP connection and of gRPC connection attempts; `calls` of OCC and of client calls),
//! so lookups take the models of the run when they are known.

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// The simulation models, as a scenario's `model` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ModelId {
    Tcp,
    Grpc,
    Calls,
    Occ,
    Jobs,
}

impl ModelId {
    pub const ALL: [ModelId; 5] = [ModelId::Tcp, ModelId::Grpc, ModelId::Calls, ModelId::Occ, ModelId::Jobs];

    pub fn name(self) -> &'static str {
        match self {
            ModelId::Tcp => "tcp",
            ModelId::Grpc => "grpc",
            ModelId::Calls => "calls",
            ModelId::Occ => "occ",
            ModelId::Jobs => "jobs",
        }
    }

    pub fn from_name(name: &str) -> Option<ModelId> {
        ModelId::ALL.into_iter().find(|m| m.name() == name)
    }
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
        use $crate::metrics::catalogue::{Entry, ModelId};
        $(
            pub static $name: Entry = Entry {
                id: $id,
                title: $title,
                unit: $unit,
                better: $crate::metrics::catalogue::$better,
                doc: $doc,
                internal: $crate::metrics::catalogue::entries!(@internal $kind),
                models: &[ModelId::$model $(, ModelId::$also)*],
                headline: $crate::metrics::catalogue::entries!(@headline $kind, $model $(, $also)*),
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
